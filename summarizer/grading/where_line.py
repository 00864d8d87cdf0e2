"""The grader's ``where:`` line: the learner's trace, sent from the sandbox, beside the package's.

The notebook's check names the learner's line where its values first leave
the course's (``assignment/runner.py``), by following the learner's
function and the package's side by side. The sandbox may never hold the
package's function, so the grader splits the work: inside, the worker
follows the learner's function alone on the notebook's check's inputs
(``check_inputs``, in the check's order) and sends each trace back, bounded
(``following.sent_trace``; ``report_schema.fit_traces`` holds it to its
bounds); here, in the teacher's process, the package's function runs on the
same inputs, the cases that fail are picked as the notebook picks them (those
that returned first, at most two followed), and the first line found is the
line the notebook prints. Only the functions of arrays (Exercises 1 to 4).

Nothing here may cost a point: any failure gives no line.
"""

from summarizer.contract import check_inputs, following
from summarizer.contract.judge import allclose
from summarizer.contract.mistakes import attention_with, standard_softmax
from summarizer.contract.recording import CAUGHT, DOT_PRODUCT_ATTENTION, graded_function

TRACED = check_inputs.TRACED
_FOLLOWED = 2  # Failed cases followed at most, as the notebook's runner follows them.


def where_line(name, traces):
  """The ``where:`` line the notebook's check of ``name`` prints for the learner, or None.

  Args:
    name: The graded function.
    traces: The learner's traces (``following.sent_trace``), one a call of
      ``check_inputs.calls``, in order, as fitted by ``report_schema``.
  """
  if name not in TRACED or not isinstance(traces, list) or not traces:
    return None
  try:
    package = graded_function(name)
    calls = check_inputs.calls(name, package)
    if len(calls) != len(traces):
      return None
    followed = [(trace, _course(package, call)) for call, trace in zip(calls, traces)]
    failed = [(trace, course) for (trace, course), call in zip(followed, calls)
              if _failed(name, call, trace, course)]
    failed.sort(key=lambda pair: pair[0]['raised'])  # Those that returned first.
    for trace, course in failed[:_FOLLOWED]:
      line = _where(trace, course)
      if line:
        return line
  except CAUGHT:  # pylint: disable=broad-except
    return None
  return None


def _course(package, call):
  """The package's function followed on a case's inputs: (its Follower, what it returned)."""
  package_file = package.__code__.co_filename
  course = following.Follower(lambda filename: filename == package_file, package.__code__)
  return course, course.run(call)


def _failed(name, call, trace, course):
  """Whether the notebook's check fails the case: it raised, or its output is not the course's.

  DotProductAttention's check takes a standard softmax's numbers too (on a
  fully masked row they differ from the course's).
  """
  output, (_, expected) = trace['output'], course
  if trace['raised'] or output is None or isinstance(expected, BaseException):
    return True
  if allclose(output, expected):
    return False
  if name == DOT_PRODUCT_ATTENTION:
    return not allclose(output, attention_with(**call.keywords, normalise=standard_softmax))
  return True


def _where(trace, course):
  """The learner's line where its values leave the course's, from both traces, or None."""
  follower, _ = course
  if trace['cut'] or follower.cut:
    return None  # Followed only part of the way: a line named would be a guess.
  return (following.array_where(following.received_events(trace), follower.events)
          or following.number_where(following.received_scalars(trace), follower.scalars))


def with_where(name, results, lines):
  """The failure lines with the ``where:`` line (when found) after the first failure's."""
  if not lines:
    return lines
  line = where_line(name, results.get('traces'))
  if not line:
    return lines
  headers = [k for k, text in enumerate(lines) if text.startswith('Failed:')]
  at = headers[1] if len(headers) > 1 else len(lines)
  return lines[:at] + [f'    {line}'] + lines[at:]
