"""The one judge: a case's measures held against the package's, and the failures it prints.

A case, on both sides, is what the probes record (``recording.case``): its name,
its measures by name and the error its call raised. The in-notebook checks
(``runner.py``) and the teacher's grader (``grading/grader.py``) both hand
``judge_case`` a recorded case, the ``Measure``s it is judged by (each
defined once in ``measures.py``) with their expected values, and what the
``why:`` lines read: it says nothing of a measure that agrees, else ``Failed:
case: measure``, expected, got, where they differ, and a ``why:`` line when
the measure recognises a mistake. A measure is compared by one of the
comparisons below (numbers to float32 precision, printed layer trees with
spaces aside, optimizer parameters by name, values of one type by equality;
none reads a measure's name), its difference printed by ``failure_text`` and
its mistake named by ``mistakes``. A sandbox's report is judged case by case
here too (``measures.judge_cases`` looks its measures up by name); a case's
inputs are kept for the ``why:`` lines, never compared; a mistake's ``why:``
is said once, as the notebook says it. The notebook reads its measures from
what the learner's function returned (``reading``); one that cannot be read
is ``Unread``.
"""

import dataclasses
import functools
import re
from typing import Callable

import numpy as np

from summarizer.contract import failure_text, recording
from summarizer.contract.failure_text import (SAME_AS_ABOVE, Failure, NotRun, cause_kind,
                                              describe, why_line)

# What a check prints, and a grade says, when nothing failed.
ALL_PASSED = 'All tests passed'
# A measure missing from a report: what came, as the failure prints it.
NOT_MEASURED = '(not measured: the call did not get that far)'


# --------------------------------------------------------------------------
# How what came is held against what was expected: each measure names one.

def allclose(got, expected, loose=False):
  """Same shape and the same numbers to float32 precision (``loose``: a model's log-probabilities)."""
  got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  return got.shape == expected.shape and bool(np.allclose(
      got, expected, rtol=1e-4 if loose else 1e-5, atol=1e-3 if loose else 1e-6))


def arrays_agree(got, expected):
  """An array came, with the expected one's shape and numbers (to float32 precision)."""
  return isinstance(got, np.ndarray) and allclose(got, expected)


def log_probabilities_agree(got, expected):
  """An array came, with a model's log-probabilities (a looser precision)."""
  return isinstance(got, np.ndarray) and allclose(got, expected, loose=True)


def same_tree(got, expected):
  """Two printed layer trees agree, spaces aside."""
  return isinstance(got, str) and got.replace(' ', '') == expected.replace(' ', '')


def parameters_agree(got, expected):
  """Two dicts of an optimizer's parameters: the same names, the same values."""
  return (isinstance(got, dict) and got.keys() == expected.keys()
          and all(np.isclose(float(got[name]), expected[name], rtol=1e-6) for name in expected))


def number_agrees(got, expected):
  """A number close to the expected float."""
  return isinstance(got, (int, float)) and bool(np.isclose(got, expected, rtol=1e-5))


def both_raised_or_not(got, expected):
  """Raising is what counts, not which exception: both name one, or neither does."""
  return (got is None) == (expected is None) and isinstance(got, (str, type(None)))


def same(got, expected):
  """A value of the expected one's type, equal to it (what came through JSON, read strictly)."""
  return type(got) is type(expected) and got == expected


def equal(got, expected):
  """Equal, whatever the types (what the learner's function returned in the notebook)."""
  return got == expected


def is_subclass(got, expected):
  """A type that is the expected class or one of its subclasses."""
  return issubclass(got, expected)


@dataclasses.dataclass(frozen=True, eq=False)
class Measure:
  """One thing measured of a function, and how it is judged (``measures.py`` defines each once).

  Attributes:
    name: As printed after the case ('Failed: case: name').
    agree: (got, expected) -> whether they agree (one of the comparisons above).
    difference: (expected, got) -> the lines printed below the name.
    why: (got, expected, case) -> a line naming a mistake, or None; the
      case is its inputs and measures by name (a layer's run beside the
      package's among them, ``mistakes.RAN``).
    compared: False for what is kept, never judged (a case's inputs, what
      a function prints).
  """
  name: str
  agree: Callable = same
  difference: Callable = failure_text.difference
  why: Callable = None
  compared: bool = True

  def but(self, **changes):
    """This measure with some of its attributes changed (a case's own comparison or why)."""
    return dataclasses.replace(self, **changes)

  def named(self, *parts):
    """This measure, its name's ``{}`` filled with ``parts`` (a mode, ...)."""
    return dataclasses.replace(self, name=self.name.format(*parts))


# --------------------------------------------------------------------------
# The judge.

class Unread:
  """A measure the notebook's call could not read from what the learner's function returned.

  Attributes:
    error: What reading it raised (a ``failure_text.NotRun`` says why in one line).
  """

  def __init__(self, error):
    self.error = error


def reading(reads, call):
  """``call`` (of the learner's function) read by ``reads``: a call that returns its measures.

  Args:
    reads: {measure name: read(what ``call`` returned)}.
    call: Calls the learner's function (a ``functools.partial`` or a lambda,
      which the ``where:`` line finds it in: ``runner.twin``).
  """
  return functools.partial(_read_call, reads, call)


def _read_call(reads, call):
  return read_each(call(), reads)


def learners_call(call):
  """The call of the learner's function in a case's call (``reading``'s, else the call itself).

  The ``where:`` line follows it alone: what reads its output is none of the learner's lines.
  """
  if isinstance(call, functools.partial) and call.func is _read_call:
    return call.args[1]
  return call


def read_each(output, reads):
  """What a call returned, measured by name: {name: read(output)}; a read that raises, ``Unread``."""
  measured = {}
  for name, read in reads.items():
    try:
      measured[name] = read(output)
    except recording.CAUGHT as error:  # pylint: disable=broad-except
      measured[name] = Unread(error)
  return measured


def judge_case(recorded, expected, case, cause=None):
  """The ``Failure``s of a recorded case ([] when it agrees), the notebook's and the grader's.

  Args:
    recorded: The case as the probes record it: {'name', 'measures', 'error'}.
      Its error is the exception itself in the notebook, its text in a
      sandbox's report.
    expected: {``Measure``: the value the package's function gave}.
    case: What the measures' ``why`` reads (the case's inputs and measures).
    cause: The cause the notebook's check recognises in the exception, or None.
  """
  name, error = recorded['name'], recorded.get('error')
  if isinstance(error, BaseException):
    return judge_raised(name, error, [measure.name for measure in expected], cause)
  if error:
    return [raised_as_text(name, str(error)[:600])]
  came = recorded.get('measures')
  return judge_measures(name, expected, came if isinstance(came, dict) else {}, case)


def judge_measures(case_name, expected, got, case):
  """The ``Failure``s of one case, one for each measure that does not agree, in order.

  Args:
    case_name: The case, as printed.
    expected: {``Measure``: the value the package's function gave};
      those not ``compared`` (a case's inputs) are skipped.
    got: What the learner's function gave, by measure name (a measure missing:
      ``NOT_MEASURED``).
    case: What the measures' ``why`` reads (the case's inputs and measures).
  """
  failures = []
  for measure, wanted in expected.items():
    if measure.compared:
      failure = judge(case_name, measure, got.get(measure.name, NOT_MEASURED), wanted, case)
      failures += [failure] if failure else []
  return failures


def judge(case_name, measure, got, expected, case):
  """The ``Failure`` of one measure, or None when what came agrees with what was expected.

  Args:
    case_name: The case, as printed.
    measure: The ``Measure``.
    got, expected: What the learner's function gave, and the package's.
    case: What the measure's ``why`` reads (the case's inputs and measures).
  """
  if not isinstance(got, Unread) and agrees(measure, got, expected):
    return None
  return failure(case_name, measure, got, expected, case)


def agrees(measure, got, expected):
  """Whether what came agrees with what was expected, by the measure's comparison."""
  try:
    return bool(measure.agree(got, expected))
  except recording.CAUGHT:  # pylint: disable=broad-except
    return False  # Not even comparable (a type or shape far off).


def failure(case_name, measure, got, expected, case):
  """A measure that does not agree, as printed: its name, expected, got, where they differ, why."""
  if isinstance(got, Unread):
    return _unread(case_name, measure, got.error)
  details = ['    ' + line for line in measure.difference(expected, got)]
  cause = why(measure, got, expected, case)
  return Failure(f'Failed: {case_name}: {measure.name}',
                 details + ([why_line(cause)] if cause else []), kind=cause_kind(cause))


def _unread(case_name, measure, error):
  """A measure that could not be read: why, in one line (one like it above is merged)."""
  if isinstance(error, NotRun):
    return Failure(f'Failed: {case_name}: {measure.name}', [f'    {error}'])
  return Failure(f'Failed: {case_name}: {measure.name}: could not be read from '
                 f'what it returned ({describe(error)})')


def why(measure, got, expected, case):
  """The mistake the measure recognises, or None (also when the values are too far off to read)."""
  if measure.why is None:
    return None
  try:
    return measure.why(got, expected, case)
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None


def raised(case_name, error):
  """The header of a case whose call raised ``error`` (its text)."""
  return f'Failed: {case_name}: it raised {error}'



def raised_as_text(case_name, error):
  """The ``Failure`` of a case whose call raised, its error a report's text.

  Said once, as the notebook says an exception (``judge_raised``): a case
  that raised the same error as one above says only its type.
  """
  kind = re.match(r'[A-Za-z_][\w.]*', error)
  return Failure(raised(case_name, error), key=('raised', error),
                 again=raised(case_name, kind.group(0) if kind else error[:60]) + SAME_AS_ABOVE)


def judge_raised(case_name, error, measured, cause=None):
  """The ``Failure``s of a case whose call raised ``error`` (the exception), in the notebook.

  The error is printed with the first of the ``measured`` names, with the
  ``cause`` the check recognises in it; the others are said not compared (in
  one line when they are several), so the failures printed and the tally agree.
  """
  described = describe(error)
  first = Failure(raised(case_name, described), [why_line(cause)] if cause else [],
                  kind=cause_kind(cause),
                  key=('raised', described),
                  again=raised(case_name, type(recording.innermost(error)).__name__) + SAME_AS_ABOVE)
  rest = list(measured[1:])
  if len(rest) > 1:  # One line for them all: what they are matters little here.
    rest = [f'{len(rest)} more tests']
  return [first] + [Failure(f'Failed: {case_name}: {what}: not compared (the call raised, above)')
                    for what in rest]
