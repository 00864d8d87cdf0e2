"""The GPT-2-style Transformer decoder of the course: a language model.

Read top to bottom: the embedding with positions, one decoder block (attention
then feed-forward, each a pre-norm residual), and the full ``TransformerLM``.
It is trained on ``article + [EOS, SEP] + summary + [EOS]`` and summarises by
continuing a text after the separator.
"""

import numpy as np

from summarizer._trax import fastmath, jnp, tl
from summarizer.attention import CausalAttention, DotProductAttention, causal_mask

# Layers of TransformerLM before its first decoder block: ShiftRight,
# Embedding, Dropout, PositionalEncoding.
_LAYERS_BEFORE_BLOCKS = 4
# attention_weights rounds lengths up to a multiple of this (as decoding does).
_SHAPE_STEP = 64


def PositionalEncoder(vocab_size, d_model, dropout, max_len, mode):
  """Token embedding, dropout and positional encoding (lab 2's helper).

  ``TransformerLM`` writes these layers out itself, as the course's exercise
  does; a test checks the two agree.

  Args:
    vocab_size: Number of token ids.
    d_model: Width of the embedding.
    dropout: Dropout rate (train mode only).
    max_len: Number of positions encoded.
    mode: 'train', 'eval' or 'predict'.

  Returns:
    A list of layers mapping token ids (B, L) to activations (B, L, d_model).
  """
  return [
      tl.Embedding(vocab_size, d_model),
      tl.Dropout(rate=dropout, mode=mode),
      tl.PositionalEncoding(max_len=max_len, mode=mode),
  ]


def FeedForward(d_model, d_ff, dropout, mode, ff_activation):
  """The position-wise feed-forward network, with its layer norm and dropouts.

  Lab 2's helper: ``DecoderBlock`` writes these layers out itself, as the
  course's exercise does; a test checks the two agree.

  Args:
    d_model: Width of the input and output.
    d_ff: Width of the hidden layer.
    dropout: Dropout rate (train mode only).
    mode: 'train', 'eval' or 'predict'.
    ff_activation: Activation layer class, such as ``tl.Relu``.

  Returns:
    A list of layers mapping (B, L, d_model) to (B, L, d_model).
  """
  return [
      tl.LayerNorm(),
      tl.Dense(d_ff),
      ff_activation(),
      tl.Dropout(rate=dropout, mode=mode),
      tl.Dense(d_model),
      tl.Dropout(rate=dropout, mode=mode),
  ]


def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation,
                 max_len=4096):
  """One decoder block: causal attention, then feed-forward, both residual.

  Args:
    d_model: Width of the residual stream.
    d_ff: Width of the feed-forward hidden layer.
    n_heads: Number of attention heads.
    dropout: Dropout rate (train mode only).
    mode: 'train', 'eval' or 'predict'.
    ff_activation: Activation layer class, such as ``tl.Relu``.
    max_len: Longest sequence the predict-mode attention cache holds.

  Returns:
    A list of two residual layers mapping (B, L, d_model) to (B, L, d_model).
  """
  causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode,
                                     max_len=max_len)  # (B, L, d_model)
  # The layers of FeedForward, written out as the course's exercise asks.
  feed_forward = [
      tl.LayerNorm(),
      tl.Dense(d_ff),                       # (B, L, d_ff)
      ff_activation(),
      tl.Dropout(rate=dropout, mode=mode),
      tl.Dense(d_model),                    # (B, L, d_model)
      tl.Dropout(rate=dropout, mode=mode),
  ]
  return [
      tl.Residual(tl.LayerNorm(), causal_attention,
                  tl.Dropout(rate=dropout, mode=mode)),
      tl.Residual(feed_forward),
  ]


def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6,
                  n_heads=8, dropout=0.1, max_len=4096, mode='train',
                  ff_activation=tl.Relu):
  """A Transformer language model that returns log-probabilities.

  Args:
    vocab_size: Number of token ids.
    d_model: Width of the residual stream.
    d_ff: Width of the feed-forward hidden layers.
    n_layers: Number of decoder blocks.
    n_heads: Number of attention heads.
    dropout: Dropout rate (train mode only).
    max_len: Longest sequence (positional encoding, predict-mode cache).
    mode: 'train', 'eval' or 'predict' (one token or span per call, cached).
    ff_activation: Activation layer class of the feed-forward layers.

  Returns:
    A layer mapping token ids (B, L) to log-probabilities (B, L, vocab_size)
    of the token at each position given the tokens before it.
  """
  # The layers of PositionalEncoder, written out as the course's exercise asks.
  positional_encoder = [
      tl.Embedding(vocab_size, d_model),                # (B, L, d_model)
      tl.Dropout(rate=dropout, mode=mode),
      tl.PositionalEncoding(max_len=max_len, mode=mode),
  ]
  # n_layers blocks, each built anew: each has weights of its own.
  decoder_blocks = [
      DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation,
                   max_len=max_len)
      for _ in range(n_layers)]
  return tl.Serial(
      tl.ShiftRight(mode=mode),  # Position i predicts token i from tokens < i.
      positional_encoder,
      decoder_blocks,
      tl.LayerNorm(),
      tl.Dense(vocab_size),      # (B, L, vocab_size)
      tl.LogSoftmax(),
  )


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
  layers = model.sublayers
  n_blocks = (len(layers) - _LAYERS_BEFORE_BLOCKS - 3) // 2  # 2 residuals a block.
  if block is not None and not -n_blocks <= block < n_blocks:
    raise IndexError(f'block {block} of a model with {n_blocks} blocks')
  wanted = range(n_blocks) if block is None else [block % n_blocks]
  # An explicit rng: a layer's own may be left over from a jitted call.
  rng = fastmath.random.get_prng(0)
  x = np.asarray(tokens, np.int32)                        # (B, L)
  batch, length = x.shape
  query_rows = np.arange(length)[slice(None) if rows is None else rows]  # (R,)
  n_rows = len(query_rows)
  # Shapes rounded up, so that the layers' compiled forms (one per shape) serve
  # text after text: tokens after the last change no earlier position's
  # attention (it is causal), and repeated rows are dropped at the end.
  max_len = getattr(layers[_LAYERS_BEFORE_BLOCKS - 1], '_max_len', length)
  padded_length = max(length, min(-(-length // _SHAPE_STEP) * _SHAPE_STEP, max_len))
  x = np.pad(x, ((0, 0), (0, padded_length - length)))   # (B, P)
  query_rows = np.concatenate([query_rows, np.full(  # (R',)
      -n_rows % _SHAPE_STEP, query_rows[-1] if n_rows else 0, query_rows.dtype)])
  identity = jnp.eye(padded_length, dtype=jnp.float32)[None]  # (1, P, P)
  mask = causal_mask(padded_length)[:, query_rows]        # (1, R', P)
  for layer in layers[:_LAYERS_BEFORE_BLOCKS]:
    x = layer(x, rng=rng)                                 # (B, P, d_model)
  found = []
  for index in range(max(wanted) + 1):
    attention_residual, feed_forward_residual = layers[
        _LAYERS_BEFORE_BLOCKS + 2 * index:_LAYERS_BEFORE_BLOCKS + 2 * index + 2]
    if index in wanted:
      # Residual = Serial[Branch[Select, Parallel[None, Serial[LayerNorm,
      # CausalAttention, Dropout]]], Add]: the attention's own path is the
      # Parallel's second branch.
      residual_path = attention_residual.sublayers[0].sublayers[1].sublayers[1]
      norm, attention = residual_path.sublayers[:2]
      queries, keys, _ = attention.sublayers[0](norm(x, rng=rng), rng=rng)  # each (B*H, P, Dh)
      weights = DotProductAttention(queries[:, query_rows], keys, identity, mask)  # (B*H, R', P)
      weights = np.asarray(weights).reshape(batch, -1, len(query_rows), padded_length)  # (B, H, R', P)
      found.append(weights[:, :, :n_rows, :length])       # (B, H, R, L)
    if index < max(wanted):
      x = feed_forward_residual(attention_residual(x, rng=rng), rng=rng)  # (B, P, d_model)
  if block is not None:
    return found[0]
  return np.stack(found, axis=1)                          # (B, n_blocks, H, R, L)
