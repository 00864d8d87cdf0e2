"""Where a TransformerLM's layers and weight arrays sit, and how a built model gets its weights.

A checkpoint keeps a model's weights as one flat list of arrays, in the order
of its layers. This module is the one place that knows that order and where
the layers sit in ``summarizer.model.TransformerLM``; the reader of model
directories, the fast decoder and the explorer ask here. ``set_weights``
gives a freshly built model its arrays without drawing random ones first.
"""

from jax import numpy as jnp
import numpy as np

from summarizer._trax import fastmath, tl, trax
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM

# A TransformerLM's layers: ShiftRight, Embedding, Dropout, PositionalEncoding,
# two residuals a block (attention, feed-forward), LayerNorm, Dense, LogSoftmax.
LAYERS_BEFORE_BLOCKS = 4
LAYERS_AFTER_BLOCKS = 3
POSITIONAL_ENCODING = 3  # Its weights: the encodings (max_len, d_model).
# Its weights, one entry a layer (the tree ``model.weights``): the embedding
# (V, d_model) is the second layer's, the projection to the vocabulary the
# second-to-last layer's.
EMBEDDING_LAYER, OUTPUT_LAYER = 1, -2
# Its weights flattened (a checkpoint's order): the embedding (V, d) and the
# positions (max_len, d); 16 arrays a block (layer norm, q, k, v and output,
# layer norm, two dense layers, the first (d, d_ff)); a final layer norm and
# the projection to the vocabulary.
WEIGHTS_BEFORE_BLOCKS, WEIGHTS_PER_BLOCK, WEIGHTS_AFTER_BLOCKS = 2, 16, 4
FLAT_EMBEDDING, FLAT_POSITIONS = 0, 1
FIRST_FF_KERNEL = WEIGHTS_BEFORE_BLOCKS + 12


def decoder_blocks(model):
  """Returns a TransformerLM's blocks: [(attention residual, feed-forward residual)]."""
  layers = model.sublayers[LAYERS_BEFORE_BLOCKS:len(model.sublayers) - LAYERS_AFTER_BLOCKS]
  return list(zip(layers[0::2], layers[1::2]))


def attention_of(attention_residual):
  """Returns (LayerNorm, CausalAttention) of a block's attention residual.

  ``tl.Residual`` wraps the block's own path, ``[LayerNorm, CausalAttention,
  Dropout]`` (``DecoderBlock``), in a branch and an add; the path is the
  Serial inside it that starts with a LayerNorm.
  """
  pending = [attention_residual]
  while pending:
    layer = pending.pop(0)
    # By name: Trax's shape-checking decorator makes tl.LayerNorm another class.
    if layer.name == 'Serial' and layer.sublayers and layer.sublayers[0].name == 'LayerNorm':
      return layer.sublayers[0], layer.sublayers[1]
    pending += layer.sublayers
  raise ValueError(f'{attention_residual.name}: no [LayerNorm, CausalAttention] path inside')


def weight_shapes(config):
  """Returns the shapes of a ``TransformerLM``'s flat weights for ``config``, without drawing them."""
  model = TransformerLM(**config.model_kwargs(), mode='eval')
  signature = trax.shapes.ShapeDtype((1, 1), np.int32)
  weights_signature, _ = fastmath.abstract_eval(model.init)(signature)
  flat, _ = tl.flatten_weights_and_state(weights_signature, ())
  return [tuple(w.shape) for w in flat]


def check_shapes(shapes, expected):
  """Raises ValueError unless the ``shapes`` of flat weights are exactly the ``expected`` ones."""
  if len(shapes) != len(expected):
    raise ValueError(f'{len(shapes)} weight arrays where the model has {len(expected)}')
  for shape, wanted in zip(shapes, expected):
    if tuple(shape) != tuple(wanted):
      raise ValueError(f'a weight of shape {tuple(shape)} where the model '
                       f'has {tuple(wanted)}')


def built(config, weights, mode='eval', where='the model', **overrides):
  """Returns a ``TransformerLM`` of ``config`` in ``mode``, given ``weights``.

  Args:
    config: Its ``Config``.
    weights: Its flat list of weight arrays (a checkpoint's order).
    mode: 'train', 'eval' or 'predict'.
    where: What an error names (the model directory).
    **overrides: ``TransformerLM`` arguments other than the config's (a
      predict-mode model's ``max_len``).

  Raises:
    SummarizerError: the weights do not fit the model, naming ``where``.
  """
  model = TransformerLM(**dict(config.model_kwargs(), **overrides), mode=mode)
  try:
    set_weights(model, weights)
  except ValueError as e:
    raise SummarizerError(f'{where}: cannot load the weights ({e})') from None
  return model


def set_weights(model, weights):
  """Gives ``model`` these weights and its initial state, without a random init.

  Trax's ``init`` (and ``init_from_file``, which calls it) draws every weight
  at random first, one compiled jax call per shape: 2.7 s of the summarize
  command's start, for numbers that are then thrown away. Here the structure
  comes from an abstract trace instead, and the state is what Trax's init
  gives (``initial_state``).

  Args:
    model: A ``TransformerLM`` that has not been initialised.
    weights: Its weights, as a flat list of arrays (a checkpoint's order) or
      as the tree of a model of the same architecture.

  Raises:
    ValueError: if the arrays are not as many, or not the shapes, the model
      needs.
  """
  signature = trax.shapes.ShapeDtype((1, 1), np.int32)  # Shapes do not depend on it.
  weights_signature, state_signature = fastmath.abstract_eval(model.init)(signature)
  _forget_rngs(model)
  flat, _ = tl.flatten_weights_and_state(weights, ())
  expected, _ = tl.flatten_weights_and_state(weights_signature, ())
  check_shapes([np.shape(array) for array in flat], [w.shape for w in expected])
  # On the device once: numpy arrays would be copied there again at every call
  # (for the shipped model, 15 MB a token: a decoding step took 2.0 ms, not 1.3).
  flat = [jnp.asarray(array) for array in flat]
  model.weights, _ = tl.unflatten_weights_and_state(
      flat, (), (weights_signature, state_signature), weights_only=True)
  model.state = initial_state(model, state_signature)


def initial_state(layer, state_signature):
  """Returns the state Trax's init gives ``layer``, without drawing weights.

  In ``TransformerLM`` that is zeros (empty key/value caches and position
  counters in predict mode), but for Dropout, whose state is its rate: zeros
  there would switch dropout off in training.

  Args:
    layer: A layer of the model (the model itself at the top).
    state_signature: Its state's shapes and dtypes, from an abstract init.
  """
  if isinstance(layer, tl.Dropout):
    layer.init_weights_and_state(None)  # Sets the rate; reads no input.
    return layer.state
  if layer.sublayers:  # A combinator's state is its sublayers', in order.
    return tuple(initial_state(sublayer, signature)
                 for sublayer, signature in zip(layer.sublayers, state_signature))
  return fastmath.nested_map(lambda s: np.zeros(s.shape, s.dtype), state_signature)


def _forget_rngs(layer):
  """Drops the random keys an abstract trace left in ``layer`` and its sublayers.

  Each layer then makes a fresh key from its seed when it first needs one.
  (Trax's ``weights_and_state_signature`` instead restores the keys by
  splitting them layer by layer: another 0.8 s of compiling at start.)
  """
  layer._rng = None  # pylint: disable=protected-access
  for sublayer in layer.sublayers:
    _forget_rngs(sublayer)
