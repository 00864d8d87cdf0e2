"""TransformerLM: the course's structure, Trax's numbers, all three modes."""

import gzip
import pickle

import jax
import numpy as np
import pytest

from summarizer import DecoderBlock, TransformerLM
from summarizer._trax import tl, trax

SMALL = dict(vocab_size=50, d_model=16, d_ff=32, n_layers=2, n_heads=4,
             max_len=64)


def small_model(mode, **overrides):
  return TransformerLM(**dict(SMALL, **overrides), mode=mode)


def tokens(batch=2, length=12, seed=0):
  rng = np.random.default_rng(seed)
  return rng.integers(2, SMALL['vocab_size'], size=(batch, length)).astype(np.int32)


def test_course_structure_is_printed():
  text = str(TransformerLM(mode='eval')).split()
  assert text[:9] == ['Serial[', 'Serial[', 'ShiftRight(1)', ']',
                      'Embedding_33300_512', 'Dropout', 'PositionalEncoding',
                      'Serial[', 'Branch_out2[']
  assert text[-4:] == ['LayerNorm', 'Dense_33300', 'LogSoftmax', ']']
  assert text.count('DotProductAttn_in3') == 6
  assert text.count('Dense_2048') == 6
  assert text.count('AttnHeads]') == 18


def test_decoder_block_is_two_residuals():
  block = DecoderBlock(16, 32, 4, 0.1, 'train', tl.Relu)
  assert len(block) == 2
  attention, feed_forward = (str(layer).split() for layer in block)
  assert attention[-2:] == ['Add_in2', ']'] and 'DotProductAttn_in3' in attention
  assert feed_forward[4:11] == ['LayerNorm', 'Dense_32', 'Serial[', 'Relu', ']',
                                'Dropout', 'Dense_16']


@pytest.mark.slow
def test_output_is_log_probabilities_of_next_token():
  model = small_model('eval')
  x = tokens()
  model.init(trax.shapes.signature(x))
  log_probs = model(x)
  assert log_probs.shape == (2, 12, SMALL['vocab_size'])
  np.testing.assert_allclose(np.exp(log_probs).sum(-1), 1.0, atol=1e-5)
  # Shifted right: position i does not depend on token i.
  changed = x.copy()
  changed[:, 5] = (changed[:, 5] + 1) % SMALL['vocab_size']
  np.testing.assert_allclose(model(changed)[:, :6], log_probs[:, :6], atol=1e-5)


def test_same_numbers_as_trax_transformer_lm():
  ours = small_model('eval')
  theirs = trax.models.TransformerLM(**SMALL, mode='eval')
  x = tokens(seed=1)
  ours.init(trax.shapes.signature(x))
  theirs.init(trax.shapes.signature(x))
  our_leaves = jax.tree_util.tree_leaves(ours.weights)
  their_leaves, structure = jax.tree_util.tree_flatten(theirs.weights)
  assert [w.shape for w in our_leaves] == [w.shape for w in their_leaves]
  theirs.weights = jax.tree_util.tree_unflatten(structure, our_leaves)
  logits = np.asarray(theirs(x), np.float64)
  their_log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  np.testing.assert_allclose(ours(x), their_log_probs, atol=1e-4)


@pytest.mark.slow
def test_predict_mode_matches_eval_mode():
  evaluator = small_model('eval')
  x = tokens(seed=2)
  evaluator.init(trax.shapes.signature(x))
  expected = evaluator(x)
  # Predict mode does not shift: feed the shifted sequence, one token or span
  # per call, and the cache must give the eval outputs back.
  shifted = np.pad(x[:, :-1], ((0, 0), (1, 0)))
  for spans in ([(i, i + 1) for i in range(12)], [(0, 7), (7, 8), (8, 12)]):
    predictor = small_model('predict')
    predictor.init(trax.shapes.ShapeDtype((2, 1), np.int32))
    predictor.weights = evaluator.weights
    got = np.concatenate([predictor(shifted[:, a:b]) for a, b in spans], axis=1)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_checkpoint_with_weights_in_the_pickle_loads_weights_only(tmp_path):
  # The course ships its model as one pickle holding the flat weights.
  model = small_model('eval')
  x = tokens(seed=3)
  model.init(trax.shapes.signature(x))
  flat_weights, flat_state = tl.flatten_weights_and_state(model.weights,
                                                          model.state)
  path = tmp_path / 'model.pkl.gz'
  with gzip.open(path, 'wb') as f:
    pickle.dump({'flat_weights': flat_weights, 'flat_state': flat_state,
                 'input_signature': trax.shapes.signature(x)}, f)
  fresh = small_model('eval')
  fresh.init_from_file(str(path), weights_only=True)
  np.testing.assert_allclose(fresh(x), model(x), atol=1e-6)


@pytest.mark.slow
def test_training_steps_lower_the_loss():
  model = small_model('train', dropout=0.0)
  x = tokens(batch=4, length=16, seed=4)
  batch = (x, x, np.ones_like(x, np.float32))
  task = trax.supervised.training.TrainTask(
      labeled_data=iter(lambda: batch, None), loss_layer=tl.WeightedCategoryCrossEntropy(),
      optimizer=trax.optimizers.Adam(0.01))
  loop = trax.supervised.training.Loop(model, [task])
  before = _loss(model, batch)
  loop.run(20)
  after = _loss(model, batch)
  assert after < before - 0.5, (before, after)


def _loss(model, batch):
  """Weighted cross-entropy of a batch, computed in NumPy."""
  inputs, targets, weights = batch
  log_probs = np.asarray(model(inputs))
  picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
  return float(-(picked * weights).sum() / weights.sum())
