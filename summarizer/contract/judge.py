"""The one judge: a case's measures held against the package's, and the failures it prints.

A case, on both sides, is what the probes record (``recording.case``): its name,
its measures by name and the error its call raised. The in-notebook checks
(``runner.py``) and the teacher's grader (``grading/grader.py``) both hand
``judge_case`` a recorded case, the ``measures.Measure``s it is judged by
with their expected values, and what the ``why:`` lines read: it says
nothing of a measure that agrees, else ``Failed: case: measure``, expected,
got, where they differ, and a ``why:`` line when the measure recognises a
mistake. ``judge_cases`` judges the cases of a sandbox's report, which name
their measures (``measures.of``); a case's inputs are kept for the ``why:``
lines, never compared; a mistake's ``why:`` is said once, as the notebook says it. The notebook reads its measures from what the
learner's function returned (``reading``); one that cannot be read is
``Unread``.
"""

import functools

from summarizer.contract import measures, probes, recording
from summarizer.contract.failure_text import (SAME_AS_ABOVE, Failure, NotRun, cause_kind,
                                              describe, said_once, why_line)

# What a check prints, and a grade says, when nothing failed.
ALL_PASSED = 'All tests passed'
# A measure missing from a report: what came, as the failure prints it.
NOT_MEASURED = '(not measured: the call did not get that far)'
# Cases only a function that takes their argument (verbose, max_length) is run through.
OPTIONAL_CASES = (recording.QUIET_CASE, probes.max_length_case())


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
    expected: {``measures.Measure``: the value the package's function gave}.
    case: What the measures' ``why`` reads (the case's inputs and measures).
    cause: The cause the notebook's check recognises in the exception, or None.
  """
  name, error = recorded['name'], recorded.get('error')
  if isinstance(error, BaseException):
    return judge_raised(name, error, [measure.name for measure in expected], cause)
  if error:
    return [Failure(raised(name, str(error)[:600]))]
  came = recorded.get('measures')
  return judge_measures(name, expected, came if isinstance(came, dict) else {}, case)


def judge_measures(case_name, expected, got, case):
  """The ``Failure``s of one case, one for each measure that does not agree, in order.

  Args:
    case_name: The case, as printed.
    expected: {``measures.Measure``: the value the package's function gave};
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
    measure: The ``measures.Measure``.
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


def judge_cases(name, got_cases, expected_cases):
  """The failure lines of one function's report against the package's ([] when every case agrees)."""
  got_by_name = {}  # name -> its cases in the order they ran (a name may come twice)
  for case in got_cases:
    if isinstance(case, dict):
      got_by_name.setdefault(case.get('name'), []).append(case)
  judged, lines, said = measures.of(name), [], set()
  for expected in expected_cases:
    same_name = got_by_name.get(expected['name'])
    got = same_name.pop(0) if same_name else None
    if got is None and expected['name'] in OPTIONAL_CASES:
      continue
    if got is None or got.get('not run'):
      lines.append(f"Failed: {expected['name']}: " + ((got or {}).get('not run') or 'not run'))
    else:
      wanted = {judged[name]: value for name, value in expected['measures'].items()}
      for failure in judge_case(dict(got, name=expected['name']), wanted, expected['measures']):
        lines += [failure.header, *said_once(failure, failure.details, said)]  # A why once.
  return lines


def raised(case_name, error):
  """The header of a case whose call raised ``error`` (its text)."""
  return f'Failed: {case_name}: it raised {error}'



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
