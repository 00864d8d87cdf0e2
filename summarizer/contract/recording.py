"""What a probe records, and under which names: the contract's vocabulary, each name written once.

The graded functions' names (the course's, in its order) and the package's
function of each (``graded_function``), the names of the measures a probe
records (the keys of a case's ``'measures'``; ``measures.py`` makes each a
``Measure``), the names of the cases, and how a case is recorded (``case``:
``{'name', 'measures', 'error'}``) from inputs drawn from the grading's seed
(Exercise 1's, ``attention_inputs``, and the calls under ``jax.jit`` of
Exercises 1 to 4, ``jit_call``): the same on both sides, the notebook's checks
run them too.

Inside the sandbox this module is imported with the probes (``probes.py``,
``probes_layers.py``): it may import only the standard library, numpy,
``summarizer._trax`` and ``summarizer.config`` (what the sandbox shows of the
package; ``import summarizer`` is the package's ``__init__``, shown too).
"""

import inspect
import linecache
import traceback

import numpy as np

import summarizer

RUN_SEED = 7  # The random key of every layer run (dropout masks).
MODES = ('train', 'eval', 'predict')
# What a learner's function may raise that fails its case (KeyboardInterrupt still stops a run).
CAUGHT = (Exception, SystemExit)

# The graded functions, by the course's names, in its order (UNQ_C1 to UNQ_C10): the one place
# each is written; every other module imports ``GRADED`` from here.
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


def graded_function(name):
  """Returns the package's graded function ``name``, as ``summarizer`` exports it.

  Only outside the sandbox, which hides the package's functions: the grader's
  side and the notebook's checks run them beside the learner's.
  """
  return getattr(summarizer, name)

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
INPUT_Q, INPUT_K, INPUT_V, INPUT_MASK, INPUT_X, INPUT_TOKENS = (
    INPUT + name for name in ('q', 'k', 'v', 'mask', 'x', 'tokens'))
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
EVALUATION_DATA = 'the data its evaluation task reads'
TRAINING_DATA = 'the data its training task reads'
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
DEFAULTS = "its signature's defaults"

# Cases the notebook's checks run too, by the same name.
INDIVISIBLE_CASE = 'CausalAttention(d_feature=10, n_heads=3)'
EXERCISE_MODEL_CASE = 'TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2) on ids (2, 8)'
LOOP_CASE = 'training_loop(TransformerLM, train_gen, eval_gen, output_dir)'
TRAIN_GEN, EVAL_GEN = 'train_gen', 'eval_gen'  # training_loop's streams, by the course's names.
STREAMS = (TRAIN_GEN, EVAL_GEN)
# A sentence greedy_decode is given where only how it ends matters (EOS first, or never).
SHORT_SENTENCE = 'Nothing happened.'
QUIET_CASE = 'greedy_decode(..., verbose=False)'  # Only for a greedy_decode that takes verbose.
SIGNATURE_CASE = f"{TRANSFORMER_LM}'s signature"  # Its defaults (``signature.py``).


# --------------------------------------------------------------------------
# Recording cases.

def describe(error):
  """'Type: message (in F, line L: code)', short; a Trax ``LayerError`` said as what it wraps."""
  inner = innermost(error)
  message = str(inner).strip().splitlines()
  text = type(inner).__name__ + (': ' + ' / '.join(message[:3])[:300] if message else '')
  return text + cell_line(error)


def in_a_cell(filename):
  """Whether code from ``filename`` is a learner's cell, as the sandbox runs it (``<cell L>``)."""
  return filename.startswith('<cell ')


def cell_line(error):
  """' (in F, line L: code, at `part`)': the learner's last line in the traceback, or ''.

  Said as the notebook's check says it (``failure_text.describe``): the
  function the line is in (``<module>`` for a cell's own statement), its
  number in its cell, and its code with the part that raised (PEP 657).
  """
  frame = learners_frame(error, in_a_cell)
  if frame is None:
    return ''
  code = frame_code(frame)
  return f' (in {frame.name}, line {frame.lineno}' + (f': {code})' if code else ')')


def learners_frame(error, learners):
  """The learner's last frame where ``error`` rose (a ``traceback.FrameSummary``), or None.

  ``learners(filename)``: whether code from that file is the learner's (a
  notebook's cell in the learner's kernel, ``in_a_cell`` in the sandbox).
  An error a Trax layer wrapped (``innermost``) rose inside Trax: the
  learner's line that called the layer is in a wrapping error's traceback,
  looked in from the innermost out.
  """
  chain, seen = [error], set()
  while type(error).__name__ == 'LayerError' and id(error) not in seen:
    seen.add(id(error))
    error = error.__cause__ or error.__context__
    chain += [error] if error is not None else []
  for raised in reversed(chain):
    for frame in reversed(traceback.extract_tb(raised.__traceback__)):
      if learners(frame.filename):
        return frame
  return None


def frame_code(frame, limit=None, part_only=False):
  """A frame's line of code; with PEP 657's columns, the part of it that raised after it.

  ``part_only``: that part alone, in place of the line, when Python gives it.
  """
  code = (frame.line or '').strip()
  if limit and len(code) > limit:
    code = code[:limit] + ' ...'
  start, end = getattr(frame, 'colno', None), getattr(frame, 'end_colno', None)
  whole = linecache.getline(frame.filename, frame.lineno)  # Unstripped: columns count in it.
  if (code and start is not None and end is not None
      and getattr(frame, 'end_lineno', frame.lineno) == frame.lineno):
    part = whole[start:end].strip()
    part = part if len(part) <= 60 else part[:60] + ' ...'
    if part_only and part:
      return part
    if part and part != whole.strip():
      code += f', at `{part}`'
  return code


# jax's errors for a traced array used where its value is needed, each said as what the
# learner's line did: jax raises each for that use alone (jax.errors' documentation). The
# notebook's check and the grader both say them.
TRACER_ERRORS = {
    'TracerBoolConversionError': (
        'uses a traced array as a bool (if, while, and, or, not): under jax.jit its values '
        'are unknown; use jnp.where, or test a shape or `is None`'),
    'TracerArrayConversionError': (
        'hands a traced array to NumPy: under jax.jit it has no values yet; use jnp, not np'),
    'TracerIntegerConversionError': (
        'uses a traced array as a Python int (an index, a size, range()): under jax.jit its '
        'values are unknown; take sizes from .shape'),
    'ConcretizationTypeError': (
        "needs a traced array's values (a shape, a size, a Python number or list): under "
        'jax.jit only its shape and dtype are known; take sizes from .shape'),
}


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


def jit_refusal(error, learners):
  """What stopped a function under ``jax.jit``, as the notebook's check and the grader both say it.

  'no: ' and the learner's line ('line N of f (`code`)', ``learners`` as
  ``learners_frame``'s): a tracer error with what that line did
  (``TRACER_ERRORS``), any other error with its type and first line.
  """
  inner = innermost(error)
  frame = learners_frame(error, learners)
  where = 'your code'
  if frame is not None:
    code = frame_code(frame, limit=50, part_only=True)
    where = f'line {frame.lineno} of {frame.name}' + (f' (`{code}`)' if code else '')
  said = TRACER_ERRORS.get(type(inner).__name__)
  if said:
    return f'no: {where} {said}'
  message = (str(inner).strip().splitlines() or [''])[0][:300]
  return f'no: {where} raised {type(inner).__name__}' + (f': {message}' if message else '')


def case(name, measure, *args, **kwargs):
  """Runs ``measure(*args, **kwargs)``, a dict of measures, as one recorded case."""
  try:
    return {'name': name, 'measures': measure(*args, **kwargs), 'error': None}
  except CAUGHT as error:  # pylint: disable=broad-except
    return {'name': name, 'measures': {}, 'error': describe(error)}


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


def attention_inputs(seed):
  """DotProductAttention's (name, query, key, value, mask) sets at ``seed``; every row of every
  mask attends somewhere (the probe's cases, whose first the notebook's check runs too)."""
  rng, sets = rng_for(seed, 'C1'), []
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


# The arrays of the functions of arrays (UNQ_C1 to UNQ_C4) under jax.jit: what every answer
# keeps, the grader's cases of it (``probes.property_cases``) and the notebook's
# (``runner.kept_cases``) on the same calls.
JIT_BATCHES = (1, 3)


def jit_case(name, batch):
  return f'{name} under jax.jit, a batch of {batch}'


def jit_call(name, batch):
  """(made, arguments by name): the exercise's function as ``made(function)(**arguments)`` on a batch."""
  # Trax only once a property runs: modules that only read a notebook or a class's grades
  # (grading/static_reading.py, evaluation/class_grading.py) import this one, never Trax.
  from summarizer import _trax  # pylint: disable=g-import-not-at-top
  jnp, rng = _trax.jnp, np.random.default_rng(batch)
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
