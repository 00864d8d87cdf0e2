"""Problems a user can fix, and how every command shows them: one line.

``SummarizerError`` is the package's one exception type for bad input, a
missing file or a mismatched model. The commands parse their arguments with
``OneLineParser`` and run their work through ``run_command``, so a user
sees one line on standard error and a non-zero exit, never a traceback:
also when the output cannot be written (a full disk).
"""

import argparse
import contextlib
import errno
import math
import os
import signal
import sys

# Exit statuses: argparse's for bad input, and the shell's for Ctrl-C.
USAGE_ERROR = 2
INTERRUPTED = 130


class SummarizerError(Exception):
  """Bad input, a missing file or a mismatched model: shown as one line."""


class OneLineParser(argparse.ArgumentParser):
  """An argument parser whose errors are one line, not the usage plus a line."""

  def error(self, message):
    self.exit(USAGE_ERROR, f'error: {message} (see --help)\n')


def finite_float(text):
  """An argparse ``type``: a float that is a number (not NaN, not infinite)."""
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f'invalid float value: {text!r}') from None
  if not math.isfinite(value):
    raise argparse.ArgumentTypeError(f'must be a finite number, not {text}')
  return value


def user_path(text):
  """An argparse ``type``: a path, a leading ``~`` or ``~USER`` expanded as the shell does.

  The shell expands ``~`` only at the start of a word: ``--output-dir=~/x``
  arrives as typed, and would name a folder ``~`` in the current one. Other
  strings (``news``, ``tfds:NAME``, ``-``) come back as they are.
  """
  path = os.path.expanduser(text)
  if path.startswith('~'):
    user = text[1:].split('/', 1)[0]
    why = f'no user named {user}' if user else 'no home folder ($HOME is not set)'
    raise argparse.ArgumentTypeError(f'{text}: cannot expand ~: {why}; write the path out')
  return path


# The largest seed the random generators take (numpy's: 2**32 - 1).
MAX_SEED = 2**32 - 1


def seed(text):
  """An argparse ``type``: a random seed, 0 to ``MAX_SEED``."""
  try:
    value = int(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f'invalid int value: {text!r}') from None
  if not 0 <= value <= MAX_SEED:
    raise argparse.ArgumentTypeError(f'must be between 0 and {MAX_SEED}, not {value}')
  return value


def json_text(value, **kwargs):
  """``json.dumps`` that is valid JSON: NaN and infinities become null.

  Python's ``json`` writes a bare ``NaN``, which JSON parsers reject; a
  number that is not finite (a perplexity that overflowed) is unknown.
  """
  import json  # pylint: disable=g-import-not-at-top

  def finite(item):
    if isinstance(item, float) and not math.isfinite(item):
      return None
    if isinstance(item, dict):
      return {key: finite(v) for key, v in item.items()}
    if isinstance(item, (list, tuple)):
      return [finite(v) for v in item]
    return item

  return json.dumps(finite(value), allow_nan=False, **kwargs)


def shown(text):
  """``text`` as a terminal can show it: a file name's undecodable bytes as \\xNN, not \\udcNN."""
  return text.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')


def say(line):
  """Writes one line to standard error, if the process has one."""
  if sys.stderr is None:  # `2>&-`: print would write to standard output instead.
    return
  line = shown(line)
  try:
    print(line, file=sys.stderr)
  except (OSError, ValueError):  # Closed or broken too: nowhere left to say it.
    pass


def _quiet_output():
  """Flushes standard output; where that fails, sends what it still holds to /dev/null.

  Python flushes standard output once more as it exits; where the reader
  has left or the disk is full, that flush would fail again, with a
  multi-line "Exception ignored" note. Only the process's own standard
  output is redirected (not one that a test put in its place).
  """
  if sys.stdout is None:
    return False
  try:
    sys.stdout.flush()  # A write to another file failed: what was printed still goes out.
    return False
  except OSError:
    pass
  if sys.stdout is not sys.__stdout__:
    return True
  try:
    descriptor = sys.stdout.fileno()
  except (OSError, ValueError):
    return True
  devnull = os.open(os.devnull, os.O_WRONLY)
  os.dup2(devnull, descriptor)
  os.close(devnull)
  return True


# Why a write fails, where no retry helps: a full disk, a quota, a size limit.
WRITE_FAILURES = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def output_lost(error):
  """Says in one line that a write failed (``error``, an ``OSError``); returns the exit status."""
  stdout_lost = _quiet_output()
  why = error.strerror or error
  if error.filename:
    say(f'error: {error.filename}: cannot write ({why})')
  elif stdout_lost or getattr(error, 'output_lost', False):  # Marked by the writer.
    say(f'error: cannot write the output ({why}); it is lost')
  else:  # Which file, the error does not say; nothing is claimed lost.
    say(f'error: a write failed ({why})')
  return USAGE_ERROR


def hold_closed_streams():
  """Puts /dev/null where a standard stream's descriptor is closed (``2>&-``).

  Python leaves ``sys.stderr`` None for a closed descriptor 2, and the commands
  say nothing there; but the descriptor's number is free, so the next file
  opened (a checkpoint, a cache entry) would take it, and whatever a library
  writes to "standard error" would land in that file. /dev/null holds the
  number instead; ``sys.stdin``/``sys.stdout``/``sys.stderr`` stay as Python
  set them (None: nothing to read, nowhere to write).
  """
  for descriptor, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
    try:
      os.fstat(descriptor)
    except OSError:
      devnull = os.open(os.devnull, mode)
      if devnull != descriptor:
        os.dup2(devnull, descriptor)
        os.close(devnull)


def utf8_streams():
  """Makes standard output and error write UTF-8, whatever the console's code page.

  Where Python writes a stream in another encoding (Windows' cp1252, when
  output goes to a file or a pipe), a summary's or a check's character
  outside it would end the command with ``UnicodeEncodeError``. UTF-8, as
  Python's UTF-8 mode writes (PEP 686: the default from Python 3.15); a
  stream already in UTF-8 (Linux, macOS, Windows' own console) is left as
  it is.
  """
  import codecs  # pylint: disable=import-outside-toplevel
  for stream in (sys.stdout, sys.stderr):
    encoding = getattr(stream, 'encoding', None)
    if (encoding and hasattr(stream, 'reconfigure')
        and codecs.lookup(encoding).name != 'utf-8'):
      stream.reconfigure(encoding='utf-8', errors='replace')


def _stdout_unwritable():
  """Whether standard output is open for reading only (``1</dev/null``).

  Only asked after a write failed with ``EBADF``; where the platform cannot
  tell a descriptor's mode (Windows has no ``fcntl``), that failure says it.
  """
  try:
    import fcntl  # pylint: disable=import-outside-toplevel
  except ImportError:
    return True
  try:
    return fcntl.fcntl(1, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
  except OSError:
    return True


# TensorFlow's errors of its own file I/O (``tf.errors``; its file writer raises them, not
# OSError), by class name: the class need not be imported to be recognised.
_TENSORFLOW_IO_ERRORS = ('ResourceExhaustedError', 'PermissionDeniedError', 'NotFoundError',
                         'DataLossError', 'FailedPreconditionError', 'UnavailableError',
                         'AlreadyExistsError', 'OutOfRangeError')


def library_io_error(error):
  """What went wrong, in one line, where ``error`` is TensorFlow's or jax's own I/O error; else None.

  TensorFlow's file writer (``tf.io.gfile``, a vocabulary's ``store_to_file``)
  raises ``tf.errors.ResourceExhaustedError`` on a full disk, jax a
  ``JaxRuntimeError``: neither is an ``OSError``.
  """
  kind, module = type(error).__name__, type(error).__module__ or ''
  if module.startswith('tensorflow') and kind in _TENSORFLOW_IO_ERRORS:
    text = getattr(error, 'message', None) or str(error)
  elif module.startswith(('jax', 'jaxlib')) and kind in ('XlaRuntimeError', 'JaxRuntimeError'):
    text = str(error)
  else:
    return None
  return (text.strip().splitlines() or [kind])[0][:300]


def _interrupted_at_once(signum, frame):
  """SIGINT's handler: an import (jax's, say, inside C++) or a command not started yet ends here.

  A KeyboardInterrupt raised inside an import can cross C++ code (jax's
  nanobind modules), which aborts Python with a C++ message; and before the
  command's work starts there is nothing of the user's to keep. Both exit at
  once, in one line, with status 130. Anywhere else Ctrl-C is Python's
  KeyboardInterrupt, which ``run_command`` (or a run's own handler) catches.
  After a command's work has ended (Python unloading TensorFlow takes
  seconds), Ctrl-C only cuts that short: the process ends with the
  command's own status, its output already flushed.
  """
  del signum
  if _FINISHED and not _RUNNING:
    try:
      if sys.stderr is not None:
        sys.stderr.flush()
    except (OSError, ValueError):
      pass
    os._exit(_FINISHED[-1])  # pylint: disable=protected-access
  importing = False
  while frame is not None:
    if frame.f_code.co_filename.startswith('<frozen importlib'):
      importing = True
      break
    frame = frame.f_back
  if importing or not _RUNNING:
    if _MOVED_STDERR:  # A quiet import holds descriptor 2 (``sys.stderr`` too): go around it.
      try:
        os.write(_MOVED_STDERR[-1], b'stopped (Ctrl-C)\n')
      except OSError:
        pass
    else:
      say('stopped (Ctrl-C)')
    os._exit(INTERRUPTED)  # pylint: disable=protected-access
  raise KeyboardInterrupt


_RUNNING = []  # The commands whose work is under way (``run_command``).
_FINISHED = []  # The statuses of commands whose work has ended, output flushed.
_MOVED_STDERR = []  # The real standard error's descriptor, while a quiet import holds 2.


@contextlib.contextmanager
def stderr_moved(saved_fd):
  """While library noise is captured: Ctrl-C's one line goes to ``saved_fd``, the real stderr."""
  _MOVED_STDERR.append(saved_fd)
  try:
    yield
  finally:
    _MOVED_STDERR.pop()


def stop_cleanly_on_interrupt():
  """Installs the Ctrl-C handler of a command (``_interrupted_at_once``), before heavy imports.

  Only where Ctrl-C is Python's own (not ignored, as in a background job).
  """
  if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_at_once)


def run_command(work, interrupted='stopped'):
  """Runs a command's work and returns the exit status.

  What the work printed is flushed here, so a full disk is said in one
  line while the command can still say it.

  Args:
    work: A function of no arguments that does the command's work and
      returns its exit status.
    interrupted: What to say on Ctrl-C (what was kept, how to go on).

  Returns:
    ``work``'s status; 2 after a ``SummarizerError`` or a write that failed
    (a full disk; shown as one line); 130 after Ctrl-C; 0 if the reader of
    the output went away.
  """
  hold_closed_streams()
  _RUNNING.append(work)
  utf8_streams()
  try:
    status = work()
    if sys.stdout is not None:
      sys.stdout.flush()
    _FINISHED.append(status)
    return status
  except SummarizerError as e:
    # Gin adds a line ("In call to configurable 'TrainTask' ...") to what is
    # raised inside a Trax configurable: the first line is ours.
    say(f'error: {str(e).splitlines()[0] if str(e) else type(e).__name__}')
    return USAGE_ERROR
  except KeyboardInterrupt:
    say(interrupted)
    return INTERRUPTED
  except BrokenPipeError:  # `... | head`: the reader stopped; nothing to report.
    _quiet_output()
    return 0
  except OSError as e:
    if e.errno == errno.EBADF and _stdout_unwritable():  # `1</dev/null`
      _quiet_output()
      say('error: standard output is not open for writing: nowhere to write the output')
      return USAGE_ERROR
    if e.errno not in WRITE_FAILURES:
      raise
    return output_lost(e)
  except Exception as e:  # pylint: disable=broad-except
    reason = library_io_error(e)
    if reason is None:
      raise
    _quiet_output()
    say(f'error: {reason}')
    return USAGE_ERROR
  finally:
    _RUNNING.pop()
