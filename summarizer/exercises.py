"""Write the assignment as a notebook for a learner: the graded bodies left blank.

  python -m summarizer.exercises                  # transformer_summarizer_exercises.ipynb
  python -m summarizer.exercises --out mine.ipynb --force

The notebook holds the course's ten graded functions (UNQ_C1 to UNQ_C10) in
its order. Each comes with its explanation, its signature and docstring,
hints, the body to write in nbgrader's form (``# YOUR CODE HERE`` /
``raise NotImplementedError()``), and below it the course's unit test from
``summarizer.checks``, which stops the notebook until it passes.

Everything is generated, so the solutions live in one place: the code from
the package's own functions (found through ``summarizer``'s top-level names,
so modules may move), the text from the cells of
``notebooks/03_transformer_summarizer.ipynb`` tagged ``explains:<name>``.
"""

import argparse
import ast
import dataclasses
import functools
import importlib
import inspect
import io
import os
import sys
import textwrap
import tokenize

import nbformat

import summarizer
from summarizer import _trax
from summarizer.config import PACKAGE_DIR
from summarizer.errors import OneLineParser, SummarizerError, run_command

# The graded functions in the course's order: UNQ_C1 to UNQ_C10.
GRADED = ('DotProductAttention', 'compute_attention_heads_closure',
          'dot_product_self_attention', 'compute_attention_output_closure',
          'CausalAttention', 'DecoderBlock', 'TransformerLM', 'training_loop',
          'next_symbol', 'greedy_decode')
# What each check is handed after the function, as the course calls it.
CHECK_ARGUMENTS = {'training_loop': ('TransformerLM',),
                   'next_symbol': ('TransformerLM',)}

DEFAULT_OUT = 'transformer_summarizer_exercises.ipynb'
NOTEBOOK_03 = os.path.join(os.path.dirname(PACKAGE_DIR), 'notebooks',
                           '03_transformer_summarizer.ipynb')
EXPLAINS = 'explains:'  # Tag prefix of notebook 03's explanation cells.

# What the setup cell always imports, whether or not a function uses it:
# Trax through the package (a bare `import trax` takes 20 s and is noisy),
# numpy and the checks. name -> (statement kind, module, imported name).
_ALWAYS = {
    'np': ('import', 'numpy', 'numpy'),
    'summarizer': ('import', 'summarizer', 'summarizer'),
    'checks': ('from', 'summarizer', 'checks'),
    **{name: ('from', 'summarizer._trax', name) for name in ('trax', 'tl', 'fastmath', 'jnp')},
}

_INTRO = """\
# The Transformer Summarizer: the assignment, by you

The ten graded functions of the course's week 2 assignment (UNQ_C1 to UNQ_C10), in its order,
with their bodies left for you to write. For each one:

1. Read the explanation, then write the function's body in the cell below it: replace
   `# YOUR CODE HERE` and `raise NotImplementedError()` with your code. The hints say what the
   solution uses and the shapes along the way, not how.
2. Run the cell after it: the course's unit test of that function (`summarizer.checks`). It
   prints `All tests passed`, or each failed case with what was expected and what came, and
   stops the notebook until your function passes.
3. When all ten pass, compare your functions with the package's:
   `notebooks/03_transformer_summarizer.ipynb` shows them at work, `summarizer/` holds their code.

Later exercises use your earlier ones (`CausalAttention` calls your heads and attention
functions, `DecoderBlock` your `CausalAttention`, ...), so work from the top, after running the
setup cell. This notebook is written by `python -m summarizer.exercises`: run it again for a
fresh copy.
"""

_SETUP_COMMENT = """\
# Setup, not an exercise: numpy, Trax through the package (quick and quiet),
# the checks, and the package's helpers that the graded functions call.
"""

_DONE = """\
## Done

All ten checks pass. Compare your functions with the package's, in
`notebooks/03_transformer_summarizer.ipynb` and `summarizer/`: the same results can be reached
in more than one way.
"""


# --------------------------------------------------------------------------
# Reading a graded function's source.

def graded_function(name):
  """Returns the package's graded function ``name``, as ``summarizer`` exports it."""
  return getattr(summarizer, name)


def _source_lines(function):
  """The function's source as lines (with their newlines), without pylint pragmas.

  The pragmas speak to the package's linter, not to a learner.
  """
  source = textwrap.dedent(inspect.getsource(function))
  lines = source.splitlines(keepends=True)
  for token in tokenize.generate_tokens(io.StringIO(source).readline):
    if token.type == tokenize.COMMENT and token.string.startswith('# pylint:'):
      row, column = token.start
      lines[row - 1] = lines[row - 1][:column].rstrip() + '\n'
  return lines


def _docstring(body):
  """The docstring statement at the start of ``body``, or None."""
  first = body[0]
  if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
      and isinstance(first.value.value, str)):
    return first
  return None


def _statements(function_node):
  """The statements of a function after its docstring."""
  body = function_node.body
  return body[1:] if _docstring(body) else body


def _closure_inner(function_node):
  """The inner function of a closure (docstring, ``def inner``, ``return inner``)."""
  statements = _statements(function_node)
  if (len(statements) == 2 and isinstance(statements[0], ast.FunctionDef)
      and isinstance(statements[1], ast.Return)
      and isinstance(statements[1].value, ast.Name)
      and statements[1].value.id == statements[0].name):
    return statements[0]
  return None


def _body_start(function_node, lines):
  """Index of the first line of the body to blank (after any docstring).

  Without a docstring, comment lines just above the first statement belong
  to the body too.
  """
  docstring = _docstring(function_node.body)
  if docstring:
    return docstring.end_lineno
  start = function_node.body[0].lineno - 1
  if start <= function_node.lineno - 1:
    raise SummarizerError(f'{function_node.name}: its body starts on the line of its def')
  while start - 1 > function_node.lineno - 1 and (
      not lines[start - 1].strip() or lines[start - 1].lstrip().startswith('#')):
    start -= 1
  return start


@dataclasses.dataclass
class Cut:
  """A graded function's source, cut around the part the learner writes.

  ``head + body + tail`` is the function's source (without pylint pragmas).

  Attributes:
    name: The function's name.
    head: Lines kept before the blank: the signature and docstring (for a
      closure, also the inner function's ``def`` line).
    body: The lines the learner writes.
    tail: Lines kept after the blank (a closure's ``return``).
    indent: The body's indentation.
    tree: The function's ast (line numbers count from 1 at ``head[0]``).
  """
  name: str
  head: list
  body: list
  tail: list
  indent: str
  tree: ast.FunctionDef


def cut(name):
  """Cuts the package's graded function ``name`` around its body.

  A closure keeps its outer function and its inner ``def`` line: the inner
  function's body is what the course asks for.
  """
  lines = _source_lines(graded_function(name))
  tree = ast.parse(''.join(lines)).body[0]
  blanked = _closure_inner(tree) or tree
  start, end = _body_start(blanked, lines), blanked.end_lineno
  indent = ' ' * _statements(blanked)[0].col_offset
  return Cut(name, lines[:start], lines[start:end], lines[end:tree.end_lineno],
             indent, tree)


# --------------------------------------------------------------------------
# What a function uses from its module.

def _local_names(tree):
  """Names the function binds itself: parameters, assignments, inner defs."""
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.arg):
      names.add(node.arg)
    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
      names.add(node.id)
    elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not tree:
      names.add(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      names.update((alias.asname or alias.name).split('.')[0] for alias in node.names)
  return names


def _read_outside(tree):
  """Nodes of the function evaluated in its module's scope: defaults, decorators."""
  arguments = tree.args
  expressions = [*tree.decorator_list, *arguments.defaults,
                 *(default for default in arguments.kw_defaults if default)]
  return {id(node) for expression in expressions for node in ast.walk(expression)}


def references(function, tree, lines=None):
  """The dotted names a function reads from its module, first use first.

  Args:
    function: The function (its globals tell what a name is).
    tree: Its ast, or that of a part of it.
    lines: Only names used on these line numbers (all when None).

  Returns:
    A list of names such as ``'jnp.matmul'``, ``'tl.Dense'``, ``'causal_mask'``:
    each a global of the function's module, followed by the attributes read
    from it.
  """
  namespace = function.__globals__
  local, outside = _local_names(tree), _read_outside(tree)
  parents = {id(child): parent for parent in ast.walk(tree)
             for child in ast.iter_child_nodes(parent)}
  found = []
  for node in ast.walk(tree):
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
      continue
    if node.id not in namespace or (node.id in local and id(node) not in outside):
      continue
    if lines is not None and node.lineno not in lines:
      continue
    chain, top = [node.id], node
    while isinstance(parents.get(id(top)), ast.Attribute):
      top = parents[id(top)]
      chain.append(top.attr)
    found.append(((node.lineno, node.col_offset), '.'.join(chain)))
  return list(dict.fromkeys(dotted for _, dotted in sorted(found)))


# --------------------------------------------------------------------------
# The setup cell: imports computed from what the ten functions read.

@functools.lru_cache(maxsize=None)
def _imported_from(module_name):
  """Where a module's ``from X import name`` statements get each name.

  Returns:
    dict: name in the module -> (module it comes from, its name there).
  """
  tree = ast.parse(inspect.getsource(sys.modules[module_name]))
  found = {}
  for node in tree.body:
    if isinstance(node, ast.ImportFrom) and node.level == 0:
      for alias in node.names:
        found[alias.asname or alias.name] = (node.module, alias.name)
  return found


def _trax_path(module):
  """'trax.supervised.training' for a Trax module reachable from ``trax``, else None."""
  if not module.__name__.startswith('trax.'):
    return None
  try:
    reached = functools.reduce(getattr, module.__name__.split('.')[1:], _trax.trax)
  except AttributeError:
    return None
  return module.__name__ if reached is module else None


def _import_of(name, value, module_name):
  """How the setup cell gets ``name``: (kind, module, name there).

  kind is 'import' (``import module as name``), 'from' (``from module import
  name there [as name]``) or 'trax' (``name = trax.a.b``: a Trax module
  reached from the package's ``trax``).
  """
  if inspect.ismodule(value):
    for exported in _trax.__all__:
      if getattr(_trax, exported) is value:
        return 'from', 'summarizer._trax', exported
    if _trax_path(value):
      return 'trax', value.__name__, value.__name__
    package, _, last = value.__name__.rpartition('.')
    if package and last == name:
      return 'from', package, name
    return 'import', value.__name__, value.__name__
  return ('from', *_imported_from(module_name).get(name, (module_name, name)))


def setup_imports():
  """What the exercises need besides each other, and where it comes from.

  Every global name that the ten functions read (graded names aside: the
  learner's own versions stand in for them) plus ``_ALWAYS``.

  Returns:
    dict: name -> (kind, module, name there), as ``_import_of`` gives.

  Raises:
    SummarizerError: if a name means two things in two modules (the
      notebook has one namespace).
  """
  imports = dict(_ALWAYS)
  for graded in GRADED:
    function = graded_function(graded)
    module_name = function.__module__
    for dotted in references(function, cut(graded).tree):
      name = dotted.split('.')[0]
      if name in GRADED:
        continue
      value = function.__globals__[name]
      imports.setdefault(name, _import_of(name, value, module_name))
      if _imported(*imports[name]) is not value:
        raise SummarizerError(f'{name} of {module_name} is not what the setup '
                              f'cell imports as {name}')
  return imports


def _imported(kind, module, there):
  """The object an ``_import_of`` triple gives."""
  imported = importlib.import_module(module)
  return getattr(imported, there) if kind == 'from' else imported


def _from_line(module, names):
  """``from module import a, b`` wrapped in parentheses past 80 columns."""
  line = f'from {module} import {", ".join(names)}'
  if len(line) <= 80:
    return line
  opening = f'from {module} import ('
  wrapped = textwrap.wrap(', '.join(names) + ')', 80 - len(opening))
  return ('\n' + ' ' * len(opening)).join([opening + wrapped[0], *wrapped[1:]])


def setup_source():
  """The setup cell's code: the imports of ``setup_imports``, grouped."""
  standard, others, package, froms, assigned = [], [], [], {}, []
  for name, (kind, module, there) in sorted(setup_imports().items()):
    top = module.split('.')[0]
    if kind == 'trax':
      assigned.append(f'{name} = {module}')
    elif kind == 'import':
      line = f'import {module}' + ('' if module == name else f' as {name}')
      group = (package if top == 'summarizer' else
               standard if top in sys.stdlib_module_names else others)
      group.append(line)
    else:
      froms.setdefault(module, []).append(there if there == name else f'{there} as {name}')
  package += [_from_line(module, names) for module, names in sorted(froms.items())]
  groups = [sorted(standard), sorted(others), package, assigned]
  return _SETUP_COMMENT + '\n\n'.join('\n'.join(group) for group in groups if group)


# --------------------------------------------------------------------------
# The exercise cells.

def _body_comments(the_cut):
  """The comments of the body, in order, without their '#'."""
  source = ''.join(the_cut.head + the_cut.body + the_cut.tail)
  first, last = len(the_cut.head) + 1, len(the_cut.head) + len(the_cut.body)
  return [token.string[1:].strip()
          for token in tokenize.generate_tokens(io.StringIO(source).readline)
          if token.type == tokenize.COMMENT and first <= token.start[0] <= last]


def _parameter_names(value):
  """'(a, b, *args)' for a callable: its parameters' names, no defaults."""
  try:
    parameters = inspect.signature(value).parameters.values()
  except (TypeError, ValueError):
    return '(...)'
  prefixes = {inspect.Parameter.VAR_POSITIONAL: '*', inspect.Parameter.VAR_KEYWORD: '**'}
  return '(' + ', '.join(prefixes.get(p.kind, '') + p.name for p in parameters) + ')'


def _about(name, value):
  """One line on a helper the body uses: a package function's summary, a constant's value."""
  if isinstance(value, (bool, int, float, str)):
    return f'{name} = {value!r}'
  if callable(value) and getattr(value, '__module__', '').startswith('summarizer'):
    summary = (inspect.getdoc(value) or '').split('\n')[0]
    return f'{name}{_parameter_names(value)}: {summary}'
  return None


def hints(name):
  """The hint comments of an exercise: what its solution uses, never the code.

  The dotted names the body reads (``jnp.matmul``, ``tl.Branch``), a line
  on each of the package's helpers and constants among them, and the
  body's own comments (the shapes ``# (B, L, H, Dh)``, stacks ``# x -- q k
  v`` and reasons).

  Returns:
    A list of lines, each a comment at the body's indentation.
  """
  the_cut, function = cut(name), graded_function(name)
  body_lines = range(len(the_cut.head) + 1, len(the_cut.head) + len(the_cut.body) + 1)
  # A module alone (``np`` passed as an argument) says nothing; its attributes do.
  used = [dotted for dotted in references(function, the_cut.tree, body_lines)
          if '.' in dotted or not inspect.ismodule(function.__globals__[dotted])]
  notes = []
  if used:
    notes += textwrap.wrap('- it uses: ' + ', '.join(used), 76, subsequent_indent='  ')
  for dotted in used:
    if dotted not in GRADED and '.' not in dotted:
      about = _about(dotted, function.__globals__[dotted])
      if about:
        notes += textwrap.wrap(f'- {about}', 76, subsequent_indent='  ',
                               break_on_hyphens=False)
  comments = _body_comments(the_cut)
  if comments:
    notes += ['- its comments, in order:'] + [f'    {comment}' for comment in comments]
  if not notes:
    return []
  return [f'{the_cut.indent}# Hints, read from the solution:'] + [
      f'{the_cut.indent}# {note}'.rstrip() for note in notes]


def blank(indent):
  """nbgrader's blank, at ``indent``."""
  return f'{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()\n'


def exercise_source(name):
  """The code cell of an exercise: signature, docstring, hints, the blank."""
  the_cut = cut(name)
  number = GRADED.index(name) + 1
  hint_lines = ''.join(line + '\n' for line in hints(name))
  return (f'# UNQ_C{number}\n# GRADED FUNCTION: {name}\n'
          + ''.join(the_cut.head) + hint_lines + blank(the_cut.indent)
          + ''.join(the_cut.tail)).rstrip('\n')


def check_source(name):
  """The cell that runs the course's check of ``name`` and stops if it fails."""
  arguments = ', '.join((name,) + CHECK_ARGUMENTS.get(name, ()))
  number = GRADED.index(name) + 1
  return (f"# The course's test_{name} (UNQ_C{number})\n"
          f"assert checks.test_{name}({arguments}) == 0, 'see the failed cases above'")


def explanations(path=NOTEBOOK_03):
  """The explanation of each graded function: notebook 03's tagged cells.

  Returns:
    dict: graded name -> the markdown of the cell tagged ``explains:<name>``.

  Raises:
    SummarizerError: if the notebook is missing or a function has no such
      cell, or two.
  """
  try:
    notebook = nbformat.read(path, as_version=4)
  except (OSError, ValueError) as e:
    raise SummarizerError(f'{path}: cannot read the explanations ({e})') from None
  found = {}
  for cell in notebook.cells:
    for tag in cell.metadata.get('tags', []):
      if tag.startswith(EXPLAINS) and cell.cell_type == 'markdown':
        found.setdefault(tag[len(EXPLAINS):], []).append(cell.source)
  for name in GRADED:
    if len(found.get(name, [])) != 1:
      raise SummarizerError(f'{path}: {len(found.get(name, []))} markdown cells '
                            f'tagged {EXPLAINS}{name}, not one')
  return {name: found[name][0] for name in GRADED}


def _named(cell, tag):
  """Tags a cell and gives it a fixed id, so that the notebook written is
  the same each time (cell ids are random by default)."""
  cell.metadata['tags'] = [tag]
  cell.id = tag.replace(':', '-')
  return cell


def exercise_notebook(explained_by=NOTEBOOK_03):
  """Builds the exercise notebook (nbformat v4, no outputs).

  Args:
    explained_by: The notebook whose tagged cells explain the functions.

  Returns:
    An ``nbformat.NotebookNode``: the introduction, the setup cell (tagged
    ``setup``), then for each graded function its explanation, its exercise
    and its check (tagged ``explains:``, ``exercise:`` and ``check:`` plus
    the name), and a closing cell.
  """
  v4 = nbformat.v4
  texts = explanations(explained_by)
  cells = [_named(v4.new_markdown_cell(_INTRO), 'intro'),
           _named(v4.new_code_cell(setup_source()), 'setup')]
  for number, name in enumerate(GRADED, 1):
    heading = f'## Exercise {number}: `{name}` (UNQ_C{number})\n\n'
    cells += [
        _named(v4.new_markdown_cell(heading + texts[name]), EXPLAINS + name),
        _named(v4.new_code_cell(exercise_source(name)), f'exercise:{name}'),
        _named(v4.new_code_cell(check_source(name)), f'check:{name}'),
    ]
  cells.append(_named(v4.new_markdown_cell(_DONE), 'done'))
  notebook = v4.new_notebook(cells=cells, metadata={
      'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'},
      'language_info': {'name': 'python'},
  })
  nbformat.validate(notebook)
  return notebook


def write_exercises(path=DEFAULT_OUT, force=False):
  """Writes the exercise notebook to ``path``; returns the path.

  Raises:
    SummarizerError: if ``path`` exists and ``force`` is not set, or it
      cannot be written.
  """
  text = nbformat.writes(exercise_notebook())
  try:
    with open(path, 'w' if force else 'x', encoding='utf-8') as f:
      f.write(text)
  except FileExistsError:
    raise SummarizerError(f'{path} exists: pass --force to overwrite it') from None
  except OSError as e:
    raise SummarizerError(f'cannot write {path}: {e.strerror or e}') from None
  return path


def main(argv=None):
  parser = OneLineParser(prog='python -m summarizer.exercises', description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--out', default=DEFAULT_OUT,
                      help=f'the notebook to write (default: {DEFAULT_OUT})')
  parser.add_argument('--force', action='store_true',
                      help='overwrite --out if it exists')
  args = parser.parse_args(argv)

  def command():
    write_exercises(args.out, force=args.force)
    print(f'wrote {args.out}: {len(GRADED)} exercises; fill in each blank and run '
          'the check below it')
    return 0
  return run_command(command, interrupted='stopped')


if __name__ == '__main__':
  sys.exit(main())
