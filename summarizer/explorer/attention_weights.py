"""The attention weights of a trained model's decoder blocks, read off its layers.

The explorer's view into the model: the layers before a block run as they do
in the model; the block's queries and keys then go through the course's
``DotProductAttention`` with the identity matrix as values, which returns
the softmax weights themselves. Where each layer sits is
``summarizer.inference.layout``'s to say.
"""

from jax import numpy as jnp
import numpy as np

from summarizer._trax import fastmath
from summarizer.attention import DotProductAttention, causal_mask
from summarizer.inference import layout

# attention_weights rounds lengths up to a multiple of this (as decoding does).
_SHAPE_STEP = 64


def attention_weights(model, tokens, block=-1, rows=None):
  """Returns the attention weights of decoder blocks of a trained model.

  The layers before a block run as they do in the model; the block's
  queries and keys then go through ``DotProductAttention`` with the identity
  matrix as values, which returns the softmax weights themselves.

  Args:
    model: A ``TransformerLM`` in 'eval' mode, with weights.
    tokens: Token ids (B, L), as the model reads them (it shifts them right:
      query position p sees the tokens before p, at positions 1..p).
    block: Which decoder block, counted from 0 (negative: from the end), or
      None for every block, from one pass through the model.
    rows: Which query positions to return (a slice or index array; None: all
      L). Keys are always all L positions.

  Returns:
    A numpy array (B, n_heads, R, L) for one block, (B, n_blocks, n_heads,
    R, L) for every block: row r is what query position ``rows[r]`` attends
    to (R = L when ``rows`` is None).
  """
  blocks = layout.decoder_blocks(model)
  n_blocks = len(blocks)
  if block is not None and not -n_blocks <= block < n_blocks:
    raise IndexError(f'block {block} of a model with {n_blocks} blocks')
  wanted = range(n_blocks) if block is None else [block % n_blocks]
  # An explicit rng: a layer's own may be left over from a jitted call.
  rng = fastmath.random.get_prng(0)
  batch, length = np.shape(tokens)
  positions = model.sublayers[layout.POSITIONAL_ENCODING]
  x, query_rows, padded_length = _padded(tokens, rows, getattr(positions, '_max_len', length))
  n_rows = len(np.arange(length)[slice(None) if rows is None else rows])
  identity = jnp.eye(padded_length, dtype=jnp.float32)[None]  # (1, P, P)
  mask = causal_mask(padded_length)[:, query_rows]        # (1, R', P)
  for layer in model.sublayers[:layout.LAYERS_BEFORE_BLOCKS]:
    x = layer(x, rng=rng)                                 # (B, P, d_model)
  found = []
  for index in range(max(wanted) + 1):
    attention_residual, feed_forward_residual = blocks[index]
    if index in wanted:
      norm, attention = layout.attention_of(attention_residual)
      queries, keys, _ = attention.sublayers[0](norm(x, rng=rng), rng=rng)  # each (B*H, P, Dh)
      weights = DotProductAttention(queries[:, query_rows], keys, identity, mask)  # (B*H, R', P)
      weights = np.asarray(weights).reshape(batch, -1, len(query_rows), padded_length)  # (B, H, R', P)
      found.append(weights[:, :, :n_rows, :length])       # (B, H, R, L)
    if index < max(wanted):
      x = feed_forward_residual(attention_residual(x, rng=rng), rng=rng)  # (B, P, d_model)
  if block is not None:
    return found[0]
  return np.stack(found, axis=1)                          # (B, n_blocks, H, R, L)


def _padded(tokens, rows, max_len):
  """Pads the tokens and the query rows to multiples of ``_SHAPE_STEP``.

  Shapes rounded up, so that the layers' compiled forms (one per shape) serve
  text after text: tokens after the last change no earlier position's
  attention (it is causal), and repeated rows are dropped at the end.

  Returns:
    (tokens (B, P), query rows (R',), P).
  """
  x = np.asarray(tokens, np.int32)                        # (B, L)
  length = x.shape[1]
  query_rows = np.arange(length)[slice(None) if rows is None else rows]  # (R,)
  n_rows = len(query_rows)
  padded_length = max(length, min(-(-length // _SHAPE_STEP) * _SHAPE_STEP, max_len))
  x = np.pad(x, ((0, 0), (0, padded_length - length)))   # (B, P)
  query_rows = np.concatenate([query_rows, np.full(  # (R',)
      -n_rows % _SHAPE_STEP, query_rows[-1] if n_rows else 0, query_rows.dtype)])
  return x, query_rows, padded_length
