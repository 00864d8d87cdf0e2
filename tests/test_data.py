"""Tokens, the joint sequence and its weights, buckets, the vocabulary builder."""

import hashlib
import itertools
import os

import numpy as np
import pytest

from summarizer import data, detokenize, tokenize, vocab
from summarizer.config import BATCH_SIZES, BOUNDARIES
from summarizer.errors import SummarizerError
from conftest import COURSE_VOCAB

COURSE_SENTENCE = ('It was a sunny day when I went to the market to buy some '
                   'flowers. But I only found roses, not tulips.')


def test_course_vocabulary_gives_the_course_ids():
  # The shipped copy of the course's vocabulary (data/README.md says where it is from).
  assert data.vocab_size(COURSE_VOCAB) == 33021
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


def test_copy_lessons_copy_article_sentences():
  article = 'First sentence is here today. Second one follows after it. Third.'
  mixed = list(data.MixCopyExamples(1.0, seed=1)(iter([(article, 'x')] * 5)))
  for _, highlights in mixed:
    assert all(line in data.sentences(article) for line in highlights.split('\n'))


def test_short_lessons_keep_the_sentences_with_the_highlights_facts():
  article = ('The day was long. Rain fell on Marmofield for 3 days. Officials said '
             'little. Kaisie Garmoez of the agency issued a warning. Nobody knew why.')
  highlights = 'Marmofield soaked for 3 days.\nGarmoez warns residents.'
  (short, kept), = data.MixShortExamples(1.0, keep_other=0.0)(iter([(article, highlights)]))
  assert short == ('Rain fell on Marmofield for 3 days. Kaisie Garmoez of the agency '
                   'issued a warning.')
  assert kept == highlights
  # 'The' is capitalised in the highlights but no name: the article has 'the'.
  assert data._key_words('The agency: 12,500 homes.', article) == {'12,500'}
  untouched = list(data.MixShortExamples(0.0)(iter([(article, highlights)])))
  assert untouched == [(article, highlights)]


def test_joined_stories_keep_every_part_and_a_highlight_of_each():
  parts = [('Story one.', 'One a.\nOne b.\nOne c.'), ('Story two.', 'Two a.\nTwo b.'),
           ('Story three.', 'Three a.')]
  article, highlights = data.join_stories(parts)
  assert article == 'Story one.\n\nStory two.\n\nStory three.'
  assert highlights == 'One a.\nOne b.\nTwo a.\nThree a.'


def test_long_lessons_join_the_stories_that_follow():
  pairs = [(f'Article {i}.', f'Highlight {i}.') for i in range(60)]
  mixed = list(data.MixLongExamples(1.0, seed=3)(iter(pairs)))
  # Every example joined with the next one or two; none is lost or repeated.
  parts = [article.split('\n\n') for article, _ in mixed]
  assert all(2 <= len(p) <= 3 for p in parts[:-1])
  assert [a for p in parts for a in p] == [a for a, _ in pairs]
  assert {len(p) for p in parts[:-1]} == {2, 3}
  assert list(data.MixLongExamples(0.0)(iter(pairs))) == pairs


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
  assert 300 < data.vocab_size(str(out)) < 600
  assert vocab.main(['--data', 'news', '--size', '10', '--out', str(out)]) == 2
  assert 'too small' in capsys.readouterr().err
