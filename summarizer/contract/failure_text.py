"""How a failed test is printed: once, in a few short lines.

A measure's ``difference`` (``measures.py``), for the in-notebook checks and
the grader alike: a value is shown on one line (arrays cut to their edges,
long lists to their ends, numbers to 6 significant digits), expected and got
are followed by where they differ (the layers missing, extra or changed of a
layer tree, the first weight of another shape, the first token or the
largest number that differs), an exception by its message and the line of
the learner's code that raised it. A case's failures like those printed above
are printed as one line, and arrays are shown once a check.
"""

import dataclasses
import difflib
import os
import sys
import sysconfig
from typing import Any

import jax
import numpy as np

from summarizer.config import PACKAGE_DIR
from summarizer.contract import recording


@dataclasses.dataclass
class Failure:
  """One failed test as printed.

  Attributes:
    header: 'Failed: case: what' (or '...: it raised ...').
    details: The lines below it: expected, got, where they differ, why.
    again: The header printed instead when a failure with the same details
      (or the same error) was printed above; None: header + ' (same as above)'.
    key: What makes two failures the same; by default their details.
    kind: The kind of mistake its why: line names (``Cause``), or None.
  """
  header: str
  details: list = dataclasses.field(default_factory=list)
  again: str = None
  key: Any = None
  kind: Any = None


SAME_AS_ABOVE = ' (same as above)'  # After a failure's header printed once already.

WHY = '    why: '  # A why: line, below a failure's header.


class Cause(str):
  """A why: line's sentence, with the learner's own numbers, and the mistake it names.

  Two cases that show one mistake with their own numbers (4 tokens padded to
  7, 7 to 7) say it once: a check prints one sentence a ``kind``.
  """

  def __new__(cls, text, kind):
    cause = super().__new__(cls, text)
    cause.kind = kind
    return cause


def why_line(cause):
  """The why: line of a cause (a str or a ``Cause``)."""
  return WHY + cause


def cause_kind(cause):
  return getattr(cause, 'kind', cause)


class NotRun(Exception):
  """A measure that could not be taken because an earlier one failed (said in one line)."""


# The lines of a failure that show its values, and the one that says where they differ most.
_VALUES = ('    expected: ', '    got:      ')
_LARGEST = '    largest difference at '


# Characters a check's failures take before the later ones are held back (said in one
# line): a failure's text stays under 1,600 characters, in the notebook and the grader.
TEXT_BUDGET = 1400


class Printer:
  """Prints failures, each once: one like a failure above is its header only.

  A ``why:`` line printed above is not printed again under another failure,
  and arrays are shown once: after a failure that showed two arrays, a later
  one says only where its arrays differ most. The notebook's checks print
  with it, and the grader writes its lines with it (``out``).
  """

  def __init__(self, budget=None, out=print):
    """A printer; with a ``budget``, a check's text stays short (``print_within``).

    Args:
      budget: Characters the text may take, or None.
      out: What takes each line printed (``print``, or a list's ``append``).
    """
    self.seen = set()
    self.arrays_shown = False
    self.budget, self.used, self.held = budget, 0, [0, 0]  # held: cases, tests
    self.out = out

  def print_within(self, case_name, failures, tests):
    """Prints a case's failures unless they would take the text past the budget.

    The first case is always printed; once one is held back, every later one
    is too (the first failures come first: a learner fixes them first), and
    ``close`` says in one line how many were.

    Args:
      case_name, failures: As ``print_case``'s.
      tests: How many of the check's tests they are (the tally counts them).
    """
    if not self.held[0]:
      state, out, said = (set(self.seen), self.arrays_shown), self.out, []
      self.out = said.append
      try:
        self.print_case(case_name, failures)
      finally:
        self.out = out
      size = sum(len(line) + 1 for line in said)  # Each line and its newline.
      if self.budget is None or not self.used or self.used + size <= self.budget:
        self.used += size
        for line in said:
          self.out(line)
        return
      self.seen, self.arrays_shown = state
    self.held[0] += 1
    self.held[1] += tests

  def close(self):
    """The line that says how many failures were held back, if any."""
    cases, tests = self.held
    if cases:
      self.out(f'Failed: {cases} more case{"s" if cases > 1 else ""}: {tests} more '
            f'test{"s" if tests > 1 else ""}: not shown (fix the failures above first)')

  def print_case(self, case_name, failures):
    """Prints a case's failures; those like one above (and said by their header) in one line."""
    prefix, again = f'Failed: {case_name}: ', []
    for failure in failures:
      if (self.printed_before(failure) and failure.again is None
          and failure.header.startswith(prefix)):
        again.append(failure.header[len(prefix):])
      else:
        self.print(failure)
    if again:  # Measures' names may hold commas: '; ' parts them.
      self.out(prefix + '; '.join(again) + SAME_AS_ABOVE)

  def printed_before(self, failure):
    key = failure.key or tuple(failure.details)
    return bool(key) and key in self.seen

  def print(self, failure):
    if self.printed_before(failure):
      self.out(failure.again or failure.header + SAME_AS_ABOVE)
      return
    self.seen.add(failure.key or tuple(failure.details))
    self.out(failure.header)
    details = failure.details
    if any(line.startswith(_LARGEST) for line in details):
      if self.arrays_shown:  # Their edges were shown above: where they differ is enough.
        details = [line for line in details if not line.startswith(_VALUES)]
      self.arrays_shown = True
    for line in said_once(failure, details, self.seen):
      self.out(line)


def said_once(failure, details, seen):
  """A failure's detail lines less a why: line said above, by its text or its mistake's kind.

  ``seen``: what was said above, updated with this failure's why: line (the
  notebook's ``Printer`` and the grader's ``measures.judge_cases`` keep one).
  """
  kept = []
  for line in details:
    if line.startswith(WHY):
      kind = ('kind', failure.kind) if failure.kind is not None else line
      if line in seen or kind in seen:
        continue
      seen.update((line, kind))
    kept.append(line)
  return kept


# Code that is not the learner's: Python's own library, installed packages
# (Trax, jax, numpy) wherever they are found (a virtual environment's, the
# system's, one a .pth file adds, the user's) and this package.
def _library_folders():
  paths = sysconfig.get_paths()
  folders = {paths['stdlib'], paths['platstdlib'], paths['purelib'], paths['platlib'],
             PACKAGE_DIR}
  folders.update(entry for entry in sys.path
                 if os.path.basename(os.path.normpath(entry or '.')) in ('site-packages',
                                                                       'dist-packages'))
  return tuple(sorted({os.path.realpath(folder) + os.sep for folder in folders if folder}))


_NOT_LEARNERS = _library_folders()
# Code Python's own library writes at run time (a dataclass's __init__, a namedtuple's
# __new__) has no file: it is never the learner's.
_GENERATED = ('<frozen ', '<string>', '<attrs generated')


def learners_code(filename):
  """Whether code from ``filename`` is the learner's (a notebook's cell, not a library's or ours)."""
  return not (filename.startswith(_GENERATED)
              or os.path.realpath(filename).startswith(_NOT_LEARNERS))


def learners_frame(error):
  """The learner's last frame where ``error`` rose (``recording.learners_frame``), or None."""
  return recording.learners_frame(error, learners_code)


frame_code = recording.frame_code  # A frame's line (and the part that raised), for the checks.


def _where_raised(error):
  """' (in NAME, line N: CODE)': where the learner's code raised, or ''."""
  frame = learners_frame(error)
  if frame is None:
    return ''
  code = frame_code(frame)
  return f' (in {frame.name}, line {frame.lineno}' + (f': {code})' if code else ')')


def describe(error):
  """Formats an exception as 'Type: message (in function, line N: code)'.

  A Trax ``LayerError`` is unwrapped to the exception that caused it, and
  the line is the last one of the learner's code in its traceback.
  """
  outer, error = error, recording.innermost(error)
  try:
    message = str(error).strip()
  except recording.CAUGHT:  # pylint: disable=broad-except
    message = '(a message that cannot be printed)'
  lines = message.splitlines()
  if len(lines) > 6:
    message = '\n'.join(lines[:6] + ['...'])
  if len(message) > 500:
    message = message[:500] + ' ...'
  name = type(error).__name__
  return (f'{name}: {message}' if message else name) + _where_raised(outer)


def difference(expected, got):
  """The lines below a failure's header: expected and got, and where they differ.

  A layer tree is said by the layers missing, extra or changed; a list of
  weight shapes by its first difference.
  """
  if isinstance(got, str) and isinstance(expected, str) and '\n' in expected:
    return tree_difference(expected, got)
  if _shape_lists(got, expected):
    return [weight_difference(got, expected)]
  lines = [f'expected: {show(expected)}', f'got:      {show(got)}']
  difference = (first_token_difference(got, expected)
                or (not isinstance(expected, tuple) and largest_difference(got, expected)))
  return lines + ([difference] if difference else [])


def _shape_lists(*values):
  return all(isinstance(value, list) and value
             and all(isinstance(shape, tuple) for shape in value) for value in values)


def weight_difference(got, expected):
  """Where two lists of weight shapes first differ, the package's first."""
  for index, (came, wanted) in enumerate(zip(got, expected)):
    if came != wanted:
      return (f'weight #{index + 1}: the expected shape is {tuple(wanted)}, yours is '
              f'{tuple(came)} ({len(expected)} weights expected, you have {len(got)})')
  return f'{len(expected)} weights expected, you have {len(got)}'


def first_token_difference(got, expected):
  """'first difference at position i: ...' for two lists of ints, else None."""
  if not (isinstance(got, list) and isinstance(expected, list)
          and all(isinstance(t, int) for t in got + expected)):
    return None
  for position, (came, wanted) in enumerate(zip(got, expected)):
    if came != wanted:
      return f'first difference at position {position}: expected {wanted}, got {came}'
  return f'the same for {min(len(got), len(expected))} tokens, then one ends'


def tree_difference(expected, got):
  """Says where two printed layer trees differ: the layers missing, extra or changed.

  Spaces are ignored, as the comparison of layer trees ignores them; the
  first difference is named by the layers around it.
  """
  expected_lines, got_lines = expected.split('\n'), got.split('\n')
  matcher = difflib.SequenceMatcher(
      a=[line.replace(' ', '') for line in expected_lines],
      b=[line.replace(' ', '') for line in got_lines], autojunk=False)
  for tag, i1, i2, j1, j2 in matcher.get_opcodes():
    if tag == 'equal':
      continue
    wanted = _cut(' '.join(line.strip() for line in expected_lines[i1:i2]))
    came = _cut(' '.join(line.strip() for line in got_lines[j1:j2]))
    after = f', after {expected_lines[i1 - 1].strip()!r}' if i1 else ''
    if tag == 'delete':
      return [f'missing (line {i1 + 1} of the expected tree{after}): {wanted}']
    if tag == 'insert':
      return [f'not expected (line {j1 + 1} of yours{after}): {came}']
    return [f'first difference, line {i1 + 1}{after}:',
            f'expected: {wanted}', f'got:      {came}']
  return []


def _cut(text, limit=100):
  return text if len(text) <= limit else text[:limit] + ' ...'


def largest_difference(got, expected):
  """'largest difference ...' for two numeric arrays of one shape, else None."""
  try:
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None
  if got.shape != expected.shape or got.size < 2:
    return None
  difference = np.abs(got - expected)
  index = np.unravel_index(np.nanargmax(np.nan_to_num(difference, nan=np.inf)),
                           difference.shape)
  return (f'largest difference at {tuple(int(i) for i in index)}: expected '
          f'{rounded(float(expected[index]))!r}, got {rounded(float(got[index]))!r}')


# An array of up to this many numbers is shown whole; a larger one by the
# numbers at its edges, numpy's summarised printing.
_WHOLE_ARRAY = 16


_ARRAY_TEXT = 120  # Characters an array's edges may take: fewer edge items past it.


# A list of more items is shown by its first three and last two.
_WHOLE_LIST = 8


def show(value, limit=300):
  """Formats a value for a failure message, on one short line.

  An array of more than a few numbers is cut to its edges, its shape
  given; a long list keeps its first and last items and says how many it
  holds; numbers have 6 significant digits.
  """
  try:
    if isinstance(value, type):
      module = '' if value.__module__ == 'builtins' else value.__module__ + '.'
      text = module + value.__name__.rsplit('.', 1)[-1]  # jax.Array's is dotted.
    elif isinstance(value, (np.ndarray, jax.Array)):
      text = _array_text(np.asarray(value))
    elif isinstance(value, (list, tuple)) and len(value) > _WHOLE_LIST:
      shown = [repr(rounded(item)) for item in value[:3]] + ['...'] + [
          repr(rounded(item)) for item in value[-2:]]
      brackets = '[]' if isinstance(value, list) else '()'
      text = f'{brackets[0]}{", ".join(shown)}{brackets[1]} ({len(value)} items)'
    else:
      text = repr(rounded(value))
  except recording.CAUGHT:  # pylint: disable=broad-except
    text = f'<a {type(value).__name__} that cannot be printed>'
  if len(text) > limit:
    text = text[:limit] + ' ...'
  return text


def _array_text(array):
  """An array as nested lists: whole if small, else its edges and its shape."""
  if array.size <= _WHOLE_ARRAY:
    return repr(rounded(array.tolist()))
  for edge_items in (3, 2, 1):
    text = np.array2string(array, separator=', ', threshold=0, edgeitems=edge_items,
                           max_line_width=sys.maxsize,
                           formatter={'float_kind': lambda x: repr(rounded(float(x)))})
    text = ' '.join(text.split())  # One line: numpy parts the rows with newlines.
    if len(text) <= _ARRAY_TEXT:
      break
  return f'{text} (shape {array.shape})'


class _Large(float):
  """A float printed as the course writes its mask values: -1e9, 1.50325e8."""

  def __repr__(self):
    mantissa, exponent = f'{self:.6g}'.split('e')
    return f'{mantissa}e{int(exponent)}'


# From this size on a number is printed with its exponent, as the course's -1e9: a float
# mask's -1e9, or a score it scaled, never reads as an integer.
_LARGE = 1e6


def rounded(value):
  """Numbers in nested lists to 6 significant digits, whole ones as ints, large ones as 1e9."""
  if isinstance(value, (list, tuple)):
    return type(value)(rounded(item) for item in value)
  if isinstance(value, dict):
    return {key: rounded(item) for key, item in value.items()}
  if isinstance(value, float) and np.isfinite(value):
    if abs(value) >= _LARGE:
      return _Large(f'{value:.6g}')
    value = float(f'{value:.6g}')
    return int(value) if value.is_integer() else value
  return value


def shapes_difference(expected, got):
  """Lists of weight shapes (JSON's lists) by their first difference; else as ``difference``."""
  if isinstance(got, list):
    return [weight_difference(got, expected)]
  return difference(expected, got)


def ids_difference(expected, got):
  """Expected and got, and the first token that differs: lists of ids, never their largest difference."""
  token = first_token_difference(got, expected)
  return [f'expected: {show(expected)}', f'got:      {show(got)}'] + ([token] if token else [])
