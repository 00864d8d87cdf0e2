"""The package's layout: arrows point down, and no function is long.

The course's parts sit at the package's root and import only each other and
the base (config, errors, _trax, progress); what we built beyond the course
sits in rooms (inference, runs, corpus, evaluation, explorer, contract, assignment, grading),
which use the course and the base and never import each other in a circle. Imports inside
functions count as much as those at the top. No module is longer than 700 lines.
"""

import ast
import collections
import importlib
import os

import pytest

import summarizer

PACKAGE_DIR = os.path.dirname(os.path.abspath(summarizer.__file__))

# safe_pickle (issue 30) is the base's: _trax makes Trax's own checkpoint readers use it;
# _trax_init too: _trax makes Trax's init trace each layer once with it.
BASE = {'summarizer.config', 'summarizer.errors', 'summarizer.files', 'summarizer._trax',
        'summarizer._trax_init', 'summarizer.progress', 'summarizer.safe_pickle'}
COURSE = {'summarizer.text', 'summarizer.data', 'summarizer.attention', 'summarizer.model',
          'summarizer.training', 'summarizer.decoding'}
ROOMS = ('inference', 'runs', 'corpus', 'evaluation', 'explorer', 'contract', 'assignment',
         'grading')
# The commands: thin entry points that nothing in the package imports.
COMMANDS = {'summarizer.__main__', 'summarizer.train', 'summarizer.evaluate',
            'summarizer.bench', 'summarizer.vocab', 'summarizer.exercises',
            'summarizer.explorer.__main__'}
LONGEST_FUNCTION = 60
LONGEST_MODULE = 700


def module_files():
  """{module name: path} of every module of the package."""
  found = {}
  for directory, _, files in os.walk(PACKAGE_DIR):
    for name in files:
      if name.endswith('.py'):
        path = os.path.join(directory, name)
        relative = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-len('.py')]
        module = relative.replace(os.sep, '.')
        found[module[:-len('.__init__')] if module.endswith('.__init__') else module] = path
  return found


MODULES = module_files()


def imports_of(module):
  """The package's modules that ``module`` imports, at its top or inside functions."""
  with open(MODULES[module], encoding='utf-8') as f:
    tree = ast.parse(f.read())
  package = module if MODULES[module].endswith('__init__.py') else module.rpartition('.')[0]
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      base = node.module or ''
      if node.level:  # Relative: from the module's package up.
        parts = package.split('.')
        base = '.'.join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
      # ``from package import name``: the submodule if there is one, else the package.
      names = [f'{base}.{alias.name}' if f'{base}.{alias.name}' in MODULES else base
               for alias in node.names]
    else:
      continue
    found.update(name for name in names if name in MODULES and name != module)
  return found


GRAPH = {module: imports_of(module) for module in MODULES}


def room_of(module):
  """The room a module belongs to, or None for the root's modules."""
  parts = module.split('.')
  return parts[1] if len(parts) > 1 and parts[1] in ROOMS else None


def find_cycle(graph):
  """Returns one cycle of a directed graph as a list of nodes, or None."""
  state = {}

  def visit(node, path):
    state[node] = 'open'
    for following in sorted(graph.get(node, ())):
      if state.get(following) == 'open':
        return path[path.index(following):] + [following]
      if following not in state:
        cycle = visit(following, path + [following])
        if cycle:
          return cycle
    state[node] = 'done'
    return None

  for start in sorted(graph):
    if start not in state:
      cycle = visit(start, [start])
      if cycle:
        return cycle
  return None


def test_find_cycle_finds_one_and_only_one():
  assert find_cycle({'a': {'b'}, 'b': {'c'}, 'c': set()}) is None
  assert find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']


def test_imports_are_read_at_the_top_and_inside_functions():
  # __main__ imports the decoder's modules inside functions, to answer --help at once.
  assert 'summarizer.inference.loaded_model' in GRAPH['summarizer.__main__']
  assert 'summarizer.explorer.explanation' in GRAPH['summarizer.__main__']
  assert 'summarizer.corpus.news' in GRAPH['summarizer.corpus.sources']  # Inside _news.


def test_no_two_modules_share_a_name():
  # One name, one job: `bench` is the command, `evaluation.benchmarks` its work.
  names = collections.Counter(module.rpartition('.')[2] for module in MODULES
                              if not MODULES[module].endswith(('__init__.py', '__main__.py')))
  assert not [name for name, count in names.items() if count > 1], names.most_common(3)


def test_no_module_imports_in_a_circle():
  assert find_cycle(GRAPH) is None, ' -> '.join(find_cycle(GRAPH))


def test_the_base_imports_nothing_above_it():
  for module in BASE:
    assert GRAPH[module] <= BASE, (module, GRAPH[module] - BASE)


def test_the_course_imports_only_the_course_and_the_base():
  for module in COURSE:
    assert GRAPH[module] <= COURSE | BASE | {'summarizer'}, (module, GRAPH[module] - COURSE - BASE)


def test_rooms_never_import_each_other_in_a_circle():
  rooms = collections.defaultdict(set)
  for module, imported in GRAPH.items():
    for other in imported:
      if room_of(module) and room_of(other) and room_of(other) != room_of(module):
        rooms[room_of(module)].add(room_of(other))
  assert find_cycle(rooms) is None, ' -> '.join(find_cycle(rooms))
  # What the rooms are for: corpus feeds the rest, inference serves the others.
  assert not rooms['corpus']
  assert rooms['inference'] <= {'corpus'}


def test_the_learners_room_and_the_teachers_share_only_the_contract():
  # The notebook's checks run in the learner's kernel: nothing of the grader's
  # (its sandbox, its hidden answers, its limits) is theirs to import; the grader
  # never reaches into the learner's checks; what both run is the contract's, which
  # imports neither.
  never = {'assignment': {'grading'}, 'grading': {'assignment'},
           'contract': {'assignment', 'grading'}}
  for module, imported in GRAPH.items():
    barred = never.get(room_of(module), set())
    assert not {m for m in imported if room_of(m) in barred}, module


def private_names_used(module):
  """(other module, name) for each ``_name`` this module reads of another of the package's."""
  with open(MODULES[module], encoding='utf-8') as f:
    tree = ast.parse(f.read())
  aliases, found = {}, set()
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and (node.module or '').startswith('summarizer'):
      for alias in node.names:
        child = f'{node.module}.{alias.name}'
        if child in MODULES:
          aliases[alias.asname or alias.name] = child
        elif alias.name.startswith('_') and not alias.name.startswith('__'):
          found.add((node.module, alias.name))
  for node in ast.walk(tree):
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id in aliases and node.attr.startswith('_')
        and not node.attr.startswith('__')):
      found.add((aliases[node.value.id], node.attr))
  return {(other, name) for other, name in found if room_of(other) != room_of(module)
          or room_of(module) is None and other != module}


def test_no_private_name_crosses_a_room():
  for module in MODULES:
    if room_of(module):
      crossing = {(other, name) for other, name in private_names_used(module)
                  if room_of(other)}
      assert not crossing, (module, crossing)


# A grade's own modules, from nbgrader's preprocessor to the score (the walk that
# tests/grading/grade_walk.py measures); the seed's preparation (reference_results)
# and a failure's where: line (where_line) are apart.
GRADE_WALK = ('grader', 'class_run', 'sandbox', 'limits', 'cpu_clock', 'report_schema',
              'static_reading', 'causes')


def contract_calls(module):
  """'module.name' of each of the contract's functions (or classes) ``module`` calls."""
  with open(MODULES[module], encoding='utf-8') as f:
    tree = ast.parse(f.read())
  modules, names = {}, {}
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module == 'summarizer.contract':
      modules.update({alias.asname or alias.name: alias.name for alias in node.names})
    elif isinstance(node, ast.ImportFrom) and (node.module or '').startswith('summarizer.contract.'):
      names.update({alias.asname or alias.name: f"{node.module.split('.')[-1]}.{alias.name}"
                    for alias in node.names})
  called = set()
  for node in ast.walk(tree):
    function = node.func if isinstance(node, ast.Call) else None
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
      if function.value.id in modules:
        called.add(f'{modules[function.value.id]}.{function.attr}')
    elif isinstance(function, ast.Name) and function.id in names:
      called.add(names[function.id])
  return called


def test_a_grade_enters_the_contract_in_two_places():
  # What it takes from the package, read once a process, and the judging of each report.
  called = set().union(*(contract_calls(f'summarizer.grading.{name}') for name in GRADE_WALK))
  assert called == {'handout.package_code', 'measures.failed_cases', 'measures.printed'}
  assert contract_calls('summarizer.grading.where_line')  # It can see what where_line calls.


@pytest.mark.parametrize('module', sorted(MODULES))
def test_no_module_is_longer_than_700_lines(module):
  with open(MODULES[module], encoding='utf-8') as f:
    lines = len(f.read().splitlines())
  assert lines <= LONGEST_MODULE, (module, lines)


def test_nothing_imports_a_command_and_the_root_only_what_is_below_it():
  for module, imported in GRAPH.items():
    if module not in COMMANDS:
      assert not imported & COMMANDS, (module, imported & COMMANDS)
  others = set(MODULES) - COURSE - BASE - COMMANDS - {'summarizer'}
  assert all(room_of(module) for module in others), sorted(m for m in others if not room_of(m))


def test_the_public_names_come_from_where_they_are_defined():
  for name, module in summarizer._LAZY.items():  # pylint: disable=protected-access
    assert module in MODULES, module
    assert name in vars(importlib.import_module(module)), (name, module)


def functions(tree):
  for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      yield node


@pytest.mark.parametrize('module', sorted(MODULES))
def test_no_function_is_longer_than_60_lines(module):
  with open(MODULES[module], encoding='utf-8') as f:
    tree = ast.parse(f.read())
  long = {f'{node.name} (line {node.lineno})': node.end_lineno - node.lineno + 1
          for node in functions(tree) if node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION}
  assert not long, long



# A text that tells the learner's checks and the teacher's grader apart would have to be
# written twice to be read on both sides: each is written once, in one module (a measure's
# name in probes.py or measures.py), and read from there.
SHARED_TEXTS_ALLOWED = 5
SHARED_TEXT_LENGTH = 12


def texts_of(module):
  """The string constants (f-strings' literal parts too) of a module, docstrings left out."""
  with open(MODULES[module], encoding='utf-8') as f:
    tree = ast.parse(f.read())
  docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef))
                and node.body and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)}
  return {node.value for node in ast.walk(tree)
          if isinstance(node, ast.Constant) and isinstance(node.value, str)
          and id(node) not in docstrings}


def test_texts_of_a_module_are_its_own_and_not_its_docstrings():
  texts = texts_of('summarizer.grading.report_schema')
  assert 'a report of type ' in texts  # An f-string's literal part.
  assert not any(text.startswith("What the sandbox sends back") for text in texts)


def test_no_text_of_the_checks_and_the_grader_is_written_in_two_modules():
  modules = collections.defaultdict(set)
  for module in MODULES:
    if room_of(module) in ('contract', 'assignment', 'grading'):
      for text in texts_of(module):
        if len(text) >= SHARED_TEXT_LENGTH:
          modules[text].add(module)
  shared = {text: sorted(found) for text, found in modules.items() if len(found) > 1}
  assert len(shared) <= SHARED_TEXTS_ALLOWED, shared
