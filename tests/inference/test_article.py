"""An article as the model reads it: cleaned as the training articles were; read from a
regular file or standard input, with or without a byte-order mark, and never past its bound."""

import io
import sys

import pytest

from summarizer import config
from summarizer import text
from summarizer.errors import SummarizerError
from summarizer.inference import article
from summarizer.inference import loaded_model
from summarizer.inference import summaries

from conftest import ARTICLES
from conftest import make_special, no_hang, sparse_file

BOUND = 'the most an article may be'


class Stdin(io.TextIOWrapper):
  """Standard input from a pipe: bytes under a text stream."""

  def __init__(self, data):
    super().__init__(io.BytesIO(data), encoding='utf-8')

  def isatty(self):
    return False


def test_clean_article_drops_what_training_articles_never_have():
  assert article.clean_article('  One.\r\n\r\nTwo.\rThree.\n\n') == 'One.\n\nTwo.\nThree.'


def test_a_final_newline_does_not_reach_the_model(random_model_dir, monkeypatch):
  tokenized, tokenize = [], text.tokenize

  def recording_tokenize(article_text, vocab_file=None):
    tokenized.append(article_text)
    return tokenize(article_text, vocab_file)

  monkeypatch.setattr(text, 'tokenize', recording_tokenize)
  loaded = loaded_model.load(random_model_dir)
  summarized = [list(summaries.summarize_tokens(ARTICLES[0] + end, loaded, 4))
                for end in ('', '\n', '\r\n')]
  assert tokenized == [ARTICLES[0]] * 3
  assert summarized[0] == summarized[1] == summarized[2]


def test_a_byte_order_mark_is_read_as_utf8_from_a_file_and_standard_input(tmp_path):
  # Notepad and Excel save UTF-8 so; kept, the mark was a subword the model never saw.
  path = tmp_path / 'marked.txt'
  path.write_text(ARTICLES[0], encoding='utf-8-sig')
  assert path.read_bytes().startswith(b'\xef\xbb\xbf')
  assert article.read_article(str(path)) == ARTICLES[0]
  assert article.read_article('-', stdin=Stdin(path.read_bytes())) == ARTICLES[0]
  assert article.read_article('-', stdin=io.StringIO('\ufeff' + ARTICLES[0])) == ARTICLES[0]


def test_closed_standard_input_is_one_error(monkeypatch):
  monkeypatch.setattr(sys, 'stdin', None)  # What Python sets for `<&-`.
  with pytest.raises(SummarizerError, match='^standard input is closed: no article to read$'):
    article.read_article('-')
  with pytest.raises(SummarizerError, match="^no article: give a FILE, '-' for standard input"):
    article.read_article()


def test_standard_input_is_read_no_further_than_the_bound():
  piped = Stdin(b'word ' * (config.MAX_ARTICLE_BYTES // 5) + b'x')
  with pytest.raises(SummarizerError) as raised:
    article.read_article('-', stdin=piped)
  assert str(raised.value) == f'standard input: too large (over 10 MB, {BOUND})'
  assert piped.buffer.tell() == config.MAX_ARTICLE_BYTES + 1


def test_an_article_file_that_is_no_regular_file_or_too_large_is_refused_unread(tmp_path):
  for special in ('fifo', 'zero'):
    path = tmp_path / special
    kind = make_special(path, special)
    with no_hang(), pytest.raises(SummarizerError) as raised:
      article.read_article(str(path))
    assert str(raised.value) == f'{path}: not a regular file ({kind})'
  path = sparse_file(tmp_path / 'huge.txt', 2 * 10**9)
  with pytest.raises(SummarizerError) as raised:
    article.read_article(str(path))
  assert str(raised.value) == f'{path}: too large (over 10 MB, {BOUND})'
