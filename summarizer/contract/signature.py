"""A graded function's signature defaults, read and held to the course's (Exercise 7's ``mode='train'``).

The course's own test builds ``TransformerLM(mode='eval')`` and the notebook
``TransformerLM()``: a default other than the course's (``mode='eval'``)
passes every case that names its arguments and changes the model built
without them. ``defaults`` reads each default from a signature as it is
written, with the line of the ``def`` that writes it; the notebook's check
reads the learner's and the package's with it, and the grader's sandbox the
learner's (the probes' property case), the trusted grader the package's.
``agree``, ``difference`` and ``why`` judge what was read (``measures.DEFAULTS``).

Inside the sandbox this module is imported with the probes: it imports only
the standard library.
"""

import ast
import inspect
import textwrap

NO_DEFAULT = '(no default)'
PASSES_ON = '**'  # A parameter's name so marked: a **kwargs that hands on what it is given.


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


def defaults(function):
  """``function``'s signature: [[parameter, its default as written, where or None], ...].

  Where is 'line N of f' (the line of its ``def`` that writes the default),
  None when its source is not there. A ``**kwargs`` is ``['**kwargs',
  NO_DEFAULT, None]``; ``*args`` is left out. Lists of texts: a report
  carries them through JSON as they are.
  """
  try:
    parameters = inspect.signature(function).parameters.values()
  except (TypeError, ValueError):
    return []
  lines = _default_lines(function) if hasattr(function, '__code__') else {}
  name = getattr(function, '__name__', 'your function')
  said = []
  for parameter in parameters:
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
      said.append([PASSES_ON + parameter.name, NO_DEFAULT, None])
    elif parameter.kind is not inspect.Parameter.VAR_POSITIONAL:
      line = lines.get(parameter.name)
      said.append([parameter.name, _shown(parameter.default),
                   f'line {line} of {name}' if line else None])
  return said


def _as_courses(expected, got):
  """[(parameter, the course's default, theirs, where theirs is written)], in the course's order.

  A parameter the learner's signature lacks has no default, unless a
  ``**kwargs`` hands it on: then its default is the course's.
  """
  theirs = {entry[0]: entry for entry in got}
  passes_on = any(str(parameter).startswith(PASSES_ON) for parameter in theirs)
  said = []
  for parameter, wanted, _ in expected:
    if parameter.startswith(PASSES_ON):
      continue
    _, came, where = theirs.get(parameter, (parameter, wanted if passes_on else NO_DEFAULT, None))
    said.append((parameter, wanted, came, where))
  return said


def _first_difference(expected, got):
  return next(((parameter, wanted, came, where)
               for parameter, wanted, came, where in _as_courses(expected, got)
               if came != wanted), None)


def agree(got, expected):
  """Whether every parameter of the course's signature has the course's default in ``got``."""
  return _first_difference(expected, got) is None


def difference(expected, got):
  """The first default that is not the course's, and where the learner's def writes it."""
  first = _first_difference(expected, got)
  if first is None:
    return [f'expected: {expected!r}', f'got:      {got!r}']
  parameter, wanted, came, where = first
  lines = [f"the course's signature has {parameter}={wanted}, yours {parameter}={came}"]
  return lines + ([f'where: {where} writes {parameter}={came}, where the course writes '
                   f'{parameter}={wanted}'] if where else [])


def why(got, expected, case):
  """What a default not the course's does: a call that leaves the parameter out gets it."""
  del case
  parameter, wanted, came, _ = _first_difference(expected, got)
  if came == NO_DEFAULT:
    return (f'your signature gives {parameter} no default: a call that leaves it out '
            f'raises TypeError, where the course\'s uses {parameter}={wanted}')
  return (f'a call that leaves {parameter} out gets {parameter}={came}, where the course\'s '
          f'gets {parameter}={wanted}: keep the course\'s default, which calls that leave it '
          'out rely on')
