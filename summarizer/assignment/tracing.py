"""The ``where:`` line of a failed case: the learner's line where its values leave the course's.

A failed case is run again twice under ``sys.settrace``: as it is, following
the learner's own frames (code from the notebook's cells), and with the
package's function in place of the learner's (``twin``), following the
package's frames. Every array a line gives a local (or a frame returns) is
kept. The learner's line that matters is the first whose new value matches
nothing the course's function held (same shape and numbers, to float32
precision) after the last one that did: ``where: line N of f, `x` has shape
(...); the course has (...) here``. For a layer function (one that returns
Trax layers) the two layers are walked side by side instead, and the first
sublayer that differs is named with the learner's line that built it.

Nothing here may break a check: any failure of the tracing gives no line.
"""

import functools
import sys
import time
import types

import numpy as np

from summarizer._trax import tl
from summarizer.contract import exercise_code, probes_layers, recording
from summarizer.contract.failure_text import learners_code

# Values kept a run at most, and how many numbers a kept array may hold: the line stays cheap.
_MOST_EVENTS = 4000
_MOST_NUMBERS = 100_000
_MOST_SECONDS = 3  # Followed at most this long a run; then the run goes on untraced.


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


def _array(value):
  """A kept copy of an array-valued local (an array, a list of numbers), or None."""
  if isinstance(value, (bool, int, float, str, bytes, type(None))) or callable(value):
    return None
  if isinstance(value, (list, tuple)) and not all(
      isinstance(item, (int, float, np.integer, np.floating)) for item in value):
    return None
  try:
    array = np.array(value)
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None  # A jax tracer, under jit: it holds no numbers.
  if array.dtype.kind not in 'biuf' or array.size < 2 or array.size > _MOST_NUMBERS:
    return None
  return array


class Follower:
  """Follows the frames of one kind of code through a call, keeping their arrays line by line.

  Attributes:
    events: (line, function, name, array, frame's number) for each new array
      value (name None: what the frame returned), in order.
    scalars: (line, function, name, value) for each new Python number a
      local holds (an int or a float), in order.
    returned: What the frame of ``top`` first returned (the layer function's layer).
    built: id of a Trax layer -> (the layer, line, function) of the followed
      frame that constructed it.
    cut: Whether time ran out before the call ended (what was kept is partial).
  """

  def __init__(self, follows, top):
    self.follows, self.top = follows, top
    self.events, self.scalars, self.returned, self.built = [], [], None, {}
    self._seen, self._deadline, self.cut = {}, 0, False

  def run(self, call):
    """Runs ``call`` under the tracer; returns its result or the exception it raised."""
    previous, self._deadline = sys.gettrace(), time.monotonic() + _MOST_SECONDS
    sys.settrace(self._global)
    try:
      return call()
    except recording.CAUGHT as error:  # pylint: disable=broad-except
      return error
    finally:
      sys.settrace(previous)

  def _global(self, frame, event, arg):
    del event, arg
    if _layers(self.returned) or time.monotonic() > self._deadline:
      self.cut = not _layers(self.returned)
      sys.settrace(None)  # The layers are built (running them is the check's), or time is up.
      return None
    code = frame.f_code
    if code.co_name == '__init__' and isinstance(frame.f_locals.get('self'), tl.Layer):
      self._builder(frame)
    if self.follows(code.co_filename):
      return self._local
    return None

  def _builder(self, frame):
    layer, caller = frame.f_locals['self'], frame.f_back
    while caller is not None and not self.follows(caller.f_code.co_filename):
      caller = caller.f_back
    if caller is not None and id(layer) not in self.built:
      self.built[id(layer)] = (layer, caller.f_lineno, caller.f_code.co_name)

  def _local(self, frame, event, arg):
    if event not in ('line', 'return') or len(self.events) > _MOST_EVENTS:
      return self._local
    seen = self._seen.setdefault(id(frame), [None, {}, len(self._seen)])
    line = seen[0] if event == 'line' else frame.f_lineno
    if line is not None:
      self._keep_new(frame, line, seen)
    seen[0] = frame.f_lineno
    if event == 'return':
      self._returning(frame, arg)
    return self._local

  def _keep_new(self, frame, line, seen):
    values = seen[1]
    for name, value in list(frame.f_locals.items()):
      last = values.get(name)
      if last is not None and last[0] is value and not isinstance(value, (list, np.ndarray)):
        continue
      if _number(value) and not (last is not None and _number(last[0])
                                 and type(last[0]) is type(value) and last[0] == value):
        self.scalars.append((line, frame.f_code.co_name, name, value))
      array = _array(value)
      values[name] = (value, array)
      if array is not None and not (last is not None and last[1] is not None
                                    and _same(last[1], array)):
        self.events.append((line, frame.f_code.co_name, name, array, seen[2]))

  def _returning(self, frame, value):
    serial = self._seen.pop(id(frame))[2]
    if frame.f_code is self.top and self.returned is None:
      self.returned = value
    array = _array(value)
    if array is not None:
      self.events.append((frame.f_lineno, frame.f_code.co_name, None, array, serial))


def _number(value):
  return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(one, other):
  """Whether two arrays hold the same numbers in the same shape, to float32 precision."""
  if one.shape != other.shape or {one.dtype.kind, other.dtype.kind} in ({'i', 'f'}, {'u', 'f'}):
    return False  # Ids held as floats are not the course's ids, whatever their numbers.
  try:
    return bool(np.allclose(one.astype(np.float64), other.astype(np.float64),
                            rtol=1e-4, atol=1e-5, equal_nan=True))
  except (TypeError, ValueError, OverflowError):
    return False


def where(call, check):
  """The ``where:`` line of a failed case of ``check`` (its ``call``), or None."""
  try:
    package = exercise_code.graded_function(check)
    package_call, learners = twin(call, package)
    if package_call is None:
      return None
    package_file = package.__code__.co_filename
    theirs = Follower(lambda filename: filename == package_file, package.__code__)
    theirs.run(package_call)
    yours = Follower(learners_code, learners.__code__)
    yours.run(call)
    if theirs.cut or yours.cut:
      return None  # Followed only part of the way: a line named would be a guess.
    if _layers(theirs.returned) and _layers(yours.returned):
      return _layer_where(yours, theirs) or _number_where(yours.scalars, theirs.scalars)
    return (_array_where(yours.events, theirs.events)
            or _number_where(yours.scalars, theirs.scalars))
  except Exception:  # pylint: disable=broad-except
    return None  # The tracing is a help: it never fails a check.


def _array_where(events, course):
  """The learner's first value that matches none of the course's and that nothing after it in
  its frame puts back on the course's path (a helper value of the learner's own is not a mistake).

  ``course`` holds the course function's events; "here" is its value of the
  same name after the last match before it (else its last of that name, else its next).
  """
  arrays = [event[3] for event in course]
  matched = [next((index for index, value in enumerate(arrays) if _same(event[3], value)), None)
             for event in events]
  for position, (line, function, name, array, frame) in enumerate(events):
    if matched[position] is not None or any(
        matched[later] is not None and events[later][4] == frame
        for later in range(position + 1, len(events))):
      continue
    after = 1 + max((matched[i] for i in range(position) if matched[i] is not None), default=-1)
    named = [index for index, event in enumerate(course) if event[2] == name]
    index = next((i for i in named if i >= after),
                 named[-1] if named else min(after, len(course) - 1))
    here = arrays[index]
    what = f'`{name}`' if name else 'what it returns'
    other = ' with other numbers' if here.shape == array.shape else ''
    return (f'where: line {line} of {function}, {what} has shape {array.shape}{other}; '
            f'the course has {here.shape} here')
  return None


def _number_where(numbers, course):
  """The learner's first float whose local the course holds as an int of the same value.

  (``d_head = d_feature / n_heads`` gives 3.0 where ``//`` gives 3: a shape
  built from it fails later, far from the line.)
  """
  ints = {(name, value) for _, _, name, value in course if isinstance(value, int)}
  for line, function, name, value in numbers:
    if isinstance(value, float) and value.is_integer() and (name, int(value)) in ints:
      return (f'where: line {line} of {function}, `{name}` is {value!r}, a float; the course '
              f'has the int {int(value)} here')
  return None


def _layers(value):
  return isinstance(value, tl.Layer) or (
      isinstance(value, list) and value and all(isinstance(v, tl.Layer) for v in value))


def _layer_where(yours, theirs):
  """The first sublayer of the learner's layer that differs from the course's, and its line."""
  found = _first_different(probes_layers.as_layer(yours.returned), probes_layers.as_layer(theirs.returned))
  if found is None:
    return None
  got, wanted, parent = found
  built = _built_by(yours, got if got is not None else parent)
  around = _built_by(yours, parent) if parent is not None else None
  if got is not None and around is not None and built is not None and (
      built[1] != yours.top.co_name == around[1]):
    # Built by an earlier exercise's function: the line that put it here is the checked one's.
    return (f'where: line {around[0]} of {around[1]} puts `{_named(got)}` here; the course has '
            f'`{_named(wanted)}`')
  if built is None:
    return None
  line, function = built
  if got is None:
    return (f'where: line {line} of {function} built `{_named(parent)}` without '
            f'`{_named(wanted)}`; the course has `{_named(wanted)}` here')
  if wanted is None:
    return (f'where: line {line} of {function} built `{_named(got)}`; the course has '
            f'nothing more here')
  return (f'where: line {line} of {function} built `{_named(got)}`; the course has '
          f'`{_named(wanted)}` here')


def _named(layer):
  """A layer's name as the exercise's steps write it: Trax's tl.Residual is a Serial of Branch, Add."""
  if layer.name == 'Serial' and [sub.name for sub in layer.sublayers] == ['Branch', 'Add']:
    return 'Residual'
  return layer.name


def _first_different(got, wanted):
  """(the learner's sublayer or None, the course's or None, their parent) where they first differ."""
  if _named(got) != _named(wanted):
    return got, wanted, None
  for mine, course in zip(got.sublayers, wanted.sublayers):
    if _named(mine) != _named(course):
      return mine, course, got
    found = _first_different(mine, course)
    if found is not None:
      return found
  if len(got.sublayers) > len(wanted.sublayers):
    return got.sublayers[len(wanted.sublayers)], None, got
  if len(got.sublayers) < len(wanted.sublayers):
    return None, wanted.sublayers[len(got.sublayers)], got
  return None


def _built_by(follower, layer):
  """(line, function) where the learner built ``layer``, or None."""
  built = follower.built.get(id(layer))
  return built[1:] if built is not None and built[0] is layer else None
