"""Tokens, the joint sequence and its weights, buckets, the vocabulary builder."""


import itertools

import numpy as np

from summarizer import data, text

COURSE_SENTENCE = ('It was a sunny day when I went to the market to buy some '
                   'flowers. But I only found roses, not tulips.')


def test_joint_sequence_and_weights():
  joint, weights = data.joint_sequence([5, 6, 7], [8, 9])
  assert joint.tolist() == [5, 6, 7, 1, 0, 8, 9, 1]
  assert weights.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
  _, weights = data.joint_sequence([5], [8], article_loss_weight=0.5)
  assert weights.tolist() == [0.5, 0.5, 0.5, 1, 1]


def test_long_examples_are_dropped_or_cut():
  stream = [(np.arange(2, 12), np.array([3, 4]))]  # 10 + 2 + 3 = 15 tokens.
  assert list(data.PreprocessJoint(max_joint_length=12)(iter(stream))) == []
  (joint, targets, weights), = data.PreprocessJoint(12, truncate=True)(iter(stream))
  assert len(joint) == 12 and joint[-3:].tolist() == [3, 4, 1]
  assert (joint == targets).all() and weights.sum() == 3


def test_device_batch_sizes():
  assert data.device_batch_sizes([16, 8, 4, 2, 1], 2) == [16, 8, 4, 2, 2]
  assert data.device_batch_sizes([5], 4) == [8]


def test_the_last_buckets_batches_come_in_a_few_lengths():
  # Trax pads a batch past the last boundary only to its longest sequence: every
  # new length was a new XLA compilation, until a long run crashed.
  pairs = [(' '.join(['word'] * n), 'A summary.') for n in range(40, 200, 3)]  # 80-400 tokens
  batches = list(data.batches_of(pairs, boundaries=(16, 32), batch_sizes=(1, 1, 1)))
  lengths = {inputs.shape[1] for inputs, _, _ in batches}
  assert lengths and all(length % data.LAST_BUCKET_MULTIPLE == 0 for length in lengths)
  assert len(lengths) <= 4 < len(batches)
  for inputs, targets, weights in batches:  # The summary's weights survive; padding weighs 0.
    assert (inputs == targets).all()
    assert weights.sum() == len(text.tokenize('A summary.'))  # The summary and its EOS.
    assert inputs[0, -1] == 0 and weights[0, -1] == 0


def test_batches_within_the_boundaries_are_left_as_trax_pads_them():
  batch = (np.ones((2, 10), np.int32), np.ones((2, 10), np.int32), np.ones((2, 10), np.float32))
  assert data.PadLastBucket(16)(iter([batch])).__next__() is batch
  padded = next(data.PadLastBucket(8, multiple=4)(iter([batch])))
  assert [x.shape for x in padded] == [(2, 12)] * 3 and padded[2][:, 10:].sum() == 0


def _shuffled(seed, count=40):
  """A shuffled stream of ``count`` distinct short pairs (each its own batch)."""
  pairs = [(f'story number {i} of the town', f'town {i}') for i in range(count)]
  return data.batches_of(iter(pairs), boundaries=(64,), batch_sizes=(1, 1), shuffle=True,
                         seed=seed, n_devices=1)


def _ids(batches):
  return [tuple(batch[0][0]) for batch in batches]


def test_a_shuffled_stream_gives_the_same_batches_however_another_is_drawn_beside_it():
  alone = _ids(itertools.islice(_shuffled(3), 12))
  # Another shuffled stream started (and drawn from) after some of the first's batches, at
  # any step, as a run's plan samples the stories while its lessons are drawn.
  for start_other_at in (0, 1, 5, 9):
    first, other, seen = _shuffled(3), _shuffled(4), []
    for index in range(12):
      if index >= start_other_at:
        next(other)
      seen.append(next(first))
    assert _ids(seen) == alone, start_other_at
  # The shuffle is drawn: another seed orders the stories otherwise; numpy's global RNG is
  # left as it was.
  np.random.seed(11)
  before = np.random.get_state()[1].copy()
  assert _ids(itertools.islice(_shuffled(5), 12)) != alone
  assert (np.random.get_state()[1] == before).all()
