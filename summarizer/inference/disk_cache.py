"""jax's persistent compilation cache on disk, for the summarize command.

A summarize command compiles the same few programs at every start (the
article's prefill, the token loop), about a second of its time. With jax's
compilation cache they are read from disk instead, after the first run of
each shape. It holds ~100-200 KB per article length (in 64-token blocks)
and model. Tracing and lowering (jax's Python work before the cache is
asked) are not cached.

Where: ``$SUMMARIZER_COMPILATION_CACHE`` names a folder (``0`` or ``off``
turns the cache off); unset, ``~/.cache/summarizer/jax``. The cache keeps
its entries in a folder of its own inside it, ``summarizer-jax-cache/``,
marked by a ``CACHEDIR.TAG`` file (the Cache Directory Tagging convention,
which backup tools honour). The convention's signature line is the same for
every tool, so the tag also carries a line of ours with a random identity,
written once with the folder; a folder of that name without such a tag is
someone else's, and the cache stays off rather than write there. A relative
``$XDG_CACHE_HOME`` is ignored (the XDG spec says so), and a setting whose
``~user`` names no user turns the cache off: neither makes a folder in the
current one. The cache deletes only files of its own folder named as jax
names its entries (``NAME-cache``, and the ``NAME-atime`` beside one),
never through a link, and only:

- an entry that does not read whole (empty, or cut short by a kill or a
  full disk: jax writes entries in place, and would neither use such a one
  nor ever write it again), at the next start, so that jax writes it anew;
- the least recently used entries, once they pass
  ``COMPILATION_CACHE_MAX_MB`` (200 MB), at each start.
"""

import contextlib
import os
import re
import secrets
import stat
import time

import jax

from summarizer import files

try:  # How jax reads an entry back; without it, only empty or short entries are seen.
  from jax._src.compilation_cache import decompress_executable
except ImportError:  # A jax that moved it.
  decompress_executable = None

COMPILATION_CACHE_ENV = 'SUMMARIZER_COMPILATION_CACHE'
COMPILATION_CACHE_MAX_MB = 200
# The cache's own folder inside the one the setting names, and its tag.
CACHE_FOLDER = 'summarizer-jax-cache'
TAG_NAME = 'CACHEDIR.TAG'
TAG_SIGNATURE = 'Signature: 8a477f597d28d172789f06886806bc55\n'
# The tag's text before the identity line: what every version of the cache wrote.
TAG_COMMENT = (TAG_SIGNATURE +
               "# This folder is the summarizer's cache of compiled jax programs\n"
               '# (python -m summarizer); deleting it loses nothing but time.\n'
               '# https://bford.info/cachedir/\n')
# The line only this cache writes: its name and a random identity (32 hex digits).
IDENTITY_LINE = re.compile(r'# summarizer-jax-cache identity: [0-9a-f]{32}\n')
# The most of a tag that is read (ours is about 250 bytes).
TAG_MAX_BYTES = 4096


def tag_text():
  """A new tag's text: the convention's lines, then ours with a fresh identity."""
  return TAG_COMMENT + f'# summarizer-jax-cache identity: {secrets.token_hex(16)}\n'

# What jax names its entries (lru_cache.py): the program's name, a hash, then these.
ENTRY_SUFFIX = '-cache'
ACCESS_SUFFIX = '-atime'
# An entry starts with its compile time, 4 bytes (compilation_cache._TIME_BYTES).
TIME_BYTES = 4
# Entries changed this long before the last check are checked again: clocks of
# a file system and of this machine may differ a little.
CHECK_SLACK_SECONDS = 60


def compilation_cache_dir():
  """The folder the summarize command's cache lives in; None when turned off.

  ``$SUMMARIZER_COMPILATION_CACHE`` names the folder, or turns the cache
  off when set to ``0`` or ``off``; unset, it is
  ``$XDG_CACHE_HOME/summarizer/jax`` (``~/.cache/summarizer/jax``). The
  entries go in a folder of their own inside it (``CACHE_FOLDER``).
  """
  return cache_setting()[0]


def cache_setting():
  """(The cache's folder or None, a line saying why a setting was set aside or None)."""
  setting = os.environ.get(COMPILATION_CACHE_ENV)
  if setting is not None and setting.strip().lower() in ('0', 'off', 'no', 'false', ''):
    return None, None
  if setting:
    expanded = os.path.expanduser(setting)
    if expanded.startswith('~'):
      return None, (f'{COMPILATION_CACHE_ENV}={setting}: ~ names no home folder here; '
                    'the compilation cache is off')
    return os.path.abspath(expanded), None
  base, why = os.environ.get('XDG_CACHE_HOME'), None
  if base and not os.path.isabs(base):  # The XDG spec: a relative path is invalid, ignored.
    base, why = None, f'XDG_CACHE_HOME={base} is not an absolute path: ignored, as the XDG spec says'
  home = os.path.expanduser('~')
  off = None
  if not base and not os.path.isabs(home):  # No $HOME and no user entry: nowhere sure.
    off = 'no home folder: the compilation cache is off'
  elif not base and not os.path.isdir(home):  # A home folder is not the cache's to make.
    off = f'the home folder {home} does not exist: the compilation cache is off'
  if off:  # Both reasons in one line, where XDG_CACHE_HOME was set aside first.
    return None, f'{why}; {off}' if why else off
  return os.path.join(base or os.path.join(home, '.cache'), 'summarizer', 'jax'), why


def _tagged(folder):
  """Tells whether ``folder`` holds this cache's tag: a regular file, ours to the letter.

  The convention's lines and then our identity line, nothing else: another
  tool's ``CACHEDIR.TAG`` shares the signature line, never the rest.
  """
  try:
    fd = files.open_unfollowed(os.path.join(folder, TAG_NAME), os.O_RDONLY | files.NON_BLOCKING)
  except OSError:
    return False
  with os.fdopen(fd, 'rb') as f:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
      return False
    text = f.read(TAG_MAX_BYTES).decode('utf-8', 'replace')
  if text == TAG_COMMENT:  # Ours, from a version before the identity line: given one.
    _write_tag(folder, replace=True)
    return True
  return (text.startswith(TAG_COMMENT)
          and IDENTITY_LINE.fullmatch(text[len(TAG_COMMENT):]) is not None)


def _write_tag(folder, replace=False):
  """Writes a new tag in ``folder`` (``replace``: over ours, through a temporary file)."""
  path = os.path.join(folder, TAG_NAME)
  if replace:
    temporary = f'{path}.{secrets.token_hex(4)}.tmp'
    with open(temporary, 'x', encoding='utf-8') as f:
      f.write(tag_text())
    os.replace(temporary, path)
    return
  fd = files.open_unfollowed(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
  with os.fdopen(fd, 'w', encoding='utf-8') as f:
    f.write(tag_text())


def _own_folder(place):
  """Makes or finds the cache's folder in ``place``; None where the name is someone else's.

  An empty folder of that name is taken (a start killed before its tag was
  written leaves one); one that holds anything, or a link, is not.
  """
  os.makedirs(place, exist_ok=True)
  folder = os.path.join(place, CACHE_FOLDER)
  with contextlib.suppress(FileExistsError):
    os.mkdir(folder)
  if not stat.S_ISDIR(os.lstat(folder).st_mode):
    return None
  if _tagged(folder):
    return folder
  if os.listdir(folder):
    return None
  try:
    _write_tag(folder)
  except FileExistsError:  # Another start tagged it at the same moment.
    return folder if _tagged(folder) else None
  return folder


def _entries(folder):
  """The jax entries in ``folder``: {path: os.stat_result}, regular files only, no links."""
  found = {}
  with os.scandir(folder) as listing:
    for entry in listing:
      if entry.name.endswith(ENTRY_SUFFIX) and entry.is_file(follow_symlinks=False):
        found[entry.path] = entry.stat(follow_symlinks=False)
  return found


def _reads_whole(path):
  """Tells whether the entry at ``path`` reads back as jax reads it."""
  try:
    fd = files.open_unfollowed(path, os.O_RDONLY | files.NON_BLOCKING)
  except OSError:
    return True  # Gone meanwhile, or not ours to judge.
  with os.fdopen(fd, 'rb') as f:
    data = f.read()
  if len(data) <= TIME_BYTES:
    return False
  if decompress_executable is None:
    return True
  try:  # A cut stream is zlib's or zstd's error, whichever jax compresses with.
    return len(decompress_executable(data)) > TIME_BYTES
  except Exception:  # pylint: disable=broad-except
    return False


def _remove(path):
  """Removes an entry and the access time jax may keep beside it."""
  partner = path[:-len(ENTRY_SUFFIX)] + ACCESS_SUFFIX
  for each in (path, partner):
    with contextlib.suppress(OSError):  # Another process may have taken it.
      if stat.S_ISREG(os.lstat(each).st_mode):
        os.remove(each)


def _drop_broken(folder):
  """Removes the entries written since the last check that do not read whole.

  The tag's modification time says when the entries were last checked:
  each entry is read once, not at every start.
  """
  tag = os.path.join(folder, TAG_NAME)
  checked = os.lstat(tag).st_mtime - CHECK_SLACK_SECONDS
  now = time.time()
  for path, info in _entries(folder).items():
    if info.st_mtime >= checked and not _reads_whole(path):
      _remove(path)
  os.utime(tag, (now, now), follow_symlinks=False)


def _trim(directory, max_bytes):
  """Deletes the least recently used entries of ``directory`` beyond ``max_bytes``."""
  entries = [(max(info.st_atime, info.st_mtime), info.st_size, path)
             for path, info in _entries(directory).items()]
  total = sum(size for _, size, _ in entries)
  for _, size, path in sorted(entries):
    if total <= max_bytes:
      break
    _remove(path)
    total -= size


def use_compilation_cache(warn=None):
  """Turns jax's persistent compilation cache on, unless the user said otherwise.

  Args:
    warn: Called with one line where a setting is set aside (a relative
      ``$XDG_CACHE_HOME``, a ``~user`` that names no user).

  Returns:
    The folder of the cache's entries, or None if it stays off: turned off
    by ``$SUMMARIZER_COMPILATION_CACHE``, already set through jax's own
    ``$JAX_COMPILATION_CACHE_DIR``, its folder cannot be made, or the name
    of its folder is taken by something that is not the cache's.
  """
  place, why = cache_setting()
  if why and warn:
    warn(why)
  if place is None or jax.config.jax_compilation_cache_dir:
    return None
  try:
    folder = _own_folder(place)
    if folder is None:
      return None
    _drop_broken(folder)
    _trim(folder, COMPILATION_CACHE_MAX_MB * 2**20)
  except OSError:
    return None
  jax.config.update('jax_compilation_cache_dir', folder)
  # Each of the command's programs compiles in well under jax's default 1 s.
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)
  return folder
