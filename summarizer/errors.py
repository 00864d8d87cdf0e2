"""Problems a user can fix, and how every command shows them: one line.

``SummarizerError`` is the package's one exception type for bad input, a
missing file or a mismatched model. The commands parse their arguments with
``OneLineParser`` and run their work through ``run_command``, so a user
sees one line on standard error and a non-zero exit, never a traceback.
"""

import argparse
import math
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


def run_command(work, interrupted='stopped'):
  """Runs a command's work and returns the exit status.

  Args:
    work: A function of no arguments that does the command's work and
      returns its exit status.
    interrupted: What to say on Ctrl-C (what was kept, how to go on).

  Returns:
    ``work``'s status; 2 after a ``SummarizerError`` (shown as one line);
    130 after Ctrl-C; 0 if the reader of the output went away.
  """
  try:
    return work()
  except SummarizerError as e:
    # Gin adds a line ("In call to configurable 'TrainTask' ...") to what is
    # raised inside a Trax configurable: the first line is ours.
    print(f'error: {str(e).splitlines()[0] if str(e) else type(e).__name__}', file=sys.stderr)
    return USAGE_ERROR
  except KeyboardInterrupt:
    print(interrupted, file=sys.stderr)
    return INTERRUPTED
  except BrokenPipeError:  # `... | head`: the reader stopped; nothing to report.
    return 0
