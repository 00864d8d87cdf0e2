"""How a measure is compared: whether what came agrees with what was expected.

One definition for the in-notebook checks and the grader's judge: numbers to
float32 precision, printed layer trees with spaces aside, optimizer
parameters by name, and a measure by the name the probes give it.
"""

import numpy as np

from summarizer.assignment.probes import RAISED


def allclose(got, expected, loose=False):
  """Same shape and the same numbers to float32 precision (``loose``: a model's log-probabilities)."""
  got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  return got.shape == expected.shape and bool(np.allclose(
      got, expected, rtol=1e-4 if loose else 1e-5, atol=1e-3 if loose else 1e-6))


def same_tree(got, expected):
  """Two printed layer trees agree, spaces aside."""
  return isinstance(got, str) and got.replace(' ', '') == expected.replace(' ', '')


def parameters_agree(got, expected):
  """Two dicts of an optimizer's parameters: the same names, the same values."""
  return (isinstance(got, dict) and got.keys() == expected.keys()
          and all(np.isclose(float(got[name]), expected[name], rtol=1e-6) for name in expected))


def agree(what, got, expected):
  """Whether a measure named ``what`` (as the probes name it) agrees."""
  try:
    if isinstance(expected, np.ndarray):
      return isinstance(got, np.ndarray) and allclose(got, expected,
                                                      loose=what == 'log-probabilities')
    if what.startswith('str('):
      return same_tree(got, expected)
    if what == RAISED:  # Raising is what counts, not which exception.
      return (got is None) == (expected is None) and isinstance(got, (str, type(None)))
    if isinstance(expected, float):
      return isinstance(got, (int, float)) and bool(np.isclose(got, expected, rtol=1e-5))
    if what.startswith('learning rates'):
      return allclose(got, expected)
    if what == 'optimizer parameters':
      return parameters_agree(got, expected)
    return type(got) is type(expected) and got == expected
  except (TypeError, ValueError):
    return False
