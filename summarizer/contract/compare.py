"""How a measure is compared: whether what came agrees with what was expected.

Each measure (``measures.py``) names one of these; none reads a measure's
name. Numbers to float32 precision, printed layer trees with spaces aside,
optimizer parameters by name, values of one type by equality.
"""

import numpy as np


def allclose(got, expected, loose=False):
  """Same shape and the same numbers to float32 precision (``loose``: a model's log-probabilities)."""
  got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  return got.shape == expected.shape and bool(np.allclose(
      got, expected, rtol=1e-4 if loose else 1e-5, atol=1e-3 if loose else 1e-6))


def arrays_agree(got, expected):
  """An array came, with the expected one's shape and numbers (to float32 precision)."""
  return isinstance(got, np.ndarray) and allclose(got, expected)


def log_probabilities_agree(got, expected):
  """An array came, with a model's log-probabilities (a looser precision)."""
  return isinstance(got, np.ndarray) and allclose(got, expected, loose=True)


def same_tree(got, expected):
  """Two printed layer trees agree, spaces aside."""
  return isinstance(got, str) and got.replace(' ', '') == expected.replace(' ', '')


def parameters_agree(got, expected):
  """Two dicts of an optimizer's parameters: the same names, the same values."""
  return (isinstance(got, dict) and got.keys() == expected.keys()
          and all(np.isclose(float(got[name]), expected[name], rtol=1e-6) for name in expected))


def number_agrees(got, expected):
  """A number close to the expected float."""
  return isinstance(got, (int, float)) and bool(np.isclose(got, expected, rtol=1e-5))


def both_raised_or_not(got, expected):
  """Raising is what counts, not which exception: both name one, or neither does."""
  return (got is None) == (expected is None) and isinstance(got, (str, type(None)))


def same(got, expected):
  """A value of the expected one's type, equal to it (what came through JSON, read strictly)."""
  return type(got) is type(expected) and got == expected


def equal(got, expected):
  """Equal, whatever the types (what the learner's function returned in the notebook)."""
  return got == expected


def is_subclass(got, expected):
  """A type that is the expected class or one of its subclasses."""
  return issubclass(got, expected)
