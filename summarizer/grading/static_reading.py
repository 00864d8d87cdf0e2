"""The learner's cells, read here, never run: as Jupyter runs them, and the code they build.

A cell as Jupyter runs it (``python_source``): Jupyter runs a cell through
IPython's own input transformers (``IPython.core.inputtransformer2``):
``%%time`` becomes ``get_ipython().run_cell_magic('time', '', body)``,
``%matplotlib inline`` ``get_ipython().run_line_magic('matplotlib',
'inline')``, ``!ls`` ``get_ipython().system('ls')``. The grader does the same
here, outside the sandbox, so a notebook that runs in Jupyter grades; then,
rather than give the sandbox an IPython shell, each of those calls is
replaced by what it amounts to for a grade:

* ``%%time`` and ``%%capture`` run their body: the body, as the cell's own
  code (its text, comments and line numbers kept, so the static reading and
  the near-copy check read it as written, and the sandbox's audit hook sees
  the cell's own code, not a string compiled at run time);
* ``%time STATEMENT`` runs the statement once: the statement;
* every other magic (``%matplotlib``, ``%timeit``, ``%load_ext``,
  ``%%writefile``, ``%%bash``, ...) and every shell command changes nothing a
  grade reads: ``None`` (``[]`` for ``x = !cmd``), or ``pass`` for a cell magic.

A shell would have to compile the magics' strings while the learner's code is
on the stack, which the audit hook rightly reports; and the grader runs no
shell command. A cell IPython cannot transform, or whose transformation does
not parse, is left as it was: its syntax error costs its own function, as
before.

Code built at run time (``manual_reasons``), read with ``ast``: ``exec``,
``eval``, ``compile``, a function made from a code object, source decoded
from base64 or unpickled, the import machinery or the builtins reached by
hand can be the package's answer in disguise, and no check can tell; so a
function with such code in its own cell or in any cell that runs before it
(the grader runs the learner's cells in order up to the function's own,
every cell for the whole model) is graded by a teacher, by hand. The
learner's ordinary code (numpy, jax, Trax, math) trips nothing; a cell that
does not parse runs nothing, and trips nothing.
"""

import ast
import builtins

from summarizer.contract.recording import GRADED
from summarizer.grading import limits

# --------------------------------------------------------------------------
# A cell as Jupyter runs it.

# Cell magics whose body Jupyter runs as the cell's code.
RUN_BODY = ('time', 'capture')
# What a magic call turns into, by IPython's method.
NOTHING = {'system': 'None', 'getoutput': '[]', 'run_line_magic': 'None'}


def python_source(source):
  """The cell as plain Python, as Jupyter would run it (see the module's docstring)."""
  try:
    from IPython.core.inputtransformer2 import TransformerManager  # pylint: disable=g-import-not-at-top
    transformed = TransformerManager().transform_cell(source)
  except Exception:  # pylint: disable=broad-except  # IPython missing, or a cell it refuses.
    return source
  if transformed.strip() == source.strip():
    return source  # No magic: the cell as written, byte for byte.
  # IPython drops the cell's leading blank lines: put them back, so lines keep their numbers.
  blank = len(source) - len(source.lstrip())
  transformed = '\n' * source[:blank].count('\n') + transformed.lstrip('\n')
  try:
    tree = ast.parse(transformed)
  except (SyntaxError, ValueError):
    return source
  body = _cell_magic(tree)
  if body is not None:
    return body
  return _spliced(transformed, [(node, _replacement(node)) for node in ast.walk(tree)
                                if _magic(node)])


def _magic(node):
  """``get_ipython().METHOD(...)`` with constant arguments: METHOD, else None."""
  if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and isinstance(node.func.value, ast.Call)
          and isinstance(node.func.value.func, ast.Name)
          and node.func.value.func.id == 'get_ipython'):
    return None
  if not all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in node.args):
    return None  # The learner's own call to get_ipython: left for the static reading.
  return node.func.attr


def _cell_magic(tree):
  """The cell's text when it is one cell magic: its body (line 1 blank), or 'pass'."""
  if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
    return None
  call = tree.body[0].value
  if _magic(call) != 'run_cell_magic' or len(call.args) != 3:
    return None
  name, body = call.args[0].value, call.args[2].value
  above = '\n' * tree.body[0].lineno  # The lines above it and the magic's own, blank.
  if name in RUN_BODY:
    return above + python_source(body)
  return f'pass  # %%{name}: not Python, nothing to grade\n'


def _replacement(node):
  """A line magic's or a shell command's plain Python (see ``NOTHING``)."""
  method = _magic(node)
  if method == 'run_line_magic' and len(node.args) == 2 and node.args[0].value == 'time':
    return node.args[1].value
  return NOTHING.get(method, 'None')


def _spliced(text, replacements):
  """The text with each node's span replaced (spans in UTF-8 bytes, as ``ast`` counts)."""
  data = text.encode('utf-8')
  starts = [0]
  for line in data.splitlines(keepends=True):
    starts.append(starts[-1] + len(line))
  spans = sorted(((starts[node.lineno - 1] + node.col_offset,
                   starts[node.end_lineno - 1] + node.end_col_offset, new.encode('utf-8'))
                  for node, new in replacements), reverse=True)
  for start, end, new in spans:
    data = data[:start] + new + data[end:]
  return data.decode('utf-8')


# --------------------------------------------------------------------------
# Code built at run time.

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
