"""The probes of Exercises 1 to 7: functions of arrays, then layers, run on the grading's inputs.

Part of the probes (``probes.py`` holds the table of them all and the rest):
each probe calls a function on inputs drawn from the grading's seed, or on the
weights the grader hands in, and records what comes out, nothing judged.
Runs in the sandbox too: same imports as ``recording.py``.
"""

import numpy as np
from jax._src.array import ArrayImpl  # jax's array type, named without making an array.

from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import VOCAB_SIZE
from summarizer.contract.recording import (DOT_PRODUCT_ATTENTION, EXERCISE_MODEL_CASE,
                                           HEADS_CLOSURE, INDIVISIBLE_CASE, INPUT_K, INPUT_MASK,
                                           INPUT_Q, INPUT_V, INPUT_X, MODES, OUTPUT,
                                           OUTPUT_CLOSURE, OUTPUT_SHAPE, OUTPUT_TYPE, PARTS,
                                           POSITIONAL_ENCODING, RUN_SEED, SHAPES_OF_WEIGHTS,
                                           THEIR_SUBLAYERS, TRANSFORMER_LM, TREE, TYPE,
                                           WEIGHT_SHAPES, WHICH_SUBLAYER, accepts, array,
                                           attention_inputs, case, floats, rng_for)


# --------------------------------------------------------------------------
# UNQ_C1 to UNQ_C4: functions of arrays.

def probe_DotProductAttention(function, seed, given, env):  # pylint: disable=invalid-name
  del given, env
  cases = []
  for name, q, k, v, mask in attention_inputs(seed):
    def measure(q=q, k=k, v=v, mask=mask):
      output = function(jnp.array(q), jnp.array(k), jnp.array(v), jnp.array(mask))
      return {OUTPUT: array(output), OUTPUT_TYPE: type_name(output),
              INPUT_Q: q, INPUT_K: k, INPUT_V: v, INPUT_MASK: mask}
    cases.append(case(f'{DOT_PRODUCT_ATTENTION}, {name}', measure))
  return cases


def type_name(value):
  """The full name of a value's type ('jaxlib._jax.ArrayImpl'): the judge reads it.

  A class that only takes a known type's name (its ``__module__`` and
  ``__qualname__`` set so) is named as what it is.
  """
  kind = type(value)
  name = f'{kind.__module__}.{kind.__qualname__}'
  if KNOWN_TYPES.get(name, kind) is not kind:
    name += ' (a class of its own under that name)'
  return name


# The types whose names the judge reads, bound as the probes load (before any learner code).
KNOWN_TYPES = {f'{kind.__module__}.{kind.__qualname__}': kind
               for kind in (np.ndarray, ArrayImpl, int, float, str)}


def probe_dot_product_self_attention(function, seed, given, env):
  del given, env
  rng, cases = rng_for(seed, 'C3'), []
  shapes = []
  while len(shapes) < 2:  # Two different shapes (a case is known by its name, its shape).
    shape = (int(rng.integers(1, 4)), int(rng.integers(2, 7)), int(rng.integers(2, 7)))
    if shape in shapes:
      continue
    shapes.append(shape)
    q, k, v = (floats(rng, shape) for _ in range(3))
    cases.append(case(f'dot_product_self_attention on q k v {shape}',
                      lambda q=q, k=k, v=v: {OUTPUT: array(function(
                          jnp.array(q), jnp.array(k), jnp.array(v))),
                                             INPUT_Q: q, INPUT_K: k, INPUT_V: v}))
  return cases


def head_sizes(rng):
  """(n_heads, d_head) pairs: two fixed ones where heads and width differ, a third drawn."""
  fixed = [(2, 3), (3, 2)]
  drawn = fixed[0]
  while drawn in fixed:
    drawn = (int(rng.integers(2, 5)), int(rng.integers(2, 6)))
  return fixed + [drawn]


def closure_call(name, n_heads, d_head):
  """A closure's call as a case names it: 'name(n_heads=2, d_head=3)'."""
  return f'{name}(n_heads={n_heads}, d_head={d_head})'


def probe_compute_attention_heads_closure(function, seed, given, env):
  del given, env
  rng, cases = rng_for(seed, 'C2'), []
  for n_heads, d_head in head_sizes(rng):
    x = floats(rng, (int(rng.integers(1, 4)), int(rng.integers(2, 6)), n_heads * d_head))
    cases.append(case(
        f'{closure_call(HEADS_CLOSURE, n_heads, d_head)} on {x.shape}',
        lambda x=x, h=n_heads, d=d_head: {OUTPUT: array(function(n_heads=h, d_head=d)(
            jnp.array(x))), INPUT_X: x}))
  return cases


def probe_compute_attention_output_closure(function, seed, given, env):
  del given, env
  rng, cases = rng_for(seed, 'C4'), []
  for n_heads, d_head in head_sizes(rng):
    x = floats(rng, (int(rng.integers(1, 4)) * n_heads, int(rng.integers(2, 6)), d_head))
    cases.append(case(
        f'{closure_call(OUTPUT_CLOSURE, n_heads, d_head)} on {x.shape}',
        lambda x=x, h=n_heads, d=d_head: {OUTPUT: array(function(n_heads=h, d_head=d)(
            jnp.array(x))), INPUT_X: x}))
  return cases


# --------------------------------------------------------------------------
# Layers: their printed tree, and their output with given weights.

def flat_weights(layer):
  return tl.flatten_weights_and_state(layer.weights, ())[0]


def as_layer(built):
  """A layer from what a layer function returned (a block is a list of layers)."""
  if isinstance(built, list):
    built = tl.Serial(built)
  if not isinstance(built, tl.Layer):
    raise not_a_layer(built)
  return built


def not_a_layer(built):
  """The error of a layer function that returned something else."""
  return TypeError(f'it returned a {type(built).__name__}, not a layer')


def layer_kind(layer):
  """A layer's kind as the exercise's steps name it: Branch, Add or AttnHeads, not Serial.

  Trax builds its combinators (tl.Branch, tl.Residual's Add) and tl.Fn
  layers from the classes Serial and PureLayer; their names say which. A
  residual (tl.Residual) is a Serial of a Branch and an Add.
  """
  kind = type(layer).__name__
  name = getattr(layer, 'name', None)
  if kind not in ('Serial', 'PureLayer') or not isinstance(name, str) or not name:
    return kind
  if name == 'Serial' and [layer_kind(sublayer) for sublayer in layer.sublayers] == [
      'Branch', 'Add']:
    return 'Residual'
  return name


def tree_measures(built):
  """The printed tree, its type and its sublayers' kinds (``layer_kind``)."""
  layer = as_layer(built)
  parts = built if isinstance(built, list) else layer.sublayers
  return {TREE: str(built), TYPE: type(built).__name__,
          PARTS: [layer_kind(part) for part in parts],
          THEIR_SUBLAYERS: [[layer_kind(s) for s in getattr(part, 'sublayers', [])]
                            for part in parts]}


def initial_weights(built, inputs):
  """The layer initialised on ``inputs`` with the run's key: its weights, flat."""
  layer = as_layer(built)
  layer.init(trax.shapes.signature(inputs), rng=fastmath.random.get_prng(RUN_SEED))
  return flat_weights(layer)


def run_measures(built, inputs, weights):
  """Initialises the layer on ``inputs``; with ``weights`` (if they fit), its output."""
  layer = as_layer(built)
  rng = fastmath.random.get_prng(RUN_SEED)
  shapes = [list(np.shape(w)) for w in initial_weights(layer, inputs)]
  measures = {WEIGHT_SHAPES: shapes, WHICH_SUBLAYER: sublayer_identities(layer)}
  if shapes == [list(np.shape(w)) for w in weights]:
    layer.weights, _ = tl.unflatten_weights_and_state(
        [jnp.array(w) for w in weights], (), (layer.weights, layer.state), weights_only=True)
    output, _ = layer.pure_fn(inputs, layer.weights, layer.state, rng)
    measures[OUTPUT] = array(output)
  return measures


def sublayer_identities(layer):
  """Each direct sublayer's object, numbered in order of first appearance ([0, 1, 1]: one repeated)."""
  numbers = {}
  return [numbers.setdefault(id(sublayer), len(numbers)) for sublayer in layer.sublayers]


def weights_key(case_name):
  return 'weights/' + case_name


def given_weights(given, case_name):
  """The weights the grader handed in for a case (arrays 'weights/<case>/<i>')."""
  prefix = weights_key(case_name) + '/'
  keys = sorted((k for k in given if k.startswith(prefix)), key=lambda k: int(k[len(prefix):]))
  return [given[k] for k in keys]


def layer_cases(spec, function, given, tree_specs=()):
  """Tree cases, then run cases (each (name, kwargs, inputs)), with the given weights."""
  cases = [case(name, lambda kwargs=kwargs: tree_measures(function(**kwargs)))
           for name, kwargs in tree_specs]
  for name, kwargs, inputs in spec:
    cases.append(case(name, lambda kwargs=kwargs, inputs=inputs, name=name: run_measures(
        function(**kwargs), inputs, given_weights(given, name))))
  return cases


def with_max_len(function, kwargs, mode):
  """The call's arguments in a mode (max_len 16 when taken: a small predict cache)."""
  options = dict(kwargs, mode=mode)
  if accepts(function, 'max_len'):
    options['max_len'] = 16
  return options


def causal_attention_runs(seed, function=None):
  rng = rng_for(seed, 'C5')
  n_heads, d_head = int(rng.integers(2, 5)), int(rng.integers(2, 5))
  x = floats(rng, (2, int(rng.integers(3, 7)), n_heads * d_head))
  base = dict(d_feature=n_heads * d_head, n_heads=n_heads)
  return [(f'CausalAttention(d_feature={n_heads * d_head}, n_heads={n_heads}, mode={mode!r}) '
           f'on {x.shape}', with_max_len(function, base, mode) if function else
           dict(base, mode=mode, max_len=16), x) for mode in MODES]


RAISED = 'what it raised (10 features do not split into 3 heads)'


def indivisible(function):
  """What the layer raised for 10 features in 3 heads (None: nothing); the judge reads it."""
  try:
    function(d_feature=10, n_heads=3)
  except NotImplementedError:
    raise  # A blank: the case fails with it.
  except Exception as error:  # pylint: disable=broad-except  # ValueError, the course's assert
    return {RAISED: type(error).__name__}
  return {RAISED: None}


# The printed layers (each (name, kwargs)): the course's sizes, for the grader and the checks.
CAUSAL_ATTENTION_TREES = [(f'CausalAttention(d_feature={d}, n_heads={h})',
                           dict(d_feature=d, n_heads=h)) for d, h in ((512, 8), (16, 4))]


def probe_CausalAttention(function, seed, given, env):  # pylint: disable=invalid-name
  del env
  cases = layer_cases(causal_attention_runs(seed, function), function, given,
                      CAUSAL_ATTENTION_TREES)
  cases.append(case(INDIVISIBLE_CASE, indivisible, function))
  return cases


def decoder_block_runs(seed, function=None):
  rng = rng_for(seed, 'C6')
  n_heads, d_head = int(rng.integers(2, 4)), int(rng.integers(2, 5))
  d_model = n_heads * d_head
  x = floats(rng, (2, int(rng.integers(3, 7)), d_model))
  runs = []
  for mode, activation in [(m, 'Relu') for m in MODES] + [('eval', 'FastGelu')]:
    base = dict(d_model=d_model, d_ff=int(rng.integers(8, 24)), n_heads=n_heads,
                dropout=0.3, ff_activation=getattr(tl, activation))
    options = with_max_len(function, base, mode) if function else dict(base, mode=mode,
                                                                        max_len=16)
    runs.append((f'DecoderBlock(d_model={d_model}, d_ff={base["d_ff"]}, n_heads={n_heads}, '
                 f'dropout=0.3, mode={mode!r}, ff_activation=tl.{activation}) on {x.shape}',
                 options, x))
  return runs


DECODER_BLOCK_TREES = [
    (f'DecoderBlock(d_model={d}, d_ff={f}, n_heads={h}, dropout={p})',
     dict(d_model=d, d_ff=f, n_heads=h, dropout=p, mode='train', ff_activation=tl.Relu))
    for d, f, h, p in ((512, 2048, 8, 0.1), (16, 32, 4, 0.05))]


def probe_DecoderBlock(function, seed, given, env):  # pylint: disable=invalid-name
  del env
  return layer_cases(decoder_block_runs(seed, function), function, given, DECODER_BLOCK_TREES)


EXERCISE_MODEL = dict(vocab_size=VOCAB_SIZE, d_model=4, d_ff=16, n_layers=1, n_heads=2)
# The predict-mode model (grader and checks): two blocks, 3 heads of 4 features.
PREDICT_MODEL = dict(vocab_size=40, d_model=12, d_ff=20, n_layers=2, n_heads=3)


def described(kwargs):
  """A call's arguments as printed in a case's name ('d_model=12, n_heads=3', a layer's
  function by its name: 'ff_activation=tl.FastGelu')."""
  return ', '.join(f'{k}=tl.{v.__name__}' if callable(v) else f'{k}={v}'
                   for k, v in kwargs.items())


def transformer_runs(seed, function=None):
  rng = rng_for(seed, 'C7')
  # d_head even, so d_model is: Trax's sinusoidal PositionalEncoding needs an even width.
  n_heads, d_head, n_layers = int(rng.integers(2, 4)), 2 * int(rng.integers(1, 3)), 2
  vocab = int(rng.integers(20, 60))
  ids = rng.integers(2, vocab, size=(2, int(rng.integers(4, 9)))).astype(np.int32)
  base = dict(vocab_size=vocab, d_model=n_heads * d_head, d_ff=int(rng.integers(8, 24)),
              n_layers=n_layers, n_heads=n_heads, dropout=0.3)
  runs = []
  # The eval run with tl.FastGelu: ff_activation is handed to the blocks, not a Relu written in.
  for mode, activation in (('train', None), ('eval', 'FastGelu')):
    options = dict(base, ff_activation=getattr(tl, activation)) if activation else base
    said = f', ff_activation=tl.{activation}' if activation else ''
    runs.append((f'{TRANSFORMER_LM}({described(base)}, mode={mode!r}{said}) on ids {ids.shape}',
                 with_max_len(function, options, mode) if function else dict(
                     options, mode=mode, max_len=16), ids))
  return runs


def exercise_model_measures(function):
  """The exercise's model traced on ids (2, 8): its weights' shapes, its output's shape."""
  model = function(**EXERCISE_MODEL, mode='eval')
  ids = trax.shapes.ShapeDtype((2, 8), np.int32)
  weights, state = fastmath.abstract_eval(model.init)(ids)
  rng = fastmath.random.get_prng(0)
  output, _ = fastmath.abstract_eval(
      lambda ids, weights, state: model.pure_fn(ids, weights, state, rng))(ids, weights, state)
  shapes = [list(leaf.shape) for leaf in tl.flatten_weights_and_state(weights, ())[0]]
  return {SHAPES_OF_WEIGHTS: shapes, OUTPUT_SHAPE: list(output.shape)}


# The course's two one-block models (the checks print them), then one of three blocks.
TRANSFORMER_TREES = [
    (f'{TRANSFORMER_LM}(vocab_size={v}, d_model={d}, d_ff={f}, n_layers={n}, n_heads={h})',
     dict(vocab_size=v, d_model=d, d_ff=f, n_layers=n, n_heads=h, dropout=0.1, max_len=256,
          ff_activation=tl.Relu))
    for v, d, f, n, h in ((VOCAB_SIZE, 512, 2048, 1, 8), (100, 16, 32, 1, 4),
                          (100, 16, 32, 3, 4))]


def probe_TransformerLM(function, seed, given, env):  # pylint: disable=invalid-name
  del env
  cases = layer_cases(transformer_runs(seed, function), function, given, TRANSFORMER_TREES)
  cases.append(case(EXERCISE_MODEL_CASE, exercise_model_measures, function))
  cases.append(case(f"{TRANSFORMER_LM}({described(PREDICT_MODEL)}, mode='predict')",
                    predict_mode_measures, function))
  return cases


TOKEN = 5  # ShiftRight's input: in predict mode it comes out as it went in.
SHIFTED = f"ShiftRight's output for the token {TOKEN} (predict mode)"
ENCODINGS = "PositionalEncoding's modes"


def predict_mode_measures(function):
  """A predict-mode model of the function's, measured by ``predict_mode_layers``."""
  return predict_mode_layers(function(**with_max_len(function, PREDICT_MODEL, 'predict')))


def predict_mode_layers(model):
  """What a predict-mode model's layers do with the mode (one token a call needs it).

  ShiftRight passes a token on in predict mode (None: the model has no
  ShiftRight); each PositionalEncoding keeps the mode it was given.
  """
  shift = next((layer for layer in all_sublayers(model) if layer.name.startswith('ShiftRight')),
               None)
  passed = None if shift is None else shifted_token(shift)
  encodings = [getattr(layer, '_mode', None) for layer in all_sublayers(model)
               if type(layer).__name__ == POSITIONAL_ENCODING]  # By name: Trax may load it twice.
  return {SHIFTED: passed, ENCODINGS: encodings}


def shifted_token(shift):
  """What a ShiftRight layer gives for the token ``TOKEN``: the token itself in predict mode."""
  return int(np.asarray(shift(np.array([[TOKEN]], np.int32)))[0, 0])


def all_sublayers(layer):
  for sublayer in layer.sublayers:
    yield sublayer
    yield from all_sublayers(sublayer)
