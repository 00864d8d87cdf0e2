"""attention_weights: the weights each block applies, read off a trained model."""

import jax
import numpy as np
import pytest

from summarizer import TransformerLM
from summarizer._trax import trax
from summarizer.config import EOS, SEP
from summarizer.explorer.attention_weights import attention_weights
from summarizer.inference import article, loaded_model

from .conftest import BUSINESS, blocks_and_heads, read
from test_model import SMALL, small_model, tokens


@pytest.mark.slow
def test_attention_weights_are_the_ones_the_block_applies():
  model = small_model('eval')
  x = tokens(batch=2, length=10)
  model.init(trax.shapes.signature(x))
  jax.jit(model.pure_fn)(x, model.weights, model.state, model.rng)  # Leaves tracers behind.
  weights = attention_weights(model, x, block=1)
  assert weights.shape == (2, SMALL['n_heads'], 10, 10)
  np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
  assert np.all(np.triu(weights, k=1) == 0)          # Causal: nothing from the future.
  # The same weights times the block's values give its attention core's output.
  rng = trax.fastmath.random.get_prng(0)
  layers = model.sublayers
  x_in = x
  for layer in layers[:6]:                            # Up to block 1's attention residual.
    x_in = layer(x_in, rng=rng)
  norm, attention = layers[6].sublayers[0].sublayers[1].sublayers[1].sublayers[:2]
  q, k, v = attention.sublayers[0](norm(x_in, rng=rng), rng=rng)
  core = np.asarray(attention.sublayers[1]((q, k, v), rng=rng))  # (B*H, L, Dh)
  np.testing.assert_allclose(weights.reshape(-1, 10, 10) @ np.asarray(v), core, atol=1e-5)
  assert not np.allclose(weights, attention_weights(model, x, block=0))


@pytest.mark.slow
def test_every_block_and_head_equals_a_numpy_computation():
  model = TransformerLM(vocab_size=50, d_model=16, d_ff=32, n_layers=3, n_heads=4,
                        max_len=128, mode='eval')
  tokens = np.random.default_rng(0).integers(2, 50, size=(2, 70)).astype(np.int32)
  model.init(trax.shapes.signature(tokens))
  expected = numpy_attention(model, tokens, n_heads=4)         # (2, 3, 4, 70, 70)
  every = attention_weights(model, tokens, block=None)
  assert every.shape == (2, 3, 4, 70, 70)
  np.testing.assert_allclose(every, expected, atol=2e-5)
  rows = attention_weights(model, tokens, block=None, rows=slice(60, 67))
  np.testing.assert_allclose(rows, expected[:, :, :, 60:67], atol=2e-5)
  np.testing.assert_allclose(attention_weights(model, tokens, block=-2, rows=[3, 9]),
                             expected[:, 1][:, :, [3, 9]], atol=2e-5)
  assert not np.allclose(expected[:, 0], expected[:, 1], atol=1e-3)  # Blocks differ.


@pytest.mark.slow
def test_rows_sum_to_one_over_what_the_query_sees_in_the_shipped_model():
  loaded = loaded_model.load()
  ids, _ = article.article_ids(loaded, read(BUSINESS), 64)
  tokens = np.array([ids[:100] + [EOS, SEP] + ids[:20]], np.int32)  # (1, 122)
  weights = attention_weights(loaded.model, tokens, block=None, rows=slice(100, 122))[0]
  assert weights.shape == (*blocks_and_heads(), 22, 122)
  np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
  for r, position in enumerate(range(100, 122)):
    assert np.all(weights[:, :, r, position + 1:] == 0)       # Nothing from the future.
    assert np.all(weights[:, :, r, :position + 1] > 0)


def _walk(layer):
  yield layer
  for sublayer in layer.sublayers:
    yield from _walk(sublayer)


def _of_type(layer, name):
  return [l for l in _walk(layer) if type(l).__name__ == name]


def _layer_norm(x, layer):
  scale, bias = (np.asarray(w) for w in layer.weights)
  mean = x.mean(-1, keepdims=True)
  variance = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(variance + 1e-6) * scale + bias


def _dense(x, layer):
  w, b = (np.asarray(v) for v in layer.weights)
  return x @ w + b


def numpy_attention(model, tokens, n_heads):
  """Every block's attention (B, n_blocks, H, L, L), computed in NumPy from the weights."""
  layers = model.sublayers
  batch, length = tokens.shape
  shifted = np.pad(tokens, ((0, 0), (1, 0)))[:, :-1]          # ShiftRight
  x = np.asarray(layers[1].weights)[shifted]                  # Embedding (B, L, d)
  x = x + np.asarray(layers[3].weights).reshape(-1, x.shape[-1])[:length]  # positions
  blocks = []
  for attention_residual, feed_forward in zip(layers[4:-3:2], layers[5:-3:2]):
    norm, = _of_type(attention_residual, 'LayerNorm')
    dense_q, dense_k, dense_v, dense_out = _of_type(attention_residual, 'Dense')
    h = _layer_norm(x, norm)

    def heads(y):
      return y.reshape(batch, length, n_heads, -1).transpose(0, 2, 1, 3)  # (B, H, L, Dh)

    q, k, v = heads(_dense(h, dense_q)), heads(_dense(h, dense_k)), heads(_dense(h, dense_v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])  # (B, H, L, L)
    scores = np.where(np.tril(np.ones((length, length), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    blocks.append(weights)
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)  # (B, L, d)
    x = x + _dense(mixed, dense_out)
    norm, = _of_type(feed_forward, 'LayerNorm')
    dense_in, dense_back = _of_type(feed_forward, 'Dense')
    x = x + _dense(np.maximum(_dense(_layer_norm(x, norm), dense_in), 0), dense_back)
  return np.stack(blocks, axis=1)
