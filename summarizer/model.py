"""The GPT-2-style Transformer decoder of the course: a language model.

Read top to bottom: the embedding with positions, one decoder block (attention
then feed-forward, each a pre-norm residual), and the full ``TransformerLM``.
It is trained on ``article + [EOS, SEP] + summary + [EOS]`` and summarises by
continuing a text after the separator.
"""

import numpy as np

from summarizer._trax import tl
from summarizer.attention import CausalAttention


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
  causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)  # (B, L, d_model)
  # Beyond the course: in predict mode, a cache of max_len positions.
  if mode == 'predict':
    causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode, max_len=max_len)
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
      DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
      for _ in range(n_layers)]
  # Beyond the course: in predict mode, caches of max_len positions.
  if mode == 'predict':
    decoder_blocks = [
        DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation, max_len=max_len)
        for _ in range(n_layers)]
  return tl.Serial(
      tl.ShiftRight(mode=mode),  # Position i predicts token i from tokens < i.
      positional_encoder,
      decoder_blocks,
      tl.LayerNorm(),
      tl.Dense(vocab_size),      # (B, L, vocab_size)
      tl.LogSoftmax(),
  )


# Where the layers sit inside a TransformerLM: the one place that knows. The
# fast decoder, the explorer and the reader of the course's checkpoint ask
# here.
#
# Its layers: ShiftRight, Embedding, Dropout, PositionalEncoding, two
# residuals a block, LayerNorm, Dense, LogSoftmax.
LAYERS_BEFORE_BLOCKS = 4
LAYERS_AFTER_BLOCKS = 3
POSITIONAL_ENCODING = 3  # Its weights: the encodings (max_len, d_model).
# Its weights, flattened (a checkpoint's order): the embedding (V, d) and
# positions (max_len, d); 16 arrays a block (layer norm, q, k, v and output,
# layer norm, two dense layers, the first (d, d_ff)); a final layer norm and
# the projection to the vocabulary.
WEIGHTS_BEFORE_BLOCKS, WEIGHTS_PER_BLOCK, WEIGHTS_AFTER_BLOCKS = 2, 16, 4
FIRST_FF_KERNEL = WEIGHTS_BEFORE_BLOCKS + 12
FLAT_POSITIONS = 1  # The positional encodings (max_len, d_model) in the flat list.


def scaled_embedding(weights, scale):
  """Returns a TransformerLM's weights with the embedding multiplied by ``scale``.

  Trax initialises embeddings at a norm about 1, under positional encodings
  of norm about sqrt(d_model / 2): scaled up, a token's identity is not
  drowned by its position at the start of training (the original
  Transformer multiplies its embeddings by sqrt(d_model) for this).
  """
  weights = list(weights)
  weights[1] = weights[1] * scale                  # (V, d_model)
  return tuple(weights)


def tied_output(weights):
  """Returns a TransformerLM's weights with the output projection set to the embedding's transpose.

  An initialisation, not a tie: the two train apart afterwards. A model
  that starts so scores a token by how alike its embedding is to the
  residual stream, so attention that moves a token's embedding along
  (copying it) raises that token at once, for every token alike.

  Args:
    weights: The weights of a ``TransformerLM`` (one entry a sublayer).
  """
  weights = list(weights)
  embedding = weights[1]                           # (V, d_model)
  kernel, bias = weights[-2]                       # Dense: kernel (d_model, V), bias (V,)
  # At the kernel's own scale, so the first logits are as spread as Trax's.
  scale = float(np.std(kernel) / max(float(np.std(embedding)), 1e-12))
  weights[-2] = (embedding.T * scale, bias)        # (d_model, V)
  return tuple(weights)


def decoder_blocks(model):
  """Returns a TransformerLM's blocks: [(attention residual, feed-forward residual)]."""
  layers = model.sublayers[LAYERS_BEFORE_BLOCKS:len(model.sublayers) - LAYERS_AFTER_BLOCKS]
  return list(zip(layers[0::2], layers[1::2]))


def attention_of(attention_residual):
  """Returns (LayerNorm, CausalAttention) of a block's attention residual.

  Residual = Serial[Branch[Select, Parallel[None, Serial[LayerNorm,
  CausalAttention, Dropout]]], Add]: the attention's own path is the
  Parallel's second branch.
  """
  residual_path = attention_residual.sublayers[0].sublayers[1].sublayers[1]
  norm, attention = residual_path.sublayers[:2]
  return norm, attention
