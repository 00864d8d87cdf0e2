"""The runner of the in-notebook checks: cases, their expectations, the tally.

A check is a list of ``Case``s, each a call of the learner's function and
the ``Expect``s its result must meet; ``run_cases`` runs them, prints each
failure once (``failure_text.Printer``), says which earlier exercise to fix
first when that is the cause (``blame.Earlier``) and ends with the tally.
"""

import dataclasses
import operator
from typing import Any, Callable

import jax
import numpy as np

from summarizer.assignment import probes
from summarizer.assignment.compare import allclose
from summarizer.assignment.blame import Earlier
from summarizer.assignment.failure_text import Failure, NotRun, Printer, describe, difference


@dataclasses.dataclass
class Expect:
  """One comparison within a case.

  Attributes:
    what: What is compared, as printed ('output', 'shape', 'str(layer)').
    expected: The expected value (printed, cut short, when the case fails).
    measure: Reads the value to compare from what the case's call returned.
    agree: Tells whether the measured value and the expected one agree.
    explain: Given the measured value of a failed comparison and what the
      call returned, a line naming a cause the check recognises in them, or
      None (only a cause detected is named).
  """
  what: str
  expected: Any
  measure: Callable[[Any], Any] = lambda output: output
  agree: Callable[[Any, Any], bool] = operator.eq
  explain: Callable[[Any, Any], Any] = None


@dataclasses.dataclass
class Case:
  """One call of the learner's function and what its result must satisfy.

  Attributes:
    name: The case, as printed.
    call: Calls the learner's function.
    expects: The ``Expect``s its result must meet.
    explain_error: Given the exception the call raised, a cause the check
      recognises in it, or None.
  """
  name: str
  call: Callable[[], Any]
  expects: list
  explain_error: Callable[[BaseException], Any] = None


# The last check's name and tally, for the assertion of a check cell.
_LAST_RUN = {}


def failed_cases():
  """One line on the last check run: its name and how many of its tests failed.

  A check cell asserts with it, ``assert checks.test_X(X) == 0,
  checks.failed_cases()``: the check has printed each failure once, above
  the error, so the assertion only sums them up.
  """
  if not _LAST_RUN:
    return 'no check has run yet'
  check, failed, total = _LAST_RUN['check'], _LAST_RUN['failed'], _LAST_RUN['total']
  if not failed:
    return f'test_{check}: all {total} tests passed'
  return f'test_{check}: {failed} of {total} tests failed (each printed above)'


def run_cases(cases, check, function=None, given=None):
  """Runs the cases, prints each failure once and the tally; returns the failures.

  A case counts one test per expectation. If its call raises, all of them
  fail: the exception is printed with the first, the others are said not
  compared (in one line when they are several), so the printed failures
  and the tally agree. A failure like one printed above is printed as one
  line. A failed case that passes
  with the package's functions of earlier exercises in place of the
  learner's says which exercise to fix first (see ``Earlier``).

  Args:
    cases: The ``Case``s.
    check: The check's name after 'test_', which is the graded function's.
    function: The learner's function, for a check whose function uses the
      earlier exercises' (None: no earlier function is looked for).
    given: Graded functions handed to the check beside it (name -> function),
      which the cases read from this dict when they run.
  """
  printer, earlier = Printer(), None
  passed = failed = 0
  for case in cases:
    error, output, failures = compare_case(case)
    passed += len(case.expects) - len(failures)
    failed += len(failures)
    if not failures:
      continue
    printed = _failures(case, error, output, failures)
    if function is not None:
      earlier = earlier or Earlier(check, function, given or {}, _passes)
      fix = earlier.fix(case)
      if fix:  # The case's own numbers would only mislead: the cause is earlier.
        printed = [Failure(failure.header, [], failure.again, failure.key)
                   for failure in printed]
        printed[-1].details = [f'    why: {fix}']
    for failure in printed:
      printer.print(failure)
  print(f'{passed} Tests passed, {failed} Tests failed' if failed else 'All tests passed')
  _LAST_RUN.update(check=check, failed=failed, total=passed + failed)
  return failed


def compare_case(case):
  """Runs a case: (the error its call raised or None, its output, its failed expectations).

  Each failed expectation is (expect, the measured value or None, the
  error measuring raised or None); when the call raised, all of them fail.
  """
  try:
    output = case.call()
  except probes.CAUGHT as error:  # pylint: disable=broad-except
    return error, None, [(expect, None, None) for expect in case.expects]
  failures = []
  for expect in case.expects:
    try:
      got = expect.measure(output)
    except probes.CAUGHT as error:  # pylint: disable=broad-except
      failures.append((expect, None, error))
      continue
    try:
      agreed = bool(expect.agree(got, expect.expected))
    except probes.CAUGHT:  # pylint: disable=broad-except
      agreed = False  # Not even comparable (a type or shape far off).
    if not agreed:
      failures.append((expect, got, None))
  return None, output, failures


def _passes(case):
  """Whether a case passes: its call returns and meets every expectation."""
  error, _, failures = compare_case(case)
  return error is None and not failures


def _failures(case, error, output, failures):
  """The ``Failure``s of a case, as printed."""
  name = case.name
  if error is not None:
    described = describe(error)
    first = Failure(f'Failed: {name}: it raised {described}', key=('raised', described),
                    again=f'Failed: {name}: it raised {type(probes.innermost(error)).__name__} '
                    '(same as above)')
    cause = _cause(case.explain_error, error)
    first.details = [f'    why: {cause}'] if cause else []
    rest = [expect.what for expect, _, _ in failures[1:]]
    if len(rest) > 1:  # One line for them all: what they are matters little here.
      rest = [f'{len(rest)} more tests']
    return [first] + [Failure(f'Failed: {name}: {what}: not compared (the call raised, above)')
                      for what in rest]
  printed = []
  for expect, got, error_measuring in failures:
    if isinstance(error_measuring, NotRun):
      printed.append(Failure(f'Failed: {name}: {expect.what}: {error_measuring}'))
    elif error_measuring is not None:
      printed.append(Failure(f'Failed: {name}: {expect.what}: could not be read from '
                             f'what it returned ({describe(error_measuring)})'))
    else:
      details = ['    ' + line for line in difference(expect.expected, got)]
      cause = _cause(expect.explain, got, output)
      printed.append(Failure(f'Failed: {name}: {expect.what}',
                             details + ([f'    why: {cause}'] if cause else [])))
  return printed


def _cause(explain, *values):
  """What ``explain`` recognises in ``values``, or None (also when it cannot tell)."""
  if explain is None:
    return None
  try:
    return explain(*values)
  except probes.CAUGHT:  # pylint: disable=broad-except
    return None  # A value too far off to be read: no cause to name.


def as_array(output):
  """Returns the output as a float64 numpy array."""
  if output is None:
    raise TypeError('it returned None')
  return np.asarray(output, dtype=np.float64)


def shape_of(output):
  if output is None:
    raise TypeError('it returned None')
  return tuple(np.shape(output))


def sublayer_names(layer):
  return [type(sublayer).__name__ for sublayer in layer.sublayers]


def count_weights(weights):
  """The number of numbers in a tree of weights (arrays or their shapes)."""
  return sum(int(np.prod(leaf.shape))
             for leaf in jax.tree_util.tree_leaves(weights))


def expect_output(expected):
  """Expects the output to be this array (shape and numbers)."""
  return Expect('output', np.array(expected, np.float32), as_array, allclose)


def expect_shape(expected):
  return Expect('shape', tuple(expected), shape_of)


def expect_kind(expected_class, measure=lambda output: output, what='type'):
  """Expects what ``measure`` reads to be an instance of ``expected_class``."""
  return Expect(what, expected_class, lambda output: type(measure(output)),
                issubclass)


# The grading seed the checks draw the probes' inputs from: its layers' heads are never as
# wide as they are many (CausalAttention 4 of 3, DecoderBlock 3 of 4, TransformerLM 2 of
# 4), so a "d_head = n_heads" fails.
CHECK_SEED = 10
