"""A user's files, read and written so that nothing of theirs is harmed.

Reading: only a regular file (not a FIFO, a device or a socket, which could
hang the reader or never end: ``regular_file``), never more than a bound the
caller names (``read_at_most``, ``read_file``).

Writing: ``replacing(path)`` gives a new file of our own beside ``path``
(``mkstemp``: created, never a file or a link that was there), with the
usual mode; once it is written whole it is renamed onto ``path``, which
replaces a link there instead of writing through it, and an existing file
is never left half written. A failure removes it.
"""

import contextlib
import os
import stat
import tempfile

from summarizer.errors import SummarizerError


# What ``os.stat`` says a file is, when it is not a regular file.
_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
          (stat.S_ISSOCK, 'a socket'))


def amount(size):
  """``size`` bytes in words, in powers of ten: '1 MB', '2.5 GB', '300 bytes'."""
  for unit, scale in (('GB', 10**9), ('MB', 10**6), ('KB', 10**3)):
    if size >= scale:
      return f'{size / scale:.3g} {unit}'
  return f'{size} bytes'


def too_large(where, limit, what):
  """The error for a file or stream of more than ``limit`` bytes.

  ``what`` ends the sentence "over 10 MB, the most ...": "an article may be".
  """
  return SummarizerError(f'{where}: too large (over {amount(limit)}, the most {what})')


def regular_file(path, limit=None, what='such a file may be'):
  """Checks, before anything opens it, that ``path`` is a regular file of at most ``limit`` bytes.

  ``os.stat`` follows links, so a link to ``/dev/zero`` is seen as the
  device it is; and nothing is opened, so a FIFO cannot hang the reader.

  Args:
    path: The file.
    limit: The most bytes it may hold (None: any size).
    what: What the bound is for, for the error ("an article may be").

  Returns:
    Its size in bytes.

  Raises:
    SummarizerError: it is a FIFO, a device, a socket or a directory, or
      larger than ``limit``.
    OSError: from ``os.stat`` (``FileNotFoundError``), for the caller to word.
  """
  status = os.stat(path)
  if not stat.S_ISREG(status.st_mode):
    kind = next((name for is_kind, name in _KINDS if is_kind(status.st_mode)), 'not a file')
    link = f'a link to {os.path.realpath(path)}, ' if os.path.islink(path) else ''
    raise SummarizerError(f'{path}: not a regular file ({link}{kind})')
  if limit is not None and status.st_size > limit:
    raise too_large(path, limit, what)
  return status.st_size


def read_at_most(file, limit, where, what):
  """Reads a binary file or stream to its end, refusing one of more than ``limit`` bytes.

  At most ``limit`` + 1 bytes are read, whatever the file says of its size
  (a pipe has none; a file may grow).

  Raises:
    SummarizerError: naming ``where``, if there is more.
  """
  data = file.read(limit + 1)
  if len(data) > limit:
    raise too_large(where, limit, what)
  return data


def read_file(path, limit, what):
  """Returns the bytes of ``path``, a regular file of at most ``limit`` bytes.

  Raises:
    SummarizerError: see ``regular_file`` and ``read_at_most``.
    OSError: the file is missing or cannot be read.
  """
  regular_file(path, limit, what)
  with open(path, 'rb') as f:
    return read_at_most(f, limit, path, what)


def umask():
  """The process's umask (reading it means setting it: it is set back at once)."""
  mask = os.umask(0)
  os.umask(mask)
  return mask


def exists_message(path):
  """The one line for a file a command will not replace unasked."""
  return f'{path} exists: pass --force to overwrite it'


@contextlib.contextmanager
def replacing(path, force=True):
  """Yields the path of a new file beside ``path``; renames it onto ``path`` at the end.

  Args:
    path: The file to write (or replace).
    force: Whether an existing ``path`` may be replaced (checked again just
      before the rename: it may have appeared meanwhile).

  Raises:
    SummarizerError: ``path`` exists and ``force`` is off.
    OSError: the new file cannot be made or renamed (a full disk, no
      permission); nothing is left behind.
  """
  handle, temporary = tempfile.mkstemp(prefix=f'.{os.path.basename(path)}.', suffix='.tmp',
                                       dir=os.path.dirname(os.path.abspath(path)))
  os.close(handle)
  try:
    os.chmod(temporary, 0o666 & ~umask())  # The usual mode, not mkstemp's private one.
    yield temporary
    if not force and os.path.lexists(path):
      raise SummarizerError(exists_message(path))
    os.replace(temporary, path)
  finally:
    if os.path.lexists(temporary):
      os.remove(temporary)


def write_text(path, text, force=True):
  """Writes ``text`` (UTF-8) to ``path`` whole, through ``replacing``."""
  with replacing(path, force) as temporary:
    with open(temporary, 'w', encoding='utf-8') as f:
      f.write(text)
      f.flush()
      os.fsync(f.fileno())
