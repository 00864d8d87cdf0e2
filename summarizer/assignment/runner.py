"""The runner of the in-notebook checks: cases, the measures they read, the tally.

A check is a list of ``Case``s, each a call of the learner's function and
the ``Expect``s its result must meet: a measure (``measures.py``), its
expected value and how it is read from what the call returned. ``run_cases``
runs them, has the judge (``judge.py``, the grader's too) hold each measure
against its expected value, prints each failure once (``failure_text.Printer``),
says which earlier exercise to fix first when that is the cause
(``blame.Earlier``) and ends with the tally.
"""

import dataclasses
from typing import Any, Callable

import jax
import numpy as np

from summarizer.assignment import judge, measures, probes, properties, tracing
from summarizer.assignment.blame import Earlier, failing_own
from summarizer.assignment.failure_text import SAME_AS_ABOVE, Failure, NotRun, Printer, describe


@dataclasses.dataclass
class Expect:
  """A measure a case reads, and the value it must have.

  Attributes:
    measure: The ``measures.Measure`` (its name, comparison, text and why).
    expected: The expected value (printed, cut short, when the case fails).
    read: Reads the measured value from what the case's call returned.
  """
  measure: Any
  expected: Any
  read: Callable[[Any], Any] = lambda output: output


@dataclasses.dataclass
class Case:
  """One call of the learner's function and what its result must satisfy.

  Attributes:
    name: The case, as printed.
    call: Calls the learner's function.
    expects: The ``Expect``s its result must meet.
    explain_error: Given the exception the call raised, a cause the check
      recognises in it, or None.
    inputs: The case's inputs by the probes' names (``probes.INPUT_Q``, ...),
      which a measure's why reads beside what the call measured.
  """
  name: str
  call: Callable[[], Any]
  expects: list
  explain_error: Callable[[BaseException], Any] = None
  inputs: dict = dataclasses.field(default_factory=dict)


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
  extra = _properties(check, cases)
  untraced = {id(case) for case, traced in extra if not traced}
  kept = {id(case) for case, _ in extra}  # Counted only when they fail: the course's tally stays.
  kept_failed = 0  # How many of the failures are theirs.
  printer, earlier, located = Printer(), None, False
  passed = failed = 0
  for case in [*cases, *(case for case, _ in extra)]:
    if id(case) in kept and failed > kept_failed:
      break  # Only for an answer that passes its cases: what they say comes first.
    error, output, failures = compare_case(case)
    passed += 0 if id(case) in kept else len(case.expects) - len(failures)
    failed += len(failures)
    kept_failed += len(failures) if id(case) in kept else 0
    if not failures:
      continue
    printed, fix = _failures(case, error, output, failures), None
    if function is not None:
      earlier = earlier or Earlier(check, function, given or {}, _passes, _own_check)
      fix = earlier.fix(case)
    if not fix and given:
      fix = failing_own(given, _own_check)
    if fix:  # The case's own numbers would only mislead: the cause is earlier.
      printed = [Failure(failure.header, [], failure.again, failure.key)
                 for failure in printed]
      printed[0].details = [f'    why: {fix}']  # With the first: the others say 'above'.
    if not fix and not located and id(case) not in untraced:  # One where: line a check.
      located = tracing.where(case.call, check)
      printed[0].details += [f'    {located}'] if located else []
    printer.print_case(case.name, printed)
  print(f'{passed} Tests passed, {failed} Tests failed' if failed else judge.ALL_PASSED)
  _LAST_RUN.update(check=check, failed=failed, total=passed + failed)
  return failed


GRADED = probes.GRADED
# Each exercise's check by its function's name (``checks.py`` fills it): blame asks whether an
# earlier function fails its own.
OWN_CHECKS = {}
# A learner's function's own check, run once: (the function, its failures).
_OWN_RESULTS = {}


def _own_check(name, function):
  """How many tests the learner's ``function`` of exercise ``name`` fails in its own check."""
  if name not in OWN_CHECKS:
    return 1
  kept = _OWN_RESULTS.get(id(function))
  if kept is None or kept[0] is not function:
    saved = dict(_LAST_RUN)  # The check under way keeps its tally for failed_cases().
    kept = _OWN_RESULTS[id(function)] = (function, OWN_CHECKS[name](function))
    _LAST_RUN.update(saved)
  return kept[1]


def _properties(check, cases):
  """(case, whether a where: line helps) of what every answer keeps (``properties.py``)."""
  try:
    learners = tracing.twin(cases[0].call, print)[1] if cases else None  # Any callable.
  except probes.CAUGHT:  # pylint: disable=broad-except
    learners = None
  if learners is None:
    return []
  return [(Case(name, call, [Expect(*expect) for expect in expects]), traced)
          for name, call, expects, traced in properties.cases(check, learners)]


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
      got = expect.read(output)
    except probes.CAUGHT as error:  # pylint: disable=broad-except
      failures.append((expect, None, error))
      continue
    if not judge.agrees(expect.measure, got, expect.expected):
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
    return _raised(case, error, [expect.measure.name for expect, _, _ in failures[1:]])
  printed = []
  for expect, got, error_measuring in failures:
    what = expect.measure.name
    if isinstance(error_measuring, NotRun):  # Its reason below: one like it above is merged.
      printed.append(Failure(f'Failed: {name}: {what}', [f'    {error_measuring}']))
    elif error_measuring is not None:
      printed.append(Failure(f'Failed: {name}: {what}: could not be read from '
                             f'what it returned ({describe(error_measuring)})'))
    else:
      printed.append(judge.failure(name, expect.measure, got, expect.expected,
                                   _context(case, output)))
  return printed


def _raised(case, error, rest):
  """A case whose call raised: the error with its first test, the others not compared."""
  name, described = case.name, describe(error)
  first = Failure(judge.raised(name, described), key=('raised', described),
                  again=judge.raised(name, type(probes.innermost(error)).__name__) + SAME_AS_ABOVE)
  cause = None
  if case.explain_error is not None:
    try:
      cause = case.explain_error(error)
    except probes.CAUGHT:  # pylint: disable=broad-except
      cause = None  # Too far off to be read: no cause to name.
  first.details = [f'    why: {cause}'] if cause else []
  if len(rest) > 1:  # One line for them all: what they are matters little here.
    rest = [f'{len(rest)} more tests']
  return [first] + [Failure(f'Failed: {name}: {what}: not compared (the call raised, above)')
                    for what in rest]


def _context(case, output):
  """What a measure's why reads: the case's inputs, with the measures its call returned.

  A call that returns no measures (a layer's run beside the package's, an
  array) is read as it is when the case has no inputs.
  """
  if isinstance(output, dict):
    return {**case.inputs, **output}
  return case.inputs or output


def as_array(output):
  """Returns the output as a float64 numpy array."""
  if output is None:
    raise TypeError(probes.RETURNED_NONE)
  return np.asarray(output, dtype=np.float64)


def shape_of(output):
  if output is None:
    raise TypeError(probes.RETURNED_NONE)
  return tuple(np.shape(output))


def sublayer_names(layer):
  """The kinds of a layer's sublayers, as the exercise's steps name them (``probes.layer_kind``)."""
  return [probes.layer_kind(sublayer) for sublayer in layer.sublayers]


def count_weights(weights):
  """The number of numbers in a tree of weights (arrays or their shapes)."""
  return sum(int(np.prod(leaf.shape))
             for leaf in jax.tree_util.tree_leaves(weights))


def expect_output(expected, measure=measures.LAYER_OUTPUT):
  """Expects the output to be this array (shape and numbers)."""
  return Expect(measure, np.array(expected, np.float32), as_array)


def expect_shape(expected):
  return Expect(measures.SHAPE, tuple(expected), shape_of)


def expect_kind(expected_class):
  """Expects the output to be an instance of ``expected_class``."""
  return Expect(measures.KIND, expected_class, type)


# The grading seed the checks draw the probes' inputs from: its layers' heads are never as
# wide as they are many (CausalAttention 4 of 3, DecoderBlock 3 of 4, TransformerLM 2 of
# 4), so a "d_head = n_heads" fails.
CHECK_SEED = 10
