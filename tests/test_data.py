"""Tokens, the joint sequence and its weights, buckets, the vocabulary builder."""


import numpy as np

from summarizer import data

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
