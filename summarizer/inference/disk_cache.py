"""jax's persistent compilation cache on disk, for the summarize command.

A summarize command compiles the same few programs at every start (the
article's prefill, the token loop), about a second of its time. With jax's
compilation cache they are read from disk instead, after the first run of
each shape. It holds ~100-200 KB per article length (in 64-token blocks)
and model; it is trimmed to the most recently used files when it passes
``COMPILATION_CACHE_MAX_MB``. Tracing and lowering (jax's Python work before
the cache is asked) are not cached.
"""

import contextlib
import os

import jax

COMPILATION_CACHE_ENV = 'SUMMARIZER_COMPILATION_CACHE'
COMPILATION_CACHE_MAX_MB = 200


def compilation_cache_dir():
  """Where the summarize command keeps compiled programs; None when turned off.

  ``$SUMMARIZER_COMPILATION_CACHE`` names the folder, or turns the cache
  off when set to ``0`` or ``off``; unset, it is
  ``$XDG_CACHE_HOME/summarizer/jax`` (``~/.cache/summarizer/jax``).
  """
  setting = os.environ.get(COMPILATION_CACHE_ENV)
  if setting is not None and setting.strip().lower() in ('0', 'off', 'no', 'false', ''):
    return None
  if setting:
    return os.path.abspath(os.path.expanduser(setting))
  base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(base, 'summarizer', 'jax')


def _trim(directory, max_bytes):
  """Deletes the least recently used files of ``directory`` beyond ``max_bytes``."""
  entries = []
  with os.scandir(directory) as found:
    for entry in found:
      if entry.is_file(follow_symlinks=False):
        stat = entry.stat(follow_symlinks=False)
        entries.append((max(stat.st_atime, stat.st_mtime), stat.st_size, entry.path))
  total = sum(size for _, size, _ in entries)
  for _, size, path in sorted(entries):
    if total <= max_bytes:
      break
    with contextlib.suppress(OSError):  # Another process may have taken it.
      os.remove(path)
      total -= size


def use_compilation_cache():
  """Turns jax's persistent compilation cache on, unless the user said otherwise.

  Returns:
    The cache's folder, or None if it stays off: turned off by
    ``$SUMMARIZER_COMPILATION_CACHE``, already set through jax's own
    ``$JAX_COMPILATION_CACHE_DIR``, or the folder cannot be made.
  """
  directory = compilation_cache_dir()
  if directory is None or jax.config.jax_compilation_cache_dir:
    return None
  try:
    os.makedirs(directory, exist_ok=True)
    _trim(directory, COMPILATION_CACHE_MAX_MB * 2**20)
  except OSError:
    return None
  jax.config.update('jax_compilation_cache_dir', directory)
  # Each of the command's programs compiles in well under jax's default 1 s.
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)
  return directory
