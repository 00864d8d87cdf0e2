"""The GPT-2-style Transformer decoder of the course: a language model.

Read top to bottom: the embedding with positions, one decoder block (attention
then feed-forward, each a pre-norm residual), and the full ``TransformerLM``.
It is trained on ``article + [EOS, SEP] + summary + [EOS]`` and summarises by
continuing a text after the separator.
"""

from summarizer._trax import tl
from summarizer.attention import CausalAttention, set_cache_length
from summarizer.config import VOCAB_SIZE


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
  # Not in the exercise (beyond the course): predict mode's key/value cache holds max_len positions.
  if mode == 'predict':
    set_cache_length(causal_attention, max_len)
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


def TransformerLM(vocab_size=VOCAB_SIZE, d_model=512, d_ff=2048, n_layers=6,
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
  # Not in the exercise (beyond the course): predict mode's key/value caches hold max_len positions.
  if mode == 'predict':
    set_cache_length(decoder_blocks, max_len)
  return tl.Serial(
      tl.ShiftRight(mode=mode),  # Position i predicts token i from tokens < i.
      positional_encoder,
      decoder_blocks,
      tl.LayerNorm(),
      tl.Dense(vocab_size),      # (B, L, vocab_size)
      tl.LogSoftmax(),
  )
