"""The course's attention functions, checked like its "Expected Output" cells."""

import numpy as np
import pytest

from summarizer import (CausalAttention, DotProductAttention,
                        compute_attention_heads_closure,
                        compute_attention_output_closure,
                        dot_product_self_attention)
from summarizer._trax import trax


def reference_attention(q, k, v, mask):
  """Float64 NumPy softmax attention, written independently of the package."""
  q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
  scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
  scores = np.where(mask, scores, -np.inf)
  scores -= scores.max(axis=-1, keepdims=True)
  weights = np.exp(scores)
  weights /= weights.sum(axis=-1, keepdims=True)
  return weights @ v


def test_dot_product_attention_course_example():
  q = np.array([[[1, 0, 0], [0, 1, 0]]])
  k = np.array([[[1, 2, 3], [4, 5, 6]]])
  v = np.array([[[0, 1, 0], [1, 0, 1]]])
  mask = np.array([[True, True], [False, True]])
  out = DotProductAttention(q, k, v, mask)
  assert out.dtype == np.float32
  np.testing.assert_allclose(
      out, [[[0.8496746, 0.15032545, 0.8496746], [1.0, 0.0, 1.0]]], atol=1e-6)


def test_fully_masked_row_weighs_every_position_one():
  # exp(-1e9 - logsumexp) with float32 rounding: weight 1 each, not 1/n.
  q = np.ones((1, 1, 2), np.float32)
  k = np.ones((1, 3, 2), np.float32)
  v = np.array([[[1., 0.], [0., 2.], [3., 0.]]], np.float32)
  out = DotProductAttention(q, k, v, np.zeros((1, 1, 3), bool))
  np.testing.assert_allclose(out, [[[4.0, 2.0]]])


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_dot_product_attention_matches_float64_reference(seed):
  rng = np.random.default_rng(seed)
  q, k, v = (rng.normal(size=(3, 5, 8)).astype(np.float32) for _ in range(3))
  mask = rng.random((3, 5, 5)) < 0.6
  mask[..., 0] = True  # No fully masked rows: the reference would give NaN.
  np.testing.assert_allclose(DotProductAttention(q, k, v, mask),
                             reference_attention(q, k, v, mask), atol=1e-5)


def test_self_attention_is_causal():
  rng = np.random.default_rng(3)
  q, k, v = (rng.normal(size=(2, 4, 6)).astype(np.float32) for _ in range(3))
  causal = np.tril(np.ones((4, 4), bool))[None]
  out = dot_product_self_attention(q, k, v)
  np.testing.assert_allclose(out, reference_attention(q, k, v, causal), atol=1e-5)
  # The first position can only see itself.
  np.testing.assert_allclose(out[:, 0], v[:, 0], atol=1e-6)


@pytest.mark.parametrize('n_heads,d_head', [(1, 4), (2, 3), (4, 8), (8, 2)])
def test_heads_split_and_merge(n_heads, d_head):
  batch, length = 3, 5
  x = np.arange(batch * length * n_heads * d_head, dtype=np.float32).reshape(
      batch, length, n_heads * d_head)
  heads = compute_attention_heads_closure(n_heads, d_head)(x)
  assert heads.shape == (batch * n_heads, length, d_head)
  # Head h of example b holds features h*Dh .. (h+1)*Dh - 1 at every position.
  for b in range(batch):
    for h in range(n_heads):
      np.testing.assert_array_equal(
          heads[b * n_heads + h], x[b, :, h * d_head:(h + 1) * d_head])
  merged = compute_attention_output_closure(n_heads, d_head)(heads)
  np.testing.assert_array_equal(merged, x)


def test_causal_attention_structure_and_causality():
  layer = CausalAttention(d_feature=8, n_heads=2, mode='eval')
  assert str(layer).split() == [
      'Serial[', 'Branch_out3[',
      '[Dense_8,', 'AttnHeads]', '[Dense_8,', 'AttnHeads]', '[Dense_8,', 'AttnHeads]',
      ']', 'DotProductAttn_in3', 'AttnOutput', 'Dense_8', ']']
  x = np.random.default_rng(4).normal(size=(2, 6, 8)).astype(np.float32)
  layer.init(trax.shapes.signature(x))
  y = layer(x)
  assert y.shape == (2, 6, 8)
  changed = x.copy()
  changed[:, 4:] += 1.0  # Changing the future leaves the past alone.
  y2 = layer(changed)
  np.testing.assert_allclose(y[:, :4], y2[:, :4], atol=1e-6)
  assert not np.allclose(y[:, 4:], y2[:, 4:])


def test_causal_attention_rejects_uneven_heads():
  with pytest.raises(AssertionError, match='multiple'):  # The course's assert.
    CausalAttention(d_feature=10, n_heads=4)
