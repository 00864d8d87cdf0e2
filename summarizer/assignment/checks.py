"""Checks for the ten graded functions of the assignment, runnable offline.

The course grades its week-2 assignment (UNQ_C1 to UNQ_C10) with a unit-test
file; these checks ask the same questions, with the same names and call
forms, and need neither the course's files nor a network. Hand a check your
function; it runs the course's cases, prints each one that fails (what was
expected, what came) and ends with ``All tests passed`` or
``N Tests passed, M Tests failed``::

  from summarizer.assignment import checks
  checks.test_DotProductAttention(DotProductAttention)
  checks.test_training_loop(training_loop, TransformerLM)
  checks.test_greedy_decode(greedy_decode)

Each check returns the number of failed cases. A function that raises (an
exercise not filled in yet, a wrong shape) fails its cases with the
exception's message and the line of the learner's code that raised it (a
Trax ``LayerError`` is unwrapped to its cause); the check itself never
raises. A printed layer that differs from the course's is reported by the
layers missing, extra or changed.

Each failure is printed once, in a few lines: arrays cut to their edges,
long lists to their ends, a failure like one above in one line. A mistake
the checks know is named on a ``why:`` line (softmax over the wrong axis,
no scale, a wrong mask, one block repeated, a missing output layer, an
off-by-one of decoding ...); the functions that name them are shared with
the grader (``judge.py``). A case that fails only because of an earlier
exercise (it passes with the package's function in place of the
learner's) says which to fix first. ``failed_cases()``, which a check
cell's ``assert`` shows, only sums up what the check printed.

Beyond the course's cases, each check runs what the course only prints:
every layer is run beside the package's, with the same weights and random
key, in 'train', 'eval' and 'predict' mode, at sizes where the heads' width
differs from their number and with two blocks of their own weights; the
loop ``training_loop`` builds is checked for its mode and its model's
output; ``greedy_decode`` is run with and without ``verbose`` (what it prints
is feedback, never a failure). A
mistake in a function therefore fails the checks of the functions built on
it too. ``test_trained_model`` and ``test_summary`` check the assignment's
last parts: the shipped weights in the learner's model, and its summary.

``next_symbol`` and ``greedy_decode`` are checked with stand-ins for the
trained model, the tokenizer and ``next_symbol``, so they run in a second:
what is checked is how they pad, read and loop, not what a model says
(``test_next_symbol(next_symbol, TransformerLM)`` adds the course's own case
with the full-size model, a few seconds).
"""

import contextlib
import dataclasses
import difflib
import functools
import inspect
import io
import operator
import os
import sys
import sysconfig
import tempfile
import traceback
from typing import Any, Callable

import jax
import numpy as np

from summarizer import attention as _attention
from summarizer import model as _model
from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import EOS, PACKAGE_DIR, SEP, VOCAB_SIZE
from summarizer.model import TransformerLM as _package_transformer_lm
from summarizer.assignment import coursework
from summarizer.assignment import probes

# Exceptions a learner's function may raise that count as a failed case.
# (KeyboardInterrupt is left alone, so a check can still be stopped.)
_CAUGHT = (Exception, SystemExit)


# --------------------------------------------------------------------------
# The runner shared by every check.

@dataclasses.dataclass
class _Expect:
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
class _Case:
  """One call of the learner's function and what its result must satisfy.

  Attributes:
    name: The case, as printed.
    call: Calls the learner's function.
    expects: The ``_Expect``s its result must meet.
    explain_error: Given the exception the call raised, a cause the check
      recognises in it, or None.
  """
  name: str
  call: Callable[[], Any]
  expects: list
  explain_error: Callable[[BaseException], Any] = None


@dataclasses.dataclass
class _Failure:
  """One failed test as printed.

  Attributes:
    header: 'Failed: case: what' (or '...: it raised ...').
    details: The lines below it: expected, got, where they differ, why.
    again: The header printed instead when a failure with the same details
      (or the same error) was printed above; None: header + ' (same as above)'.
    key: What makes two failures the same; by default their details.
  """
  header: str
  details: list = dataclasses.field(default_factory=list)
  again: str = None
  key: Any = None


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


def _run(cases, check, function=None, given=None):
  """Runs the cases, prints each failure once and the tally; returns the failures.

  A case counts one test per expectation. If its call raises, all of them
  fail: the exception is printed with the first, the others are said not
  compared (in one line when they are several), so the printed failures
  and the tally agree. A failure like one printed above is printed as one
  line. A failed case that passes
  with the package's functions of earlier exercises in place of the
  learner's says which exercise to fix first (see ``_Earlier``).

  Args:
    cases: The ``_Case``s.
    check: The check's name after 'test_', which is the graded function's.
    function: The learner's function, for a check whose function uses the
      earlier exercises' (None: no earlier function is looked for).
    given: Graded functions handed to the check beside it (name -> function),
      which the cases read from this dict when they run.
  """
  printer, earlier = _Printer(), None
  passed = failed = 0
  for case in cases:
    error, output, failures = _compare(case)
    passed += len(case.expects) - len(failures)
    failed += len(failures)
    if not failures:
      continue
    printed = _failures(case, error, output, failures)
    if function is not None:
      earlier = earlier or _Earlier(check, function, given or {})
      fix = earlier.fix(case)
      if fix:  # The case's own numbers would only mislead: the cause is earlier.
        printed = [_Failure(failure.header, [], failure.again, failure.key)
                   for failure in printed]
        printed[-1].details = [f'    why: {fix}']
    for failure in printed:
      printer.print(failure)
  print(f'{passed} Tests passed, {failed} Tests failed' if failed else 'All tests passed')
  _LAST_RUN.update(check=check, failed=failed, total=passed + failed)
  return failed


def _compare(case):
  """Runs a case: (the error its call raised or None, its output, its failed expectations).

  Each failed expectation is (expect, the measured value or None, the
  error measuring raised or None); when the call raised, all of them fail.
  """
  try:
    output = case.call()
  except _CAUGHT as error:  # pylint: disable=broad-except
    return error, None, [(expect, None, None) for expect in case.expects]
  failures = []
  for expect in case.expects:
    try:
      got = expect.measure(output)
    except _CAUGHT as error:  # pylint: disable=broad-except
      failures.append((expect, None, error))
      continue
    try:
      agreed = bool(expect.agree(got, expect.expected))
    except _CAUGHT:  # pylint: disable=broad-except
      agreed = False  # Not even comparable (a type or shape far off).
    if not agreed:
      failures.append((expect, got, None))
  return None, output, failures


def _failures(case, error, output, failures):
  """The ``_Failure``s of a case, as printed."""
  name = case.name
  if error is not None:
    described = _describe(error)
    first = _Failure(f'Failed: {name}: it raised {described}', key=('raised', described),
                     again=f'Failed: {name}: it raised {type(probes.innermost(error)).__name__} '
                           '(same as above)')
    cause = _cause(case.explain_error, error)
    first.details = [f'    why: {cause}'] if cause else []
    rest = [expect.what for expect, _, _ in failures[1:]]
    if len(rest) > 1:  # One line for them all: what they are matters little here.
      rest = [f'{len(rest)} more tests']
    return [first] + [_Failure(f'Failed: {name}: {what}: not compared (the call raised, above)')
                      for what in rest]
  printed = []
  for expect, got, error_measuring in failures:
    if isinstance(error_measuring, _NotRun):
      printed.append(_Failure(f'Failed: {name}: {expect.what}: {error_measuring}'))
    elif error_measuring is not None:
      printed.append(_Failure(f'Failed: {name}: {expect.what}: could not be read from '
                              f'what it returned ({_describe(error_measuring)})'))
    else:
      details = ['    ' + line for line in _difference(expect.expected, got)]
      cause = _cause(expect.explain, got, output)
      printed.append(_Failure(f'Failed: {name}: {expect.what}',
                              details + ([f'    why: {cause}'] if cause else [])))
  return printed


class _NotRun(Exception):
  """A measure that could not be taken because an earlier one failed (said in one line)."""


class _Printer:
  """Prints failures, each once: one like a failure above is its header only.

  A ``why:`` line printed above is not printed again under another failure.
  """

  def __init__(self):
    self.seen = set()

  def print(self, failure):
    key = failure.key or tuple(failure.details)
    if key and key in self.seen:
      print(failure.again or failure.header + ' (same as above)')
      return
    self.seen.add(key)
    print(failure.header)
    for line in failure.details:
      if line.startswith('    why: '):
        if line in self.seen:
          continue
        self.seen.add(line)
      print(line)


def _cause(explain, *values):
  """What ``explain`` recognises in ``values``, or None (also when it cannot tell)."""
  if explain is None:
    return None
  try:
    return explain(*values)
  except _CAUGHT:  # pylint: disable=broad-except
    return None  # A value too far off to be read: no cause to name.


# Code that is not the learner's: Python's own library, installed packages
# (Trax, jax, numpy) and this package.
_NOT_LEARNERS = tuple(sorted({os.path.realpath(path) + os.sep for path in (
    sysconfig.get_paths()['stdlib'], sysconfig.get_paths()['purelib'],
    sysconfig.get_paths()['platlib'], PACKAGE_DIR)}))


def _learners_line(error):
  """' (in NAME, line N: CODE)': where the learner's code raised, or ''."""
  for frame in reversed(traceback.extract_tb(error.__traceback__)):
    if not os.path.realpath(frame.filename).startswith(_NOT_LEARNERS):
      code = (frame.line or '').strip()
      return f' (in {frame.name}, line {frame.lineno}' + (f': {code})' if code else ')')
  return ''


def _describe(error):
  """Formats an exception as 'Type: message (in function, line N: code)'.

  A Trax ``LayerError`` is unwrapped to the exception that caused it, and
  the line is the last one of the learner's code in its traceback.
  """
  error = probes.innermost(error)
  try:
    message = str(error).strip()
  except _CAUGHT:  # pylint: disable=broad-except
    message = '(a message that cannot be printed)'
  lines = message.splitlines()
  if len(lines) > 6:
    message = '\n'.join(lines[:6] + ['...'])
  if len(message) > 500:
    message = message[:500] + ' ...'
  name = type(error).__name__
  return (f'{name}: {message}' if message else name) + _learners_line(error)


def _difference(expected, got):
  """The lines below a failure's header: expected and got, and where they differ.

  A layer tree is said by the layers missing, extra or changed; a list of
  weight shapes by its first difference.
  """
  if isinstance(got, str) and isinstance(expected, str) and '\n' in expected:
    return _tree_difference(expected, got)
  if _shape_lists(got, expected):
    return [weight_difference(got, expected)]
  lines = [f'expected: {_show(expected)}', f'got:      {_show(got)}']
  difference = (_first_token_difference(got, expected)
                or (not isinstance(expected, tuple) and _largest_difference(got, expected)))
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


def _first_token_difference(got, expected):
  """'first difference at position i: ...' for two lists of ints, else None."""
  if not (isinstance(got, list) and isinstance(expected, list)
          and all(isinstance(t, int) for t in got + expected)):
    return None
  for position, (came, wanted) in enumerate(zip(got, expected)):
    if came != wanted:
      return f'first difference at position {position}: expected {wanted}, got {came}'
  return f'the same for {min(len(got), len(expected))} tokens, then one ends'


def _tree_difference(expected, got):
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


def _largest_difference(got, expected):
  """'largest difference ...' for two numeric arrays of one shape, else None."""
  try:
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  except _CAUGHT:  # pylint: disable=broad-except
    return None
  if got.shape != expected.shape or got.size < 2:
    return None
  difference = np.abs(got - expected)
  index = np.unravel_index(np.nanargmax(np.nan_to_num(difference, nan=np.inf)),
                           difference.shape)
  return (f'largest difference at {tuple(int(i) for i in index)}: expected '
          f'{expected[index]:.6g}, got {got[index]:.6g}')


# An array of up to this many numbers is shown whole; a larger one by the
# numbers at its edges, numpy's summarised printing.
_WHOLE_ARRAY = 16
_ARRAY_TEXT = 120  # Characters an array's edges may take: fewer edge items past it.
# A list of more items is shown by its first three and last two.
_WHOLE_LIST = 8


def _show(value, limit=300):
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
      shown = [repr(_rounded(item)) for item in value[:3]] + ['...'] + [
          repr(_rounded(item)) for item in value[-2:]]
      brackets = '[]' if isinstance(value, list) else '()'
      text = f'{brackets[0]}{", ".join(shown)}{brackets[1]} ({len(value)} items)'
    else:
      text = repr(_rounded(value))
  except _CAUGHT:  # pylint: disable=broad-except
    text = f'<a {type(value).__name__} that cannot be printed>'
  if len(text) > limit:
    text = text[:limit] + ' ...'
  return text


def _array_text(array):
  """An array as nested lists: whole if small, else its edges and its shape."""
  if array.size <= _WHOLE_ARRAY:
    return repr(_rounded(array.tolist()))
  for edge_items in (3, 2, 1):
    text = np.array2string(array, separator=', ', threshold=0, edgeitems=edge_items,
                           max_line_width=sys.maxsize,
                           formatter={'float_kind': lambda x: repr(_rounded(float(x)))})
    text = ' '.join(text.split())  # One line: numpy parts the rows with newlines.
    if len(text) <= _ARRAY_TEXT:
      break
  return f'{text} (shape {array.shape})'


def _rounded(value):
  """Numbers in nested lists to 6 significant digits, whole ones as ints."""
  if isinstance(value, (list, tuple)):
    return type(value)(_rounded(item) for item in value)
  if isinstance(value, dict):
    return {key: _rounded(item) for key, item in value.items()}
  if isinstance(value, float) and np.isfinite(value):
    value = float(f'{value:.6g}')
    return int(value) if value.is_integer() else value
  return value


# --------------------------------------------------------------------------
# Earlier exercises: the package's functions in place of the learner's.

# The package's functions of the exercises that build the model (1 to 7).
_PACKAGE_FUNCTIONS = {function.__name__: function for function in (
    _attention.DotProductAttention, _attention.compute_attention_heads_closure,
    _attention.dot_product_self_attention, _attention.compute_attention_output_closure,
    _attention.CausalAttention, _model.DecoderBlock, _model.TransformerLM)}


def _learners(value, name):
  """Whether ``value`` is a learner's own ``name`` (callable, not the package's)."""
  return callable(value) and value is not _PACKAGE_FUNCTIONS[name]


class _Earlier:
  """The learner's functions of earlier exercises that a check reaches, and swaps for them.

  A function of a notebook finds the others in the notebook's globals (its
  ``__globals__``), in default arguments bound to them (the course's
  ``CausalAttention`` binds the two closures so), or in what the check is
  handed beside it (``training_loop``'s ``TransformerLM``). ``fix(case)``
  runs a failed case again with the package's functions of the earlier
  exercises in place of the learner's: if it then passes, the learner's
  last exercise that had to be replaced for it to pass is the one to fix.
  """

  def __init__(self, check, function, given):
    # Imported on a first failure only: handout imports nbformat, a second.
    from summarizer.assignment.handout import GRADED  # pylint: disable=g-import-not-at-top
    self.given = given
    reaching = [function, *given.values()]
    self.namespaces = _unique(getattr(each, '__globals__', None) for each in reaching)
    earlier = [name for name in GRADED[:GRADED.index(check)] if name in _PACKAGE_FUNCTIONS]
    self.names = [name for name in earlier if _learners(given.get(name), name) or any(
        _learners(namespace.get(name), name) for namespace in self.namespaces)]
    self.functions = _unique(reaching + [namespace[name] for namespace in self.namespaces
                                         for name in self.names
                                         if _learners(namespace.get(name), name)])
    self.numbers = {name: GRADED.index(name) + 1 for name in self.names}
    self.last = None  # How many of ``names`` the last case put right needed replaced.

  def fix(self, case):
    """'... fix Exercise N (name) first' if the case passes with the package's earlier functions."""
    everything = len(self.names)
    if not everything:
      return None
    if self.last and self._passes(case, self.last):
      needed = self.last
    elif self.last != everything and self._passes(case, everything):
      needed = self._fewest(case, self.last or 0, everything)
    else:
      return None
    self.last = needed
    name = self.names[needed - 1]
    return (f"with the package's {name} in place of yours this case passes: "
            f'fix Exercise {self.numbers[name]} ({name}) first')

  def _fewest(self, case, failing, passing):
    """The fewest earlier functions, in the course's order, replaced for the case to pass.

    With the first ``failing`` replaced it fails, with ``passing`` it passes;
    replacing more never makes it fail again, so halving the gap finds it.
    """
    while passing - failing > 1:
      middle = (failing + passing) // 2
      if self._passes(case, middle):
        passing = middle
      else:
        failing = middle
    return passing

  def _passes(self, case, count):
    """Whether the case passes with the package's first ``count`` earlier functions."""
    with self._package_in_place(self.names[:count]), contextlib.redirect_stdout(io.StringIO()):
      error, _, failures = _compare(case)
    return error is None and not failures

  @contextlib.contextmanager
  def _package_in_place(self, names):
    """Puts the package's ``names`` where the learner's functions find theirs, then back."""
    undo = []
    try:
      for namespace in [*self.namespaces, self.given]:
        for name in names:
          if _learners(namespace.get(name), name):
            undo.append(functools.partial(namespace.__setitem__, name, namespace[name]))
            namespace[name] = _PACKAGE_FUNCTIONS[name]
      for function in self.functions:
        for attribute in ('__defaults__', '__kwdefaults__'):
          bound = getattr(function, attribute, None)
          replaced = _replaced_defaults(bound, names)
          if replaced is not None:
            undo.append(functools.partial(setattr, function, attribute, bound))
            setattr(function, attribute, replaced)
      yield
    finally:
      for step in reversed(undo):
        step()


def _unique(items):
  """The items that are not None, each once (by identity), in order."""
  kept = []
  for item in items:
    if item is not None and all(item is not other for other in kept):
      kept.append(item)
  return kept


def _replaced_defaults(bound, names):
  """Default arguments (tuple or dict) with the learner's ``names`` made the package's, or None."""
  if not isinstance(bound, (tuple, dict)):
    return None
  keys = list(bound) if isinstance(bound, dict) else range(len(bound))
  values = {key: bound[key] for key in keys}
  for key, value in values.items():
    name = getattr(value, '__name__', None)
    if name in names and _learners(value, name):
      values[key] = _PACKAGE_FUNCTIONS[name]
  if all(values[key] is bound[key] for key in keys):
    return None
  return values if isinstance(bound, dict) else tuple(values.values())


# --------------------------------------------------------------------------
# Comparisons and measures.

def _as_array(output):
  """Returns the output as a float64 numpy array."""
  if output is None:
    raise TypeError('it returned None')
  return np.asarray(output, dtype=np.float64)


def _shape_of(output):
  if output is None:
    raise TypeError('it returned None')
  return tuple(np.shape(output))


def _allclose(got, expected):
  """Same shape and the same numbers to float32 precision."""
  got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  return got.shape == expected.shape and np.allclose(got, expected, rtol=1e-5,
                                                     atol=1e-6)


def _same_tree(got, expected):
  """Two printed layer trees agree, spaces aside."""
  return got.replace(' ', '') == expected.replace(' ', '')


def _sublayer_names(layer):
  return [type(sublayer).__name__ for sublayer in layer.sublayers]


def _count_weights(weights):
  """The number of numbers in a tree of weights (arrays or their shapes)."""
  return sum(int(np.prod(leaf.shape))
             for leaf in jax.tree_util.tree_leaves(weights))


def _output(expected):
  """Expects the output to be this array (shape and numbers)."""
  return _Expect('output', np.array(expected, np.float32), _as_array, _allclose)


def _shape(expected):
  return _Expect('shape', tuple(expected), _shape_of)


def _kind(expected_class, measure=lambda output: output, what='type'):
  """Expects what ``measure`` reads to be an instance of ``expected_class``."""
  return _Expect(what, expected_class, lambda output: type(measure(output)),
                 issubclass)


def _accepts(function, name):
  """Whether ``function`` takes a parameter ``name`` (True when unsure)."""
  try:
    parameters = inspect.signature(function).parameters.values()
  except (TypeError, ValueError):
    return True
  return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD
             for p in parameters)


# --------------------------------------------------------------------------
# Running a learner's layer beside the package's, on the same weights.

# The random key of every run: the same dropout masks in both layers when
# their trees are the same.
_RUN_SEED = 7


@dataclasses.dataclass
class _Ran:
  """A learner's layer and the package's, run on one input.

  Attributes:
    shapes: The learner's weight shapes, in order.
    expected_shapes: The package's.
    output: The learner's output with the package's weights (None when
      its weights do not fit them).
    expected_output: The package's output.
    repeated: How many of the learner's layer's sublayers are one object
      repeated (``[DecoderBlock(...)] * n_layers``).
    tree, expected_tree: The learner's layer and the package's, printed.
  """
  shapes: list
  expected_shapes: list
  output: Any
  expected_output: Any
  repeated: int = 0
  tree: str = ''
  expected_tree: str = ''


def _flat_weights(layer):
  return tl.flatten_weights_and_state(layer.weights, ())[0]


def _shapes(layer):
  return [tuple(np.shape(w)) for w in _flat_weights(layer)]


# The package's layers run by the checks: (call, inputs) -> (weights, shapes, output, tree).
_PACKAGE_RUNS = {}


def _run_key(build, inputs):
  """A key for the package's layer ``build`` (a functools.partial) on ``inputs``, or None."""
  if not isinstance(build, functools.partial):
    return None
  array = np.asarray(inputs)
  key = (build.func, build.args, tuple(sorted(build.keywords.items())), array.dtype.str,
         array.shape, array.tobytes())
  try:
    hash(key)
  except TypeError:
    return None
  return key


def _package_run(build_package, inputs):
  """The package's layer initialised with the run's key and run on ``inputs``.

  The package's layers are deterministic, so each call on each input is
  computed once a process (a check run again, or on many answers, reuses it).

  Returns:
    (its weights, flat; their shapes; its output; the layer printed).
  """
  key = _run_key(build_package, inputs)
  if key in _PACKAGE_RUNS:
    return _PACKAGE_RUNS[key]
  package_layer = build_package()
  if isinstance(package_layer, list):
    package_layer = tl.Serial(package_layer)
  rng = fastmath.random.get_prng(_RUN_SEED)
  package_layer.init(trax.shapes.signature(inputs), rng=rng)
  output, _ = package_layer.pure_fn(inputs, package_layer.weights, package_layer.state, rng)
  run = (_flat_weights(package_layer), _shapes(package_layer), output, str(package_layer))
  if key is not None:
    _PACKAGE_RUNS[key] = run
  return run


def _run_beside_package(layer, build_package, inputs):
  """Runs ``layer`` and the package's (``build_package()``, same arguments) on ``inputs``.

  The package's layer is initialised at random; the learner's gets the same
  weights, and both run with the same random key (for dropout).
  """
  if isinstance(layer, list):  # A block is a list of layers, as the course's.
    layer = tl.Serial(layer)
  if not isinstance(layer, tl.Layer):
    raise TypeError(f'it returned a {type(layer).__name__}, not a layer')
  package_weights, expected_shapes, expected_output, expected_tree = _package_run(
      build_package, inputs)
  rng = fastmath.random.get_prng(_RUN_SEED)
  if not _flat_weights(layer):
    layer.init(trax.shapes.signature(inputs), rng=rng)
  shapes = _shapes(layer)
  output = None
  if shapes == expected_shapes:
    layer.weights, _ = tl.unflatten_weights_and_state(
        package_weights, (), (layer.weights, layer.state), weights_only=True)
    output, _ = layer.pure_fn(inputs, layer.weights, layer.state, rng)
  return _Ran(shapes, expected_shapes, output, expected_output,
              _repeated(layer), str(layer), expected_tree)


def _repeated(layer):
  """How many of a layer's direct sublayers are an object seen before among them."""
  identities = probes.sublayer_identities(layer)
  return len(identities) - len(set(identities))


def _ran_expects(mode, explain=None):
  """What a run beside the package's must show: its weights, then its output.

  Args:
    mode: The mode, as printed.
    explain: Names a cause in a failed run, given (the value measured, the
      ``_Ran``); None: none is looked for.
  """
  return [
      _Expect('number of weight arrays (the package builds the same layers)',
              None, lambda ran: len(ran.shapes), explain=explain),
      _Expect('weight shapes', None, lambda ran: ran.shapes, explain=explain),
      _Expect(f'output in {mode} mode, with the same weights and random key as '
              "the package's layer", None, _ran_output, _allclose, explain),
  ]


def _ran_output(ran):
  if ran.output is None:
    raise _NotRun("not run: its weights are not the shapes of the package's (above)")
  return np.asarray(ran.output)


def _beside_package_case(name, build, build_package, inputs, mode, explain=None):
  """A case that runs a layer beside the package's and compares them.

  The expected values come from the package's run, so the case computes
  them when it runs; they are filled into its expectations then.
  ``explain`` is ``_ran_expects``'.
  """
  expects = _ran_expects(mode, explain)

  def call():
    ran = _run_beside_package(build(), build_package, inputs)
    expects[0].expected = len(ran.expected_shapes)
    expects[1].expected = ran.expected_shapes
    expects[2].expected = np.asarray(ran.expected_output)
    return ran
  return _Case(name, call, expects)


def _random_inputs(shape, seed=0):
  """Float32 activations of ``shape``, the same for every run."""
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# --------------------------------------------------------------------------
# Causes: mistakes learners make, recognised in what a function gave. The
# grader (judge.py) names them with these functions too.

def _course_softmax(scores, axis):
  return jnp.exp(scores - fastmath.logsumexp(scores, axis=axis, keepdims=True))


def _standard_softmax(scores, axis):
  return jax.nn.softmax(scores, axis=axis)


def _attention_with(query, key, value, mask, normalise, axis=-1, scale=True):
  """Dot-product attention normalised by ``normalise`` over ``axis``, scaled by sqrt(d) or not."""
  scores = jnp.matmul(query, jnp.swapaxes(key, -1, -2))
  if scale:
    scores = scores / jnp.sqrt(query.shape[-1])
  scores = scores.astype(jnp.float32)  # (..., L_q, L_k)
  if mask is not None:
    scores = jnp.where(mask, scores, jnp.full_like(scores, _attention.MASK_SCORE))
  return jnp.matmul(normalise(scores, axis), value)


def _attention_like(got, query, key, value, mask, **mistake):
  """Whether ``got`` is attention with ``mistake``, its softmax of either form (_either_softmax)."""
  return any(_allclose(got, _attention_with(query, key, value, mask, normalise, **mistake))
             for normalise in (_course_softmax, _standard_softmax))


def attention_cause(got, query, key, value, mask):
  """Names a mistake a DotProductAttention output shows: the softmax's axis, scale or mask."""
  if _attention_like(got, query, key, value, mask, axis=-2):
    return ('the weights were normalised over the queries (axis -2): each row of weights '
            'must sum to 1 over the keys, the last axis')
  if _attention_like(got, query, key, value, mask, scale=False):
    return ('the scores were not scaled: divide the dot products of the queries and keys '
            'by sqrt(d), d the size of their last axis, before the softmax')
  if mask is not None and _attention_like(got, query, key, value, jnp.asarray(mask) == 0):
    return ('the mask was used the wrong way round: keep the scores where the mask is True '
            '(non-zero) and put -1e9 where it is False (0)')
  return None


def mask_cause(got, q, k, v):
  """Names the causal mask a dot_product_self_attention output shows, if a known wrong one."""
  square = jnp.ones((1, q.shape[-2], q.shape[-2]), dtype=jnp.bool_)
  causes = [
      (jnp.triu(square), 'the mask is the upper triangle (triu): position 0 may see only '
       'itself, and position i the positions 0 to i, the lower triangle (tril)'),
      (None, 'no causal mask: every position sees the later ones too, where position 0 may '
       'see only itself'),
      (jnp.tril(square, k=-1), 'the mask is tril with k=-1, which hides each position from '
       'itself: position i may see the positions 0 to i, itself included (k=0)'),
      (jnp.triu(square, k=1), 'the mask is the wrong way round, non-zero above the diagonal: '
       'it is boolean, True where a position may attend (tril), not 0 and -1e9 to add to the '
       'scores'),
  ]
  return next((cause for mask, cause in causes if _attention_like(got, q, k, v, mask)), None)


def split_heads_cause(got, x, expected):
  """Names heads split without their transpose: x (B, L, H * Dh), expected (B * H, L, Dh)."""
  batch, length = x.shape[:2]
  n_heads, d_head = np.shape(expected)[0] // batch, np.shape(expected)[2]
  if _allclose(got, np.reshape(x, (batch * n_heads, length, d_head))):
    return ('the heads were split without the transpose: (B, L, H, Dh) reshaped straight to '
            '(B * H, L, Dh) mixes positions and heads; move the heads axis before the '
            'positions first, (B, H, L, Dh)')
  return None


def join_heads_cause(got, x, expected):
  """Names heads joined without their transpose: x (B * H, L, Dh), expected (B, L, H * Dh)."""
  batch, length = np.shape(expected)[:2]
  if _allclose(got, np.reshape(x, (batch, length, -1))):
    return ('the heads were joined without the transpose: (B, H, L, Dh) reshaped straight '
            'to (B, L, H * Dh) mixes heads and positions; move the positions back before '
            'the heads first, (B, L, H, Dh)')
  return None


def repeated_blocks_cause(repeated):
  """Names one block repeated, given how many of a model's sublayers repeat an earlier one."""
  if isinstance(repeated, int) and repeated > 0:
    return ('one block object repeated ([DecoderBlock(...)] * n_layers): the blocks share '
            "one block's weights; build each block anew (a loop or a comprehension)")
  return None


def blocks_cause(tree, expected_tree):
  """Names a number of decoder blocks other than n_layers, from the printed models."""
  blocks, expected = tree.count('Branch_out2') // 2, expected_tree.count('Branch_out2') // 2
  if blocks != expected:
    return (f'{blocks} decoder block(s) where n_layers asks for {expected}: '
            'build n_layers blocks, no more, no fewer')
  return None


# Why ShiftRight and PositionalEncoding are told the mode.
PREDICT_MODE = ('ShiftRight and PositionalEncoding need mode: fed a token a call, '
                'ShiftRight passes it on and PositionalEncoding counts positions')

# The output layers of CausalAttention and TransformerLM, and what each is for.
_LAST_DENSE = {'Dense': 'CausalAttention has no last tl.Dense(d_feature): after AttnOutput '
                        'joins the heads, this output layer mixes them'}
_MODEL_OUTPUT = {
    'Dense': 'the model has no tl.Dense(vocab_size) after its LayerNorm: this output layer '
             'turns the d_model features of each position into a score for each id',
    'LogSoftmax': 'the model does not end with tl.LogSoftmax(): it turns the scores into '
                  'the log-probabilities that the loss and next_symbol read',
}


def _top_level(tree):
  """The direct sublayers of a printed layer, by name ('Dense_512', 'Branch_out3', ...)."""
  return [line.strip().rstrip('[') for line in tree.split('\n')
          if line.startswith('  ') and not line.startswith('   ') and line.strip() != ']']


def _missing_layer_cause(tree, expected_tree, causes):
  """The cause of a direct sublayer of the expected tree that ``tree`` lacks.

  Args:
    tree, expected_tree: The layers, printed.
    causes: A kind of layer ('Dense', 'LogSoftmax') -> why it is needed.
  """
  have = _top_level(tree)
  for layer in _top_level(expected_tree):
    kind = layer.split('_')[0]
    if kind in causes and layer not in have:
      return causes[kind]
  return None


def _model_cause(got, ran):
  """Names a mistake a TransformerLM run beside the package's shows (its blocks, its output)."""
  del got
  return (repeated_blocks_cause(ran.repeated) or blocks_cause(ran.tree, ran.expected_tree)
          or _missing_layer_cause(ran.tree, ran.expected_tree, _MODEL_OUTPUT))


# --------------------------------------------------------------------------
# UNQ_C1: DotProductAttention.

# The course's masks are 0 (may not attend) and -1e9 (may attend: any
# non-zero is True), so a row of zeros masks every position. Normalised as
# exp(x - logsumexp(x)) in float32, such a row weighs every value 1, which
# is why the first rows below are sums of the values; a standard softmax
# gives their mean there, and passes too (see _either_softmax).
_ATTENTION_QUERY = [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
_ATTENTION_KEY = [[9, 8, 7, 6], [6, 5, 4, 3], [3, 2, 1, 0]]
_ATTENTION_VALUE = [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 1]]

# (name, query, key, value, mask, expected output)
_DOT_PRODUCT_CASES = [
    ('example 1 (first row fully masked)',
     [[1, 0, 0], [0, 1, 0]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]],
     [[0, 0], [-1e9, 0]],
     [[1, 1, 1], [0, 1, 0]]),
    ('example 2 (first row fully masked)',
     [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 1], [0, 0, 1]],
     [[0, 0], [-1e9, 0]],
     [[0, 1, 2], [0, 1, 1]]),
    ('example 3 (first row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[0, 0, 0], [-1e9, 0, 0], [-1e9, -1e9, 0]],
     [[1, 1, 1, 1], [0, 0, 1, 0], [0.04742587, 0, 0.95257413, 0]]),
    ('example 4 (no row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[-1e9, -1e9, -1e9], [0, -1e9, -1e9], [0, 0, -1e9]],
     [[0.04731418, 0.00235563, 0.9503307, 0.00235563],
      [0.8175744, 0.1824255, 0, 0.1824255],
      [0, 1, 0, 1]]),
]


def _either_softmax(inputs):
  """Agrees with the course's numbers, or with those of a standard softmax.

  In a fully masked row (its mask all 0) every score is MASK_SCORE: the
  course's exp(x - logsumexp(x)) in float32 weighs every key 1 (the row is
  the sum of the values), a max-subtracted softmax (jax.nn.softmax) weighs
  each 1/L (their mean). Causal attention never masks a whole row, so both
  are right.
  """
  standard = _attention_with(**inputs, normalise=_standard_softmax)
  return lambda got, expected: _allclose(got, expected) or _allclose(got, standard)


def test_DotProductAttention(DotProductAttention):  # pylint: disable=invalid-name
  """Checks ``DotProductAttention(query, key, value, mask)`` (UNQ_C1).

  Four small examples, three with a fully masked row: the output's numbers
  (on a fully masked row, the course's ``exp(x - logsumexp(x))`` gives the
  sum of the values and a standard softmax their mean: either passes) and
  that it is a ``jax.Array``.

  Args:
    DotProductAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for name, query, key, value, mask, expected in _DOT_PRODUCT_CASES:
    inputs = dict(query=jnp.array(query), key=jnp.array(key),
                  value=jnp.array(value), mask=jnp.array(mask))
    output = _output(expected)
    output.explain = lambda got, _, inputs=inputs: attention_cause(got, **inputs)
    output.agree = _either_softmax(inputs)
    cases.append(_Case(f'DotProductAttention, {name}',
                       functools.partial(DotProductAttention, **inputs),
                       [output, _kind(jax.Array)]))
  # Beyond the course's cases: 3 heads' worth of random queries, keys and
  # values under a causal mask, as the layers will call it.
  query, key, value = (jnp.array(_random_inputs((3, 5, 4), seed)) for seed in (1, 2, 3))
  mask = jnp.tril(jnp.ones((1, 5, 5), dtype=jnp.bool_))
  inputs = dict(query=query, key=key, value=value, mask=mask)
  output = _output(_attention.DotProductAttention(query, key, value, mask))
  output.explain = lambda got, _: attention_cause(got, **inputs)
  cases.append(_Case(
      'DotProductAttention on random (3, 5, 4) queries, keys and values, causal mask',
      functools.partial(DotProductAttention, **inputs), [output]))
  return _run(cases, 'DotProductAttention')


# --------------------------------------------------------------------------
# UNQ_C2 and UNQ_C4: the heads folded into the batch axis, and back.

# Two positions whose features are one-hot, so a wrong reshape shows.
_POSITIONS = [[1, 0, 0], [0, 1, 0]]
_TWO_HEADS = [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0]]  # Both heads see _POSITIONS.


def test_compute_attention_heads_closure(compute_attention_heads_closure):
  """Checks ``compute_attention_heads_closure(n_heads, d_head)`` (UNQ_C2).

  With 2 heads of 3 features, batches of 2 and 3 sequences (B, 2, 6) must
  become (2B, 2, 3), each head's features with their own sequence.

  Args:
    compute_attention_heads_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for batch in (2, 3):
    x = jnp.array([_TWO_HEADS] * batch)  # (B, L, H * Dh)
    cases.append(_Case(
        f'compute_attention_heads_closure(n_heads=2, d_head=3) on a batch of {batch}',
        lambda x=x: compute_attention_heads_closure(n_heads=2, d_head=3)(x),
        [_shape((2 * batch, 2, 3)), _heads_output([_POSITIONS] * (2 * batch), x,
                                                  split_heads_cause)]))
  x = jnp.array(_random_inputs((2, 5, 6)))  # (B, L, H * Dh) with H=3, Dh=2
  cases.append(_Case(
      'compute_attention_heads_closure(n_heads=3, d_head=2) on random (2, 5, 6)',
      lambda: compute_attention_heads_closure(n_heads=3, d_head=2)(x),
      [_heads_output(_attention.compute_attention_heads_closure(3, 2)(x), x,
                     split_heads_cause)]))
  return _run(cases, 'compute_attention_heads_closure')


def _heads_output(expected, x, cause):
  """Expects this output of a closure's function on ``x``; ``cause`` names a mistake in it."""
  output = _output(expected)
  output.explain = lambda got, _: cause(got, np.asarray(x), output.expected)
  return output


def test_compute_attention_output_closure(compute_attention_output_closure):
  """Checks ``compute_attention_output_closure(n_heads, d_head)`` (UNQ_C4).

  Six (2, 3) head outputs are joined back as 3 sequences of 2 heads of 3
  features; then the same 36 numbers, read as heads of 2 features, as 3
  sequences of 3 heads (the reshapes must use ``n_heads`` and ``d_head``,
  not the input's last axis).

  Args:
    compute_attention_output_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  heads = jnp.array([_POSITIONS] * 6)  # (B * H, L, Dh)
  joined = {
      (2, 3): [_TWO_HEADS] * 3,
      (3, 2): [[[1, 0, 1, 0, 0, 0], [0, 0, 1, 0, 1, 0]]] * 3,
  }
  cases = []
  for (n_heads, d_head), expected in joined.items():
    cases.append(_Case(
        f'compute_attention_output_closure(n_heads={n_heads}, d_head={d_head})',
        lambda n_heads=n_heads, d_head=d_head: compute_attention_output_closure(
            n_heads=n_heads, d_head=d_head)(heads),
        [_shape((3, 2, 6)), _heads_output(expected, heads, join_heads_cause)]))
  x = jnp.array(_random_inputs((6, 5, 2)))  # (B * H, L, Dh) with B=2, H=3
  cases.append(_Case(
      'compute_attention_output_closure(n_heads=3, d_head=2) on random (6, 5, 2)',
      lambda: compute_attention_output_closure(n_heads=3, d_head=2)(x),
      [_heads_output(_attention.compute_attention_output_closure(3, 2)(x), x,
                     join_heads_cause)]))
  return _run(cases, 'compute_attention_output_closure')


# --------------------------------------------------------------------------
# UNQ_C3: dot_product_self_attention.

def test_dot_product_self_attention(dot_product_self_attention):
  """Checks ``dot_product_self_attention(q, k, v)`` (UNQ_C3).

  One batch of two positions, with 3 and 6 features: the first position may
  only attend to itself, so its output is its own value.

  Args:
    dot_product_self_attention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  qkv = (_POSITIONS, [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]])
  doubled = tuple([row + row for row in rows] for rows in qkv)  # Features twice.
  examples = [
      ('3 features', qkv, [[[0, 1, 0], [0.8496746, 0.15032543, 0.8496746]]]),
      ('6 features', doubled,
       [[[0, 1, 0, 0, 1, 0],
         [0.9205239, 0.07947586, 0.9205239, 0.9205239, 0.07947586, 0.9205239]]]),
  ]
  cases = []
  for name, (q, k, v), expected in examples:
    inputs = dict(q=jnp.array([q]), k=jnp.array([k]), v=jnp.array([v]))
    output = _output(expected)
    output.explain = lambda got, _, inputs=inputs: mask_cause(got, **inputs)
    cases.append(_Case(f'dot_product_self_attention, {name}',
                       functools.partial(dot_product_self_attention, **inputs),
                       [_shape(np.shape(expected)), output]))
  q, k, v = (jnp.array(_random_inputs((2, 5, 4), seed)) for seed in (4, 5, 6))
  output = _output(_attention.dot_product_self_attention(q, k, v))
  output.explain = lambda got, _: mask_cause(got, q, k, v)
  cases.append(_Case(
      'dot_product_self_attention on random (2, 5, 4) q, k and v',
      functools.partial(dot_product_self_attention, q, k, v), [output]))
  return _run(cases, 'dot_product_self_attention', dot_product_self_attention)


# --------------------------------------------------------------------------
# UNQ_C5 to UNQ_C7: the layers, by the trees Trax prints for them.

def _tree(name, *children):
  """Formats a layer with sublayers as Trax prints it: 'Name[', children, ']'."""
  lines = [f'{name}[']
  for child in children:
    lines += ['  ' + line for line in child.split('\n')]
  return '\n'.join(lines + [']'])


def _attention_tree(d_feature):
  return _tree('Serial',
               _tree('Branch_out3', *[f'[Dense_{d_feature}, AttnHeads]'] * 3),
               'DotProductAttn_in3', 'AttnOutput', f'Dense_{d_feature}')


def _residual_tree(body):
  return _tree('Serial', _tree('Branch_out2', 'None', body), 'Add_in2')


def _block_trees(d_model, d_ff):
  """The two residual layers of a decoder block, as printed."""
  attention = _residual_tree(
      _tree('Serial', 'LayerNorm', _attention_tree(d_model), 'Dropout'))
  feed_forward = _residual_tree(
      _tree('Serial', 'LayerNorm', f'Dense_{d_ff}', _tree('Serial', 'Relu'),
            'Dropout', f'Dense_{d_model}', 'Dropout'))
  return [attention, feed_forward]


def _raises(error_class, function, *args, **kwargs):
  """Whether ``function`` raises ``error_class`` (others, and an unfilled blank's
  NotImplementedError, go through)."""
  try:
    function(*args, **kwargs)
  except NotImplementedError:
    raise
  except error_class:
    return True
  return False


def test_CausalAttention(CausalAttention):  # pylint: disable=invalid-name
  """Checks ``CausalAttention(d_feature, n_heads)`` (UNQ_C5).

  For 512 features in 8 heads and 16 in 4: the printed layer, that it is a
  ``tl.Serial``, and its four sublayers' types.

  Args:
    CausalAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for d_feature, n_heads in ((512, 8), (16, 4)):
    expected = _attention_tree(d_feature)
    cases.append(_Case(
        f'CausalAttention(d_feature={d_feature}, n_heads={n_heads})',
        functools.partial(CausalAttention, d_feature=d_feature, n_heads=n_heads),
        [_Expect('str(layer)', expected, str, _same_tree,
                 lambda got, _, expected=expected: _missing_layer_cause(
                     got, expected, _LAST_DENSE)),
         _kind(tl.Serial),
         _Expect('types of its sublayers',
                 ['Serial', 'PureLayer', 'PureLayer', 'Dense'], _sublayer_names),
         _Expect('number of sublayers', 4, lambda layer: len(layer.sublayers))]))
  cases.append(_Case(
      'CausalAttention(d_feature=10, n_heads=3)', functools.partial(
          _raises, Exception, CausalAttention, d_feature=10, n_heads=3),
      [_Expect("an error raised, as the course's assert raises one "
               '(10 features do not split into 3 heads)', True)]))
  cases += _mode_cases(
      'CausalAttention(d_feature=12, n_heads=3)', CausalAttention,
      _attention.CausalAttention, dict(d_feature=12, n_heads=3),
      _random_inputs((2, 5, 12)),
      lambda got, ran: _missing_layer_cause(ran.tree, ran.expected_tree, _LAST_DENSE))
  return _run(cases, 'CausalAttention', CausalAttention)


# The modes a layer is run in beside the package's. In predict mode the
# whole sequence goes in one call from an empty cache, which gives what the
# other modes give: so the course's layers, which keep no cache, pass too.
_MODES = ('train', 'eval', 'predict')


def _mode_cases(name, function, package_function, arguments, inputs, explain=None):
  """Cases running ``function(**arguments, mode=m)`` beside the package's, each mode.

  ``explain`` is ``_ran_expects``'.
  """
  cases = []
  for mode in _MODES:
    options = dict(arguments, mode=mode)
    if _accepts(function, 'max_len'):
      options['max_len'] = 16  # Few positions, a small predict-mode cache.
    described = name[:-1] + f", mode='{mode}')"
    cases.append(_beside_package_case(
        f'{described} on random {np.shape(inputs)}',
        functools.partial(function, **options),
        functools.partial(package_function, **dict(arguments, mode=mode, max_len=16)),
        inputs, mode, explain))
  return cases


def test_DecoderBlock(DecoderBlock):  # pylint: disable=invalid-name
  """Checks ``DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)`` (UNQ_C6).

  Two sizes: the printed list of layers, that it holds two ``tl.Serial``
  (the attention and feed-forward residuals) and what each is made of.

  Args:
    DecoderBlock: The function to check.

  Returns:
    int: the number of failed cases.
  """
  residual_parts = [['Serial', 'PureLayer']] * 2  # Branch (a Serial), Add.
  cases = []
  for d_model, d_ff, n_heads, dropout in ((512, 2048, 8, 0.1), (16, 32, 4, 0.05)):
    cases.append(_Case(
        f'DecoderBlock(d_model={d_model}, d_ff={d_ff}, n_heads={n_heads}, '
        f'dropout={dropout})',
        functools.partial(DecoderBlock, d_model=d_model, d_ff=d_ff,
                          n_heads=n_heads, dropout=dropout, mode='train',
                          ff_activation=tl.Relu),
        [_Expect('str(layers)', '[' + ', '.join(_block_trees(d_model, d_ff)) + ']',
                 str, _same_tree),
         _Expect('number of layers', 2, len),
         _Expect('types of the layers', ['Serial', 'Serial'],
                 lambda block: [type(layer).__name__ for layer in block]),
         _Expect('types of their sublayers', residual_parts,
                 lambda block: [_sublayer_names(layer) for layer in block]),
         _Expect('numbers of their sublayers', [2, 2],
                 lambda block: [len(layer.sublayers) for layer in block])]))
  cases += _mode_cases(
      'DecoderBlock(d_model=12, d_ff=20, n_heads=3, dropout=0.3)', DecoderBlock,
      _model.DecoderBlock, dict(d_model=12, d_ff=20, n_heads=3, dropout=0.3,
                                ff_activation=tl.Relu),
      _random_inputs((2, 5, 12)))
  # A second activation: ff_activation is used, not a Relu written in.
  arguments = dict(d_model=12, d_ff=20, n_heads=3, dropout=0.3, ff_activation=tl.FastGelu,
                   mode='eval')
  cases.append(_beside_package_case(
      "DecoderBlock(d_model=12, d_ff=20, n_heads=3, dropout=0.3, mode='eval', "
      'ff_activation=tl.FastGelu) on random (2, 5, 12)',
      functools.partial(DecoderBlock, **arguments),
      functools.partial(_model.DecoderBlock, **arguments),
      _random_inputs((2, 5, 12)), 'eval'))
  return _run(cases, 'DecoderBlock', DecoderBlock)


# The exercise's model: the one training_loop trains.
_EXERCISE_MODEL = probes.EXERCISE_MODEL
_EXERCISE_WEIGHTS = 316_336


def _exercise_model_signatures(TransformerLM):  # pylint: disable=invalid-name
  """Builds the exercise's model and traces it on ids (2, 8), abstractly.

  Only shapes are computed (no random weights, no arithmetic), which takes
  a fraction of a second where a real initialisation takes several.

  Returns:
    (the weights' shapes, the output's shape).
  """
  model = TransformerLM(**_EXERCISE_MODEL, mode='eval')
  ids = trax.shapes.ShapeDtype((2, 8), np.int32)
  weights, state = fastmath.abstract_eval(model.init)(ids)
  rng = fastmath.random.get_prng(0)
  output, _ = fastmath.abstract_eval(
      lambda ids, weights, state: model.pure_fn(ids, weights, state, rng))(
          ids, weights, state)
  return weights, tuple(output.shape)


def test_TransformerLM(TransformerLM):  # pylint: disable=invalid-name
  """Checks ``TransformerLM(vocab_size, d_model, d_ff, n_layers, n_heads, ...)`` (UNQ_C7).

  Two one-block models: the printed layer, that it is a ``tl.Serial`` and
  its nine sublayers' types. Then the exercise's model (d_model=4, d_ff=16,
  one block, two heads) is traced: it has 316,336 weights and returns a
  score for each of the 33,300 ids at each position.

  Args:
    TransformerLM: The function to check.

  Returns:
    int: the number of failed cases.
  """
  sublayers = ['Serial', 'Embedding', 'Dropout', 'PositionalEncoding',
               'Serial', 'Serial', 'LayerNorm', 'Dense', 'PureLayer']
  cases = []
  for vocab_size, d_model, d_ff, n_heads, dropout, max_len in (
      (VOCAB_SIZE, 512, 2048, 8, 0.1, 4096), (100, 16, 32, 4, 0.05, 256)):
    expected = _tree('Serial', _tree('Serial', 'ShiftRight(1)'),
                     f'Embedding_{vocab_size}_{d_model}', 'Dropout',
                     'PositionalEncoding', *_block_trees(d_model, d_ff),
                     'LayerNorm', f'Dense_{vocab_size}', 'LogSoftmax')
    cases.append(_Case(
        f'TransformerLM(vocab_size={vocab_size}, d_model={d_model}, d_ff={d_ff}, '
        f'n_layers=1, n_heads={n_heads})',
        functools.partial(TransformerLM, n_layers=1, vocab_size=vocab_size,
                          d_model=d_model, d_ff=d_ff, n_heads=n_heads,
                          dropout=dropout, max_len=max_len, ff_activation=tl.Relu),
        [_Expect('str(model)', expected, str, _same_tree,
                 lambda got, _, expected=expected: _missing_layer_cause(
                     got, expected, _MODEL_OUTPUT) or blocks_cause(got, expected)),
         _kind(tl.Serial),
         _Expect('types of its sublayers', sublayers, _sublayer_names),
         _Expect('number of sublayers', 9, lambda model: len(model.sublayers))]))
  cases.append(_Case(
      'TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2) on ids (2, 8)',
      functools.partial(_exercise_model_signatures, TransformerLM),
      [_Expect('number of weights', _EXERCISE_WEIGHTS,
               lambda traced: _count_weights(traced[0])),
       _Expect('output shape', (2, 8, VOCAB_SIZE), lambda traced: traced[1])]))
  # Two blocks, each with weights of its own; 3 heads of 4 features.
  arguments = dict(vocab_size=40, d_model=12, d_ff=20, n_layers=2, n_heads=3, dropout=0.3)
  ids = np.random.default_rng(0).integers(2, 40, size=(2, 7)).astype(np.int32)
  cases += [case for case in _mode_cases(
      'TransformerLM(vocab_size=40, d_model=12, d_ff=20, n_layers=2, n_heads=3, '
      'dropout=0.3)', TransformerLM, _model.TransformerLM, arguments, ids, _model_cause)
            if "mode='predict'" not in case.name]
  cases.append(_step_by_step_case(TransformerLM, arguments, ids))
  return _run(cases, 'TransformerLM', TransformerLM)


def _swap_in_cache(layer, max_len):
  """Replaces each 'DotProductAttn' sublayer by the package's cached attention.

  A course-style ``CausalAttention`` keeps no cache: one token a call, it
  would attend only to itself. With the package's cache in its place, the
  rest of the learner's model (ShiftRight, PositionalEncoding and every
  weight) decodes as it would with a cache of its own.
  """
  sublayers = getattr(layer, '_sublayers', None) or []
  for i, sublayer in enumerate(sublayers):
    if sublayer.name == 'DotProductAttn':
      sublayers[i] = _attention.CachedDotProductAttention(max_len)
    else:
      _swap_in_cache(sublayer, max_len)


def _predict_mode_cause(model):
  """Names the layers of a predict-mode model that ignore its mode, if any."""
  ignoring = []
  for layer in _all_sublayers(model):
    if layer.name.startswith('ShiftRight'):
      if int(np.asarray(layer(np.array([[5]], np.int32)))[0, 0]) != 5:
        ignoring.append('ShiftRight')  # In predict mode it passes the token through.
    elif (type(layer).__name__ == 'PositionalEncoding'  # (By name: Trax may load it twice.)
          and getattr(layer, '_mode', None) != 'predict'):
      ignoring.append('PositionalEncoding')
  if not ignoring:
    return None
  return f"{' and '.join(sorted(set(ignoring)))} ignored mode='predict': {PREDICT_MODE}"


def _all_sublayers(layer):
  for sublayer in layer.sublayers:
    yield sublayer
    yield from _all_sublayers(sublayer)


def _step_by_step_case(TransformerLM, arguments, ids):  # pylint: disable=invalid-name
  """Decodes with the learner's predict-mode model one token a call.

  From an empty state, token by token, the learner's model (with the
  package's attention cache swapped in, see ``_swap_in_cache``) must give
  the package's eval-mode output on the whole sequence, same weights.
  """
  expects = _ran_expects("predict, one token a call from an empty state (beside the package's "
                         'eval-mode output)', _model_cause)
  built = {}

  def call():
    options = dict(arguments, mode='predict')
    if _accepts(TransformerLM, 'max_len'):
      options['max_len'] = 16
    model = TransformerLM(**options)
    if not isinstance(model, tl.Layer):
      raise TypeError(f'it returned a {type(model).__name__}, not a layer')
    built['model'] = model
    _swap_in_cache(model, 16)
    package_weights, expected_shapes, expected_output, expected_tree = _package_run(
        functools.partial(_model.TransformerLM, **dict(arguments, mode='eval', max_len=16)),
        ids)
    rng = fastmath.random.get_prng(_RUN_SEED)
    model.init(trax.shapes.signature(ids[:, :1]), rng=rng)
    shapes = _shapes(model)
    output = None
    if shapes == expected_shapes:
      weights, _ = tl.unflatten_weights_and_state(
          package_weights, (), (model.weights, model.state), weights_only=True)
      state = model.state
      shifted = np.concatenate([np.zeros_like(ids[:, :1]), ids[:, :-1]], axis=1)
      steps = []
      for position in range(ids.shape[1]):  # One token a call: (B, 1) -- (B, 1, V).
        step, state = model.pure_fn(shifted[:, position:position + 1], weights, state, rng)
        steps.append(np.asarray(step))
      output = np.concatenate(steps, axis=1)  # (B, L, V)
    expects[0].expected = len(expected_shapes)
    expects[1].expected = expected_shapes
    expects[2].expected = np.asarray(expected_output)
    return _Ran(shapes, expected_shapes, output, expected_output,
                _repeated(model), str(model), expected_tree)

  expects[2].explain = lambda got, ran: (_model_cause(got, ran)
                                         or _predict_mode_cause(built['model']))
  return _Case("TransformerLM(vocab_size=40, d_model=12, d_ff=20, n_layers=2, n_heads=3, "
               f"dropout=0.3, mode='predict') on ids {ids.shape}, one token a call",
               call, expects)


# --------------------------------------------------------------------------
# UNQ_C8: training_loop.

# The course's learning-rate schedule, read at steps of the warmup and of
# the decay.
_SCHEDULE_STEPS = (1, 500, 1000, 1001, 4000)
_COURSE_SCHEDULE = trax.lr.warmup_and_rsqrt_decay(1000, 0.01)

# Adam as the course builds it: Adam(0.01), the rest Trax's defaults.
_ADAM_PARAMETERS = {'learning_rate': 0.01, 'weight_decay_rate': 1e-5,
                    'b1': 0.9, 'b2': 0.999, 'eps': 1e-5}


@contextlib.contextmanager
def _home(directory):
  """Points '~' at ``directory``: a loop that writes to '~/model' writes there."""
  saved = os.environ.get('HOME')
  os.environ['HOME'] = directory
  try:
    yield
  finally:
    if saved is None:
      del os.environ['HOME']
    else:
      os.environ['HOME'] = saved


def _same_directory(got, expected):
  return os.path.realpath(got) == os.path.realpath(expected)


def _train_task(loop):
  return loop.tasks[0]


def _adam_parameters_agree(got, expected):
  return got.keys() == expected.keys() and all(
      np.isclose(got[name], expected[name], rtol=1e-6) for name in expected)


def test_training_loop(training_loop, TransformerLM=None):  # pylint: disable=invalid-name
  """Checks ``training_loop(TransformerLM, train_gen, eval_gen, output_dir)`` (UNQ_C8).

  The loop is built (no step is run) over small random batches, with
  ``output_dir`` in a temporary directory, and checked for the course's
  setup: ``CrossEntropyLoss``, ``Adam(0.01)``, the learning-rate schedule
  ``warmup_and_rsqrt_decay(1000, 0.01)``, a checkpoint every 10 steps,
  ``[CrossEntropyLoss, Accuracy]`` on evaluation, the exercise's model of
  316,336 weights, and that it writes where it is told.

  Args:
    training_loop: The function to check.
    TransformerLM: The model function to hand it (the course passes the
      learner's); by default, the package's.

  Returns:
    int: the number of failed cases.
  """
  given = {'TransformerLM': TransformerLM or _package_transformer_lm}  # Read as it runs.
  ids = next(probes.batches(2))[0]  # (1, 16)
  with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
    output_dir = os.path.join(home, 'output')  # Not '~/model', which is here too.

    def build_loop():
      # Handed as '~/output', as a learner writes '~/model': a loop that does
      # not expand '~' writes into a folder named '~', here in the temporary
      # folder too.
      options = {'output_dir': '~/output'} if _accepts(training_loop, 'output_dir') else {}
      with _home(home), _working_directory(home):  # Even a loop that ignores output_dir.
        return training_loop(given['TransformerLM'], probes.batches(0), probes.batches(1),
                             **options)

    output = _Expect("the model's output on a batch, beside the package's TransformerLM("
                     "d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train') with the "
                     'same weights and random key', None, agree=_allclose)
    output.measure = functools.partial(_output_beside_package, ids=ids, expect=output)
    return _run([_Case(
        'training_loop(TransformerLM, train_gen, eval_gen, output_dir)',
        build_loop, _loop_expects(output_dir) + [output])],
                'training_loop', training_loop, given)


def _loop_expects(output_dir):
  """What the loop must be: the course's loss, optimizer, schedule, checkpoints, metrics."""
  expected_rates = [float(_COURSE_SCHEDULE(step)) for step in _SCHEDULE_STEPS]
  return [
      _Expect('loss layer', 'CrossEntropyLoss_in3',
              lambda loop: str(_train_task(loop).loss_layer)),
      _kind(trax.optimizers.adam.Adam, lambda loop: _train_task(loop).optimizer, 'optimizer'),
      _Expect('optimizer parameters', _ADAM_PARAMETERS,
              lambda loop: {name: float(value) for name, value
                            in _train_task(loop).optimizer.opt_params.items()},
              _adam_parameters_agree),
      _Expect(f'learning rates at steps {", ".join(map(str, _SCHEDULE_STEPS))}',
              expected_rates,
              lambda loop: [float(_train_task(loop).learning_rate(step))
                            for step in _SCHEDULE_STEPS],
              _allclose),
      _Expect('steps between checkpoints', 10,
              lambda loop: _train_task(loop).n_steps_per_checkpoint),
      _Expect('evaluation metrics', ['CrossEntropyLoss', 'Accuracy'],
              lambda loop: [str(name) for name in loop.eval_tasks[0].metric_names]),
      _Expect('weights of the model it trains', _EXERCISE_WEIGHTS,
              lambda loop: _count_weights(loop.model.weights)),
      _Expect("output directory ('~/output' with '~' expanded)", output_dir,
              lambda loop: loop.output_dir, _same_directory),
      _Expect("modes of the model's layers", ['train'], lambda loop: _modes(loop.model)),
  ]


def _output_beside_package(loop, ids, expect):
  """The loop's model's output on ``ids``; sets the package's as expected."""
  ran = _run_beside_package(loop.model, functools.partial(
      _package_transformer_lm, **_EXERCISE_MODEL, mode='train'), ids)
  expect.expected = np.asarray(ran.expected_output)
  return _ran_output(ran)


@contextlib.contextmanager
def _working_directory(directory):
  saved = os.getcwd()
  os.chdir(directory)
  try:
    yield
  finally:
    os.chdir(saved)


def _modes(layer):
  """The modes of a layer's sublayers that have one (Dropout, PositionalEncoding, ...)."""
  found, stack = set(), [layer]
  while stack:
    current = stack.pop()
    mode = getattr(current, '_mode', None)
    if isinstance(mode, str):
      found.add(mode)
    stack.extend(current.sublayers)
  return sorted(found)


# --------------------------------------------------------------------------
# UNQ_C9: next_symbol.

class _StandInModel:
  """Stands in for an eval-mode TransformerLM: shows which position is read.

  Called as the course calls the model, on ``(inputs, targets)``, it returns
  ``(log_probs, targets)``; the most likely token at position p is 40 + p,
  so the token a caller picks tells which position it read. Every input is
  recorded.
  """
  VOCAB = 100
  FIRST = 40

  def __init__(self):
    self.inputs = []

  def __call__(self, batch, *args, **kwargs):
    del args, kwargs
    pair = isinstance(batch, (tuple, list))
    inputs = np.asarray(batch[0] if pair else batch)
    self.inputs.append(inputs)
    log_probs = np.full(inputs.shape + (self.VOCAB,), -10.0, np.float32)
    for position in range(min(inputs.shape[-1], self.VOCAB - self.FIRST)):
      log_probs[..., position, self.FIRST + position] = -0.1
    return (log_probs, batch[1] if len(batch) > 1 else inputs) if pair else log_probs


def _padded_length(length):
  """The smallest power of two strictly greater than ``length``."""
  padded = 1
  while padded <= length:
    padded *= 2
  return padded


def test_next_symbol(next_symbol, model=None):
  """Checks ``next_symbol(cur_output_tokens, model)`` (UNQ_C9).

  With a stand-in model, for token lists of 1, 4, 7 and 10 ids (the last
  is the course's): the model sees the tokens padded with zeros to the next
  power of two strictly greater than their number, as a batch of one; the
  answer is read at position ``len(cur_output_tokens)``; it is a Python int.

  Then the course's own case, when given the model function (its call form
  ``test_next_symbol(next_symbol, TransformerLM)``): ``TransformerLM()`` in
  eval mode, initialised with ``PRNGKey(1234)``, gives token 23317 after
  the course's 10 tokens (Trax's random numbers are drawn as the course's jax
  drew them: ``summarizer._trax``).

  Args:
    next_symbol: The function to check.
    model: The course passes ``TransformerLM`` (yours, in the assignment):
      its full-size model is built for the course's case. A model already
      built, or None, is not used: the stand-in takes its place.

  Returns:
    int: the number of failed cases.
  """
  token_lists = [[5], [13, 483, 320, 1], [7, 7, 9, 31, 2, 1, 0], _COURSE_TOKENS]
  cases = [_stand_in_case(next_symbol, tokens) for tokens in token_lists]
  given = {}
  if callable(model) and not isinstance(model, tl.Layer):
    given['TransformerLM'] = model  # Read as the case runs.
    cases.append(_Case(
        "next_symbol on the course's 10 tokens with TransformerLM(mode='eval') "
        'initialised with PRNGKey(1234)',
        lambda: _course_next_symbol(next_symbol, given['TransformerLM']),
        [_Expect('next token', _COURSE_NEXT_TOKEN)]))
  return _run(cases, 'next_symbol', next_symbol, given)


def _stand_in_case(next_symbol, tokens):  # pylint: disable=redefined-outer-name
  """next_symbol with the stand-in model: what it feeds the model, and where it reads."""
  padded = tokens + [0] * (_padded_length(len(tokens)) - len(tokens))
  stand_ins = []  # Kept for the why: line of a call that raises.

  def read_next():
    stand_ins[:] = [_StandInModel()]
    return next_symbol(list(tokens), stand_ins[0]), stand_ins[0].inputs

  expects = [
      _Expect('next token (read at position len(tokens))',
              _StandInModel.FIRST + len(tokens), lambda out: out[0],
              explain=lambda got, out: _read_cause(got - _StandInModel.FIRST, tokens, out[1])),
      _Expect('type of the next token', int, lambda out: type(out[0]), issubclass),
      _Expect("the model's input(s)", [[padded]],
              lambda out: [np.asarray(inputs).tolist() for inputs in out[1]],
              explain=lambda got, out: _padding_cause(tokens, out[1])),
  ]
  plural = 's' if len(tokens) > 1 else ''
  return _Case(f'next_symbol on {len(tokens)} token{plural}', read_next, expects,
               lambda error: _padding_cause(tokens, stand_ins[0].inputs))


def _read_cause(position, tokens, inputs):
  """Names the position next_symbol read, if a known wrong one."""
  if position == len(tokens) - 1:
    return ('it read position len(cur_output_tokens) - 1, which predicts the last token '
            'you already have: read position len(cur_output_tokens)')
  if position != len(tokens) and position == np.shape(inputs[0])[-1] - 1:
    return ('it read the last position (-1), which is padding: the next token is '
            'predicted at position len(cur_output_tokens), the first after the tokens')
  return None


def _padding_cause(tokens, inputs):
  """Names padding to a power of two not above the number of tokens, if so."""
  if inputs and np.shape(inputs[0])[-1] <= len(tokens):
    return ('the tokens were padded to a power of two not above their number (4 to 4): pad '
            'to the smallest one strictly greater (4 to 8), so that position '
            'len(cur_output_tokens) exists')
  return None


# The course's case: its 10 tokens, and the token its randomly initialised
# full-size model gives after them.
_COURSE_TOKENS = [13, 483, 320, 4219, 132, 213, 2775, 10, 1, 0]
_COURSE_NEXT_TOKEN = 23317


def _course_next_symbol(next_symbol, TransformerLM):  # pylint: disable=invalid-name,redefined-outer-name
  """Builds the course's model as its test does and asks for the next token."""
  model = TransformerLM(mode='eval')
  model.init(trax.shapes.ShapeDtype((1, 1), np.int32), rng=fastmath.random.get_prng(1234))
  return next_symbol(list(_COURSE_TOKENS), model)


# --------------------------------------------------------------------------
# UNQ_C10: greedy_decode.

# The stand-in vocabulary of summaries: detokenize joins these pieces.
_SUMMARY_PIECES = {20: 'I ', 21: 'found ', 22: 'roses, ', 23: 'not ',
                   24: 'tulips.', 25: ' And more.', EOS: '<EOS>'}


def _stand_in_tokenize(text, *args, **kwargs):
  """One id a word (100 + its length), then EOS, as the course's tokenize ends."""
  del args, kwargs
  return [100 + len(word) for word in text.split()] + [EOS]


def _stand_in_detokenize(ids, *args, **kwargs):
  del args, kwargs
  return ''.join(_SUMMARY_PIECES.get(int(i), f'<{int(i)}>') for i in ids)


class _StandInModelArgument:
  """The model handed to greedy_decode: only ever passed on to next_symbol."""

  def __repr__(self):
    return "greedy_decode's model"


class _ScriptedNextSymbol:
  """Stands in for next_symbol: writes a script, one token a call.

  It answers the next token of ``script`` only when called with the article's
  ids, the separator and the tokens written so far, and EOS otherwise. It
  records every call, and gives up (raises) when called far more often than
  the script is long: a decoder that does not stop at EOS.
  """

  def __init__(self, prefix, script):
    self.prefix, self.script = list(prefix), list(script)
    self.calls, self.models = [], []

  def __call__(self, cur_output_tokens, model=None, *args, **kwargs):
    del args, kwargs
    tokens = [int(token) for token in cur_output_tokens]
    self.calls.append(tokens)
    self.models.append(model)
    if len(self.calls) > 2 * len(self.script) + 10:
      raise RuntimeError(f'next_symbol was called {len(self.calls)} times: '
                         f'the decoding does not stop at EOS ({EOS})')
    written = tokens[len(self.prefix):]
    if (tokens[:len(self.prefix)] == self.prefix
        and written == self.script[:len(written)] and len(written) < len(self.script)):
      return self.script[len(written)]
    return EOS


def _after(article_ids, tokens):
  """The tokens after the article's ids (all of them if they do not start so)."""
  if tokens[:len(article_ids)] == article_ids:
    return tokens[len(article_ids):]
  return tokens


def test_greedy_decode(greedy_decode, model=None):
  """Checks ``greedy_decode(input_sentence, model, next_symbol, tokenize, detokenize)`` (UNQ_C10).

  With a stand-in ``next_symbol``, ``tokenize`` and ``detokenize``: decoding
  starts from ``tokenize(sentence) + [0]``, appends each token it gets,
  passes its model to ``next_symbol``, stops at EOS (1) even when more would
  come, and returns the detokenised summary with its '<EOS>'. What it prints
  (the course's version prints the summary as it grows, whatever ``verbose``
  says) is feedback: never a failure.

  Args:
    greedy_decode: The function to check; called with ``verbose=True`` when
      it takes that argument (the course's version always prints).
    model: Accepted for the course's call forms; not used: stand-ins take the
      place of the model and of ``next_symbol``.

  Returns:
    int: the number of failed cases.
  """
  del model
  # (sentence, what next_symbol would write: after EOS, what must not come)
  examples = [
      ('It was a sunny day when I went to the market to buy some flowers.',
       [20, 21, 22, 23, 24, EOS, 25]),
      ('Nothing happened.', [EOS, 25]),
  ]
  options = {'verbose': True} if _accepts(greedy_decode, 'verbose') else {}
  cases = [_decode_case(greedy_decode, sentence, script, options)
           for sentence, script in examples]
  if options:  # verbose=False: the summary is returned all the same.
    cases.append(_quiet_case(greedy_decode, *examples[0]))
  return _run(cases, 'greedy_decode')


def _decode_case(greedy_decode, sentence, script, options):
  """greedy_decode with the stand-in next_symbol writing ``script``: its calls, its summary."""
  summary = script[:script.index(EOS) + 1]
  article_ids = _stand_in_tokenize(sentence)
  stand_ins = []  # Kept for the why: line of a call that raises.

  def decode():
    stand_ins[:] = [_ScriptedNextSymbol(article_ids + [SEP], script)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
      output = greedy_decode(sentence, _StandInModelArgument(),
                             next_symbol=stand_ins[0], tokenize=_stand_in_tokenize,
                             detokenize=_stand_in_detokenize, **options)
    return output, stand_ins[0], printed.getvalue()

  growing = [_stand_in_detokenize(summary[:n + 1]) for n in range(len(summary))]
  why = lambda got, out: _decoding_cause(article_ids, out[1], out[0])
  return _Case(f'greedy_decode of a {len(summary)}-token summary', decode, [
      _Expect('the summary it returns', growing[-1], lambda out: out[0], explain=why),
      _Expect('the tokens next_symbol is given after tokenize(sentence), call by call',
              [[SEP] + summary[:n] for n in range(len(summary))],
              lambda out: [_after(article_ids, call) for call in out[1].calls], explain=why),
      _Expect('the model next_symbol is given', ["greedy_decode's model"],
              lambda out: sorted({repr(m) for m in out[1].models})),
  ], lambda error: _decoding_cause(article_ids, stand_ins[0]))


def _decoding_cause(article_ids, stand_in, summary=None):
  """Names an off-by-one of a decoding loop, from the stand-in's calls and the summary."""
  written = [_after(article_ids, call) for call in stand_in.calls]
  if written and written[0][:1] != [SEP]:
    return ('decoding started without the separator: start from tokenize(sentence) + [0], '
            "the article's ids (ending with EOS) then SEP")
  if any(EOS in tokens[1:] for tokens in written):
    return ('it went on after EOS: stop as soon as next_symbol gives EOS (1), once it is '
            'appended')
  if isinstance(summary, str) and not summary.endswith(_SUMMARY_PIECES[EOS]):
    return ('it stopped before appending EOS: append every token next_symbol gives, EOS '
            "(1) too, then stop; the summary ends with '<EOS>'")
  return None


def _quiet_case(greedy_decode, sentence, script):
  """greedy_decode(..., verbose=False) returns the summary (what it prints is not checked)."""
  prefix = _stand_in_tokenize(sentence) + [SEP]

  def quiet():
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
      output = greedy_decode(sentence, _StandInModelArgument(),
                             next_symbol=_ScriptedNextSymbol(prefix, script),
                             tokenize=_stand_in_tokenize,
                             detokenize=_stand_in_detokenize, verbose=False)
    return output, printed.getvalue()
  summary = script[:script.index(EOS) + 1]
  return _Case('greedy_decode(..., verbose=False)', quiet, [
      _Expect('the summary it returns', _stand_in_detokenize(summary), lambda out: out[0])])


# --------------------------------------------------------------------------
# Parts 4 and 5: the trained model in your TransformerLM, and its summary.

def _article_ids():
  """The sample article's ids in the shipped model's vocabulary, then EOS and SEP, (1, L)."""
  from summarizer import text  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(coursework.VOCAB_DIR, coursework.VOCAB_FILE)
  ids = text.tokenize(coursework.sample_article(), vocab) + [SEP]
  return np.array([ids], np.int32)


def _traced_weight_shapes(TransformerLM):  # pylint: disable=invalid-name
  """The weight shapes of an eval-mode model of the shipped size, traced (no arithmetic)."""
  model = TransformerLM(**coursework.model_size(), mode='eval')
  weights, _ = fastmath.abstract_eval(model.init)(trax.shapes.ShapeDtype((1, 8), np.int32))
  return [tuple(leaf.shape) for leaf in tl.flatten_weights_and_state(weights, ())[0]]


def shipped_weights_fit(TransformerLM):  # pylint: disable=invalid-name
  """Raises AssertionError naming the first weight whose shape is not the shipped model's.

  Called before ``init_from_file``, whose own error ("shape expected ... got
  ...") names the file's shape as the one got.
  """
  yours = _traced_weight_shapes(TransformerLM)
  shipped = _traced_weight_shapes(_package_transformer_lm)
  for index, (mine, theirs) in enumerate(zip(yours, shipped)):
    if mine != theirs:
      raise AssertionError(
          f"weight #{index + 1} of your model is {mine}, the shipped model's is {theirs} "
          f'({len(shipped)} weights in the shipped model, {len(yours)} in yours): '
          'the shipped weights do not fit your TransformerLM; see Exercise 7')
  if len(yours) != len(shipped):
    raise AssertionError(f'your model has {len(yours)} weights, the shipped model '
                         f'{len(shipped)}: see Exercise 7')


def test_trained_model(model):
  """Checks your eval-mode TransformerLM, loaded with the shipped weights (Part 4).

  On the sample article (its ids, EOS and SEP, as a batch of one) it must
  give the log-probabilities that the package's model gives with the same
  weights.

  Args:
    model: Your ``TransformerLM(**coursework.model_size(), mode='eval')``
      after ``init_from_file``.

  Returns:
    int: the number of failed cases.
  """
  from summarizer.inference import model_directory  # pylint: disable=g-import-not-at-top
  ids = _article_ids()
  package_model = model_directory.read(coursework.MODEL_DIR).model('eval')
  expected = np.asarray(package_model(ids))
  output = _Expect("log-probabilities, beside the package's model", expected,
                   _as_array, lambda got, wanted: got.shape == wanted.shape
                   and np.allclose(got, wanted, rtol=1e-4, atol=1e-3))
  return _run([_Case(f'your model on the sample article, ids {ids.shape}',
                     functools.partial(model, ids),
                     [_shape(expected.shape), output])], 'trained_model')


def _ids(tokens):
  """A detokenize that keeps the ids: the summary compared token for token."""
  return [int(token) for token in tokens]


def test_summary(greedy_decode, next_symbol, model, tokenize, detokenize):
  """Checks the summary your functions write of the sample article (Part 5).

  ``greedy_decode(article, model, next_symbol, tokenize, ...)`` must write
  the package's summary (``summarizer.summarize``'s), token for token. Your
  summary and the package's are printed, one under the other, with your
  ``detokenize``.

  Args:
    greedy_decode, next_symbol: Yours.
    model: Your trained model (Part 4).
    tokenize, detokenize: Part 1's, for the shipped model's vocabulary.

  Returns:
    int: the number of failed cases.
  """
  from summarizer.decoding import MAX_SUMMARY_TOKENS  # pylint: disable=g-import-not-at-top
  from summarizer.inference import loaded_model, summaries  # pylint: disable=g-import-not-at-top
  article = coursework.sample_article()
  run = summaries.summarize_tokens(article, loaded_model.load(coursework.MODEL_DIR))
  expected = list(run) + ([EOS] if len(run.ids) < MAX_SUMMARY_TOKENS else [])

  def summarise():
    with contextlib.redirect_stdout(io.StringIO()):  # The ids, were it to print them.
      ids = greedy_decode(article, model, next_symbol, tokenize, _ids)
    print('Your summary:')
    print(detokenize(ids))
    print("The package's summary:")
    print(detokenize(expected))
    return ids
  return _run([_Case('greedy_decode of the sample article with your next_symbol and model',
                     summarise, [_Expect("the summary's ids, token for token", expected,
                                         _ids)])], 'summary')
