"""A source's batches: its pairs, the lessons, the course's pipeline."""

import itertools

import numpy as np
import pytest

from summarizer import data
from summarizer.config import BATCH_SIZES, BOUNDARIES
from summarizer.corpus import streams
from summarizer.errors import SummarizerError


def test_batches_follow_the_course_layout():
  for inputs, targets, weights in itertools.islice(
      streams.batches('news', 'train', n_devices=2), 6):
    assert inputs.dtype == np.int32 and (inputs == targets).all()
    length = inputs.shape[1]
    assert length in BOUNDARIES or length > BOUNDARIES[-1]
    bucket = BOUNDARIES.index(length) if length in BOUNDARIES else len(BOUNDARIES)
    assert inputs.shape[0] == -(-BATCH_SIZES[bucket] // 2) * 2  # Even for 2 devices.
    for row, w in zip(inputs, weights):
      sep = int(np.flatnonzero(row == 1)[0])  # The article's EOS.
      assert row[sep + 1] == 0 and not w[:sep + 2].any()
      end = int(np.flatnonzero(row == 1)[1])  # The summary's EOS.
      assert w[sep + 2:end + 1].all() and not w[end + 1:].any()


def test_a_stream_of_only_over_long_examples_is_an_error():
  endless = itertools.repeat((np.arange(2, 40), np.array([3, 4])))
  with pytest.raises(SummarizerError, match='1000 examples in a row are longer than 12'):
    next(data.PreprocessJoint(max_joint_length=12)(endless))
