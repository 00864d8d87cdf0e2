"""Tokens, the joint sequence and its weights, buckets, the vocabulary builder."""

import hashlib
import itertools

import numpy as np
import pytest

from summarizer import data, detokenize, text, tokenize, vocab
from summarizer.config import BATCH_SIZES, BOUNDARIES
from summarizer.errors import SummarizerError
from conftest import COURSE_VOCAB

COURSE_SENTENCE = ('It was a sunny day when I went to the market to buy some '
                   'flowers. But I only found roses, not tulips.')


def test_course_vocabulary_gives_the_course_ids():
  # The shipped copy of the course's vocabulary (data/README.md says where it is from).
  assert text.vocab_size(COURSE_VOCAB) == 33021
  with open(COURSE_VOCAB, 'rb') as f:
    assert hashlib.md5(f.read()).hexdigest() == 'ebee0f85b1e87629ce191ace03a8c1da'
  ids = tokenize(COURSE_SENTENCE, vocab_file=COURSE_VOCAB)
  assert ids[:4] == [52, 1353, 28, 24421] and ids[-1] == 1
  assert detokenize(ids, vocab_file=COURSE_VOCAB) == COURSE_SENTENCE + '<EOS>'


def test_shipped_vocabulary_round_trip():
  ids = tokenize(COURSE_SENTENCE)
  assert ids[-1] == 1 and all(isinstance(i, int) for i in ids)
  assert detokenize(ids[:-1]) == COURSE_SENTENCE
  assert detokenize([0, 1]) == '<pad><EOS>'


def test_missing_or_bad_vocabulary(tmp_path):
  with pytest.raises(SummarizerError, match='not found'):
    tokenize('x', vocab_file=str(tmp_path / 'none.subwords'))
  bad = tmp_path / 'bad.subwords'
  bad.write_text("'hello_'\n'world_'\n")
  with pytest.raises(SummarizerError, match='not a subword vocabulary'):
    tokenize('x', vocab_file=str(bad))


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


def test_batches_follow_the_course_layout():
  for inputs, targets, weights in itertools.islice(
      data.batches('news', 'train', n_devices=2), 6):
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


def test_device_batch_sizes():
  assert data.device_batch_sizes([16, 8, 4, 2, 1], 2) == [16, 8, 4, 2, 2]
  assert data.device_batch_sizes([5], 4) == [8]


def test_a_stream_of_only_over_long_examples_is_an_error():
  endless = itertools.repeat((np.arange(2, 40), np.array([3, 4])))
  with pytest.raises(SummarizerError, match='1000 examples in a row are longer than 12'):
    next(data.PreprocessJoint(max_joint_length=12)(endless))


def test_vocab_builder_writes_a_loadable_vocabulary(tmp_path, capsys):
  out = tmp_path / 'small.subwords'
  assert vocab.main(['--data', 'news', '--size', '400', '--limit', '150',
                     '--out', str(out)]) == 0
  ids = tokenize('Rain fell in the town.', vocab_file=str(out))
  assert detokenize(ids[:-1], vocab_file=str(out)) == 'Rain fell in the town.'
  assert 300 < text.vocab_size(str(out)) < 600
  assert vocab.main(['--data', 'news', '--size', '10', '--out', str(out)]) == 2
  assert 'too small' in capsys.readouterr().err
