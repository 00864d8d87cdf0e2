"""Code built at run time in the learner's cells, found by reading them, never running them.

The grader reads each learner cell with ``ast`` here, outside the sandbox.
Code built at run time (``exec``, ``eval``, ``compile``, a function made from
a code object, source decoded from base64 or unpickled, the import machinery
or the builtins reached by hand) can be the package's answer in disguise,
and no check can tell; so a function with such code in its own cell or in
any cell that runs before it (the grader runs the learner's cells in order
up to the function's own, every cell for the whole model) is graded by a
teacher, by hand. The learner's ordinary code (numpy, jax, Trax, math)
trips nothing; a cell that does not parse runs nothing, and trips nothing.
"""

import ast
import builtins

from summarizer.contract.recording import GRADED
from summarizer.grading import limits

# Builtins that run or build code, or reach the interpreter (as names, called or not).
RUNNERS = ('exec', 'eval', 'compile', '__import__', '__builtins__', 'get_ipython')
# Modules that load code, decode hidden source or run another interpreter.
MODULES = ('importlib', 'imp', 'marshal', 'pickle', 'dill', 'cloudpickle', 'shelve',
           'base64', 'binascii', 'codecs', 'zlib', 'bz2', 'lzma', 'gzip', 'quopri',
           'builtins', 'ctypes', 'runpy', 'code', 'codeop', 'pydoc', 'zipimport',
           'subprocess', 'pty')
# Attributes that make functions from code, reach code, globals or builtins.
ATTRIBUTES = ('FunctionType', 'CodeType', 'LambdaType', '__code__', '__globals__',
              '__builtins__', '__subclasses__', '__self__', '__import__', '__loader__',
              '__spec__', '__reduce__', '__reduce_ex__', 'f_globals', 'f_builtins',
              'f_code', 'gi_code', 'fromhex')
# Attributes of these modules that do the same.
MODULE_ATTRIBUTES = {'sys': ('modules', 'path', 'meta_path', 'path_hooks', '_getframe'),
                     'os': ('system', 'popen', 'execv', 'execve', 'execl', 'execvp',
                            'execlp', 'spawnv', 'spawnl', 'posix_spawn')}
# Strings naming what the above name ('eval' left out: Trax's mode='eval').
STRINGS = frozenset(RUNNERS + MODULES + ATTRIBUTES) - {'eval', 'code', 'pty'}
BUILTIN_NAMES = frozenset(dir(builtins))
ATTRIBUTE_CALLS = ('getattr', 'setattr', 'delattr', 'hasattr')

MANUAL = 'a teacher grades this {} by hand'
# The key of a cell the grader left unread, its size (``grader.learner_cells``,
# past ``limits.CELL_CHARS``): what runs after it goes to a teacher, as code built at run time does.
TOO_LONG = 'too long'
WHOLE_KEY = 'whole'  # The key of the whole model (Parts 4 and 5): every cell runs before it.


def _module(name):
  return (name or '').split('.')[0]


def _attribute_call(node):
  """``getattr(print, name)``: a builtin's attribute by a computed name (None when not)."""
  if not (isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_CALLS and node.args):
    return None
  target = node.args[0]
  named = len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
  if isinstance(target, ast.Name) and target.id in BUILTIN_NAMES and not named:
    return f'{node.func.id} on {target.id} by a computed name'
  return None


def _construct(node):
  """What a node builds or reaches at run time, in a few words; None for ordinary code."""
  if isinstance(node, ast.Name) and node.id in RUNNERS and isinstance(node.ctx, ast.Load):
    return node.id
  if isinstance(node, ast.Import):
    hit = next((a.name for a in node.names if _module(a.name) in MODULES), None)
    return hit and f'import {hit}'
  if isinstance(node, ast.ImportFrom):
    if _module(node.module) in MODULES:
      return f'from {node.module} import'
    risky = set(ATTRIBUTES) | set(MODULE_ATTRIBUTES.get(node.module, ()))
    hit = next((a.name for a in node.names if a.name in risky), None)
    return hit and f'from {node.module} import {hit}'
  if isinstance(node, ast.Attribute):
    if node.attr in ATTRIBUTES:
      return node.attr
    if isinstance(node.value, ast.Name) and node.attr in MODULE_ATTRIBUTES.get(node.value.id, ()):
      return f'{node.value.id}.{node.attr}'
  if isinstance(node, ast.Call):
    return _attribute_call(node)
  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in STRINGS:
    return f'the string {node.value!r}'
  return None


def findings(source):
  """A cell's code built at run time: [(construct, line)] in reading order; [] if it does not parse.

  A cell that does not parse runs nothing in the sandbox either (the
  grader reports its syntax error).
  """
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return []
  found = set()
  for node in ast.walk(tree):
    construct = _construct(node)
    if construct:
      found.add((getattr(node, 'lineno', 1), getattr(node, 'col_offset', 0), construct))
  return [(construct, line) for line, _, construct in sorted(found)]


def where(cell):
  """A cell as the reason names it: its graded function's name quoted, or 'cell N'."""
  return f"cell '{cell['label']}'" if cell['grade_id'] else cell['label']


def reason(cell, found, what='function'):
  """The one line a verdict gives: the first construct found, its cell and line."""
  construct, line = found[0]
  if construct == TOO_LONG and TOO_LONG in cell:
    return (f'{where(cell)} holds {cell[TOO_LONG]:,} characters, more than the grader reads '
            f'({limits.CELL_CHARS:,} a cell, {limits.NOTEBOOK_CHARS:,} in all): '
            + MANUAL.format(what))
  return (f'code built at run time ({construct}, {where(cell)} line {line}): '
          + MANUAL.format(what))


def manual_reasons(cells, functions=(*GRADED, WHOLE_KEY), ran=None):
  """The functions that go to a teacher: name -> the one-line reason.

  Args:
    cells: The learner's cells in order (``grader.learner_cells``).
    functions: The graded functions to look at, and ``WHOLE_KEY`` for the whole
      model (Parts 4 and 5), which runs every cell.
    ran: The submission's runs (item id -> result): a function whose run
      the sandbox's audit hook saw run code that is not a cell's (``worker.py``)
      goes to a teacher too, the event named (``watched_reasons``).

  Returns:
    For each function with code built at run time in a cell that runs before
    it is graded (those up to its last solution cell, all of them when it has
    none), the first finding in the first such cell; else the first event
    of its run.
  """
  reasons = watched_reasons(ran or {}, functions)
  found = [[(TOO_LONG, 1)] if TOO_LONG in cell else findings(cell['source']) for cell in cells]
  ids = [cell['grade_id'] for cell in cells]
  for name in functions:
    last = len(cells) - 1 - ids[::-1].index(name) if name in ids else len(cells) - 1
    first = next((k for k in range(last + 1) if found[k]), None)
    if first is not None:
      reasons[name] = reason(cells[first], found[first],
                             'part' if name == WHOLE_KEY else 'function')
  reasons.update(starved_reasons(ran or {}, functions))
  return reasons


def starved_reasons(ran, functions=(*GRADED, WHOLE_KEY)):
  """The functions whose own run a busy machine starved (``cpu_clock.over``): name -> reason.

  Not the learner's doing, so never a zero: a teacher grades them, or grades
  the submission again when the machine is quieter (``class_run`` does, once).
  """
  reasons = {}
  for item, result in ran.items():
    status = (result or {}).get('status') or {}
    name = WHOLE_KEY if item in WHOLE_RUNS else item
    if status.get('passed') == 'starved' and name in functions and name not in reasons:
      reasons[name] = (str(status.get('stopped', 'not graded')).removeprefix('not run: ')
                       + ': ' + MANUAL.format('part' if name == WHOLE_KEY else 'function')
                       + ', or grades it again')
  return reasons


# The runs of the whole model (``grader.WHOLE_ITEMS``): Parts 4 and 5 share their key.
WHOLE_RUNS = ('part 4', 'part 5')


def watched_reasons(ran, functions=(*GRADED, WHOLE_KEY)):
  """The functions whose own run the audit hook saw run what no cell holds: name -> reason.

  ``ran`` maps a submission's item ids (a function's name, 'part 4',
  'part 5') to their results; each result's ``status['events']`` is the
  hook's (``worker.read_events``): the event, what it did, its cell and line.
  """
  reasons = {}
  for item, result in ran.items():
    name = WHOLE_KEY if item in WHOLE_RUNS else item
    events = _events(result)
    if name not in functions or name in reasons or not events:
      continue
    reasons[name] = (f"code run that is not a cell's ({_seen(events[0])}, seen as it ran): "
                     + MANUAL.format('part' if name == WHOLE_KEY else 'function'))
  return reasons


def _events(result):
  """The audit hook's events of a run (``worker.read_events``), each a dict."""
  events = ((result or {}).get('status') or {}).get('events')
  return [event for event in events if isinstance(event, dict)] if isinstance(events, list) else []


def _seen(event):
  """What an event did and where: 'keras.src.ops.nn.dot_product_attention, cell 'X' line 4'."""
  place = str(event.get('where', ''))
  if place.startswith('<cell '):
    label, _, line = place[len('<cell '):].partition('> ')
    place = (label if label.startswith('cell ') else f"cell '{label}'") + f' {line}'
  return str(event.get('what', 'unknown'))[:200] + (f', {place}' if place else '')
