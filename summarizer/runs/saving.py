"""Checkpoints that survive a kill.

Trax writes each file under a temporary name and renames it, but a kill
between two files can still pair new weights with an old pickle. So a
checkpoint is first written whole under another basename, then marked
complete, then renamed into place; ``recover`` finishes or discards a save
that a kill interrupted. It touches only the names a run writes (the staged
checkpoint, its marker, the checkpoint and Trax's ``model.*._tmp_`` files),
never through a link, and only in a directory known to hold a run (the
caller's to check: ``runs.run_dir.RunDirectory.read``).
"""

import glob
import os
import stat

from summarizer import files
from summarizer.errors import SummarizerError
from summarizer.inference.model_directory import BASENAME, has_checkpoint, saved_step

STAGED = 'model.staged'         # Where a checkpoint is written first.
COMPLETE = 'model.staged.done'  # Marker: the staged checkpoint is whole.
# What Trax's writers leave of a file they were writing (pickle_to_file, np_to_file).
TRAX_TEMPORARY = BASENAME + '.*._tmp_'


def _staged_files(directory):
  """The staged checkpoint's names that are there (links too, to be refused), the pickle last."""
  prefix = os.path.join(directory, STAGED)
  names = sorted(glob.glob(glob.escape(prefix) + '.opt_slots*.npy.gz'))
  return names + [p for p in (prefix + '.weights.npy.gz', prefix + '.pkl.gz')
                  if os.path.lexists(p)]


def _final(directory, staged):
  """Where the staged checkpoint file ``staged`` goes once whole."""
  return os.path.join(directory, BASENAME + os.path.basename(staged)[len(STAGED):])


def _refuse_links(paths):
  """Raises if any of ``paths`` is there but is not a regular file (a link, a folder)."""
  for path in paths:
    try:
      mode = os.lstat(path).st_mode
    except FileNotFoundError:
      continue
    if not stat.S_ISREG(mode):
      raise SummarizerError(f'{path}: is a link or not a regular file, which no run '
                            'writes; nothing was renamed or deleted: move it away')


def recover(directory):
  """Finishes a save that was marked complete, or discards a partial one.

  Raises:
    SummarizerError: one of the names it would rename, replace or delete
      is a link or not a regular file (nothing is touched then).
  """
  marker = os.path.join(directory, COMPLETE)
  staged = _staged_files(directory)
  leftovers = glob.glob(os.path.join(glob.escape(directory), TRAX_TEMPORARY))
  _refuse_links([marker, *staged, *leftovers, *(_final(directory, p) for p in staged)])
  if os.path.lexists(marker):
    for path in staged:  # The pickle last.
      os.replace(path, _final(directory, path))
    os.remove(marker)
    return
  for path in staged + leftovers:
    os.remove(path)


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
    except (OSError, SummarizerError):
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
  # A new file of ours: never one put in its place (a link is not followed).
  fd = files.open_unfollowed(os.path.join(directory, COMPLETE),
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL)
  with os.fdopen(fd, 'w', encoding='utf-8') as f:
    f.write('complete\n')
    f.flush()
    os.fsync(f.fileno())
  recover(directory)  # Marked whole: renamed into place.
