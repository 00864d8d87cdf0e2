"""Earlier exercises: a failed case run again with the package's functions in place of the learner's.

A check whose function is built on earlier exercises (CausalAttention on
DotProductAttention and the closures, ...) says which exercise to fix first
when a failed case passes with the package's functions of the earlier
exercises swapped in.
"""

import contextlib
import functools
import io

from summarizer import attention as _attention
from summarizer import model as _model
from summarizer.contract.recording import GRADED
from summarizer.contract.failure_text import learners_code


# The package's functions of the exercises that build the model (1 to 7).
PACKAGE_FUNCTIONS = {function.__name__: function for function in (
    _attention.DotProductAttention, _attention.compute_attention_heads_closure,
    _attention.dot_product_self_attention, _attention.compute_attention_output_closure,
    _attention.CausalAttention, _model.DecoderBlock, _model.TransformerLM)}


def _learners(value, name):
  """Whether ``value`` is a learner's own ``name`` (callable, not the package's)."""
  return callable(value) and value is not PACKAGE_FUNCTIONS[name]


class Earlier:
  """The learner's functions of earlier exercises that a check reaches, and swaps for them.

  A function of a notebook finds the others in the notebook's globals (its
  ``__globals__``), in default arguments bound to them (the course's
  ``CausalAttention`` binds the two closures so), or in what the check is
  handed beside it (``training_loop``'s ``TransformerLM``). ``fix(case)``
  runs a failed case again with the package's functions of the earlier
  exercises in place of the learner's: if it then passes, the learner's
  last exercise that had to be replaced for it to pass is the one to fix;
  ``passes(case)`` (the runner's) tells whether a case passes.
  """

  def __init__(self, check, function, given, passes, own_check=None):
    self.given, self.passes, self.own_check = given, passes, own_check
    reaching = [function, *given.values()]
    self.namespaces = _unique(getattr(each, '__globals__', None) for each in reaching)
    earlier = [name for name in GRADED[:GRADED.index(check)] if name in PACKAGE_FUNCTIONS]
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
    if not self._fails_its_own(name):
      return None  # Never blame an exercise that passes its own check: the fault is here.
    return (f"with the package's {name} in place of yours this case passes: "
            f'fix Exercise {self.numbers[name]} ({name}) first')

  def _fails_its_own(self, name):
    """Whether the learner's ``name`` fails its own check (its cases and properties)."""
    if self.own_check is None:
      return True
    learners = self.given.get(name)
    for namespace in self.namespaces:
      if not _learners(learners, name):
        learners = namespace.get(name)
    if not _learners(learners, name):
      return True  # Bound only as a default argument: the case said it is at fault.
    with contextlib.redirect_stdout(io.StringIO()):
      return bool(self.own_check(name, learners))

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
      return self.passes(case)

  @contextlib.contextmanager
  def _package_in_place(self, names):
    """Puts the package's ``names`` where the learner's functions find theirs, then back."""
    undo = []
    try:
      for namespace in [*self.namespaces, self.given]:
        for name in names:
          if _learners(namespace.get(name), name):
            undo.append(functools.partial(namespace.__setitem__, name, namespace[name]))
            namespace[name] = PACKAGE_FUNCTIONS[name]
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
      values[key] = PACKAGE_FUNCTIONS[name]
  if all(values[key] is bound[key] for key in keys):
    return None
  return values if isinstance(bound, dict) else tuple(values.values())


def failing_own(given, own_check):
  """'... fix Exercise N first' for the first of the learner's ``given`` functions that fails its own check.

  For a check whose function takes the learner's others as arguments (Part
  5's greedy_decode with next_symbol): none is swapped, but one that fails
  its own check (its cases or a property) is named, and only such a one.
  """
  for name in GRADED:
    function = given.get(name)
    if callable(function) and getattr(function, '__code__', None) is not None and (
        learners_code(function.__code__.co_filename)):
      with contextlib.redirect_stdout(io.StringIO()):
        failed = own_check(name, function)
      if failed:
        number = GRADED.index(name) + 1
        return (f'your {name} fails its own check (Exercise {number}, above): fix Exercise '
                f'{number} ({name}) first')
  return None
