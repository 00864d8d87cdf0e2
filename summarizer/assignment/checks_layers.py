"""The in-notebook checks of the layers (UNQ_C5 to UNQ_C7).

Each layer printed at the course's sizes (the probes' ``*_TREES``, which the
grader prints too) beside the package's, then run beside the package's, with
the same weights and random key, in every mode.
"""

import dataclasses
import functools
from typing import Any

import numpy as np

from summarizer import attention as _attention
from summarizer import model as _model
from summarizer._trax import fastmath, tl, trax
from summarizer.contract import measures, mistakes, probes_layers, recording
from summarizer.contract.failure_text import NotRun
from summarizer.contract.judge import read_each, reading
from summarizer.assignment.runner import CHECK_SEED, run_cases, sublayer_names


@dataclasses.dataclass
class _Ran:
  """A learner's layer and the package's, run on one input.

  Attributes:
    shapes: The learner's weight shapes, in order.
    expected_shapes: The package's.
    output: The learner's output with the package's weights (None when
      its weights do not fit them).
    expected_output: The package's output.
    repeated: The learner's layer's direct sublayers' objects, numbered
      (``probes_layers.sublayer_identities``: [DecoderBlock(...)] * n_layers repeats some).
    tree, expected_tree: The learner's layer and the package's, printed.
    model: The learner's layer, when a why: line reads more of it.
  """
  shapes: list
  expected_shapes: list
  output: Any
  expected_output: Any
  repeated: list = dataclasses.field(default_factory=list)
  tree: str = ''
  expected_tree: str = ''
  model: Any = None


def _shapes(weights):
  """The shapes of weights (arrays or shapes), as tuples."""
  return [tuple(np.shape(w)) if not isinstance(w, (list, tuple)) else tuple(w)
          for w in weights]


# The package's layers run by the checks: (call, inputs) -> (weights, shapes, output, tree).
_PACKAGE_RUNS = {}


def _run_key(build, inputs):
  """A key for the package's layer ``build`` (a functools.partial) on ``inputs``, or None."""
  if not isinstance(build, functools.partial):
    return None
  array = np.asarray(inputs)
  key = (build.func, build.args, tuple(sorted(build.keywords.items())), array.dtype.str,
         array.shape, array.tobytes())
  try:
    hash(key)
  except TypeError:
    return None
  return key


def _package_run(build_package, inputs):
  """The package's layer initialised with the run's key and run on ``inputs``, as the probes run it.

  The package's layers are deterministic, so each call on each input is
  computed once a process (a check run again, or on many answers, reuses it).

  Returns:
    (its weights, flat; their shapes; its output; the layer printed).
  """
  key = _run_key(build_package, inputs)
  if key in _PACKAGE_RUNS:
    return _PACKAGE_RUNS[key]
  layer = probes_layers.as_layer(build_package())
  weights = probes_layers.initial_weights(layer, inputs)
  run = (weights, _shapes(weights), probes_layers.run_measures(layer, inputs, weights)[recording.OUTPUT],
         str(layer))
  if key is not None:
    _PACKAGE_RUNS[key] = run
  return run


def run_beside_package(layer, build_package, inputs):
  """Runs ``layer`` and the package's (``build_package()``, same arguments) on ``inputs``.

  The package's layer is initialised at random; the learner's gets the same
  weights, and both run with the same random key (for dropout): the probe's
  run, as the grader runs it (``probes_layers.run_measures``).
  """
  layer = probes_layers.as_layer(layer)  # A block is a list of layers, as the course's.
  package_weights, expected_shapes, expected_output, expected_tree = _package_run(
      build_package, inputs)
  ran = probes_layers.run_measures(layer, inputs, package_weights)
  return _Ran(_shapes(ran[recording.WEIGHT_SHAPES]), expected_shapes, ran.get(recording.OUTPUT),
              expected_output, probes_layers.sublayer_identities(layer), str(layer), expected_tree)


def _ran_measures(mode, why=None, output=None):
  """What a run beside the package's must show: its weights, then its output.

  Args:
    mode: The mode, as printed.
    why: The measures' why (``mistakes.ran_model_why``, ...: it reads the
      ``_Ran``, as ``mistakes.RAN``); None: none is looked for.
    output: The output's measure, when not the run's in ``mode``.
  """
  return (measures.RAN_WEIGHT_COUNT.but(why=why), measures.RAN_WEIGHT_SHAPES.but(why=why),
          output or measures.RAN_OUTPUT.named(mode).but(why=why))


def _ran_read(ran, expected):
  """The measures of a ``_Ran`` (and the run, for the why: lines); fills in the package's as expected."""
  count, shapes, output = expected
  expected.update({count: len(ran.expected_shapes), shapes: ran.expected_shapes,
                   output: np.asarray(ran.expected_output)})
  return read_each(ran, {count.name: lambda ran: len(ran.shapes),
                         shapes.name: lambda ran: ran.shapes, output.name: ran_output,
                         mistakes.RAN: lambda ran: ran})


def ran_output(ran):
  if ran.output is None:
    raise NotRun("not run: its weights are not the shapes of the package's (above)")
  return np.asarray(ran.output)


def _beside_package_case(name, build, build_package, inputs, mode, why=None):
  """A case that runs a layer beside the package's and compares them.

  The expected values come from the package's run, so the case computes
  them when it runs; they are filled into its expected values then.
  ``why`` is ``_ran_measures``'.
  """
  expected = dict.fromkeys(_ran_measures(mode, why))

  def call():
    return _ran_read(run_beside_package(build(), build_package, inputs), expected)
  return {'name': name, 'call': call, 'expected': expected}


def _package_tree(package_function, kwargs):
  """The package's layer for ``kwargs``, measured as the probes measure a printed layer."""
  return probes_layers.tree_measures(package_function(**kwargs))


def _tree_case(name, function, package_function, kwargs, tree_measure):
  """A layer printed beside the package's (``tree_measure``), its type, its sublayers' types."""
  expected = _package_tree(package_function, kwargs)
  parts = expected[recording.PARTS]
  reads = {tree_measure.name: str, measures.LAYER_TYPE.name: lambda layer: type(layer).__name__,
           measures.SUBLAYER_TYPES.name: sublayer_names,
           measures.SUBLAYER_COUNT.name: lambda layer: len(layer.sublayers)}
  return {'name': name, 'call': reading(reads, functools.partial(function, **kwargs)),
          'expected': {tree_measure: expected[recording.TREE],
                       measures.LAYER_TYPE: expected[recording.TYPE],
                       measures.SUBLAYER_TYPES: parts, measures.SUBLAYER_COUNT: len(parts)}}


def test_CausalAttention(CausalAttention):  # pylint: disable=invalid-name
  """Checks ``CausalAttention(d_feature, n_heads)`` (UNQ_C5).

  For 512 features in 8 heads and 16 in 4 (the grader's printed layers too,
  ``probes_layers.CAUSAL_ATTENTION_TREES``), beside the package's layer: the printed
  layer, its type (a ``tl.Serial``) and its four sublayers' types.

  Args:
    CausalAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = [_tree_case(name, CausalAttention, _attention.CausalAttention, kwargs,
                      measures.CAUSAL_ATTENTION_TREE)
           for name, kwargs in probes_layers.CAUSAL_ATTENTION_TREES]
  raised = {measures.RAISED_AS_ASSERT.name: lambda raised: raised[probes_layers.RAISED] is not None}
  cases.append({'name': recording.INDIVISIBLE_CASE,
                'call': reading(raised, functools.partial(probes_layers.indivisible, CausalAttention)),
                'expected': {measures.RAISED_AS_ASSERT: True}})
  cases += _probe_run_cases(probes_layers.causal_attention_runs, CausalAttention,
                            _attention.CausalAttention, mistakes.ran_last_dense_why)
  return run_cases(cases, recording.CAUSAL_ATTENTION, CausalAttention)


def _probe_run_cases(runs, function, package_function, why=None):
  """The grader's runs of a layer (``runs``, a probe's run list) at ``CHECK_SEED``.

  Each runs ``function`` beside the package's, with the same arguments and
  inputs. ``why`` is ``_ran_measures``'.
  """
  return [_beside_package_case(name, functools.partial(function, **options),
                               functools.partial(package_function, **package_options),
                               inputs, options['mode'], why)
          for (name, options, inputs), (_, package_options, _) in zip(
              runs(CHECK_SEED, function), runs(CHECK_SEED))]


# What a block (a list of layers) is measured by, as the package's printed block.
_BLOCK_READS = {
    measures.BLOCK_TREE.name: str, measures.BLOCK_LAYERS.name: len,
    measures.BLOCK_LAYER_TYPES.name: lambda block: [probes_layers.layer_kind(layer) for layer in block],
    measures.THEIR_SUBLAYERS.name: lambda block: [sublayer_names(layer) for layer in block],
    measures.BLOCK_SUBLAYER_COUNTS.name: lambda block: [len(layer.sublayers) for layer in block],
}


def test_DecoderBlock(DecoderBlock):  # pylint: disable=invalid-name
  """Checks ``DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)`` (UNQ_C6).

  Two sizes (``probes_layers.DECODER_BLOCK_TREES``), beside the package's block: the
  printed list of layers, that it holds two ``tl.Residual`` (the attention and
  feed-forward residuals) and what each is made of.

  Args:
    DecoderBlock: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for name, kwargs in probes_layers.DECODER_BLOCK_TREES:
    expected = _package_tree(_model.DecoderBlock, kwargs)
    parts = expected[recording.THEIR_SUBLAYERS]  # Each residual: Branch (a Serial), Add.
    cases.append({'name': name,
                  'call': reading(_BLOCK_READS, functools.partial(DecoderBlock, **kwargs)),
                  'expected': {measures.BLOCK_TREE: expected[recording.TREE],
                               measures.BLOCK_LAYERS: len(expected[recording.PARTS]),
                               measures.BLOCK_LAYER_TYPES: expected[recording.PARTS],
                               measures.THEIR_SUBLAYERS: parts,
                               measures.BLOCK_SUBLAYER_COUNTS: [len(names) for names in parts]}})
  # Each mode with tl.Relu, then tl.FastGelu: ff_activation is used, not a Relu written in.
  cases += _probe_run_cases(probes_layers.decoder_block_runs, DecoderBlock, _model.DecoderBlock)
  return run_cases(cases, recording.DECODER_BLOCK, DecoderBlock)


@functools.cache
def _package_exercise_model():
  """The package's exercise model, traced as the probes trace it (once a process)."""
  return probes_layers.exercise_model_measures(_model.TransformerLM)


def exercise_weights():
  """How many numbers the package's exercise model holds (316,336)."""
  return _number_of_weights(_package_exercise_model())


def _number_of_weights(traced):
  """How many numbers the traced model's weights hold (``probes_layers.exercise_model_measures``)."""
  return sum(int(np.prod(shape)) for shape in traced[recording.SHAPES_OF_WEIGHTS])


def test_TransformerLM(TransformerLM):  # pylint: disable=invalid-name
  """Checks ``TransformerLM(vocab_size, d_model, d_ff, n_layers, n_heads, ...)`` (UNQ_C7).

  Two one-block models (``probes_layers.TRANSFORMER_TREES``), beside the package's:
  the printed layer, its type (a ``tl.Serial``) and its nine sublayers'
  types. Then the exercise's model (d_model=4, d_ff=16, one block, two
  heads) is traced: it has 316,336 weights and returns a score for each of
  the 33,300 ids at each position. Beside them, its signature's defaults
  are the course's (``runner.kept_cases``, ``contract/signature.py``: ``mode='train'``, ...).

  Args:
    TransformerLM: The function to check.

  Returns:
    int: the number of failed cases.
  """
  # The course's one-block models; the grader prints three blocks too.
  cases = [_tree_case(name, TransformerLM, _model.TransformerLM, kwargs,
                      measures.TRANSFORMER_TREE)
           for name, kwargs in probes_layers.TRANSFORMER_TREES if kwargs['n_layers'] == 1]
  traced = {measures.WEIGHT_COUNT.name: _number_of_weights,
            measures.OUTPUT_SHAPE.name: lambda traced: tuple(traced[recording.OUTPUT_SHAPE])}
  cases.append({'name': recording.EXERCISE_MODEL_CASE,
                'call': reading(traced, functools.partial(probes_layers.exercise_model_measures,
                                                          TransformerLM)),
                'expected': {measures.WEIGHT_COUNT: exercise_weights(), measures.OUTPUT_SHAPE:
                             tuple(_package_exercise_model()[recording.OUTPUT_SHAPE])}})
  # Two blocks, each with weights of its own, in train and eval mode; then predict mode
  # on the eval run's model and ids.
  cases += _probe_run_cases(probes_layers.transformer_runs, TransformerLM, _model.TransformerLM,
                            mistakes.ran_model_why)
  _, options, ids = probes_layers.transformer_runs(CHECK_SEED)[-1]
  arguments = {k: v for k, v in options.items() if k not in ('mode', 'max_len')}
  cases.append(_step_by_step_case(TransformerLM, arguments, ids))
  return run_cases(cases, recording.TRANSFORMER_LM, TransformerLM)


def _swap_in_cache(layer, max_len):
  """Replaces each 'DotProductAttn' sublayer by the package's cached attention.

  A course-style ``CausalAttention`` keeps no cache: one token a call, it
  would attend only to itself. With the package's cache in its place, the
  rest of the learner's model (ShiftRight, PositionalEncoding and every
  weight) decodes as it would with a cache of its own.
  """
  sublayers = getattr(layer, '_sublayers', None) or []
  for i, sublayer in enumerate(sublayers):
    if sublayer.name == 'DotProductAttn':
      sublayers[i] = _attention.CachedDotProductAttention(max_len)
    else:
      _swap_in_cache(sublayer, max_len)


def _step_by_step_case(TransformerLM, arguments, ids):  # pylint: disable=invalid-name
  """Decodes with the learner's predict-mode model one token a call.

  From an empty state, token by token, the learner's model (with the
  package's attention cache swapped in, see ``_swap_in_cache``) must give
  the package's eval-mode output on the whole sequence, same weights.
  """
  expected = dict.fromkeys(_ran_measures('predict', mistakes.ran_model_why,
                                        measures.DECODED_OUTPUT.but(why=mistakes.decoded_model_why)))

  def call():
    model = TransformerLM(**probes_layers.with_max_len(TransformerLM, arguments, 'predict'))
    if not isinstance(model, tl.Layer):
      raise probes_layers.not_a_layer(model)
    _swap_in_cache(model, 16)
    package_weights, expected_shapes, expected_output, expected_tree = _package_run(
        functools.partial(_model.TransformerLM, **dict(arguments, mode='eval', max_len=16)),
        ids)
    rng = fastmath.random.get_prng(recording.RUN_SEED)
    model.init(trax.shapes.signature(ids[:, :1]), rng=rng)
    shapes = _shapes(probes_layers.flat_weights(model))
    output = None
    if shapes == expected_shapes:
      weights, _ = tl.unflatten_weights_and_state(
          package_weights, (), (model.weights, model.state), weights_only=True)
      state = model.state
      shifted = np.concatenate([np.zeros_like(ids[:, :1]), ids[:, :-1]], axis=1)
      steps = []
      for position in range(ids.shape[1]):  # One token a call: (B, 1) -- (B, 1, V).
        step, state = model.pure_fn(shifted[:, position:position + 1], weights, state, rng)
        steps.append(np.asarray(step))
      output = np.concatenate(steps, axis=1)  # (B, L, V)
    return _ran_read(_Ran(shapes, expected_shapes, output, expected_output,
                          probes_layers.sublayer_identities(model), str(model), expected_tree, model),
                     expected)

  return {'name': f"{recording.TRANSFORMER_LM}({probes_layers.described(arguments)}, mode='predict') on "
                  f'ids {ids.shape}, one token a call',
          'call': call, 'expected': expected}
