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
marked as the cache's by a ``CACHEDIR.TAG`` file (the Cache Directory
Tagging convention, which backup tools honour); a folder of that name
without the tag is someone else's, and the cache stays off rather than
write there. The cache deletes only files of its own folder named as jax
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
import stat
import time

import jax

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
TAG_TEXT = (TAG_SIGNATURE +
            "# This folder is the summarizer's cache of compiled jax programs\n"
            '# (python -m summarizer); deleting it loses nothing but time.\n'
            '# https://bford.info/cachedir/\n')
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
  setting = os.environ.get(COMPILATION_CACHE_ENV)
  if setting is not None and setting.strip().lower() in ('0', 'off', 'no', 'false', ''):
    return None
  if setting:
    return os.path.abspath(os.path.expanduser(setting))
  base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(base, 'summarizer', 'jax')


def _tagged(folder):
  """Tells whether ``folder`` holds the cache's tag (a regular file, not a link)."""
  try:
    fd = os.open(os.path.join(folder, TAG_NAME), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
  except OSError:
    return False
  with os.fdopen(fd, 'rb') as f:
    signature = f.read(len(TAG_SIGNATURE))
    return stat.S_ISREG(os.fstat(fd).st_mode) and signature == TAG_SIGNATURE.encode()


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
    fd = os.open(os.path.join(folder, TAG_NAME),
                 os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
  except FileExistsError:  # Another start tagged it at the same moment.
    return folder if _tagged(folder) else None
  with os.fdopen(fd, 'w', encoding='utf-8') as f:
    f.write(TAG_TEXT)
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
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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


def use_compilation_cache():
  """Turns jax's persistent compilation cache on, unless the user said otherwise.

  Returns:
    The folder of the cache's entries, or None if it stays off: turned off
    by ``$SUMMARIZER_COMPILATION_CACHE``, already set through jax's own
    ``$JAX_COMPILATION_CACHE_DIR``, its folder cannot be made, or the name
    of its folder is taken by something that is not the cache's.
  """
  place = compilation_cache_dir()
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
