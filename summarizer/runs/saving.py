"""Checkpoints that survive a kill.

Trax writes each file under a temporary name and renames it, but a kill
between two files can still pair new weights with an old pickle. So a
checkpoint is first written whole under another basename, then marked
complete, then renamed into place; ``recover`` finishes or discards a save
that a kill interrupted.
"""

import glob
import os

from summarizer.errors import SummarizerError
from summarizer.inference.model_directory import (BASENAME, checkpoint_files, has_checkpoint,
                                                   saved_step)

STAGED = 'model.staged'         # Where a checkpoint is written first.


COMPLETE = 'model.staged.done'  # Marker: the staged checkpoint is whole.


def _publish(directory):
  """Renames a complete staged checkpoint into place, then drops the marker."""
  for staged in checkpoint_files(directory, STAGED):
    final = os.path.join(directory, BASENAME + os.path.basename(staged)[len(STAGED):])
    os.replace(staged, final)
  os.remove(os.path.join(directory, COMPLETE))


def recover(directory):
  """Finishes a save that was marked complete, or discards a partial one."""
  if os.path.exists(os.path.join(directory, COMPLETE)):
    _publish(directory)
    return
  for partial in checkpoint_files(directory, STAGED):
    os.remove(partial)
  for leftover in glob.glob(os.path.join(glob.escape(directory), '*._tmp_')):
    os.remove(leftover)


def _is_write_error(error):
  """Tells whether ``error`` is a failed write: an OSError or TensorFlow's file errors."""
  return isinstance(error, OSError) or type(error).__module__.startswith('tensorflow')


def save_or_explain(write, directory):
  """``save_atomically``, with a failed write (a full disk, no permission) as one line.

  What the failed save left half-written is removed; the previous
  checkpoint was never touched and stays loadable.

  Raises:
    SummarizerError: naming the directory, the reason and the checkpoint kept.
  """
  try:
    save_atomically(write, directory)
  except Exception as e:  # pylint: disable=broad-except
    if not _is_write_error(e):
      raise
    reason = getattr(e, 'strerror', None) or getattr(e, 'message', None) or str(e)
    try:
      recover(directory)  # Drops the partial files (and frees their space).
    except OSError:
      pass
    kept = (f'the previous checkpoint (step {saved_step(directory)}) is kept'
            if has_checkpoint(directory) else 'no earlier checkpoint existed')
    full = 'space' in reason.lower() or 'exhausted' in type(e).__name__.lower()
    what = 'the disk is full' if full else f'cannot write ({reason.splitlines()[0][:200]})'
    raise SummarizerError(f'{directory}: saving the checkpoint failed: {what}; {kept}') from None


def save_atomically(write, directory):
  """Saves a checkpoint so that a kill at any moment leaves a loadable one.

  Args:
    write: A function of a basename that writes the checkpoint files (Trax's
      ``Loop.save_checkpoint``).
    directory: The model directory.
  """
  recover(directory)
  write(STAGED)
  marker = os.path.join(directory, COMPLETE)
  with open(marker, 'w', encoding='utf-8') as f:
    f.write('complete\n')
    f.flush()
    os.fsync(f.fileno())
  _publish(directory)
