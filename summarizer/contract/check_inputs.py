"""The inputs of the notebook's checks of Exercises 1 to 4, in their order: both sides' ``where:``.

The notebook's check of a function of arrays (``assignment/checks_arrays.py``)
runs the course's small examples below, then the grader's drawn inputs at
``CHECK_SEED``; its ``where:`` line follows the first cases that fail. The
grader follows the learner's function on the same inputs, in the same order
(inside the sandbox: ``following.sent_trace``), so that for one answer both
print the same line. Inputs only: no expected value, no answer (the sandbox
imports this module).
"""

import functools
import time
import types

from summarizer._trax import jnp
from summarizer.contract import following, probes_layers
from summarizer.contract.recording import (DOT_PRODUCT_ATTENTION, HEADS_CLOSURE, OUTPUT_CLOSURE,
                                           SELF_ATTENTION, in_a_cell)

# The grading seed the checks draw the probes' inputs from: its layers' heads are never as
# wide as they are many (CausalAttention 4 of 3, DecoderBlock 3 of 4, TransformerLM 2 of
# 4), so a "d_head = n_heads" fails.
CHECK_SEED = 10

_ATTENTION_QUERY = [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
_ATTENTION_KEY = [[9, 8, 7, 6], [6, 5, 4, 3], [3, 2, 1, 0]]
_ATTENTION_VALUE = [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 1]]

# DotProductAttention's course examples: (name, query, key, value, mask). The course's
# masks are 0 (may not attend) and -1e9 (may attend: any non-zero is True).
DOT_PRODUCT_EXAMPLES = [
    ('example 1 (first row fully masked)',
     [[1, 0, 0], [0, 1, 0]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]],
     [[0, 0], [-1e9, 0]]),
    ('example 2 (first row fully masked)',
     [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 1], [0, 0, 1]],
     [[0, 0], [-1e9, 0]]),
    ('example 3 (first row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[0, 0, 0], [-1e9, 0, 0], [-1e9, -1e9, 0]]),
    ('example 4 (no row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[-1e9, -1e9, -1e9], [0, -1e9, -1e9], [0, 0, -1e9]]),
]

# Two positions whose features are one-hot, so a wrong reshape shows.
POSITIONS = [[1, 0, 0], [0, 1, 0]]
TWO_HEADS = [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0]]  # Both heads see POSITIONS.
HEADS_BATCHES = (2, 3)  # compute_attention_heads_closure(2, 3) on (B, 2, 6).
JOINED_HEADS = ((2, 3), (3, 2))  # compute_attention_output_closure on six (2, 3) heads.
# dot_product_self_attention's examples: (name, (q, k, v)), each one batch of two positions.
_QKV = (POSITIONS, [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]])
SELF_ATTENTION_EXAMPLES = [('3 features', _QKV),
                           ('6 features', tuple([row + row for row in rows] for rows in _QKV))]

TRACED = (DOT_PRODUCT_ATTENTION, HEADS_CLOSURE, SELF_ATTENTION, OUTPUT_CLOSURE)


class Capture:
  """Stands for a function in a probe (or a check): keeps each call's arguments, returns itself."""

  def __init__(self):
    self.calls = []

  def __call__(self, *args, **kwargs):
    self.calls.append((args, kwargs))
    return self


def drawn_calls(probe):
  """The arguments of each call ``probe`` makes of its function at ``CHECK_SEED``, in order."""
  capture = Capture()
  probe(capture, CHECK_SEED, {}, None)  # Each case fails on the capture's output: caught.
  return capture.calls


def calls(name, function):
  """Calls of ``function`` as the notebook's check of ``name`` makes them, in its order.

  Args:
    name: One of ``TRACED``.
    function: The function to call (the learner's, or the package's).

  Returns:
    Zero-argument callables, one a case of the check (its properties aside).
  """
  return _CALLS[name](function)


def learners_traces(name, function, until=None):
  """The learner's function followed on the notebook's check's inputs (in the sandbox).

  Only the learner's frames (its cells', ``in_a_cell``) are followed; the
  grader follows the package's function on the same inputs, outside, and
  names the line where they part (``grading/where_line.py``). A help only:
  [] when its code cannot be followed, when a call raises what no case
  catches, or when ``until`` (a ``time.monotonic()``) passes before the last
  call starts, so that following never costs the function its time.
  """
  code = getattr(function, '__code__', None)
  if not isinstance(code, types.CodeType) or not in_a_cell(code.co_filename):
    return []
  traces = []
  try:
    for call in calls(name, function):
      if until is not None and time.monotonic() > until:
        return []
      traces.append(following.sent_trace(call, code, in_a_cell))
  except BaseException:  # pylint: disable=broad-except
    return []  # Even what the cases let through (a KeyboardInterrupt raised on purpose).
  return traces


def _dot_product_calls(function):
  made = [functools.partial(function, query=jnp.array(q), key=jnp.array(k),
                            value=jnp.array(v), mask=jnp.array(mask))
          for _, q, k, v, mask in DOT_PRODUCT_EXAMPLES]
  (q, k, v, mask), _ = drawn_calls(probes_layers.probe_DotProductAttention)[0]
  return made + [functools.partial(function, query=q, key=k, value=v, mask=mask)]


def _heads_calls(function):
  made = [functools.partial(_closure_call, function, 2, 3, jnp.array([TWO_HEADS] * batch))
          for batch in HEADS_BATCHES]
  probe = probes_layers.probe_compute_attention_heads_closure
  return made + [_drawn_closure_call(function, probe)]


def _self_attention_calls(function):
  made = [functools.partial(function, q=jnp.array([q]), k=jnp.array([k]), v=jnp.array([v]))
          for _, (q, k, v) in SELF_ATTENTION_EXAMPLES]
  drawn, _ = drawn_calls(probes_layers.probe_dot_product_self_attention)[0]
  return made + [functools.partial(function, *drawn)]


def _output_calls(function):
  heads = jnp.array([POSITIONS] * 6)  # (B * H, L, Dh)
  made = [functools.partial(_closure_call, function, n_heads, d_head, heads)
          for n_heads, d_head in JOINED_HEADS]
  probe = probes_layers.probe_compute_attention_output_closure
  return made + [_drawn_closure_call(function, probe)]


def _drawn_closure_call(function, probe):
  """The probe's last case (the notebook's drawn one) of a closure: (n_heads, d_head) on x."""
  (_, sizes), ((x,), _) = drawn_calls(probe)[-2:]
  return functools.partial(_closure_call, function, sizes['n_heads'], sizes['d_head'], x)


def _closure_call(function, n_heads, d_head, x):
  return function(n_heads=n_heads, d_head=d_head)(x)


_CALLS = {DOT_PRODUCT_ATTENTION: _dot_product_calls, HEADS_CLOSURE: _heads_calls,
          SELF_ATTENTION: _self_attention_calls, OUTPUT_CLOSURE: _output_calls}
