"""The grader's ``where:`` line: the learner's trace, sent from the sandbox, beside the package's.

The notebook's check names the learner's line where its values (or layers)
first leave the course's (``assignment/runner.py``), by following the
learner's function and the package's side by side. The sandbox may never
hold the package's function, so the grader splits the work: inside, the
worker follows the learner's function alone on the notebook's check's inputs
(``check_inputs``, in the check's order) and sends each trace back, bounded
(``following.sent_trace``; ``report_schema.fit_traces`` holds it to its
bounds); here, in the teacher's process, the package's function runs on the
same inputs, the cases that fail are picked as the notebook picks them (those
that returned first, at most two followed), and the first line found is the
line the notebook prints (``following.where_of``). The grader's own cases
are drawn at another seed: the line is printed with the name of the
notebook's case it was found on, so that its shapes and numbers are said of
the case they are from.

Nothing here may cost a point: any failure gives no line.
"""

from summarizer.contract import check_inputs, following
from summarizer.contract.judge import allclose
from summarizer.contract.mistakes import attention_with, standard_softmax
from summarizer.contract.recording import CAUGHT, DOT_PRODUCT_ATTENTION, graded_function

TRACED = check_inputs.TRACED
_FOLLOWED = 2  # Failed cases followed at most, as the notebook's runner follows them.


def where_line(name, traces):
  """The ``where:`` line the notebook's check of ``name`` prints, and its case: (case, line) or None.

  Args:
    name: The graded function.
    traces: The learner's traces (``following.sent_trace``), one a call of
      ``check_inputs.calls``, in order, as fitted by ``report_schema``.
  """
  if name not in TRACED or not isinstance(traces, list) or not traces:
    return None
  try:
    package = graded_function(name)
    calls, names = check_inputs.calls(name, package), check_inputs.case_names(name)
    if len(calls) != len(traces):
      return None
    told = check_inputs.told_by_trace(name)
    followed = [(case, trace, _course(package, call))
                for case, call, trace in zip(names, calls, traces)]
    failed = [(case, trace, course) for (case, trace, course), call in zip(followed, calls)
              if _failed(name, call, trace, course, case in told)]
    failed.sort(key=lambda found: found[1]['raised'])  # Those that returned first.
    for case, trace, course in failed[:_FOLLOWED]:
      line = _where(trace, course, package.__name__)
      if line:
        return case, line
  except CAUGHT:  # pylint: disable=broad-except
    return None
  return None


def _course(package, call):
  """The package's function followed on a case's inputs: (its Follower, what it returned,
  what it kept as ``following.where_of`` reads it, computed once)."""
  package_file = package.__code__.co_filename
  course = following.Follower(lambda filename: filename == package_file, package.__code__)
  returned = course.run(call)
  return course, returned, following.followed(course)


def _failed(name, call, trace, course, told):
  """Whether the notebook's check fails the case, as far as the trace tells.

  A case fails when the learner's call raised or gave other values than the
  course's: another output (DotProductAttention's check takes a standard
  softmax's numbers too: on a fully masked row they differ from the
  course's), or another layer. A layer the check runs fails by numbers that
  only the run shows (``told`` False): it is taken as failed, as the grader's
  own runs of the function failed.
  """
  _, expected, kept = course
  if trace['raised'] or isinstance(expected, BaseException):
    return True
  if trace['outline'] is not None or following.is_layers(expected):
    yours, theirs = trace['outline'], kept['outline']
    return not (told and yours is not None and theirs is not None
                and following.same_outline(yours, theirs))
  output = trace['output']
  if output is None or not told:
    return True
  if allclose(output, expected):
    return False
  if name == DOT_PRODUCT_ATTENTION:
    return not allclose(output, attention_with(**call.keywords, normalise=standard_softmax))
  return True


def _where(trace, course, top):
  """The learner's line where its values leave the course's, from both traces, or None."""
  follower, _, kept = course
  if trace['cut'] or follower.cut:
    return None  # Followed only part of the way: a line named would be a guess.
  yours = {'outline': trace['outline'], 'events': following.received_events(trace),
           'scalars': following.received_scalars(trace)}
  return following.where_of(yours, kept, top)


def where_lines(name, traces, shown):
  """The lines a failure's details end with for the ``where:`` line: [] when none is found.

  Args:
    name, traces: As ``where_line``'s.
    shown: The name of the grader's case whose failure they go under: the
      notebook's case the line was found on is named unless it is that one.
  """
  found = where_line(name, traces)
  if found is None:
    return []
  case, line = found
  named = [] if case == shown else [f"    in the notebook's check, on its case {case}:"]
  return named + [f'    {line}']
