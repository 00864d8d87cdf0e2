"""Part 1: text to subword ids and back, and the vocabularies."""

import hashlib

import pytest

from summarizer import detokenize, tokenize
from summarizer import text
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
