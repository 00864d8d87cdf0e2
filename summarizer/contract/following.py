"""Following a call line by line: the arrays its lines give, and the first that leaves the course's.

Shared by the notebook's ``where:`` line (``assignment/runner.py``) and the
grader's (``grading/where_line.py``). A ``Follower`` runs a call under
``sys.settrace`` and keeps, for the frames of one kind of code, every array
a line gives a local (or a frame returns) and every new Python number;
``array_where`` and ``number_where`` name the learner's first value that
matches nothing the course's function held.

The grader splits the work: inside the sandbox only the learner's function
is followed, and its trace is sent back bounded (``sent_trace``: few events,
small arrays); the teacher's process follows the package's function on the
same inputs and compares (``received_events``). Nothing here holds or
imports an answer: it runs in the sandbox too (same imports as ``recording.py``).
"""

import sys
import time

import numpy as np

from summarizer._trax import tl
from summarizer.contract import probes_layers, recording

# Values kept a run at most, and how many numbers a kept array may hold: the line stays cheap.
_MOST_EVENTS = 4000
_MOST_NUMBERS = 100_000
# Followed at most this many CPU seconds a run (the process's: a busy machine slows the
# following, and does not cut it short); then the run goes on untraced.
_MOST_SECONDS = 3
# What a trace sent from the sandbox may hold (``report_schema.fit`` holds it to these):
# events (and numbers) at most, numbers an array, numbers in all, characters a name.
MOST_SENT_EVENTS = 96
MOST_SENT_NUMBERS = 4096
MOST_SENT_TOTAL = 32768
MOST_NAME = 100


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
    previous, self._deadline = sys.gettrace(), time.process_time() + _MOST_SECONDS
    sys.settrace(self._global)
    try:
      return call()
    except recording.CAUGHT as error:  # pylint: disable=broad-except
      return error
    finally:
      sys.settrace(previous)

  def _global(self, frame, event, arg):
    del event, arg
    if is_layers(self.returned):
      sys.settrace(None)  # The layers are built (running them is the check's).
      return None
    if self.cut or time.process_time() > self._deadline:
      # Time is up: no new frame is followed. The tracer stays (sys.settrace from a frame
      # of the learner's would be an event the sandbox's watch reports).
      self.cut = True
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
                                    and same(last[1], array)):
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


def plain(value):
  """Whether ``value`` is a plain value a line may write: a number or a text (not a bool)."""
  return _number(value) or isinstance(value, str)


def same(one, other):
  """Whether two arrays hold the same numbers in the same shape, to float32 precision."""
  if one.shape != other.shape or {one.dtype.kind, other.dtype.kind} in ({'i', 'f'}, {'u', 'f'}):
    return False  # Ids held as floats are not the course's ids, whatever their numbers.
  try:
    return bool(np.allclose(one.astype(np.float64), other.astype(np.float64),
                            rtol=1e-4, atol=1e-5, equal_nan=True))
  except (TypeError, ValueError, OverflowError):
    return False


def array_where(events, course):
  """The learner's first value that matches none of the course's and that nothing after it in
  its frame puts back on the course's path (a helper value of the learner's own is not a mistake).

  ``course`` holds the course function's events; "here" is its value of the
  same name after the last match before it (else its last of that name). A name
  the course's function never holds gets no shape of the course's beside it.
  """
  arrays = [event[3] for event in course]
  matched = [next((index for index, value in enumerate(arrays) if same(event[3], value)), None)
             for event in events]
  for position, (line, function, name, array, frame) in enumerate(events):
    if matched[position] is not None or any(
        matched[later] is not None and events[later][4] == frame
        for later in range(position + 1, len(events))):
      continue
    after = 1 + max((matched[i] for i in range(position) if matched[i] is not None), default=-1)
    named = [index for index, event in enumerate(course) if event[2] == name]
    what = f'`{name}`' if name else 'what it returns'
    if not named:  # The course's function holds no value of that name: none to quote beside it.
      return (f'{where_at(line, function)}, {what} has shape {array.shape}; no value of the '
              "course's function has its numbers")
    here = arrays[next((i for i in named if i >= after), named[-1])]
    other = ' with other numbers' if here.shape == array.shape else ''
    return (f'{where_at(line, function)}, {what} has shape {array.shape}{other}; '
            f'the course has {here.shape} here')
  return None


def number_where(numbers, course):
  """The learner's first float whose local the course holds as an int of the same value.

  (``d_head = d_feature / n_heads`` gives 3.0 where ``//`` gives 3: a shape
  built from it fails later, far from the line.)
  """
  ints = {(name, value) for _, _, name, value in course if isinstance(value, int)}
  for line, function, name, value in numbers:
    if isinstance(value, float) and value.is_integer() and (name, int(value)) in ints:
      return (f'{where_at(line, function)}, `{name}` is {value!r}, a float; the course '
              f'has the int {int(value)} here')
  return None


def where_at(line, function):
  """How a ``where:`` line starts, on both sides: 'where: line N of f'."""
  return f'where: line {line} of {function}'


def is_layers(value):
  """Whether ``value`` is a Trax layer or a list of them (what a layer function returns)."""
  return isinstance(value, tl.Layer) or (
      isinstance(value, list) and value and all(isinstance(v, tl.Layer) for v in value))


# --------------------------------------------------------------------------
# A layer function's where: its layer's outline beside the course's.

# Layers an outline sent from the sandbox may hold, and how deep it may nest.
MOST_OUTLINE_LAYERS = 600
MOST_OUTLINE_DEPTH = 24


def label(layer):
  """A layer's name as the exercise's steps write it: Trax's tl.Residual is a Serial of Branch, Add."""
  if layer.name == 'Serial' and [sub.name for sub in layer.sublayers] == ['Branch', 'Add']:
    return 'Residual'
  return layer.name


def mode_said(layer):
  """How a where: line says the mode of a layer whose mode changes what it does ('' for others).

  Dropout and PositionalEncoding keep their mode (``_mode``); ShiftRight, a
  function layer, is run on one token: in predict mode it passes it on.
  """
  mode = getattr(layer, '_mode', None)
  if isinstance(mode, str):
    return f" in mode '{mode}'"
  if str(layer.name).startswith('ShiftRight'):
    try:
      passed = probes_layers.shifted_token(layer)
    except recording.CAUGHT:  # pylint: disable=broad-except
      return ''
    return f" {'in' if passed == probes_layers.TOKEN else 'not in'} mode 'predict'"
  return ''


def outline(built, follower):
  """What a layer function returned, as the where: line compares it, or None past its bounds.

  Args:
    built: A layer, or a list of them (a block: read as a ``tl.Serial`` of them).
    follower: The ``Follower`` that saw it built (its ``built``: the lines
      of the followed code that built each layer).

  Returns:
    [label, line, function, [sublayers' outlines], mode (``mode_said``)],
    line and function those of the followed line that built the layer
    (None: not built there).
  """
  left = [MOST_OUTLINE_LAYERS]

  def node(layer, depth):
    left[0] -= 1
    if left[0] < 0 or depth > MOST_OUTLINE_DEPTH:
      raise ValueError('past the bounds of an outline')
    made = follower.built.get(id(layer))
    line, function = ((made[1], str(made[2])[:MOST_NAME]) if made is not None and made[0] is layer
                      else (None, None))
    return [str(label(layer))[:MOST_NAME], line, function,
            [node(sublayer, depth + 1) for sublayer in layer.sublayers],
            mode_said(layer)[:MOST_NAME]]
  try:
    return node(tl.Serial(built) if isinstance(built, list) else built, 0)
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None


def layer_where(yours, course, top):
  """The first sublayer of the learner's layer that differs from the course's, and its line.

  Args:
    yours, course: The two layers' outlines (``outline``).
    top: The name of the function checked (a layer an earlier exercise's
      function built is named by the line of ``top`` that put it there).
  """
  found = _first_different(yours, course)
  if found is None:
    return None
  got, wanted, parent = found
  built = _built(got if got is not None else parent)
  around = _built(parent) if parent is not None else None
  if got is not None and around is not None and built is not None and (
      built[1] != top == around[1]):
    if wanted is None:
      return None  # Nothing of the course's to name beside it.
    # Built by an earlier exercise's function: the line that put it here is the checked one's.
    return f'{where_at(*around)} puts {_said(got)} here; the course has {_said(wanted)}'
  if built is None or (built[1] != top and built[1] in recording.GRADED):
    # Built by an earlier exercise's function, called from a line of the checked one that was
    # not followed: the earlier function's line would send the learner to the wrong exercise.
    return None
  if got is None:
    return (f'{where_at(*built)} built `{parent[0]}` without {_said(wanted)}; the course has '
            f'{_said(wanted)} here')
  if wanted is None:
    return f'{where_at(*built)} built {_said(got)}; the course has nothing more here'
  return f'{where_at(*built)} built {_said(got)}; the course has {_said(wanted)} here'


def _said(node):
  """An outline's layer as a where: line names it: its name, and its mode where it has one."""
  return f'`{node[0]}`{node[4]}'


def _built(node):
  """(line, function) where the learner built an outline's layer, or None."""
  return None if node[1] is None else (node[1], node[2])


def _first_different(got, wanted):
  """(the learner's sublayer or None, the course's or None, their parent) where they first differ."""
  if _said(got) != _said(wanted):
    return got, wanted, None
  for mine, theirs in zip(got[3], wanted[3]):
    if _said(mine) != _said(theirs):
      return mine, theirs, got
    found = _first_different(mine, theirs)
    if found is not None:
      return found
  if len(got[3]) > len(wanted[3]):
    return got[3][len(wanted[3])], None, got
  if len(got[3]) < len(wanted[3]):
    return None, wanted[3][len(got[3])], got
  return None


def same_outline(one, other):
  """Whether two outlines name the same layers in the same places (lines and modes aside).

  What a printed layer shows (its modes are not printed): a printed-layer
  case whose outlines are the same passed, as the notebook's does.
  """
  return one[0] == other[0] and len(one[3]) == len(other[3]) and all(
      same_outline(mine, theirs) for mine, theirs in zip(one[3], other[3]))


def where_of(yours, theirs, top):
  """The where: line of a followed case: the learner's ``Follower`` (or trace) beside the course's.

  Both sides' line (the notebook's ``runner.where``, the grader's
  ``where_line``): two layers by their outlines, else the arrays, then the
  numbers.

  Args:
    yours: The learner's: {'outline', 'events', 'scalars'} (a received trace's, or a
      ``Follower``'s as ``followed`` gives them).
    theirs: The course's, the same.
    top: The name of the learner's function checked.
  """
  if yours['outline'] is not None and theirs['outline'] is not None:
    line = layer_where(yours['outline'], theirs['outline'], top)
  else:  # Not both layers: what they returned is compared as the notebook's runner compares it.
    line = array_where(yours['events'], theirs['events'])
  return line or number_where(yours['scalars'], theirs['scalars'])


def followed(follower):
  """What a ``Follower`` kept, as ``where_of`` reads it."""
  built = follower.returned if is_layers(follower.returned) else None
  return {'outline': None if built is None else outline(built, follower),
          'events': follower.events, 'scalars': follower.scalars}


def sent_trace(call, top, follows):
  """Follows ``call`` (the learner's, in the sandbox): its trace as the report sends it.

  Args:
    call: Calls the learner's function on a case's inputs.
    top: The learner's function's code object.
    follows: Whether code from a filename is the learner's (``recording.in_a_cell``).

  Returns:
    {'events': [[line, function, name, frame, dtype, shape]], 'numbers': the
    events' arrays flat, as float64, 'scalars': [[line, function, name,
    value]], 'output': what the call returned as float64 (None if not an
    array), 'raised': whether it raised, 'cut': whether the trace is partial
    or past the bounds (then it holds no event), 'outline': the layer it
    returned (``outline``; None: none, or past its bounds)}.
  """
  follower = Follower(follows, top)
  result = follower.run(call)
  raised = isinstance(result, BaseException)
  events, scalars = follower.events, follower.scalars
  cut = (follower.cut or len(events) > MOST_SENT_EVENTS or len(scalars) > MOST_SENT_EVENTS
         or any(event[3].size > MOST_SENT_NUMBERS for event in events)
         or sum(event[3].size for event in events) > MOST_SENT_TOTAL)
  if cut:
    events, scalars = [], []
  shape = None if follower.cut else followed(follower)['outline']
  return {'events': [[int(line), str(function)[:MOST_NAME],
                      None if name is None else str(name)[:MOST_NAME], int(frame),
                      str(array.dtype), list(array.shape)]
                     for line, function, name, array, frame in events],
          'numbers': np.concatenate([np.ravel(event[3]).astype(np.float64) for event in events]
                                    or [np.zeros(0)]),
          'scalars': [[int(line), str(function)[:MOST_NAME], str(name)[:MOST_NAME], value]
                      for line, function, name, value in scalars],
          'output': None if raised else _output(result), 'raised': raised, 'cut': bool(cut),
          'outline': shape}


def _output(result):
  """What a followed call returned, as a float64 array of at most ``MOST_SENT_NUMBERS``, or None."""
  try:
    output = np.asarray(result, dtype=np.float64)
  except recording.CAUGHT:  # pylint: disable=broad-except
    return None
  return output if output.size <= MOST_SENT_NUMBERS else None


def received_events(trace):
  """A sent trace's events as a ``Follower`` keeps them: (line, function, name, array, frame)."""
  events, start = [], 0
  numbers = trace['numbers']
  for line, function, name, frame, dtype, shape in trace['events']:
    size = int(np.prod(shape, dtype=np.int64))
    array = numbers[start:start + size].astype(dtype).reshape(shape)
    events.append((line, function, name, array, frame))
    start += size
  return events


def received_scalars(trace):
  """A sent trace's numbers as a ``Follower`` keeps them: (line, function, name, value)."""
  return [tuple(scalar) for scalar in trace['scalars']]
