"""What the grader measures of a graded function: its outputs on inputs, nothing judged.

The same code runs twice per grading: inside the sandbox on the learner's
function, and in the trusted grader on the package's. It holds no expected
value and no verdict: a probe calls a function on the grading's inputs
(drawn from its seed, or handed in by the grader as arrays) and records what
comes out, case by case, as ``{'name', 'measures', 'error'}``. Measures are
JSON values or numpy arrays.

Inside the sandbox this file is loaded on its own, as ``probes``: it may
import only the standard library, numpy, ``summarizer._trax`` and
``summarizer.config`` (what the
sandbox shows of the package).
"""

import contextlib
import inspect
import io
import os
import tempfile
import traceback

import jax
import numpy as np

from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import VOCAB_SIZE

EOS, SEP = 1, 0
RUN_SEED = 7  # The random key of every layer run (dropout masks).
MODES = ('train', 'eval', 'predict')
# What a learner's function may raise that fails its case (KeyboardInterrupt still stops a run).
CAUGHT = (Exception, SystemExit)

# The graded functions, by the course's names, in its order (UNQ_C1 to UNQ_C10): the one place
# each is written (``exercise_code.GRADED`` is ``GRADED``).
DOT_PRODUCT_ATTENTION = 'DotProductAttention'
HEADS_CLOSURE = 'compute_attention_heads_closure'
SELF_ATTENTION = 'dot_product_self_attention'
OUTPUT_CLOSURE = 'compute_attention_output_closure'
CAUSAL_ATTENTION = 'CausalAttention'
DECODER_BLOCK = 'DecoderBlock'
TRANSFORMER_LM = 'TransformerLM'
TRAINING_LOOP = 'training_loop'
NEXT_SYMBOL = 'next_symbol'
GREEDY_DECODE = 'greedy_decode'
GRADED = (DOT_PRODUCT_ATTENTION, HEADS_CLOSURE, SELF_ATTENTION, OUTPUT_CLOSURE, CAUSAL_ATTENTION,
          DECODER_BLOCK, TRANSFORMER_LM, TRAINING_LOOP, NEXT_SYMBOL, GREEDY_DECODE)
# What the grader hands in: keys of its arrays and JSON.
SHIPPED_SHAPES = 'shipped weight shapes'
LOOP_MODEL = 'training_loop model'  # The weights of the loop's model ('weights/' + this).
RETURNED_NONE = 'it returned None'
POSITIONAL_ENCODING = 'PositionalEncoding'  # Trax's layer, which predict mode must reach.


# --------------------------------------------------------------------------
# The names of what is measured, as a report keys them: the one place each is
# written (``measures.py`` defines how each is compared, printed and explained).

OUTPUT = 'output'
OUTPUT_TYPE = 'type of the output'
INPUT = 'input '  # The inputs a case was run on: kept for the why: lines, never compared.
INPUT_Q, INPUT_K, INPUT_V, INPUT_MASK, INPUT_X = (INPUT + name
                                                  for name in ('q', 'k', 'v', 'mask', 'x'))
TREE = 'str(layer)'
TYPE = 'type'
PARTS = 'types of its parts'
THEIR_SUBLAYERS = 'types of their sublayers'
WEIGHT_SHAPES = 'weight shapes'
WHICH_SUBLAYER = 'which sublayer each is'
SHAPES_OF_WEIGHTS = 'shapes of its weights'
OUTPUT_SHAPE = 'output shape'
LOSS_LAYER = 'loss layer'
OPTIMIZER = 'optimizer'
OPTIMIZER_PARAMETERS = 'optimizer parameters'
LEARNING_RATES = 'learning rates at steps 1, 500, 1000, 1001, 4000'
CHECKPOINT_STEPS = 'steps between checkpoints'
METRICS = 'evaluation metrics'
OUTPUT_DIRECTORY = 'output directory, from the home folder'
LAYER_MODES = "modes of the model's layers"
LOSS_AT_WORK = 'its loss layer on drawn log-probabilities'
OPTIMIZER_STEP = "its optimizer's first step from drawn weights and gradients"
NEXT_TOKEN = 'next token'
NEXT_TOKEN_TYPE = 'type of the next token'
MODEL_INPUTS = "the model's inputs"
SUMMARY = 'the summary it returns'
CALLS = 'the tokens next_symbol is given after tokenize(sentence), call by call'
MODEL_GIVEN = 'the model next_symbol is given'
PRINTED = 'what it prints, line by line'
TAKES_VERBOSE = 'takes verbose'
LOG_PROBABILITIES = 'log-probabilities'
SUMMARY_IDS = "the summary's ids"
# What every answer keeps (the properties, below).
INPUTS_AFTER = 'the tokens it was given, after the call'
UNDER_JIT = 'runs under jax.jit'
DTYPE = 'dtype of the output'
WRITTEN = 'tokens written when EOS never comes'

# Cases the notebook's checks run too, by the same name.
INDIVISIBLE_CASE = 'CausalAttention(d_feature=10, n_heads=3)'
EXERCISE_MODEL_CASE = 'TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2) on ids (2, 8)'
LOOP_CASE = 'training_loop(TransformerLM, train_gen, eval_gen, output_dir)'
QUIET_CASE = 'greedy_decode(..., verbose=False)'  # Only for a greedy_decode that takes verbose.


# --------------------------------------------------------------------------
# Recording cases.

def describe(error):
  """'Type: message (line N of your cell: code)', short."""
  message = str(error).strip().splitlines()
  text = type(error).__name__ + (': ' + ' / '.join(message[:3])[:300] if message else '')
  for frame in reversed(traceback.extract_tb(error.__traceback__)):
    if frame.filename.startswith('<cell '):
      text += f' ({frame.filename[1:-1]}, line {frame.lineno}: {(frame.line or "").strip()})'
      break
  return text


def innermost(error):
  """The exception a Trax ``LayerError`` wraps (its cause or context), however deeply.

  Trax raises a LayerError inside the ``except`` clause that caught the
  real exception, so each one keeps it as its context; a layer tree nests
  one LayerError per level.
  """
  seen = set()
  while type(error).__name__ == 'LayerError' and id(error) not in seen:
    seen.add(id(error))
    inner = error.__cause__ or error.__context__
    if inner is None:
      break
    error = inner
  return error


def case(name, measure, *args, **kwargs):
  """Runs ``measure(*args, **kwargs)``, a dict of measures, as one recorded case."""
  try:
    return {'name': name, 'measures': measure(*args, **kwargs), 'error': None}
  except CAUGHT as error:  # pylint: disable=broad-except
    return {'name': name, 'measures': {}, 'error': describe(innermost(error))}


def accepts(function, name):
  """Whether ``function`` takes a parameter ``name`` (True when unsure)."""
  try:
    parameters = inspect.signature(function).parameters.values()
  except (TypeError, ValueError):
    return True
  return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def array(value):
  if value is None:
    raise TypeError(RETURNED_NONE)
  return np.asarray(value, dtype=np.float32)


# --------------------------------------------------------------------------
# Inputs drawn from the grading's seed (the same on both sides).

def rng_for(seed, name):
  """A numpy generator for one exercise, from the grading's seed."""
  return np.random.default_rng([seed, sum(map(ord, name))])


def floats(rng, shape):
  return rng.normal(size=shape).astype(np.float32)


def attention_inputs(rng):
  """(name, query, key, value, mask) sets; every row of every mask attends somewhere."""
  sets = []
  for label in ('causal mask', 'random mask', 'batch of 1, no mask rows cut'):
    batch, length, depth = int(rng.integers(1, 4)), int(rng.integers(3, 7)), int(rng.integers(2, 7))
    q, k, v = (floats(rng, (batch, length, depth)) for _ in range(3))
    if label == 'causal mask':
      mask = np.tril(np.ones((1, length, length), bool))
    else:
      mask = rng.random((batch, length, length)) < 0.6
      mask[..., np.arange(length), rng.integers(0, length, size=length)] = True
    sets.append((f'{label}, q k v {q.shape}', q, k, v, mask))
  return sets


# --------------------------------------------------------------------------
# UNQ_C1 to UNQ_C4: functions of arrays.

def probe_DotProductAttention(function, seed, given, env):  # pylint: disable=invalid-name
  del given, env
  cases = []
  for name, q, k, v, mask in attention_inputs(rng_for(seed, 'C1')):
    def measure(q=q, k=k, v=v, mask=mask):
      output = function(jnp.array(q), jnp.array(k), jnp.array(v), jnp.array(mask))
      return {OUTPUT: array(output), OUTPUT_TYPE: type_name(output),
              INPUT_Q: q, INPUT_K: k, INPUT_V: v, INPUT_MASK: mask}
    cases.append(case(f'{DOT_PRODUCT_ATTENTION}, {name}', measure))
  return cases


def type_name(value):
  """The full name of a value's type ('jaxlib._jax.ArrayImpl'): the judge reads it."""
  kind = type(value)
  return f'{kind.__module__}.{kind.__qualname__}'


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
  """A call's arguments as printed in a case's name ('d_model=12, n_heads=3')."""
  return ', '.join(f'{k}={v}' for k, v in kwargs.items())


def transformer_runs(seed, function=None):
  rng = rng_for(seed, 'C7')
  # d_head even, so d_model is: Trax's sinusoidal PositionalEncoding needs an even width.
  n_heads, d_head, n_layers = int(rng.integers(2, 4)), 2 * int(rng.integers(1, 3)), 2
  vocab = int(rng.integers(20, 60))
  ids = rng.integers(2, vocab, size=(2, int(rng.integers(4, 9)))).astype(np.int32)
  base = dict(vocab_size=vocab, d_model=n_heads * d_head, d_ff=int(rng.integers(8, 24)),
              n_layers=n_layers, n_heads=n_heads, dropout=0.3)
  return [(f'{TRANSFORMER_LM}({described(base)}, mode={mode!r}) on ids {ids.shape}',
           with_max_len(function, base, mode) if function else dict(base, mode=mode,
                                                                    max_len=16), ids)
          for mode in ('train', 'eval')]


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
  passed = None if shift is None else int(np.asarray(shift(np.array([[TOKEN]], np.int32)))[0, 0])
  encodings = [getattr(layer, '_mode', None) for layer in all_sublayers(model)
               if type(layer).__name__ == POSITIONAL_ENCODING]  # By name: Trax may load it twice.
  return {SHIFTED: passed, ENCODINGS: encodings}


def all_sublayers(layer):
  for sublayer in layer.sublayers:
    yield sublayer
    yield from all_sublayers(sublayer)


# --------------------------------------------------------------------------
# UNQ_C8: training_loop.

SCHEDULE_STEPS = (1, 500, 1000, 1001, 4000)


def batches(seed, length=16):
  """(inputs, targets, weights) batches of one sequence: weights 0 over its first half.

  As in the course's data, the loss weights are 0 over the article (the
  first half here) and 1 over the summary.
  """
  rng = np.random.default_rng(seed)
  weights = np.zeros((1, length), np.float32)
  weights[:, length // 2:] = 1
  while True:
    ids = rng.integers(2, VOCAB_SIZE, size=(1, length)).astype(np.int32)
    yield ids, ids, weights


@contextlib.contextmanager
def home_and_cwd(directory):
  saved_home, saved_cwd = os.environ.get('HOME'), os.getcwd()
  os.environ['HOME'] = directory
  os.chdir(directory)
  try:
    yield
  finally:
    os.chdir(saved_cwd)
    if saved_home is None:
      os.environ.pop('HOME', None)
    else:
      os.environ['HOME'] = saved_home


def loop_measures(loop, home):
  task = loop.tasks[0]
  return {
      LOSS_LAYER: str(task.loss_layer),
      OPTIMIZER: type(task.optimizer).__name__,
      OPTIMIZER_PARAMETERS: {k: float(v) for k, v in sorted(task.optimizer.opt_params.items())},
      LEARNING_RATES: [
          float(task.learning_rate(step)) for step in SCHEDULE_STEPS],
      CHECKPOINT_STEPS: task.n_steps_per_checkpoint,
      METRICS: [str(name) for name in loop.eval_tasks[0].metric_names],
      OUTPUT_DIRECTORY: os.path.relpath(
          os.path.realpath(loop.output_dir), os.path.realpath(home)),
      LAYER_MODES: layer_modes(loop.model),
  }


def loss_and_update_measures(loop, seed):
  """The loop's loss layer and optimizer at work on arrays drawn from the seed.

  Outputs only correct code computes (a loss of log-probabilities, one
  optimizer step from given weights and gradients), where the loop's
  settings alone could be written down without any.
  """
  task, rng = loop.tasks[0], rng_for(seed, 'C8')
  log_probs = np.log(rng.dirichlet(np.ones(12), size=(2, 7))).astype(np.float32)
  targets = rng.integers(0, 12, size=(2, 7)).astype(np.int32)
  weights = (rng.random((2, 7)) < 0.7).astype(np.float32)
  loss = task.loss_layer((jnp.array(log_probs), jnp.array(targets), jnp.array(weights)))
  optimizer = task.optimizer
  kept = optimizer.slots
  start, gradient = floats(rng, (3, 5)), floats(rng, (3, 5))
  try:
    slots, params = optimizer.tree_init((jnp.array(start),))
    updated, _, _ = optimizer.tree_update(1, (jnp.array(gradient),), (jnp.array(start),),
                                          slots, params, store_slots=False)
  finally:
    optimizer.slots = kept
  return {LOSS_AT_WORK: float(np.asarray(loss)), OPTIMIZER_STEP: array(updated[0])}


def layer_modes(layer):
  found, stack = set(), [layer]
  while stack:
    current = stack.pop()
    if isinstance(getattr(current, '_mode', None), str):
      found.add(current._mode)  # pylint: disable=protected-access
    stack.extend(current.sublayers)
  return sorted(found)


def probe_training_loop(function, seed, given, env):
  """The loop built over random batches, with the exercise's model's output on weights given."""
  with tempfile.TemporaryDirectory() as home:
    def build():
      options = {'output_dir': '~/output'} if accepts(function, 'output_dir') else {}
      with home_and_cwd(home):
        return function(env[TRANSFORMER_LM], batches(seed), batches(seed + 1), **options)
    built = {}

    def measure():
      built['loop'] = build()
      return loop_measures(built['loop'], home)
    cases = [case(LOOP_CASE, measure)]
    if 'loop' in built:
      cases.append(case("the loop's loss and optimizer at work", loss_and_update_measures,
                        built['loop'], seed))
      ids = next(batches(seed + 2))[0]
      cases.append(case("the loop's model on a batch, with the weights given",
                        lambda: run_measures(built['loop'].model, ids,
                                             given_weights(given, LOOP_MODEL))))
  return cases


# --------------------------------------------------------------------------
# UNQ_C9 and UNQ_C10: stand-ins for the model, the tokenizer and next_symbol.

class StandInModel:
  """An eval-mode model stand-in: the most likely token at position p is 40 + p."""
  VOCAB, FIRST = 100, 40

  def __init__(self):
    self.inputs = []

  def __call__(self, batch, *args, **kwargs):
    pair = isinstance(batch, (tuple, list))
    inputs = np.asarray(batch[0] if pair else batch)
    self.inputs.append(inputs.tolist())
    log_probs = np.full(inputs.shape + (self.VOCAB,), -10.0, np.float32)
    for position in range(min(inputs.shape[-1], self.VOCAB - self.FIRST)):
      log_probs[..., position, self.FIRST + position] = -0.1
    return (log_probs, batch[1] if len(batch) > 1 else inputs) if pair else log_probs


def probe_next_symbol(function, seed, given, env):
  del given, env
  rng = rng_for(seed, 'C9')
  lists = [[int(rng.integers(2, 500))]] + [
      rng.integers(0, 500, size=int(rng.integers(low, high))).tolist()
      for low, high in ((2, 8), (8, 17), (17, 40))]
  return [case(f'{NEXT_SYMBOL} on {len(tokens)} tokens', next_symbol_measures, function, tokens)
          for tokens in lists]


def next_symbol_measures(function, tokens, kept=None):
  """next_symbol with the stand-in model (kept in ``kept``): its answer, what the model saw."""
  model = StandInModel()
  if kept is not None:  # For the why: line of a call that raises.
    kept[:] = [model]
  token = function(list(tokens), model)
  return {NEXT_TOKEN: int(token) if isinstance(token, (int, np.integer)) else repr(token),
          NEXT_TOKEN_TYPE: type_name(token).removeprefix('builtins.'), MODEL_INPUTS: model.inputs}


PIECES = {20: 'I ', 21: 'found ', 22: 'roses, ', 23: 'not ', 24: 'tulips.', 25: ' And more.'}


def stand_in_tokenize(text, *args, **kwargs):
  return [100 + len(word) for word in text.split()] + [EOS]


def stand_in_detokenize(ids, *args, **kwargs):
  return ''.join(PIECES.get(int(i), '<EOS>' if int(i) == EOS else f'<{int(i)}>') for i in ids)


class ScriptedNextSymbol:
  """Writes a script, one token a call, for the article's ids + SEP + the script so far."""

  def __init__(self, prefix, script):
    self.prefix, self.script, self.calls, self.models = list(prefix), list(script), [], []

  def __call__(self, cur_output_tokens, model=None, *args, **kwargs):
    tokens = [int(token) for token in cur_output_tokens]
    article = self.prefix[:-1]  # The calls are recorded from the article's end on.
    self.calls.append(tokens[len(article):] if tokens[:len(article)] == article else tokens)
    self.models.append(repr(model))
    if len(self.calls) > 2 * len(self.script) + 10:
      raise RuntimeError(f'next_symbol was called {len(self.calls)} times: the decoding does '
                         f'not stop at EOS ({EOS})')
    written = tokens[len(self.prefix):]
    if (tokens[:len(self.prefix)] == self.prefix and written == self.script[:len(written)]
        and len(written) < len(self.script)):
      return self.script[len(written)]
    return EOS


class ModelArgument:
  def __repr__(self):
    return "greedy_decode's model"


def decode_measures(function, sentence, script, verbose, kept=None):
  """greedy_decode with the stand-in next_symbol writing ``script`` (kept in ``kept``)."""
  prefix = stand_in_tokenize(sentence) + [SEP]
  stand_in, printed = ScriptedNextSymbol(prefix, script), io.StringIO()
  if kept is not None:  # For the why: line of a call that raises.
    kept[:] = [stand_in]
  options = {} if verbose is None else {'verbose': verbose}
  with contextlib.redirect_stdout(printed):
    output = function(sentence, ModelArgument(), next_symbol=stand_in,
                      tokenize=stand_in_tokenize, detokenize=stand_in_detokenize, **options)
  return {SUMMARY: output if isinstance(output, str) else repr(output),
          CALLS: stand_in.calls,
          MODEL_GIVEN: sorted(set(stand_in.models)),
          PRINTED: printed.getvalue().splitlines(),
          TAKES_VERBOSE: verbose is not None}


def decode_case(length):
  """The name of a case of greedy_decode writing a summary of ``length`` tokens."""
  return f'{GREEDY_DECODE} of a {length}-token summary'


def probe_greedy_decode(function, seed, given, env):
  del given, env
  rng = rng_for(seed, 'C10')
  verbose = True if accepts(function, 'verbose') else None
  cases = []
  for n in (int(rng.integers(1, 6)), 0):
    words = ' '.join('w' * int(rng.integers(1, 9)) for _ in range(int(rng.integers(2, 9))))
    script = rng.integers(20, 26, size=n).tolist() + [EOS, 25]
    cases.append(case(decode_case(n + 1), decode_measures,
                      function, words, script, verbose))
  if verbose:
    cases.append(case(QUIET_CASE, decode_measures, function,
                      'Quiet please.', [21, 22, EOS], False))
  return cases


# --------------------------------------------------------------------------
# Parts 4 and 5: the learner's whole model with the shipped weights.

def weight_shapes(model_function, model_size):
  """The learner's eval-mode model's weight shapes, traced (no arithmetic)."""
  traced = model_function(**model_size, mode='eval')
  ids = trax.shapes.ShapeDtype((1, 8), np.int32)
  weights, _ = fastmath.abstract_eval(traced.init)(ids)
  shapes = [list(leaf.shape) for leaf in tl.flatten_weights_and_state(weights, ())[0]]
  return model_function(**model_size, mode='eval'), shapes


def probe_whole(names, given, model_size, model_file, parts=(4, 5)):
  """Part 4: weight shapes, then log-probabilities; Part 5: the summary's ids.

  Part 5 needs Part 4's model: with ``parts=(5,)`` Part 4 still runs, unrecorded.
  """
  shapes = {}

  def part_4():
    model, shapes['got'] = weight_shapes(names[TRANSFORMER_LM], model_size)
    measures = {WEIGHT_SHAPES: shapes['got']}
    if shapes['got'] == given[SHIPPED_SHAPES]:
      model.init_from_file(model_file, weights_only=True)
      shapes['model'] = model
      measures[LOG_PROBABILITIES] = array(model(given['part 4 ids']))
    return measures
  cases = [case('Part 4: your TransformerLM with the shipped weights', part_4)]
  if 4 not in parts:
    cases = []

  def part_5():
    article_ids = [int(i) for i in given['part 5 ids']]
    with contextlib.redirect_stdout(io.StringIO()):
      ids = names[GREEDY_DECODE]('the article', shapes['model'], names[NEXT_SYMBOL],
                                   lambda *a, **k: list(article_ids),
                                   lambda tokens, *a, **k: [int(t) for t in tokens])
    return {SUMMARY_IDS: [int(t) for t in ids]}
  if 'model' in shapes and 5 in parts:
    cases.append(case('Part 5: your greedy_decode and next_symbol summarise an article',
                      part_5))
  return cases


# --------------------------------------------------------------------------
# What every answer keeps, whatever its numbers: the grader's cases of them
# here, the notebook's checks' in ``properties.py``, on the same calls.

PROPERTY_TOKENS = (13, 483, 320, EOS, SEP)
MAX_LENGTH = 3  # greedy_decode's max_length when EOS never comes.


def tokens_case():
  return f"{NEXT_SYMBOL} leaves the caller's {len(PROPERTY_TOKENS)} tokens as they were"


def tokens_after(next_symbol):
  """The caller's list after ``next_symbol(list, model)``: as it was, unless padded in place."""
  given = list(PROPERTY_TOKENS)
  try:
    next_symbol(given, StandInModel())
  except CAUGHT:  # pylint: disable=broad-except
    pass  # The exercise's own cases say how it fails; this says only whether the list changed.
  return given


def max_length_case():
  return f'{GREEDY_DECODE}(..., max_length={MAX_LENGTH}) when EOS never comes'


def written_without_eos(greedy_decode):
  """How many tokens ``greedy_decode(..., max_length=MAX_LENGTH)`` asks for when EOS never comes."""
  written = []

  def never_ends(cur_output_tokens, model=None, *args, **kwargs):
    del model, args, kwargs
    written.append(len(cur_output_tokens))
    return 20
  with contextlib.redirect_stdout(io.StringIO()):  # What it prints is feedback.
    greedy_decode('Nothing happened.', ModelArgument(), next_symbol=never_ends,
                  tokenize=stand_in_tokenize, detokenize=stand_in_detokenize,
                  max_length=MAX_LENGTH)
  return len(written)


def jit_case(name, batch):
  return f'{name} under jax.jit, a batch of {batch}'


def jit_call(name, batch):
  """(made, arguments by name): the exercise's function as ``made(function)(**arguments)`` on a batch."""
  rng = np.random.default_rng(batch)
  if name in (DOT_PRODUCT_ATTENTION, SELF_ATTENTION):
    q, k, v = (jnp.array(rng.normal(size=(batch, 4, 6)).astype(np.float32)) for _ in range(3))
    if name == SELF_ATTENTION:
      return (lambda f: f), dict(q=q, k=k, v=v)
    return (lambda f: f), dict(query=q, key=k, value=v,
                               mask=jnp.array(np.tril(np.ones((1, 4, 4), bool))))
  rows = batch if name == HEADS_CLOSURE else 2 * batch
  x = jnp.array(rng.normal(size=(rows, 4, 6 if name == HEADS_CLOSURE else 3)).astype(np.float32))
  return (lambda f: _positional(f(n_heads=2, d_head=3))), dict(x=x)


def _positional(inner):
  """A closure's inner function called by keyword, as the check calls it positionally."""
  return lambda x: inner(x)


def jit_measures(function, name, batch):
  """Whether the function runs under jax.jit ('yes', or 'no: ' and what stopped it), and its dtype."""
  made, arguments = jit_call(name, batch)
  output = made(function)(**arguments)  # Raises where it fails without jit: its cases say how.
  try:
    jax.block_until_ready(jax.jit(made(function))(**arguments))
    runs = 'yes'
  except CAUGHT as error:  # pylint: disable=broad-except
    runs = f'no: {describe(innermost(error))}'
  return {UNDER_JIT: runs, DTYPE: str(getattr(output, 'dtype', type(output).__name__))}


JIT_BATCHES = (1, 3)


def property_cases(name, function):
  """The grader's cases of what ``name``'s answer keeps, after its own cases."""
  if name == NEXT_SYMBOL:
    return [case(tokens_case(), lambda: {INPUTS_AFTER: tokens_after(function)})]
  if name == GREEDY_DECODE:
    if not accepts(function, 'max_length'):
      return []
    return [case(max_length_case(), lambda: {WRITTEN: written_without_eos(function)})]
  if name in (DOT_PRODUCT_ATTENTION, HEADS_CLOSURE, SELF_ATTENTION, OUTPUT_CLOSURE):
    return [case(jit_case(name, batch), jit_measures, function, name, batch)
            for batch in JIT_BATCHES]
  return []


PROBES = dict(zip(GRADED, (
    probe_DotProductAttention, probe_compute_attention_heads_closure,
    probe_dot_product_self_attention, probe_compute_attention_output_closure,
    probe_CausalAttention, probe_DecoderBlock, probe_TransformerLM, probe_training_loop,
    probe_next_symbol, probe_greedy_decode)))


def graded_cases(name, function, seed, given, env):
  """What the grader measures of ``name``'s function: its probe's cases, then its properties'."""
  return PROBES[name](function, seed, given, env) + property_cases(name, function)
