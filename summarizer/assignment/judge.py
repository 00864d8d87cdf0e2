"""The one judge: a measure held against the package's, and the failure it prints.

The in-notebook checks (``runner.py``) and the teacher's grader
(``grading/grader.py``) both hand it a ``measures.Measure``, what came and
what the package's function gave: it says nothing when they agree, else
``Failed: case: measure``, expected, got, where they differ, and a ``why:``
line when the measure recognises a mistake. ``judge_cases`` judges the cases
of a sandbox's report, which name their measures (``measures.of``); a case's
inputs are kept for the ``why:`` lines, never compared.
"""

from summarizer.assignment import measures, probes
from summarizer.assignment.failure_text import Failure

# What a check prints, and a grade says, when nothing failed.
ALL_PASSED = 'All tests passed'
# A measure missing from a report: what came, as the failure prints it.
NOT_MEASURED = '(not measured: the call did not get that far)'
# Cases only a function that takes their argument (verbose, max_length) is run through.
OPTIONAL_CASES = (probes.QUIET_CASE, probes.max_length_case())


def judge(case_name, measure, got, expected, case):
  """The ``Failure`` of one measure, or None when what came agrees with what was expected.

  Args:
    case_name: The case, as printed.
    measure: The ``measures.Measure``.
    got, expected: What the learner's function gave, and the package's.
    case: What the measure's ``why`` reads (the case's inputs and measures).
  """
  if agrees(measure, got, expected):
    return None
  return failure(case_name, measure, got, expected, case)


def agrees(measure, got, expected):
  """Whether what came agrees with what was expected, by the measure's comparison."""
  try:
    return bool(measure.agree(got, expected))
  except probes.CAUGHT:  # pylint: disable=broad-except
    return False  # Not even comparable (a type or shape far off).


def failure(case_name, measure, got, expected, case):
  """A measure that does not agree, as printed: its name, expected, got, where they differ, why."""
  details = ['    ' + line for line in measure.difference(expected, got)]
  cause = why(measure, got, expected, case)
  return Failure(f'Failed: {case_name}: {measure.name}',
                 details + ([f'    why: {cause}'] if cause else []))


def why(measure, got, expected, case):
  """The mistake the measure recognises, or None (also when the values are too far off to read)."""
  if measure.why is None:
    return None
  try:
    return measure.why(got, expected, case)
  except probes.CAUGHT:  # pylint: disable=broad-except
    return None


def judge_cases(name, got_cases, expected_cases):
  """The failure lines of one function's report against the package's ([] when every case agrees)."""
  got_by_name = {}  # name -> its cases in the order they ran (a name may come twice)
  for case in got_cases:
    if isinstance(case, dict):
      got_by_name.setdefault(case.get('name'), []).append(case)
  judged, lines = measures.of(name), []
  for expected in expected_cases:
    same_name = got_by_name.get(expected['name'])
    got = same_name.pop(0) if same_name else None
    if got is None and expected['name'] in OPTIONAL_CASES:
      continue
    if got is None or got.get('not run'):
      lines.append(f"Failed: {expected['name']}: " + ((got or {}).get('not run') or 'not run'))
    elif got.get('error'):
      lines.append(raised(expected['name'], str(got['error'])[:600]))
    else:
      came = got.get('measures')
      lines += _judge_measures(judged, expected['name'], came if isinstance(came, dict) else {},
                               expected['measures'])
  return lines


def raised(case_name, error):
  """The header of a case whose call raised ``error`` (its text)."""
  return f'Failed: {case_name}: it raised {error}'


def _judge_measures(judged, case_name, got, expected):
  lines = []
  for name, wanted in expected.items():
    measure = judged[name]
    if not measure.compared:
      continue
    failure = judge(case_name, measure, got.get(name, NOT_MEASURED), wanted, expected)
    if failure:
      lines += [failure.header, *failure.details]
  return lines
