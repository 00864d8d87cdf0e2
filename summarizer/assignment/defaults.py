"""A graded function's signature defaults, held to the course's (Exercise 7's ``mode='train'``).

The course's own test builds ``TransformerLM(mode='eval')`` and the notebook
``TransformerLM()``: a default other than the course's (``mode='eval'``)
passes every case that names its arguments and changes the model built
without them. Each default is read from the learner's signature, written as
the learner wrote it; the first that differs is said with the line of the
learner's ``def`` that holds it.
"""

import ast
import inspect
import textwrap

from summarizer.contract import compare
from summarizer.contract.measures import Measure

NO_DEFAULT = '(no default)'


class Written(str):
  """A default as written (``'train'``, ``Relu``), and the learner's line that writes it.

  Attributes:
    where: 'line N of f' (the learner's function) or None when its source is not there.
  """

  def __new__(cls, text, where=None):
    written = super().__new__(cls, text)
    written.where = where
    return written


def _shown(value):
  if value is inspect.Parameter.empty:
    return NO_DEFAULT
  name = getattr(value, '__name__', None)
  return name if name and (inspect.isclass(value) or inspect.isfunction(value)) else repr(value)


def _default_lines(function):
  """{parameter: the line of the function's source that writes its default}; {} when unknown."""
  try:
    source = textwrap.dedent(inspect.getsource(function))
    definition = ast.parse(source).body[0]
  except (OSError, TypeError, SyntaxError, IndexError):
    return {}
  if not isinstance(definition, ast.FunctionDef):
    return {}
  arguments = definition.args
  positional = arguments.posonlyargs + arguments.args
  pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
  pairs += [(arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
            if default is not None]
  first = function.__code__.co_firstlineno
  return {arg.arg: first + default.lineno - 1 for arg, default in pairs}


def defaults(function, course):
  """{each parameter of ``course``'s signature: ``function``'s default for it, ``Written``}."""
  try:
    theirs = inspect.signature(function).parameters
  except (TypeError, ValueError):
    theirs = {}
  lines = _default_lines(function) if hasattr(function, '__code__') else {}
  name = getattr(function, '__name__', 'your function')
  passes_on = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in theirs.values())
  said = {}
  for parameter, course_parameter in inspect.signature(course).parameters.items():
    if parameter not in theirs and passes_on:  # **kwargs hands it on: its default is theirs.
      said[parameter] = Written(_shown(course_parameter.default))
      continue
    value = theirs[parameter].default if parameter in theirs else inspect.Parameter.empty
    line = lines.get(parameter)
    said[parameter] = Written(_shown(value), f'line {line} of {name}' if line else None)
  return said


def difference(expected, got):
  """The first default that is not the course's, and where the learner's def writes it."""
  if not (isinstance(expected, dict) and isinstance(got, dict)):
    return [f'expected: {expected!r}', f'got:      {got!r}']
  for parameter, wanted in expected.items():
    came = got.get(parameter, NO_DEFAULT)
    if came != wanted:
      lines = [f"the course's signature has {parameter}={wanted}, yours {parameter}={came}"]
      where = getattr(came, 'where', None)
      return lines + ([f'where: {where} writes {parameter}={came}, where the course '
                       f'writes {parameter}={wanted}'] if where else [])
  return []


# The measure, the notebook's own (the grader reads no signature).
DEFAULTS = Measure("its signature's defaults", compare.equal, difference=difference)
