"""The where: line of a plain value (a number, a text): the learner's line that writes it.

A loop built with ``Adam(0.001)``, a model built in ``mode='eval'``, a decoding
loop run ``range(MAX_SUMMARY_TOKENS)`` times: what the check got is a plain
value the course's function never gives, and no array leads to it. The
learner's line is the one whose code writes that value (the literal
``0.001``) or reads it from a notebook global (``MAX_SUMMARY_TOKENS``, 64).
The line is named only when the value is the one the check got, of its type,
and the package's function writes neither the literal nor the global's name
in its body: a value the course's code writes too says nothing of where the
learner's differs. A default written in the ``def`` is the signature's
(``contract/signature.py``), never this line's.
"""

import ast
import inspect
import textwrap

from summarizer.contract.following import plain, where_at
from summarizer.contract.probes import notebook_global


def value_where(function, package, pairs):
  """The learner's first line writing a value the check got where the course's differs, or None.

  Args:
    function: The learner's function.
    package: The package's function of the same exercise.
    pairs: (got, the course's) values, as ``runner.differing`` gives them, first first.
  """
  try:
    body = _body_nodes(function)
    theirs = {_said(node) for node, _ in _body_nodes(package)}
  except (OSError, TypeError, SyntaxError, IndexError):
    return None
  first = function.__code__.co_firstlineno
  for got, wanted in pairs:
    if isinstance(got, int) and abs(got) <= 1:
      continue  # 0 and 1 are written everywhere: they point nowhere.
    for node, name in body:
      value = _value(node, function)
      if value is None or type(value[0]) is not type(got) or value[0] != got:
        continue
      if _said(node) in theirs:
        continue
      if isinstance(node, ast.Constant):
        said = f'writes {got!r}'
      else:  # A number or a text the global holds, or a stream the measure named.
        said = f'reads `{node.id}`' + (f' ({got!r})' if value[1] else '')
      course = repr(wanted) if value[1] else f'`{wanted}`'
      return f'{where_at(first + node.lineno - 1, name)} {said}, where the course\'s has {course}'
  return None


def _said(node):
  """What a node writes, as the package's code is held against it: a literal, or a global's name."""
  return ('literal', type(node.value), node.value) if isinstance(node, ast.Constant) else (
      'name', node.id)


def _value(node, function):
  """(the value a literal writes or a global name reads, whether it is plain) in ``function``.

  A global that holds more than a plain value (a stream) is said as a
  measure names it (``probes.notebook_global``). None for any other node.
  """
  if isinstance(node, ast.Constant) and plain(node.value):
    return node.value, True
  if isinstance(node, ast.Name) and node.id in function.__globals__:
    value = function.__globals__[node.id]
    return (value, True) if plain(value) else (notebook_global(node.id), False)
  return None


def _body_nodes(function):
  """(node, name of the def it is in) of the literals and global names in a function's body.

  In the order of the lines; a name the function assigns or takes as an
  argument is its own, never a global's; the defaults of a ``def`` are left
  out (the signature's).
  """
  tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
  if not isinstance(tree, ast.FunctionDef):
    raise TypeError('not a def')  # A lambda's line: its source is not its own.
  own = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
  own |= {node.id for node in ast.walk(tree)
          if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))}
  found = []
  _walk(tree, tree.name, own, found)
  found.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
  return found


def _walk(node, name, own, found):
  """Collects the literals and global names under ``node``, each with the def it is in."""
  for child in ast.iter_child_nodes(node):
    if isinstance(child, ast.arguments):
      continue  # Defaults: the signature's.
    if isinstance(child, (ast.FunctionDef, ast.Lambda)):
      _walk(child, getattr(child, 'name', name), own, found)
      continue
    if isinstance(child, ast.Constant) or (
        isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in own):
      found.append((child, name))
    _walk(child, name, own, found)
