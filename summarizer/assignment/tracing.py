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

The following itself (``Follower``, ``array_where``, ``number_where``) is the
contract's (``contract/following.py``): the grader prints the same line from
the learner's trace its sandbox sends (``grading/where_line.py``).

Nothing here may break a check: any failure of the tracing gives no line.
"""

import functools
import types

from summarizer.contract import exercise_code, probes_layers
from summarizer.contract.failure_text import learners_code
from summarizer.contract.following import (Follower, array_where, is_layers, number_where,
                                           where_at)


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
    if is_layers(theirs.returned) and is_layers(yours.returned):
      return _layer_where(yours, theirs) or number_where(yours.scalars, theirs.scalars)
    return (array_where(yours.events, theirs.events)
            or number_where(yours.scalars, theirs.scalars))
  except Exception:  # pylint: disable=broad-except
    return None  # The tracing is a help: it never fails a check.


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
    return (f'{where_at(*around)} puts `{_named(got)}` here; the course has '
            f'`{_named(wanted)}`')
  if built is None:
    return None
  line, function = built
  if got is None:
    return (f'{where_at(line, function)} built `{_named(parent)}` without '
            f'`{_named(wanted)}`; the course has `{_named(wanted)}` here')
  if wanted is None:
    return (f'{where_at(line, function)} built `{_named(got)}`; the course has '
            f'nothing more here')
  return (f'{where_at(line, function)} built `{_named(got)}`; the course has '
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
