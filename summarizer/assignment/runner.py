"""The runner of the in-notebook checks: cases judged as the grader's, what every answer keeps,
the where: line, the tally.

A check is a list of cases, each a dict: its ``'name'``; its ``'call'``,
which calls the learner's function and returns what it measured by measure
name (``judge.read_each`` reads them from what the function returned);
``'expected'``, the ``judge.Measure``s it is judged by with their expected
values; and, when a check has them, ``'inputs'`` (the case's inputs by the
probes' names, which the ``why:`` lines read beside the measures) and
``'cause'`` (the cause a check recognises in an exception its call
raised). ``run_cases`` records each case as the probes record the grader's
(``{'name', 'measures', 'error'}``), has the judge (``judge.py``, the
grader's too) hold its measures against the expected values, prints each
failure once (``failure_text.Printer``), says which earlier exercise to fix
first when that is the cause (``blame.Earlier``) and ends with the tally.

Beside its cases, each check holds what every answer keeps, whatever its
numbers (``kept_cases``):

- Its inputs are as they were after the call (``next_symbol`` padding the
  caller's token list in place lengthens ``greedy_decode``'s sequence).
- It runs under ``jax.jit`` where the package's function does, with the
  package's dtype (NumPy on a traced array fails only once a layer runs it).
- ``greedy_decode`` writes ``max_length`` tokens exactly when EOS never comes.
- ``TransformerLM``'s signature has the course's defaults (``mode='train'``, ...:
  ``contract/signature.py``, which the grader reads them with too).

Their calls are the contract's (``probes.py``, ``recording.jit_call``), which the grader runs too.

A failed case names, on a ``where:`` line, the learner's line where its
values leave the course's (``where``): the case is run again twice under
``sys.settrace``, as it is, following the learner's own frames (code from
the notebook's cells), and with the package's function in place of the
learner's (``twin``), following the package's frames. Every array a line
gives a local (or a frame returns) is kept. The learner's line that matters
is the first whose new value matches nothing the course's function held
(same shape and numbers, to float32 precision) after the last one that did:
``where: line N of f, `x` has shape (...); the course has (...) here``. For a
layer function (one that returns Trax layers) the two layers are walked side
by side instead, and the first sublayer that differs is named with the
learner's line that built it. The following itself (``Follower``,
``where_of``: layers by their outlines, arrays, numbers) is the contract's (``contract/following.py``):
the grader prints the same line from the learner's trace its sandbox sends
(``grading/where_line.py``). Nothing of the tracing may break a check: any
failure of it gives no line.
"""

import functools
import types

import jax
import numpy as np

from summarizer import model as package_model
from summarizer.contract import judge, probes, probes_layers, recording, signature
# The seed the checks draw the grader's inputs at (the checks import it from here).
from summarizer.contract.check_inputs import CHECK_SEED  # pylint: disable=unused-import
from summarizer.contract.following import Follower, followed, is_layers, plain, where_of
from summarizer.contract.judge import reading
from summarizer.contract.measures import DEFAULTS, DTYPE, INPUTS_AFTER, UNDER_JIT, WRITTEN
from summarizer.assignment.blame import Earlier, failing_own
from summarizer.assignment.written_values import value_where
from summarizer.contract.failure_text import (TEXT_BUDGET, Failure, Printer, learners_code,
                                              why_line)

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

  A case counts one test per expected measure. If its call raises, all of
  them fail: the exception is printed with the first, the others are said not
  compared (in one line when they are several), so the printed failures
  and the tally agree. A failure like one printed above is printed as one
  line. A failed case that passes
  with the package's functions of earlier exercises in place of the
  learner's says which exercise to fix first (see ``Earlier``).

  Args:
    cases: The cases (dicts: see above).
    check: The check's name after 'test_', which is the graded function's.
    function: The learner's function, for a check whose function uses the
      earlier exercises' (None: no earlier function is looked for).
    given: Graded functions handed to the check beside it (name -> function),
      which the cases read from this dict when they run.
  """
  extra = _properties(check, cases)
  untraced = {id(case) for case, traced in extra if not traced}
  ran, passed, failed = _judged_all(cases, [case for case, _ in extra])
  fixes, earlier = {}, None
  for case, _, printed in ran:
    fix = None
    if printed and function is not None:
      earlier = earlier or Earlier(check, function, given or {}, _passes, _own_check)
      fix = earlier.fix(case)
    if printed and not fix and given:
      fix = failing_own(given, _own_check)
    fixes[id(case)] = fix
  located = _where(ran, fixes, untraced, check)
  printer = Printer(TEXT_BUDGET)
  for case, recorded, printed in ran:
    if not printed:
      continue
    if fixes[id(case)]:  # The case's own numbers would only mislead: the cause is earlier.
      printed = [Failure(failure.header, [], failure.again, failure.key)
                 for failure in printed]
      printed[0].details = [why_line(fixes[id(case)])]  # With the first: the others say 'above'.
    elif located and located[0] is case:  # One where: line a check.
      printed[0].details += [f'    {located[1]}']
    printer.print_within(case['name'], printed,
                         len(printed) if recorded['error'] is None else len(case['expected']))
  printer.close()
  print(f'{passed} Tests passed, {failed} Tests failed' if failed else judge.ALL_PASSED)
  _LAST_RUN.update(check=check, failed=failed, total=passed + failed)
  return failed


def _judged_all(cases, kept):
  """Every case recorded and judged: ([(case, recorded, its failures)], passed, failed).

  What every answer keeps (``kept``) is judged only for an answer that passes
  its cases (what they say comes first), and counted only when it fails:
  the course's tally stays.
  """
  ran, passed, failed, kept_failed = [], 0, 0, 0
  kept_ids = {id(case) for case in kept}
  for case in [*cases, *kept]:
    if id(case) in kept_ids and failed > kept_failed:
      break
    recorded = record(case)
    printed = judged(case, recorded)
    failures = len(printed) if recorded['error'] is None else len(case['expected'])
    passed += 0 if id(case) in kept_ids else len(case['expected']) - failures
    failed += failures
    kept_failed += failures if id(case) in kept_ids else 0
    ran.append((case, recorded, printed if failures else []))
  return ran, passed, failed


def _where(ran, fixes, untraced, check):
  """(the case, its where: line) of the first failed case the where: line is found for, or None.

  A failed case whose call returned is tried before one whose call raised
  (its values are all there to follow: 4 tokens padded to 7 show the line
  that pads, where 1 token padded to 1 fails only when the output is read);
  at most two cases are followed.
  """
  failed = [(case, recorded) for case, recorded, printed in ran
            if printed and not fixes[id(case)] and id(case) not in untraced]
  failed.sort(key=lambda pair: pair[1]['error'] is not None)
  for case, recorded in failed[:2]:
    line = where(judge.learners_call(case['call']), check, differing(case, recorded))
    if line:
      return case, line
  return None


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
  """(case, whether a where: line helps) of what every answer keeps (``kept_cases``)."""
  try:
    learners = (twin(judge.learners_call(cases[0]['call']), print)[1]  # Any callable.
                if cases else None)
  except recording.CAUGHT:  # pylint: disable=broad-except
    learners = None
  if learners is None:
    return []
  return kept_cases(check, learners)


def record(case):
  """Runs a case's call, recorded as the probes record one: {'name', 'measures', 'error'}.

  The error is the exception the call raised (the grader's came as text).
  """
  try:
    return {'name': case['name'], 'measures': case['call'](), 'error': None}
  except recording.CAUGHT as error:  # pylint: disable=broad-except
    return {'name': case['name'], 'measures': {}, 'error': error}


def judged(case, recorded):
  """The ``Failure``s of a recorded case, as printed ([] when it passes)."""
  return judge.judge_case(recorded, case['expected'],
                          {**case.get('inputs', {}), **recorded['measures']},
                          _cause(case, recorded['error']))


def _cause(case, error):
  """The cause the check recognises in the error its case's call raised, or None."""
  explain = case.get('cause')
  try:
    return explain(error) if explain and error is not None else None
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None  # Too far off to be read: no cause to name.


def _passes(case):
  """Whether a case passes: its call returns and meets every expectation."""
  recorded = record(case)
  return recorded['error'] is None and not judged(case, recorded)


def as_array(output):
  """Returns the output as a float64 numpy array."""
  if output is None:
    raise TypeError(recording.RETURNED_NONE)
  return np.asarray(output, dtype=np.float64)


def shape_of(output):
  if output is None:
    raise TypeError(recording.RETURNED_NONE)
  return tuple(np.shape(output))


def sublayer_names(layer):
  """The kinds of a layer's sublayers, as the exercise's steps name them (``probes_layers.layer_kind``)."""
  return [probes_layers.layer_kind(sublayer) for sublayer in layer.sublayers]


def count_weights(weights):
  """The number of numbers in a tree of weights (arrays or their shapes)."""
  return sum(int(np.prod(leaf.shape))
             for leaf in jax.tree_util.tree_leaves(weights))


# --------------------------------------------------------------------------
# What every answer keeps, whatever its numbers.


def kept_cases(check, function):
  """The properties of the learner's ``function`` of ``check``, as (case, traced).

  ``traced``: whether a ``where:`` line helps (not under jit, where the learner's values
  are tracers).
  """
  if check == recording.NEXT_SYMBOL:
    return [({'name': probes.tokens_case(),
              'call': reading({INPUTS_AFTER.name: list}, lambda: probes.tokens_after(function)),
              'expected': {INPUTS_AFTER: list(probes.PROPERTY_TOKENS)}}, False)]
  if check == recording.TRANSFORMER_LM:
    return [({'name': recording.SIGNATURE_CASE,
              'call': lambda: {DEFAULTS.name: signature.defaults(function)},
              'expected': {DEFAULTS: signature.defaults(package_model.TransformerLM)}}, False)]
  if check == recording.GREEDY_DECODE and recording.accepts(function, 'max_length'):
    return [_writes_max_length(function)]
  if check not in (recording.DOT_PRODUCT_ATTENTION, recording.HEADS_CLOSURE, recording.SELF_ATTENTION,
                   recording.OUTPUT_CLOSURE):
    return []
  return [_under_jit(check, function, batch) for batch in recording.JIT_BATCHES]


def _writes_max_length(greedy_decode):
  """greedy_decode(..., max_length=probes.MAX_LENGTH) with a next_symbol that never writes EOS."""
  def call():
    try:
      return probes.written_without_eos(greedy_decode)
    except recording.CAUGHT:  # pylint: disable=broad-except
      return probes.MAX_LENGTH  # It fails its own cases: they say how.
  return ({'name': probes.max_length_case(),
           'call': reading({WRITTEN.name: lambda written: written}, call),
           'expected': {WRITTEN: probes.MAX_LENGTH}}, True)


def _under_jit(check, function, batch):
  """The function under jax.jit on a batch: it runs, with the package's dtype, as the package's does."""
  made, arrays = recording.jit_call(check, batch)
  expected = jax.jit(made(recording.graded_function(check)))(**arrays)

  def call():
    try:
      dtype = str(_dtype(made(function)(**arrays)))
    except recording.CAUGHT:  # pylint: disable=broad-except
      # It fails without jit too: the exercise's own cases say how; this says nothing more.
      return {UNDER_JIT.name: 'yes', DTYPE.name: str(expected.dtype)}
    return {UNDER_JIT.name: _jit_runs(made(function), arrays), DTYPE.name: dtype}
  return ({'name': recording.jit_case(check, batch), 'call': call,
           'expected': {UNDER_JIT: 'yes', DTYPE: str(expected.dtype)}}, False)


def _dtype(output):
  return getattr(output, 'dtype', type(output).__name__)


def _jit_runs(function, arrays):
  """'yes', or what stops the function under jit, with its line (as the grader says it)."""
  try:
    jax.block_until_ready(jax.jit(function)(**arrays))
    return 'yes'
  except recording.CAUGHT as error:  # pylint: disable=broad-except
    return recording.jit_refusal(error, learners_code)


# --------------------------------------------------------------------------
# The where: line: the learner's line where its values leave the course's.


def learners_function(value):
  """Whether ``value`` is a function written in the learner's notebook (not a library's, not ours)."""
  code = getattr(value, '__code__', None)
  return code is not None and learners_code(code.co_filename)


def twin(call, package, depth=3):
  """``call`` with the learner's function it runs replaced by ``package``: (the new call, theirs).

  The learner's function is found where the checks keep it: a
  ``functools.partial``'s function or arguments, a lambda's closure or
  defaults (nested up to ``depth``). (None, None) when there is none.
  """
  if depth < 0:
    return None, None
  if learners_function(call):
    return package, call
  if isinstance(call, functools.partial):
    parts = [call.func, *call.args, *call.keywords.values()]
    for index, part in enumerate(parts):
      replaced, found = twin(part, package, depth - 1)
      if found is not None:
        parts[index] = replaced
        func, args = parts[0], parts[1:1 + len(call.args)]
        keywords = dict(zip(call.keywords, parts[1 + len(call.args):]))
        return functools.partial(func, *args, **keywords), found
    return None, None
  if isinstance(call, types.FunctionType):
    return _function_twin(call, package, depth)
  return None, None


def _function_twin(function, package, depth):
  """A copy of a checks' lambda whose closure or defaults hold ``package`` for the learner's."""
  cells = list(function.__closure__ or ())
  for index, cell in enumerate(cells):
    try:
      contents = cell.cell_contents
    except ValueError:  # An empty cell.
      continue
    replaced, found = twin(contents, package, depth - 1)
    if found is not None:
      cells[index] = types.CellType(replaced)
      copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                                function.__defaults__, tuple(cells))
      copy.__kwdefaults__ = function.__kwdefaults__
      return copy, found
  defaults = list(function.__defaults__ or ())
  for index, default in enumerate(defaults):
    replaced, found = twin(default, package, depth - 1)
    if found is not None:
      defaults[index] = replaced
      copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                                tuple(defaults), function.__closure__)
      return copy, found
  return None, None


def where(call, check, values=()):
  """The ``where:`` line of a failed case of ``check`` (its ``call``), or None.

  ``values``: the plain values its call gave where the course's differ
  (``differing``), for a case whose arrays and layers say nothing.
  """
  try:
    package = recording.graded_function(check)
    package_call, learners = twin(call, package)
    if package_call is None:
      return None
    package_file = package.__code__.co_filename
    theirs = Follower(lambda filename: filename == package_file, package.__code__)
    theirs.run(package_call)
    yours = Follower(learners_code, learners.__code__)
    yours.run(call)
    if theirs.cut or yours.cut:  # Followed only part of the way: its values would be a guess.
      return value_where(learners, package, values) if values else None  # From the source alone.
    if not (is_layers(theirs.returned) and is_layers(yours.returned)):
      line = value_where(learners, package, values) if values else None
      if line:
        return line
    return where_of(followed(yours), followed(theirs), learners.__code__.co_name)
  except Exception:  # pylint: disable=broad-except
    return None  # The tracing is a help: it never fails a check.


def differing(case, recorded):
  """(the value the learner's function gave, the course's) for each plain value that differs.

  Args:
    case: A check's case: its ``'expected'`` measures and their values.
    recorded: What its call gave (``runner.record``): ``'measures'`` by name.
  """
  pairs = []
  for measure, expected in case['expected'].items():
    if measure.name in recorded['measures']:
      _pair(recorded['measures'][measure.name], expected, pairs)
  return pairs


def _pair(got, expected, pairs):
  """Adds the plain values of ``got`` that differ from ``expected``'s at the same place."""
  if isinstance(got, dict) and isinstance(expected, dict):
    for key in expected:
      if key in got:
        _pair(got[key], expected[key], pairs)
  elif isinstance(got, list) and isinstance(expected, list) and len(got) == len(expected):
    for came, wanted in zip(got, expected):
      _pair(came, wanted, pairs)
  elif plain(got) and plain(expected) and (type(got), got) != (type(expected), expected):
    pairs.append((got, expected))
