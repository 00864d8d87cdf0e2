"""The inputs of the notebook's checks of Exercises 1 to 7, in their order: both sides' ``where:``.

The notebook's check of a function of arrays (``assignment/checks_arrays.py``)
runs the course's small examples below, then the grader's drawn inputs at
``CHECK_SEED``; its check of a layer function (``assignment/checks_layers.py``)
builds the layers the probes print, then those they run at ``CHECK_SEED``. Its
``where:`` line follows the first cases that fail. The grader follows the
learner's function on the same inputs, in the same order (inside the sandbox:
``following.sent_trace``), so that for one answer both print the same line,
and names the notebook's case it was found on (``case_names``). Inputs only:
no expected value, no answer (the sandbox imports this module).
"""

import functools
import time
import types

from summarizer._trax import jnp
from summarizer.contract import following, probes_layers
from summarizer.contract.recording import (CAUSAL_ATTENTION, DECODER_BLOCK, DOT_PRODUCT_ATTENTION,
                                           HEADS_CLOSURE, OUTPUT_CLOSURE, SELF_ATTENTION,
                                           TRANSFORMER_LM, in_a_cell)

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

ARRAYS = (DOT_PRODUCT_ATTENTION, HEADS_CLOSURE, SELF_ATTENTION, OUTPUT_CLOSURE)
LAYERS = (CAUSAL_ATTENTION, DECODER_BLOCK, TRANSFORMER_LM)
TRACED = ARRAYS + LAYERS


class Capture:
  """Stands for a function in a probe (or a check): keeps each call's arguments, returns itself."""

  def __init__(self):
    self.calls = []

  def __call__(self, *args, **kwargs):
    self.calls.append((args, kwargs))
    return self


def drawn_calls(probe):
  """The arguments of each call ``probe`` makes of its function at ``CHECK_SEED``, in order."""
  return _drawn(probe)[0]


def _drawn(probe):
  """(``drawn_calls``, the names of the probe's cases at ``CHECK_SEED``)."""
  capture = Capture()
  cases = probe(capture, CHECK_SEED, {}, None)  # Each case fails on the capture's output: caught.
  return capture.calls, [case['name'] for case in cases]


def calls(name, function):
  """Calls of ``function`` as the notebook's check of ``name`` makes them, in its order.

  Args:
    name: One of ``TRACED``.
    function: The function to call (the learner's, or the package's).

  Returns:
    Zero-argument callables, one a case of the check (its properties aside;
    of a layer function, the call that builds the case's layer).
  """
  return [call for _, call in _CALLS[name](function)]


def case_names(name):
  """The names the notebook's check of ``name`` prints its cases by, one a call of ``calls``."""
  return [case for case, _ in _CALLS[name](Capture())]


def told_by_trace(name):
  """The cases of ``name`` whose failing a trace tells (the learner's, beside the course's).

  A function of arrays: every case (its output). A layer function: the
  layers its check prints (their outlines); a layer it runs fails by
  numbers only the run shows.
  """
  trees = _TREES.get(name)
  return set(case_names(name)) if trees is None else {case for case, _ in trees}


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
  made = [(f'{DOT_PRODUCT_ATTENTION}, {name}',
           functools.partial(function, query=jnp.array(q), key=jnp.array(k),
                             value=jnp.array(v), mask=jnp.array(mask)))
          for name, q, k, v, mask in DOT_PRODUCT_EXAMPLES]
  ((q, k, v, mask), _), name = _first(_drawn(probes_layers.probe_DotProductAttention))
  return made + [(name, functools.partial(function, query=q, key=k, value=v, mask=mask))]


def _first(drawn):
  """The first of a probe's calls, and its case's name."""
  calls_made, names = drawn
  return calls_made[0], names[0]


def _heads_calls(function):
  made = [(heads_example(batch),
           functools.partial(_closure_call, function, 2, 3, jnp.array([TWO_HEADS] * batch)))
          for batch in HEADS_BATCHES]
  probe = probes_layers.probe_compute_attention_heads_closure
  return made + [_drawn_closure_call(function, probe)]


def heads_example(batch):
  """The name of compute_attention_heads_closure's example on a batch of ``batch`` (2 heads of 3)."""
  return f'{probes_layers.closure_call(HEADS_CLOSURE, 2, 3)} on a batch of {batch}'


def _self_attention_calls(function):
  made = [(f'{SELF_ATTENTION}, {name}',
           functools.partial(function, q=jnp.array([q]), k=jnp.array([k]), v=jnp.array([v])))
          for name, (q, k, v) in SELF_ATTENTION_EXAMPLES]
  (drawn, _), name = _first(_drawn(probes_layers.probe_dot_product_self_attention))
  return made + [(name, functools.partial(function, *drawn))]


def _output_calls(function):
  heads = jnp.array([POSITIONS] * 6)  # (B * H, L, Dh)
  made = [(probes_layers.closure_call(OUTPUT_CLOSURE, n_heads, d_head),
           functools.partial(_closure_call, function, n_heads, d_head, heads))
          for n_heads, d_head in JOINED_HEADS]
  probe = probes_layers.probe_compute_attention_output_closure
  return made + [_drawn_closure_call(function, probe)]


def _drawn_closure_call(function, probe):
  """The probe's last case (the notebook's drawn one) of a closure: (n_heads, d_head) on x."""
  drawn, names = _drawn(probe)
  (_, sizes), ((x,), _) = drawn[-2:]
  return names[-1], functools.partial(_closure_call, function, sizes['n_heads'], sizes['d_head'],
                                      x)


def _closure_call(function, n_heads, d_head, x):
  return function(n_heads=n_heads, d_head=d_head)(x)


# The layers each layer function's check prints (its first cases), as the notebook's check
# prints them: TransformerLM's of one block.
_TREES = {CAUSAL_ATTENTION: probes_layers.CAUSAL_ATTENTION_TREES,
          DECODER_BLOCK: probes_layers.DECODER_BLOCK_TREES,
          TRANSFORMER_LM: [(name, kwargs) for name, kwargs in probes_layers.TRANSFORMER_TREES
                           if kwargs['n_layers'] == 1]}
_RUNS = {CAUSAL_ATTENTION: probes_layers.causal_attention_runs,
         DECODER_BLOCK: probes_layers.decoder_block_runs,
         TRANSFORMER_LM: probes_layers.transformer_runs}


def _layer_calls(name, function):
  """The layers the check of ``name`` builds: those it prints, then those it runs at ``CHECK_SEED``.

  (The checks' other cases build layers too: the course's sizes and the
  runs name what differs first.)
  """
  return ([(case, functools.partial(function, **kwargs)) for case, kwargs in _TREES[name]]
          + [(case, functools.partial(function, **options))
             for case, options, _ in _RUNS[name](CHECK_SEED, function)])


_CALLS = {DOT_PRODUCT_ATTENTION: _dot_product_calls, HEADS_CLOSURE: _heads_calls,
          SELF_ATTENTION: _self_attention_calls, OUTPUT_CLOSURE: _output_calls,
          **{name: functools.partial(_layer_calls, name) for name in _TREES}}
