"""Checkpoints that survive a kill.

Trax writes each file under a temporary name and renames it, but a kill
between two files can still pair new weights with an old pickle. So a
checkpoint is first written whole under another basename, then marked
complete, then renamed into place; ``recover`` finishes or discards a save
that a kill interrupted.
"""

import glob
import os

from summarizer.inference.checkpoint import BASENAME, checkpoint_files

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
