"""A learner's cell as Jupyter runs it: IPython's magics and ``!`` commands made plain Python.

Jupyter runs a cell through IPython's own input transformers
(``IPython.core.inputtransformer2``): ``%%time`` becomes
``get_ipython().run_cell_magic('time', '', body)``, ``%matplotlib inline``
``get_ipython().run_line_magic('matplotlib', 'inline')``, ``!ls``
``get_ipython().system('ls')``. The grader does the same here, outside the
sandbox, so a notebook that runs in Jupyter grades; then, rather than give
the sandbox an IPython shell, each of those calls is replaced by what it
amounts to for a grade:

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
"""

import ast

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
