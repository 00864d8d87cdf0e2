"""What the grader measures of a graded function: its outputs on inputs, nothing judged.

The same code runs twice per grading: inside the sandbox on the learner's
function, and in the trusted grader on the package's. It holds no expected
value and no verdict: a probe calls a function on the grading's inputs
(drawn from its seed, or handed in by the grader as arrays) and records what
comes out, case by case, as ``{'name', 'measures', 'error'}`` (``recording.py``,
which also holds every name a case is recorded under). Measures are JSON
values or numpy arrays.

This module holds the probes of Exercises 8 to 10 and of Parts 4 and 5, what
every answer keeps (``property_cases``), and the table of all the probes
(``PROBES``, ``graded_cases``); those of Exercises 1 to 7 are
``probes_layers.py``'s. Inside the sandbox the worker imports it (``from
summarizer.contract import probes``), with only ``recording.py``,
``probes_layers.py``, ``summarizer._trax`` and ``summarizer.config`` shown of
the package: it may import nothing else of it.
"""

import contextlib
import io
import os
import tempfile

import jax
import numpy as np

from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import EOS, SEP, VOCAB_SIZE
from summarizer.contract import signature
from summarizer.contract.recording import (CALLS, CAUGHT, CHECKPOINT_STEPS, DEFAULTS,
                                           DOT_PRODUCT_ATTENTION, DTYPE, EVAL_GEN, EVALUATION_DATA, GRADED, GREEDY_DECODE,
                                           HEADS_CLOSURE, INPUT_TOKENS, INPUTS_AFTER, LAYER_MODES, LEARNING_RATES,
                                           LOG_PROBABILITIES, LOOP_CASE, LOOP_MODEL, LOSS_AT_WORK,
                                           LOSS_LAYER, METRICS, MODEL_GIVEN, MODEL_INPUTS,
                                           NEXT_SYMBOL, NEXT_TOKEN, NEXT_TOKEN_TYPE, OPTIMIZER,
                                           OPTIMIZER_PARAMETERS, OPTIMIZER_STEP, OUTPUT_CLOSURE,
                                           OUTPUT_DIRECTORY, PRINTED, QUIET_CASE, SELF_ATTENTION,
                                           SIGNATURE_CASE, SHIPPED_SHAPES, SHORT_SENTENCE, SUMMARY, SUMMARY_IDS,
                                           TAKES_VERBOSE, TRAIN_GEN, TRAINING_DATA, TRANSFORMER_LM, UNDER_JIT,
                                           WEIGHT_SHAPES, WRITTEN, accepts, array, case, floats,
                                           in_a_cell, jit_call, jit_case, jit_refusal, rng_for,
                                           JIT_BATCHES)
from summarizer.contract.probes_layers import (given_weights, probe_CausalAttention,
                                               probe_compute_attention_heads_closure,
                                               probe_compute_attention_output_closure,
                                               probe_DecoderBlock,
                                               probe_dot_product_self_attention,
                                               probe_DotProductAttention, probe_TransformerLM,
                                               run_measures, type_name)


# The grader's own tools, bound as the probes load (before any learner code runs): a
# cell that rebinds ``jax.jit`` or ``np.asarray`` changes the learner's module, not what a
# property is measured with.
JIT, BLOCK_UNTIL_READY, AS_ARRAY, ARRAY_TYPES = (jax.jit, jax.block_until_ready, np.asarray,
                                                 (np.ndarray, np.generic, jax.Array))


def plain(value):
  """A value the learner returned as plain data: nothing of its own that a comparison calls.

  Numbers and strings as their base type (an ``int`` whose ``__eq__`` lies
  becomes the int it holds); lists and tuples of them as lists; anything
  else by its ``repr``, which the judge never takes for a value.
  """
  kind = type(value)
  if value is None or kind is bool:
    return value
  for base, exact in EXACT:
    if issubclass(kind, base):
      return exact(value)
  if kind in (list, tuple):
    return [plain(each) for each in value]
  return repr(value)


EXACT = ((int, int.__int__), (float, float.__float__), (str, str.__str__))


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


def stream_read(data, streams, function=None):
  """Which stream a task reads: the argument's name ('train_gen', 'eval_gen'), a global, or neither.

  Args:
    data: The task's data.
    streams: The streams handed to the function, by the course's names of its arguments.
    function: The function that built the task: a stream that is none of its arguments but
      a global of its module (the notebook's ``train_batch_stream``) is named so.
  """
  name = next((name for name, stream in streams.items() if stream is data), None)
  if name is None:
    name = next((notebook_global(global_name) for global_name, value
                 in getattr(function, '__globals__', {}).items()
                 if value is data and not global_name.startswith('_')), 'neither')
  return name


NOTEBOOK_GLOBAL = "the notebook's "  # How a measure names a global of the notebook, before its name.


def notebook_global(name):
  """A global of the notebook, as a measure names it: "the notebook's train_batch_stream"."""
  return NOTEBOOK_GLOBAL + name


def evaluation_stream(loop, streams, function=None):
  """The stream the loop's (first) evaluation task reads (``stream_read``)."""
  return stream_read(loop.eval_tasks[0].labeled_data, streams, function)


def training_stream(loop, streams, function=None):
  """The stream the loop's (first) training task reads (``stream_read``)."""
  return stream_read(loop.tasks[0].labeled_data, streams, function)


def probe_training_loop(function, seed, given, env):
  """The loop built over random batches, with the exercise's model's output on weights given."""
  with tempfile.TemporaryDirectory() as home:
    streams = {TRAIN_GEN: batches(seed), EVAL_GEN: batches(seed + 1)}

    def build():
      options = {'output_dir': '~/output'} if accepts(function, 'output_dir') else {}
      with home_and_cwd(home):
        return function(env[TRANSFORMER_LM], streams[TRAIN_GEN], streams[EVAL_GEN], **options)
    built = {}

    def measure():
      built['loop'] = build()
      return dict(loop_measures(built['loop'], home),
                  **{EVALUATION_DATA: evaluation_stream(built['loop'], streams, function),
                     TRAINING_DATA: training_stream(built['loop'], streams, function)})
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


# The notebook's first next_symbol cases, which the grader runs first too: a mistake's why: is
# said once (its first case's), with the same numbers on both sides.
FIRST_TOKEN_LISTS = ((5,), (13, 483, 320, EOS), (7, 7, 9, 31, 2, EOS, 0))


def next_symbol_case(tokens):
  return f'{NEXT_SYMBOL} on {len(tokens)} token{"s" if len(tokens) > 1 else ""}'


def probe_next_symbol(function, seed, given, env):
  del given, env
  rng = rng_for(seed, 'C9')
  lists = [list(tokens) for tokens in FIRST_TOKEN_LISTS] + [[int(rng.integers(2, 500))]] + [
      rng.integers(0, 500, size=int(rng.integers(low, high))).tolist()
      for low, high in ((2, 8), (8, 17), (17, 40))]
  return [case(next_symbol_case(tokens), next_symbol_measures, function, tokens)
          for tokens in lists]


def next_symbol_measures(function, tokens, kept=None):
  """next_symbol with the stand-in model (kept in ``kept``): its answer, what the model saw."""
  model = StandInModel()
  if kept is not None:  # For the why: line of a call that raises.
    kept[:] = [model]
  token = function(list(tokens), model)
  exact = EXACT[0][1](token) if issubclass(type(token), int) else None  # True as 1, as int() did.
  if issubclass(type(token), np.integer):
    exact = plain(AS_ARRAY(token).item())
  return {NEXT_TOKEN: repr(token) if exact is None else exact,
          NEXT_TOKEN_TYPE: type_name(token).removeprefix('builtins.'), MODEL_INPUTS: model.inputs,
          INPUT_TOKENS: [int(token) for token in tokens]}


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
    tokens = [plain(int(token)) for token in cur_output_tokens]
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
  return {SUMMARY: plain(output) if issubclass(type(output), str) else repr(output),
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
  shapes = [plain(list(leaf.shape)) for leaf in tl.flatten_weights_and_state(weights, ())[0]]
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
# here, the notebook's checks' in ``assignment/runner.py``, on the same calls.

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
  return plain(given)


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
    greedy_decode(SHORT_SENTENCE, ModelArgument(), next_symbol=never_ends,
                  tokenize=stand_in_tokenize, detokenize=stand_in_detokenize,
                  max_length=MAX_LENGTH)
  return len(written)


def jit_measures(function, name, batch):
  """Whether the function runs under jax.jit ('yes', or 'no: ' and what stopped it), and its dtype."""
  made, arguments = jit_call(name, batch)
  output = made(function)(**arguments)  # Raises where it fails without jit: its cases say how.
  try:
    BLOCK_UNTIL_READY(JIT(made(function))(**arguments))
    runs = 'yes'
  except CAUGHT as error:  # pylint: disable=broad-except
    runs = jit_refusal(error, in_a_cell)  # As the notebook's check says it.
  return {UNDER_JIT: runs, DTYPE: dtype_of(output)}


def dtype_of(output):
  """An output's dtype, read from it as a numpy array (its type's name when it is no array).

  Read by the grader's tools, never from an attribute the learner's object
  may say anything in.
  """
  if issubclass(type(output), ARRAY_TYPES):
    return str(AS_ARRAY(output).dtype)
  return type(output).__name__


def property_cases(name, function):
  """The grader's cases of what ``name``'s answer keeps, after its own cases."""
  if name == NEXT_SYMBOL:
    return [case(tokens_case(), lambda: {INPUTS_AFTER: tokens_after(function)})]
  if name == GREEDY_DECODE:
    if not accepts(function, 'max_length'):
      return []
    return [case(max_length_case(), lambda: {WRITTEN: written_without_eos(function)})]
  if name == TRANSFORMER_LM:
    return [case(SIGNATURE_CASE, lambda: {DEFAULTS: signature.defaults(function)})]
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
