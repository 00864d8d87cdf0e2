"""A user's files, read and written so that nothing of theirs is harmed.

Reading: only a regular file (not a FIFO, a device or a socket, which could
hang the reader or never end: ``regular_file``), never more than a bound the
caller names (``read_at_most``, ``read_file``). Every JSON document is read by
``read_json`` (or ``parse_json`` for a line of one): within a size bound, a
depth bound checked before the parser recurses, and a schema of its fields'
types (``check_record``), each failure one line naming the file and field.
A notebook is read by ``read_notebook``: as JSON, then held to nbformat's
schema before nbformat walks its cells.

Writing: ``replacing(path)`` gives a new file of our own beside ``path``
(``mkstemp``: created, never a file or a link that was there), with the
mode of the file it replaces or the usual one; once it is written whole it is renamed onto ``path``, which
replaces a link there instead of writing through it, and an existing file
is never left half written. A failure removes it.
"""

import contextlib
import errno
import functools
import json
import os
import re
import stat
import tempfile

from summarizer.errors import SummarizerError


# What ``os.stat`` says a file is, when it is not a regular file.
_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
          (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
          (stat.S_ISSOCK, 'a socket'))


def kind_of(mode):
  """What a file that is not a regular one is, in words, from its ``st_mode``."""
  return next((name for is_kind, name in _KINDS if is_kind(mode)), 'not a file')


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
    kind = kind_of(status.st_mode)
    link = f'a link to {os.path.realpath(path)}, ' if os.path.islink(path) else ''
    raise SummarizerError(f'{path}: not a regular file ({link}{kind})')
  if limit is not None and status.st_size > limit:
    raise too_large(path, limit, what)
  return status.st_size


# POSIX's flags, where the platform has them (Windows has neither): no following a
# link at the name's end, and no waiting on a FIFO's writer. Windows' binary mode, so
# that a byte written is the byte on disk (POSIX has no text mode).
NO_FOLLOW = getattr(os, 'O_NOFOLLOW', 0)
NON_BLOCKING = getattr(os, 'O_NONBLOCK', 0)
_BINARY = getattr(os, 'O_BINARY', 0)


def open_unfollowed(path, flags, mode=0o644):
  """``os.open`` that never opens a file through a symbolic link at ``path``.

  Where the platform has ``O_NOFOLLOW`` the kernel refuses the link
  (``ELOOP``). Where it has not (Windows), a link found at ``path`` is
  refused before the open, and the file opened must be the one ``lstat``
  finds at ``path`` after it (a link put there meanwhile is closed again):
  the same ``ELOOP``, so callers word it once.

  Raises:
    OSError: ``ELOOP`` for a link; whatever ``os.open`` raises.
  """
  flags |= _BINARY
  if NO_FOLLOW:
    return os.open(path, flags | NO_FOLLOW, mode)
  link = OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
  if os.path.islink(path):
    raise link
  fd = os.open(path, flags, mode)
  try:
    same = os.path.samestat(os.fstat(fd), os.lstat(path))
  except OSError:
    same = False
  if not same:
    os.close(fd)
    raise link
  return fd


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


# The deepest nesting of a JSON document the package reads (ours are at most 4 deep);
# Python's parser recurses once a level and fails near 1,000 (RecursionError).
MAX_JSON_DEPTH = 64
# A JSON string (escapes included), and the brackets left once strings are gone.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS = re.compile(r'[\[\]{}]')


def json_depth(text, most=MAX_JSON_DEPTH):
  """How deep the brackets of JSON text nest, counted no further than ``most`` + 1."""
  depth = deepest = 0
  for bracket in _BRACKETS.finditer(_JSON_STRING.sub('', text)):
    depth += 1 if bracket.group() in '[{' else -1
    deepest = max(deepest, depth)
    if deepest > most:
      break
  return deepest


def parse_json(text, where):
  """Parses JSON text nested at most ``MAX_JSON_DEPTH`` deep.

  Raises:
    SummarizerError: naming ``where``: not JSON, or nested deeper.
  """
  if json_depth(text) > MAX_JSON_DEPTH:
    raise SummarizerError(f'{where}: nested more than {MAX_JSON_DEPTH} levels deep, '
                          'deeper than any document the package writes')
  try:
    return json.loads(text, object_pairs_hook=functools.partial(_unique_keys, where))
  except ValueError as e:
    raise SummarizerError(f'{where}: not JSON ({e})') from None


def _unique_keys(where, pairs):
  """A JSON object's dict, refusing a key given twice (JSON would keep the last, silently)."""
  record = {}
  for key, value in pairs:
    if key in record:
      raise SummarizerError(f'{where}: "{key}" is given twice ({json.dumps(record[key])[:40]}, '
                            f'then {json.dumps(value)[:40]}); keep one')
    record[key] = value
  return record


def read_json(path, limit, what):
  """Reads a JSON file: a regular file of at most ``limit`` bytes, UTF-8 (a BOM allowed).

  Args:
    path: The file.
    limit: The most bytes it may hold.
    what: What the bound is for ("a run record may be").

  Raises:
    SummarizerError: naming the file: not a regular file, too large, not
      UTF-8, not JSON, nested too deep.
    OSError: the file is missing or cannot be read, for the caller to word.
  """
  raw = read_file(path, limit, what)
  try:
    text = raw.decode('utf-8-sig')
  except UnicodeDecodeError as e:
    raise SummarizerError(f'{path}: not UTF-8 text ({e.reason} at byte {e.start})') from None
  return parse_json(text, path)


# What a schema's types are called in messages.
_TYPE_WORDS = {bool: 'true or false', int: 'a whole number', float: 'a number',
               str: 'a string', dict: 'a record', list: 'a list', type(None): 'null'}


def _fits(value, kind):
  """Whether a JSON value is of ``kind`` (a type; int is no bool, a float may be an int)."""
  if kind is float:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
  if kind is int:
    return isinstance(value, int) and not isinstance(value, bool)
  return isinstance(value, kind)


def check_record(record, schema, where, at=''):
  """Checks a JSON record's fields against ``schema``; fields it does not name pass.

  Args:
    record: The parsed record (a dict).
    schema: field -> a type, a tuple of types (``type(None)`` for null), a
      dict (a nested record and its schema), or a one-item list ``[kind]``
      (a list of such).
    where: The file, for messages.
    at: The record's place in the file ("verdict."), for messages.

  Raises:
    SummarizerError: naming the file and the first field whose value is of
      another type.
  """
  for field, kind in schema.items():
    if field in record:
      _check_value(record[field], kind, where, f'{at}{field}')


def _check_value(value, kind, where, name):
  """Checks one value against a schema's kind (see ``check_record``)."""
  kinds = kind if isinstance(kind, tuple) else (kind,)
  if value is None and type(None) in kinds:
    return
  shapes = [k for k in kinds if isinstance(k, (dict, list))]
  if shapes:  # A record or a list of some kind (or null, checked above).
    shape = shapes[0]
    if not isinstance(value, type(shape)):
      _wrong(value, ' or '.join(['a record' if isinstance(shape, dict) else 'a list']
                                + ['null'] * (type(None) in kinds)), where, name)
    if isinstance(shape, dict):
      check_record(value, shape, where, f'{name}.')
    else:
      for number, item in enumerate(value):
        _check_value(item, shape[0], where, f'{name}[{number}]')
  elif not any(_fits(value, k) for k in kinds):
    _wrong(value, ' or '.join(_TYPE_WORDS[k] for k in kinds), where, name)


def _wrong(value, should, where, name):
  raise SummarizerError(f'{where}: "{name}" is {json.dumps(value)[:60]}; it must be {should}')


def umask():
  """The process's umask (reading it means setting it: it is set back at once)."""
  mask = os.umask(0)
  os.umask(mask)
  return mask


def exists_message(path):
  """The one line for a file a command will not replace unasked."""
  return f'{path} exists: pass --force to overwrite it'


def _temporary_prefix(path):
  """The start of a temporary file's name beside ``path``: a name no longer than ``path``'s own
  less a few characters would do, so a long name that fits leaves room for ours."""
  return f'.{os.path.basename(path)[:100]}.'


def _mode_for(path):
  """The mode a file written at ``path`` gets: the replaced file's own, or the usual one."""
  try:
    status = os.stat(path)
  except OSError:
    return 0o666 & ~umask()  # The usual mode, not mkstemp's private one.
  return stat.S_IMODE(status.st_mode) if stat.S_ISREG(status.st_mode) else 0o666 & ~umask()


def absolute(path):
  """``os.path.abspath``, or one line where the current folder was deleted meanwhile."""
  try:
    return os.path.abspath(path)
  except FileNotFoundError:
    raise SummarizerError(f'{path}: the current folder no longer exists; give the path from '
                          '/') from None


def check_writable(path):
  """Checks, before any work, that a file can be written at ``path``.

  The folder it goes in (or, where that is still to be made, the nearest one
  that exists) must be a folder where a file of our temporary name can be
  made (writable, a file system that takes the name: not /proc), and
  ``path`` itself no folder, device or FIFO. Nothing is left behind.

  Raises:
    SummarizerError: naming ``path`` and why it cannot be written.
  """
  target = absolute(path)
  if os.path.isdir(target):
    raise SummarizerError(f'{path}: is a folder; name the file to write')
  mode = os.stat(target).st_mode if os.path.exists(target) else stat.S_IFREG
  if not stat.S_ISREG(mode):
    raise SummarizerError(f'{path}: not a regular file ({kind_of(mode)}); nothing is written there')
  folder = os.path.dirname(target)
  while not os.path.lexists(folder):
    folder = os.path.dirname(folder)
  if not os.path.isdir(folder):
    raise SummarizerError(f'{path}: cannot be written ({folder} is a file, not a folder)')
  try:
    if len(os.fsencode(os.path.basename(target))) > os.pathconf(folder, 'PC_NAME_MAX'):
      raise OSError(36, 'File name too long')
    handle, probe = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix='.tmp',
                                     dir=folder)
  except OSError as e:
    raise SummarizerError(f'{path}: cannot be written in {folder} ({e.strerror or e})') from None
  os.close(handle)
  os.remove(probe)


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
  handle, temporary = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix='.tmp',
                                       dir=os.path.dirname(os.path.abspath(path)))
  os.close(handle)
  try:
    os.chmod(temporary, _mode_for(path))
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


# A notebook read to grade or explain: the assignment's is about 200 KB with its
# outputs; a learner's with pictures a few MB.
MAX_NOTEBOOK_BYTES = 100 * 10**6


def _notebook_problem(document):
  """What keeps a parsed JSON document from being a notebook, in words; None if it is one.

  nbformat's own schema, read before nbformat walks the cells (it iterates
  them before it validates, and fails on a number in their place).
  """
  if not isinstance(document, dict):
    return 'not a JSON object'
  version, minor = document.get('nbformat'), document.get('nbformat_minor', 0)
  if not isinstance(version, int) or isinstance(version, bool):
    return 'no "nbformat" version number'
  import nbformat.validator  # pylint: disable=g-import-not-at-top
  validator = nbformat.validator.get_validator(version, minor if isinstance(minor, int) else 0)
  if validator is None:
    return f'nbformat {version}, a version nbformat does not know'
  error = next(iter(validator.iter_errors(document)), None)
  return error and str(error.message)[:160]


def read_notebook(path, what='the notebook'):
  """Reads a notebook (nbformat 4) within bounds, checked against nbformat's schema.

  Raises:
    SummarizerError: naming the file and ``what`` was read: not a regular
      file, over ``MAX_NOTEBOOK_BYTES``, not JSON, nested too deep, or not
      a notebook (the schema's first complaint).
  """
  import nbformat  # pylint: disable=g-import-not-at-top
  try:
    document = read_json(path, MAX_NOTEBOOK_BYTES, 'a notebook may be')
    problem = _notebook_problem(document)
    if problem:
      raise SummarizerError(f'{path}: cannot read {what} (not a notebook: {problem})')
    # As nbformat reads a file (sources joined into one string), from the checked document.
    notebook = nbformat.reads(json.dumps(document), as_version=4)
  except SummarizerError as e:
    message = str(e)
    raise SummarizerError(message if message.startswith(f'{path}: cannot read')
                          else f'cannot read {what}: {message}') from None
  except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
    raise SummarizerError(f'{path}: cannot read {what} ({type(e).__name__}: '
                          f'{str(e)[:120]})') from None
  return notebook
