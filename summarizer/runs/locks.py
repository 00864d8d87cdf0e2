"""One run at a time in a directory: a lock that the kernel releases when its holder dies.

A training run holds ``.summarizer.lock`` in its output directory (and in the
directory it exports to) from its first check to its last write. A second
run there (a new run, ``--resume``, ``--overwrite-output-dir``, an export)
stops at once with one line naming the process that holds it. The lock is
the operating system's on that file, taken through ``filelock`` (``flock``
on POSIX, ``LockFileEx`` on its first byte on Windows): a process killed
outright, even by SIGKILL, releases it with its file descriptors, so a run
started after it takes the directory over; the file it left says who held
it last.

The lock file is opened without following links, and a lock path that is a
link (symbolic or hard), not a regular file, or a file that is not a lock
of ours is refused with one line before anything is read or written: the
lock never truncates a file it does not own.
"""

import contextlib
import os
import shlex
import stat
import sys

import filelock

from summarizer import files
from summarizer.errors import SummarizerError

LOCK_NAME = '.summarizer.lock'
# The most of a holder's command line an error message quotes.
MAX_COMMAND_CHARS = 200


def this_process():
  """Returns 'process PID (COMMAND)' for this process, on one line."""
  argv = getattr(sys, 'orig_argv', None) or [sys.executable] + sys.argv
  command = ' '.join(shlex.join([os.path.basename(argv[0])] + list(argv[1:])).split())
  if len(command) > MAX_COMMAND_CHARS:
    command = command[:MAX_COMMAND_CHARS - 3] + '...'
  return f'process {os.getpid()} ({command})'


# How the lock file begins (``this_process``): a file that does not is no lock of ours.
HOLDER_PREFIX = 'process '


def _read_start(fd, size):
  """The lock file's first ``size`` bytes, as text.

  On Windows the holder's lock covers the first byte against every other
  process's reads; there the rest is read, after the first byte that every
  holder's line begins with.
  """
  try:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size).decode('utf-8', 'replace')
  except PermissionError:
    os.lseek(fd, 1, os.SEEK_SET)
    return HOLDER_PREFIX[0] + os.read(fd, size - 1).decode('utf-8', 'replace')


def _read_holder(fd):
  return _read_start(fd, 4096).strip()


def _not_a_lock(path, what):
  return SummarizerError(f'{path}: is not a lock file of ours ({what}); nothing was read or '
                         'changed: move it away, or choose another directory')


def _open_lock(directory, path):
  """Opens (or creates) the lock file at ``path``, refusing what is not a lock of ours.

  Raises:
    SummarizerError: ``path`` is a link, not a regular file, or a file
      with other text than a holder's line; or it cannot be written.
  """
  try:
    fd = files.open_unfollowed(path, os.O_RDWR | os.O_CREAT | files.NON_BLOCKING)
  except OSError as e:
    if os.path.islink(path):
      raise _not_a_lock(path, 'a symbolic link') from None
    if os.path.lexists(path) and not os.path.isfile(path):
      raise _not_a_lock(path, 'not a regular file') from None
    # Read-only, immutable, not ours, a full disk.
    raise SummarizerError(f'{directory}: cannot write in it ({e.strerror})') from None
  info = os.fstat(fd)
  what = None
  if not stat.S_ISREG(info.st_mode):
    what = 'not a regular file'
  elif info.st_nlink > 1:
    what = 'a hard link: another name of a file'
  else:  # Empty, a holder's line, or the start of one being written.
    start = _read_start(fd, len(HOLDER_PREFIX))
    if not HOLDER_PREFIX.startswith(start):
      what = "a file with someone's text in it"
  if what is not None:
    os.close(fd)
    raise _not_a_lock(path, what)
  return fd


def _acquire(directory):
  """Locks ``directory``; returns the lock file's descriptor.

  Raises:
    SummarizerError: another process holds the lock (naming it), or the
      directory cannot be made.
  """
  try:
    os.makedirs(directory, exist_ok=True)
  except FileExistsError:
    raise SummarizerError(f'{directory}: exists and is not a directory') from None
  except OSError as e:
    raise SummarizerError(f'{directory}: cannot create ({e.strerror})') from None
  path = os.path.join(directory, LOCK_NAME)
  while True:
    fd = _open_lock(directory, path)
    if not filelock.lock_descriptor(fd, blocking=False):
      holder = _read_holder(fd) or 'another process'
      os.close(fd)
      raise SummarizerError(f'{directory} is in use by {holder}: wait for it to '
                            'finish, or stop it, and try again')
    # A holder that finished removed the file after we opened it: the lock
    # we hold is on a file no one else will see; start over with the new one.
    try:
      if os.path.samestat(os.fstat(fd), os.lstat(path)):
        break
    except FileNotFoundError:
      pass
    os.close(fd)
  left_by = _read_holder(fd)
  if left_by:
    print(f'note: {directory} was locked by {left_by}, which has ended without '
          'releasing it; taking it over', file=sys.stderr, flush=True)
  try:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (this_process() + '\n').encode('utf-8'))
  except OSError as e:  # A full disk: the lock file is taken away again, the rest untouched.
    _release(directory, fd, ())
    raise SummarizerError(f'{directory}: cannot write its lock file {LOCK_NAME} '
                          f'({e.strerror or e}); nothing in it was changed') from None
  return fd


def _missing(directory):
  """The folders of ``directory``'s path that do not exist yet, deepest first."""
  missing, path = [], os.path.abspath(directory)
  while not os.path.lexists(path):
    missing.append(path)
    path = os.path.dirname(path)
  return missing


def _release(directory, fd, made):
  # Removed while still held, so no one locks the file on its way out; only
  # if it is still the file we hold (not something put in its place).
  path = os.path.join(directory, LOCK_NAME)
  with contextlib.suppress(FileNotFoundError):
    if os.path.samestat(os.fstat(fd), os.lstat(path)):
      try:
        os.remove(path)
      except PermissionError:  # Windows removes no file that is open, even by us.
        os.close(fd)
        fd = None
        with contextlib.suppress(OSError):  # Opened by another meanwhile: it stays.
          os.remove(path)
  if fd is not None:
    os.close(fd)
  # The folders the lock made, if still empty: a command that failed before
  # writing anything leaves nothing behind.
  for path in made:
    try:
      os.rmdir(path)
    except OSError:
      break


@contextlib.contextmanager
def locked(*directories):
  """Holds the lock of each directory (created if missing) for the ``with`` block.

  The folders it created are removed again at the end where they are empty.

  Args:
    *directories: Directories to lock; None entries and repeats of the same
      directory are skipped.

  Raises:
    SummarizerError: a directory is held by another process (one line
      naming it: pid and command), or cannot be created.
  """
  with contextlib.ExitStack() as stack:
    seen = set()
    for directory in directories:
      if directory is None or os.path.realpath(directory) in seen:
        continue
      seen.add(os.path.realpath(directory))
      made = _missing(directory)
      fd = _acquire(directory)
      stack.callback(_release, directory, fd, made)
    yield
