"""A graded function's cause of failure as a key: what the class report groups students by.

The grader's feedback is prose for one learner; a teacher reading a class
wants the students whose failure has the same cause together. ``cause_of``
reads a verdict's lines as the grader wrote them, beside the run they came
from, and returns a small record the grader keeps with the verdict (and the
nbgrader plugin writes into the graded cell's metadata, see
``nbgrader_plugin.SandboxedGrades``): its status, and for a failure its key,
the same for every student whose failure has the same cause (the failing
measure and its ``why:``; or the error it raised, of the same type and
message, in the same kind of cell). Numbers are masked in the key: the
inputs are drawn afresh at each grading, and a regrade gives the same keys.
What the grader prints and scores is never read back from here.
"""

import re

# A verdict's status: what the class report shows it as.
PASSED, FAILED, STOPPED, NOT_RUN = 'passed', 'failed', 'stopped at a limit', 'not run'
# The learner's line an error names (``recording.describe``): '(in FUNCTION, line N: code)'.
_LEARNERS_LINE = re.compile(r'\((in [^,()]+), line (\d+): (.*)\)\s*$')
_NUMBER = re.compile(r'\d+(\.\d+)?(e-?\d+)?')
_FAILED = 'Failed: '
_WHY = 'why: '


def masked(text):
  """``text`` with every number as '#': the drawn sizes and values of a grading left out."""
  return _NUMBER.sub('#', ' '.join(str(text).split()))


def cause_of(lines, result, case_names=()):
  """The cause record of one graded function's verdict.

  Args:
    lines: The verdict's failure lines (``grader.failure_lines``; [] when it passed).
    result: The run they came from (the sandbox's entry for the function), or None.
    case_names: The names of the cases judged, so that a case's name is never
      read as a measure (a whole-model case's name holds ': ').

  Returns:
    {'status', 'key', 'label', 'measure', 'why', 'line'}: the key (``masked``)
    and its label (as said) empty unless it failed.
  """
  record = {'status': PASSED, 'key': '', 'label': '', 'measure': '', 'why': '', 'line': ''}
  if not lines:
    return record
  status = (result or {}).get('status') or {}
  if result is None:
    return dict(record, status=NOT_RUN, why=lines[0])
  if status.get('stopped') or status.get('timed out'):
    return dict(record, status=STOPPED, why=lines[0])
  if result.get('unfit'):
    found = {'label': 'its report does not fit', 'measure': 'report', 'why': lines[0][:200]}
  elif result.get('results') is None:
    code = status.get('exit')
    found = {'label': f'crashed: signal {-code}' if code and code < 0 else
                      f'crashed: exit code {code}', 'measure': 'crashed'}
  else:
    found = _failure(lines, case_names)
  return dict(record, status=FAILED, key=masked(found['label']), **found)


def _failure(lines, case_names):
  """The key, measure, why and learner's line of a function's failure lines."""
  why = next((line.strip()[len(_WHY):] for line in lines if line.strip().startswith(_WHY)), '')
  first = lines[0]
  if first.startswith('your cell: '):  # A cell's error comes before the cases it spoils.
    label, _, error = first[len('your cell: '):].partition(': ')
    error, line = _learners_line(error)
    kind = 'a graded cell' if not label.startswith('cell ') else 'a cell of their own'
    return {'label': f'{kind} raised {error}', 'measure': f'{kind} raised', 'why': why,
            'line': line}
  header = next((line for line in lines if line.startswith(_FAILED)), first)
  rest = _after_case(header[len(_FAILED):], case_names)
  line = next(filter(None, (_learners_line(each)[1] for each in lines)), '')
  if rest.startswith('it raised '):
    error, _ = _learners_line(rest[len('it raised '):])
    return {'label': f'it raised {error}', 'measure': 'it raised', 'why': why, 'line': line}
  measure = rest.split(': ', 1)[0]
  return {'label': measure + (f'; why: {why}' if why else ''), 'measure': measure, 'why': why,
          'line': line}


def _after_case(header, case_names):
  """What a 'Failed: CASE: ...' header says after its case's name."""
  for name in sorted(case_names, key=len, reverse=True):
    if header.startswith(name + ': '):
      return header[len(name) + 2:]
  return header.split(': ', 1)[-1]


def _learners_line(error):
  """(the error without the learner's line it names, that line or '')."""
  found = _LEARNERS_LINE.search(error)
  if not found:
    return error.strip(), ''
  cell, number, code = found.groups()
  return error[:found.start()].strip(), f'{cell}, line {number}: {code.strip()}'
