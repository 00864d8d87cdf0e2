"""What a command wrote into a directory, so that it deletes or replaces only that.

A training run records in ``.summarizer-run.json`` the files it has
written into its output directory (paths relative to it), each time it
records its config. ``--overwrite-output-dir`` then removes those files and
nothing else (a folder such as ``train/`` only once it is empty), and
refuses a directory that holds no run. An export (``--export-to``) writes
``.summarizer-export.json`` the same way: a directory is replaced by a new
export only if it holds an earlier one and nothing else.
"""

import glob
import json
import os
import stat

from summarizer.errors import SummarizerError
from summarizer.files import read_json, write_text

RUN_MANIFEST = '.summarizer-run.json'  # inference.model_directory.RUN_MANIFEST too
EXPORT_MANIFEST = '.summarizer-export.json'
# A manifest names a run's few dozen files (checkpoints, logs): a few KB.
MAX_MANIFEST_BYTES = 10**6
# The files a training run writes (Trax's metric logs in train/ and eval/).
RUN_PATTERNS = ('config.json', 'config.gin', 'vocab.subwords', 'train.log', 'loss.png', 'data_counters*.pkl',
                'model.pkl.gz', 'model.weights.npy.gz', 'model.opt_slots*.npy.gz',
                'model.staged*', 'model.*._tmp_', 'train/events.out.tfevents.*',
                'eval/events.out.tfevents.*')


# The checkpoint a run writes (Trax's Loop, one task), recorded from the start.
CHECKPOINT_FILES = ('model.pkl.gz', 'model.weights.npy.gz', 'model.opt_slots0.npy.gz')


def _through_link(directory, relative):
  """Tells whether ``relative`` (a path in ``directory``) is or passes through a link."""
  parts = relative.split(os.sep)
  return any(os.path.islink(os.path.join(directory, *parts[:n + 1])) for n in range(len(parts)))


def _matching(directory, patterns):
  """Relative paths of the regular files in ``directory`` that match, reached by no link."""
  found = set()
  for pattern in patterns:
    for path in glob.glob(os.path.join(glob.escape(directory), pattern)):
      relative = os.path.relpath(path, directory)
      if os.path.isfile(path) and not _through_link(directory, relative):
        found.add(relative)
  return found


def read(directory, name=RUN_MANIFEST):
  """Returns the set of relative paths a manifest records (None: no manifest).

  Raises:
    SummarizerError: the manifest is unreadable or names a path outside
      ``directory``.
  """
  path = os.path.join(directory, name)
  try:
    mode = os.lstat(path).st_mode
  except (FileNotFoundError, NotADirectoryError):
    return None
  if not stat.S_ISREG(mode):
    raise SummarizerError(f'{path}: is a link or not a regular file, not the record a run '
                          'wrote; nothing in the directory is touched: remove it yourself')
  try:
    files = read_json(path, MAX_MANIFEST_BYTES, 'a run\'s manifest may be')['files']
  except (OSError, ValueError, KeyError, TypeError, SummarizerError) as e:
    raise SummarizerError(f'{path}: unreadable ({e}); remove the directory yourself') from None
  if not isinstance(files, list) or not all(_inside(f) for f in files):
    raise SummarizerError(f'{path}: names files outside its directory; remove the '
                          'directory yourself')
  return set(files)


def _inside(relative):
  """Tells whether a manifest entry is a plain relative path within the directory."""
  return (isinstance(relative, str) and relative and not os.path.isabs(relative)
          and '..' not in relative.split('/') and '\\' not in relative)


def write(directory, files, name=RUN_MANIFEST):
  """Writes the manifest of ``files`` (relative paths) atomically.

  It is written under a new name of its own first (``mkstemp``: created,
  never a file or a link already there), then renamed into place.
  """
  write_text(os.path.join(directory, name), json.dumps({'files': sorted(files)}, indent=1) + '\n')


def record_run(directory, planned=()):
  """Adds the files a run has written so far to its manifest.

  Called when the run starts (the directory then holds nothing of anyone
  else's: a new run needs an empty directory) and each time it records its
  config.

  Args:
    directory: The run's output directory.
    planned: Names the run will write, recorded before they exist: Trax's
      Loop saves a checkpoint on its own (at its first step), and a run
      killed before it next records would leave one that an
      ``--overwrite-output-dir`` run kept and silently resumed.
  """
  files = (read(directory) or set()) | _matching(directory, RUN_PATTERNS) | set(planned)
  write(directory, files)


def remove_run(directory, files=None):
  """Removes the files an earlier run recorded, and its folders once empty.

  Args:
    directory: The run's output directory.
    files: What its manifest records, as the caller read it (``runs.run_dir.RunDirectory``);
      None: read now.

  Raises:
    SummarizerError: ``directory`` holds no run of ours (no manifest), or
      a recorded path is now a folder or a link (not what a run wrote).
  """
  files = read(directory) if files is None else files
  if files is None:
    raise SummarizerError(f'--overwrite-output-dir: {directory} holds no run of ours '
                          f'(no {RUN_MANIFEST}), so nothing in it is deleted; choose '
                          'another --output-dir or empty it yourself')
  for relative in sorted(files):
    path = os.path.join(directory, relative)
    if _through_link(directory, relative) or os.path.isdir(path):
      raise SummarizerError(f'--overwrite-output-dir: {path} is not the file the run '
                            'wrote (now a link or a folder); nothing was deleted')
  for relative in sorted(files):
    path = os.path.join(directory, relative)
    if os.path.isfile(path):
      os.remove(path)
  for folder in sorted({os.path.dirname(f) for f in files if os.path.dirname(f)}, reverse=True):
    path = os.path.join(directory, folder)
    if os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path):
      os.rmdir(path)
  os.remove(os.path.join(directory, RUN_MANIFEST))
