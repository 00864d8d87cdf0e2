"""The in-notebook checks of the functions of arrays (UNQ_C1 to UNQ_C4).

The course's small examples with their expected numbers, then the probes'
drawn inputs, each run on the learner's function and on the package's.
"""

import functools

import jax
import numpy as np

from summarizer import attention as _attention
from summarizer._trax import jnp
from summarizer.contract import check_inputs, measures, probes_layers, recording
from summarizer.contract.judge import allclose, reading
from summarizer.contract.mistakes import attention_with, standard_softmax
from summarizer.assignment.runner import CHECK_SEED, as_array, run_cases, shape_of


# The course's masks are 0 (may not attend) and -1e9 (may attend: any
# non-zero is True), so a row of zeros masks every position. Normalised as
# exp(x - logsumexp(x)) in float32, such a row weighs every value 1, which
# is why the first rows below are sums of the values; a standard softmax
# gives their mean there, and passes too (see _either_softmax).
# The expected outputs of the course's examples (``check_inputs.DOT_PRODUCT_EXAMPLES``, whose
# inputs the grader's where: line follows too), in their order.
_DOT_PRODUCT_OUTPUTS = [
    [[1, 1, 1], [0, 1, 0]],
    [[0, 1, 2], [0, 1, 1]],
    [[1, 1, 1, 1], [0, 0, 1, 0], [0.04742587, 0, 0.95257413, 0]],
    [[0.04731418, 0.00235563, 0.9503307, 0.00235563],
     [0.8175744, 0.1824255, 0, 0.1824255],
     [0, 1, 0, 1]],
]


# (name, query, key, value, mask, expected output)
_DOT_PRODUCT_CASES = [(*example, expected) for example, expected
                      in zip(check_inputs.DOT_PRODUCT_EXAMPLES, _DOT_PRODUCT_OUTPUTS)]


def _either_softmax(inputs):
  """Agrees with the course's numbers, or with those of a standard softmax.

  In a fully masked row (its mask all 0) every score is MASK_SCORE: the
  course's exp(x - logsumexp(x)) in float32 weighs every key 1 (the row is
  the sum of the values), a max-subtracted softmax (jax.nn.softmax) weighs
  each 1/L (their mean). Causal attention never masks a whole row, so both
  are right.
  """
  standard = attention_with(**inputs, normalise=standard_softmax)
  return lambda got, expected: allclose(got, expected) or allclose(got, standard)


def test_DotProductAttention(DotProductAttention):  # pylint: disable=invalid-name
  """Checks ``DotProductAttention(query, key, value, mask)`` (UNQ_C1).

  Four small examples, three with a fully masked row: the output's numbers
  (on a fully masked row, the course's ``exp(x - logsumexp(x))`` gives the
  sum of the values and a standard softmax their mean: either passes) and
  that it is a ``jax.Array``.

  Args:
    DotProductAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for name, query, key, value, mask, expected in _DOT_PRODUCT_CASES:
    inputs = dict(query=jnp.array(query), key=jnp.array(key),
                  value=jnp.array(value), mask=jnp.array(mask))
    output = measures.ATTENTION_OUTPUT.but(agree=_either_softmax(inputs))
    cases.append({'name': f'{recording.DOT_PRODUCT_ATTENTION}, {name}',
                  'call': reading({output.name: as_array, measures.KIND.name: type},
                                  functools.partial(DotProductAttention, **inputs)),
                  'expected': {output: _array(expected), measures.KIND: jax.Array},
                  'inputs': _by_probe_names(inputs)})
  # Beyond the course's cases: the grader's first (its probe's first drawn set), random
  # queries, keys and values under a causal mask, as the layers will call it.
  name, *drawn = recording.attention_inputs(CHECK_SEED)[0]
  inputs = dict(zip(('query', 'key', 'value', 'mask'), (jnp.array(array) for array in drawn)))
  cases.append(_output_case(f'{recording.DOT_PRODUCT_ATTENTION}, {name}',
                            functools.partial(DotProductAttention, **inputs),
                            measures.ATTENTION_OUTPUT, _attention.DotProductAttention(**inputs),
                            _by_probe_names(inputs)))
  return run_cases(cases, recording.DOT_PRODUCT_ATTENTION)


def _array(expected):
  return np.array(expected, np.float32)


def _output_case(name, call, measure, expected, inputs, shape=None):
  """A case of an array-valued call: its output (``measure``), after its shape if given."""
  shaped = {measures.SHAPE: tuple(shape)} if shape is not None else {}
  return {'name': name,
          'call': reading({measures.SHAPE.name: shape_of, measure.name: as_array}, call),
          'expected': {**shaped, measure: _array(expected)}, 'inputs': inputs}


def _by_probe_names(inputs):
  """DotProductAttention's arguments (query, key, value, mask) by the probes' names of them."""
  return {recording.INPUT_Q: inputs['query'], recording.INPUT_K: inputs['key'],
          recording.INPUT_V: inputs['value'], recording.INPUT_MASK: inputs['mask']}


def _probe_case(probe, package_function, index):
  """The grader's case ``index`` at ``CHECK_SEED``, as the probe runs the package's function.

  Returns:
    (its name; its inputs, by the probes' names (``recording.INPUT_X``, ...), as
    jax arrays; the package's output).
  """
  recorded = probe(package_function, CHECK_SEED, {}, None)[index]
  taken = recorded['measures']
  inputs = {name: jnp.array(taken[name]) for name in measures.INPUTS if name in taken}
  return recorded['name'], inputs, taken[recording.OUTPUT]


# Two positions whose features are one-hot, so a wrong reshape shows; both heads see them.
_POSITIONS, _TWO_HEADS = check_inputs.POSITIONS, check_inputs.TWO_HEADS


def test_compute_attention_heads_closure(compute_attention_heads_closure):
  """Checks ``compute_attention_heads_closure(n_heads, d_head)`` (UNQ_C2).

  With 2 heads of 3 features, batches of 2 and 3 sequences (B, 2, 6) must
  become (2B, 2, 3), each head's features with their own sequence.

  Args:
    compute_attention_heads_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for batch in check_inputs.HEADS_BATCHES:
    x = jnp.array([_TWO_HEADS] * batch)  # (B, L, H * Dh)
    cases.append(_output_case(
        check_inputs.heads_example(batch),
        lambda x=x: compute_attention_heads_closure(n_heads=2, d_head=3)(x),
        measures.HEADS_OUTPUT, [_POSITIONS] * (2 * batch), {recording.INPUT_X: np.asarray(x)},
        (2 * batch, 2, 3)))
  cases.append(_drawn_case(compute_attention_heads_closure,
                           probes_layers.probe_compute_attention_heads_closure,
                           _attention.compute_attention_heads_closure, 'C2',
                           measures.HEADS_OUTPUT))
  return run_cases(cases, recording.HEADS_CLOSURE)


def _drawn_case(closure, probe, package_closure, exercise, measure):
  """The grader's drawn heads (its last case at ``CHECK_SEED``), beside the package's closure."""
  n_heads, d_head = probes_layers.head_sizes(recording.rng_for(CHECK_SEED, exercise))[-1]
  name, inputs, expected = _probe_case(probe, package_closure, -1)
  x = inputs[recording.INPUT_X]
  return _output_case(name, lambda: closure(n_heads=n_heads, d_head=d_head)(x), measure,
                      expected, {recording.INPUT_X: np.asarray(x)})


def test_compute_attention_output_closure(compute_attention_output_closure):
  """Checks ``compute_attention_output_closure(n_heads, d_head)`` (UNQ_C4).

  Six (2, 3) head outputs are joined back as 3 sequences of 2 heads of 3
  features; then the same 36 numbers, read as heads of 2 features, as 3
  sequences of 3 heads (the reshapes must use ``n_heads`` and ``d_head``,
  not the input's last axis).

  Args:
    compute_attention_output_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  heads = jnp.array([_POSITIONS] * 6)  # (B * H, L, Dh)
  joined = dict(zip(check_inputs.JOINED_HEADS, (  # (n_heads, d_head): the joined heads.
      [_TWO_HEADS] * 3,
      [[[1, 0, 1, 0, 0, 0], [0, 0, 1, 0, 1, 0]]] * 3,
  )))
  cases = []
  for (n_heads, d_head), expected in joined.items():
    cases.append(_output_case(
        probes_layers.closure_call(recording.OUTPUT_CLOSURE, n_heads, d_head),
        lambda n_heads=n_heads, d_head=d_head: compute_attention_output_closure(
            n_heads=n_heads, d_head=d_head)(heads),
        measures.JOINED_OUTPUT, expected, {recording.INPUT_X: np.asarray(heads)}, (3, 2, 6)))
  cases.append(_drawn_case(compute_attention_output_closure,
                           probes_layers.probe_compute_attention_output_closure,
                           _attention.compute_attention_output_closure, 'C4',
                           measures.JOINED_OUTPUT))
  return run_cases(cases, recording.OUTPUT_CLOSURE)


def test_dot_product_self_attention(dot_product_self_attention):
  """Checks ``dot_product_self_attention(q, k, v)`` (UNQ_C3).

  One batch of two positions, with 3 and 6 features: the first position may
  only attend to itself, so its output is its own value.

  Args:
    dot_product_self_attention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  outputs = [[[[0, 1, 0], [0.8496746, 0.15032543, 0.8496746]]],
             [[[0, 1, 0, 0, 1, 0],  # The same features twice.
               [0.9205239, 0.07947586, 0.9205239, 0.9205239, 0.07947586, 0.9205239]]]]
  cases = []
  for (name, (q, k, v)), expected in zip(check_inputs.SELF_ATTENTION_EXAMPLES, outputs):
    q, k, v = jnp.array([q]), jnp.array([k]), jnp.array([v])
    cases.append(_output_case(f'dot_product_self_attention, {name}',
                              functools.partial(dot_product_self_attention, q=q, k=k, v=v),
                              measures.SELF_ATTENTION_OUTPUT, expected,
                              {recording.INPUT_Q: q, recording.INPUT_K: k, recording.INPUT_V: v},
                              np.shape(expected)))
  name, inputs, expected = _probe_case(probes_layers.probe_dot_product_self_attention,
                                       _attention.dot_product_self_attention, 0)
  cases.append(_output_case(name, functools.partial(dot_product_self_attention,
                                                    *inputs.values()),
                            measures.SELF_ATTENTION_OUTPUT, expected, inputs))
  return run_cases(cases, recording.SELF_ATTENTION, dot_product_self_attention)
