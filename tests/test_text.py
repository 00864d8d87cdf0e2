"""Part 1: text to subword ids and back, and the vocabularies."""

import hashlib

import pytest

from summarizer import detokenize, tokenize
from summarizer import config, text
from summarizer.errors import SummarizerError

from conftest import COURSE_VOCAB
from conftest import make_special, no_hang, sparse_file

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


@pytest.mark.parametrize('keep', [301, 7630, -50])
def test_a_vocabulary_cut_short_is_refused_in_one_line(tmp_path, keep):
  # Trax would load it and fail later with an AssertionError on a word it cannot spell.
  data = open(text.vocab_path(), 'rb').read()
  path = tmp_path / 'cut.subwords'
  path.write_bytes(data[:keep])
  with pytest.raises(SummarizerError, match='incomplete subword vocabulary.*cut short'):
    text.vocab_size(str(path))


@pytest.mark.parametrize('special', ['fifo', 'zero'])
def test_a_vocabulary_that_is_no_regular_file_is_refused_unread(tmp_path, special):
  path = tmp_path / 'vocab.subwords'
  kind = make_special(path, special)
  with no_hang(), pytest.raises(SummarizerError) as raised:
    text.vocab_size(str(path))
  assert str(raised.value) == f'{path}: not a regular file ({kind})'


def test_a_vocabulary_over_its_bound_is_refused_unread(tmp_path):
  path = sparse_file(tmp_path / 'vocab.subwords', config.MAX_VOCAB_BYTES + 1)
  for read in (text.vocab_size, text.vocab_fingerprint):
    with pytest.raises(SummarizerError) as raised:
      read(str(path))
    assert str(raised.value) == f'{path}: too large (over 50 MB, the most a vocabulary may be)'


def test_a_vocabulary_saved_with_a_byte_order_mark_reads_the_same(tmp_path):
  path = tmp_path / 'marked.subwords'
  path.write_bytes(b'\xef\xbb\xbf' + open(text.vocab_path(), 'rb').read())
  assert tokenize(COURSE_SENTENCE, vocab_file=str(path)) == tokenize(COURSE_SENTENCE)
