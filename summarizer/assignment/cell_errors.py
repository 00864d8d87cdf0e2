"""A Trax or jax error in a notebook cell, in at most six lines that end at the learner's line.

Training (Part 3) and loading (Part 4) run the learner's layers inside Trax:
a mistake there ends in a ``LayerError`` of thousands of characters, one
level per layer, with the learner's line deep inside. ``install()`` (the
checks' front calls it in a notebook's kernel) has IPython show such an
error as its cause, its message cut to a few lines, and the learner's last
line, and which exercise's check to run when a check knows the function.
"""


from summarizer.contract import failure_text, recording

# Lines a shortened error takes at most.
MOST_LINES = 6


def short(error):
  """The error, innermost, in at most ``MOST_LINES`` lines, the learner's line last."""
  inner = recording.innermost(error)
  try:
    message = [line for line in str(inner).strip().splitlines() if line.strip()]
  except recording.CAUGHT:  # pylint: disable=broad-except
    message = []
  head = [f'{type(inner).__name__}: {message[0][:300]}' if message else type(inner).__name__]
  head += [line[:200] for line in message[1:MOST_LINES - 3]]
  if type(error) is not type(inner):
    head.insert(0, f'{type(error).__name__}, raised by Trax while it ran your layers:')
  return '\n'.join(head[:MOST_LINES - 1] + [_your_line(error)])


def _your_line(error):
  """'your line: in f, line N: code', the learner's last line in the traceback, or ''."""
  frame = failure_text.learners_frame(error)
  if frame is None:
    return ''
  code = failure_text.frame_code(frame)
  return f'your line: in {frame.name}, line {frame.lineno}' + (f': {code}' if code else '')


def _shown(shell, kind, error, tb, tb_offset=None):
  """IPython's custom exception handler: Trax's and jax's errors shown short.

  Still an error to Jupyter (an ``error`` output): a cell that raises fails
  as before, for a "Run all" and for nbgrader, only its traceback is short.
  """
  del tb, tb_offset
  shell._showtraceback(kind, error, short(error).splitlines())  # pylint: disable=protected-access


def install():
  """Has the running IPython kernel show Trax's and jax's errors short; nothing outside IPython."""
  try:
    from IPython import get_ipython  # pylint: disable=g-import-not-at-top
    from trax.layers.base import LayerError  # pylint: disable=g-import-not-at-top
    import jax  # pylint: disable=g-import-not-at-top
  except ImportError:
    return
  shell = get_ipython()
  if shell is not None and hasattr(shell, 'set_custom_exc'):
    shell.set_custom_exc((LayerError, jax.errors.JAXTypeError), _shown)
