"""The package's graded functions read as the exercises' code.

A graded function's source is read from the package (found through
``summarizer``'s top-level names, so modules may move: ``recording.graded_function``), without the
statements under an ``OMIT`` comment and with the notebook's names for its
helpers; ``cut`` parts it into the exercise's signature and body, and the
names it reads from outside make the notebook's setup cell
(``setup_source``).
"""

import ast
import dataclasses
import functools
import importlib
import inspect
import io
import sys
import textwrap
import tokenize

from summarizer import _trax
from summarizer.contract import recording
from summarizer.contract.recording import graded_function
from summarizer.errors import SummarizerError

# The graded functions in the course's order: UNQ_C1 to UNQ_C10.
# The checks of the whole model (Parts 4 and 5), after the exercises' (a check's name is test_X).
TRAINED_MODEL, SUMMARY = 'trained_model', 'summary'

# A comment that leaves the statement right below it out of the exercise (and
# out of the solution nbgrader sees), such as the predict-mode cache.
OMIT = '# Not in the exercise'

# Names in the package's signatures that mean the notebook's own helpers
# (Part 1 defines tokenize and detokenize for the shipped model, as the
# course's notebook defines them for its model).
NOTEBOOK_NAMES = {'course_tokenize': 'tokenize', 'course_detokenize': 'detokenize'}
NOTEBOOK_HELPERS = frozenset(NOTEBOOK_NAMES.values())

# Reading a graded function's source.

def _source_lines(function):
  """The function's source as the exercise shows it, as lines with their newlines.

  Without pylint pragmas (they speak to the package's linter, not to a
  learner), without the statements under an ``OMIT`` comment (such as
  the predict-mode cache of ``CausalAttention``), and with the names of
  ``NOTEBOOK_NAMES`` as the notebook calls them.
  """
  source = textwrap.dedent(inspect.getsource(function))
  lines = source.splitlines(keepends=True)
  tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
  for token in reversed(tokens):  # From the end: earlier columns stay true.
    row, column = token.start
    if token.type == tokenize.COMMENT and token.string.startswith('# pylint:'):
      lines[row - 1] = lines[row - 1][:column].rstrip() + '\n'
    elif token.type == tokenize.NAME and token.string in NOTEBOOK_NAMES:
      line = lines[row - 1]
      lines[row - 1] = (line[:column] + NOTEBOOK_NAMES[token.string]
                        + line[column + len(token.string):])
  dropped = set()
  for node in ast.walk(ast.parse(''.join(lines))):
    for statement in getattr(node, 'body', []) if isinstance(node, ast.AST) else []:
      if not isinstance(statement, ast.stmt):
        continue
      above = statement.lineno - 2
      if above >= 0 and lines[above].strip().startswith(OMIT):
        dropped.update(range(above, statement.end_lineno))
  return [line for number, line in enumerate(lines) if number not in dropped]


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
# The setup cell: what the course's notebook imports, the data and the checks.

# Always imported, whatever the functions read: numpy, Trax through the
# package (a bare `import trax` takes 20 s and is noisy), the data and the
# checks, and what Part 1 and Part 3 use. name -> (kind, module, name there).
_ALWAYS = {
    'np': ('import', 'numpy', 'numpy'),
    'os': ('import', 'os', 'os'),
    'tempfile': ('import', 'tempfile', 'tempfile'),
    'textwrap': ('import', 'textwrap', 'textwrap'),
    'checks': ('from', 'summarizer.assignment', 'checks'),
    'notebook_data': ('from', 'summarizer.contract', 'notebook_data'),
    **{name: ('from', 'summarizer._trax', name) for name in ('trax', 'tl', 'fastmath', 'jnp')},
}


def _trax_path(module):
  """'trax.supervised.training' for a Trax module reachable from ``trax``, else None."""
  if not module.__name__.startswith('trax.'):
    return None
  try:
    reached = functools.reduce(getattr, module.__name__.split('.')[1:], _trax.trax)
  except AttributeError:
    return None
  return module.__name__ if reached is module else None


def _import_of(name, value, function_name):
  """How the setup cell gets ``name``, one of the names a solution reads.

  Returns:
    (kind, module, what): kind 'import' (``import module as name``), 'from'
    (``from module import what as name``), 'trax' (``name = trax.a.b``: a
    Trax module reached from the package's ``trax``) or 'value' (``name =
    what``: a constant of the package, written out).

  Raises:
    SummarizerError: for a function or other object of the package, which
      would do part of the exercise for the learner.
  """
  for exported in _trax.__all__:
    if getattr(_trax, exported) is value:
      return 'from', 'summarizer._trax', exported
  if inspect.ismodule(value):
    if _trax_path(value):
      return 'trax', value.__name__, value.__name__
    if value.__name__.split('.')[0] in sys.stdlib_module_names | {'numpy'}:
      return 'import', value.__name__, value.__name__
  elif isinstance(value, (bool, int, float, str)):
    return 'value', None, repr(value)
  raise SummarizerError(f'{function_name} reads {name}, which the notebook cannot '
                        'give a learner (only numpy, Trax, constants and earlier '
                        'exercises)')


def setup_imports():
  """What the exercises need besides each other, and where it comes from.

  Every global name that the ten solutions read (graded names and the
  notebook's helpers aside: the learner's own stand in for them) plus
  ``_ALWAYS``.

  Returns:
    dict: name -> (kind, module, what), as ``_import_of`` gives.

  Raises:
    SummarizerError: if a solution reads a package function, or a name means
      two things in two modules (the notebook has one namespace).
  """
  imports = dict(_ALWAYS)
  for graded in recording.GRADED:
    function = graded_function(graded)
    for dotted in references(function, cut(graded).tree):
      name = dotted.split('.')[0]
      if name in recording.GRADED or name in NOTEBOOK_HELPERS:
        continue
      value = function.__globals__[name]
      if name not in imports:
        imports[name] = _import_of(name, value, graded)
      kind, _, what = imports[name]
      if (what != repr(value) if kind == 'value'
          else _imported(*imports[name]) is not value):
        raise SummarizerError(f'{name} of {function.__module__} is not what the '
                              f'setup cell gives as {name}')
  return imports


def _imported(kind, module, there):
  """The object an ``_import_of`` triple gives."""
  imported = importlib.import_module(module)
  return getattr(imported, there) if kind == 'from' else imported


def setup_source():
  """The setup cell's code: the imports of ``setup_imports``, grouped."""
  standard, others, froms, assigned = [], [], {}, []
  for name, (kind, module, there) in sorted(setup_imports().items()):
    if kind == 'trax':
      assigned.append(f'{name} = {module}')
    elif kind == 'value':
      assigned.append(f'{name} = {there}')
    elif kind == 'import':
      line = f'import {module}' + ('' if module == name else f' as {name}')
      (standard if module.split('.')[0] in sys.stdlib_module_names else others).append(line)
    else:
      froms.setdefault(module, []).append(there if there == name else f'{there} as {name}')
  package = [f'from {module} import {", ".join(names)}'
             for module, names in sorted(froms.items())]
  groups = [sorted(standard), sorted(others), package, assigned]
  return _SETUP_COMMENT + '\n\n'.join('\n'.join(group) for group in groups if group)


_SETUP_COMMENT = """\
# Setup: numpy, Trax (through the package: quick and quiet), the data
# (`notebook_data`: the news stories, the shipped model's files) and the checks.
"""
