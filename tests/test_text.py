"""Text: sentences (vocabularies and tokens are tested with the pipeline)."""

import pytest

from summarizer import text
from summarizer.errors import SummarizerError


def test_split_sentences_keeps_titles_initials_and_quotes_together():
  passage = ('Mr. Tavin Orsell arrived at 9 a.m. on Monday. "We are ready!" he '
          'said. Dr. Ka Lin agreed? She did. The U.S. Senate met at 5 p.m. '
          '2,000 people came.\nA new line starts a sentence')
  assert text.split_sentences(passage) == [
      'Mr. Tavin Orsell arrived at 9 a.m. on Monday.',
      '"We are ready!" he said.',
      'Dr. Ka Lin agreed?',
      'She did.',
      'The U.S. Senate met at 5 p.m.',
      '2,000 people came.',
      'A new line starts a sentence',
  ]
  assert text.split_sentences('  \n') == []


@pytest.mark.parametrize('keep', [301, 7630, -50])
def test_a_vocabulary_cut_short_is_refused_in_one_line(tmp_path, keep):
  # Trax would load it and fail later with an AssertionError on a word it cannot spell.
  data = open(text.vocab_path(), 'rb').read()
  path = tmp_path / 'cut.subwords'
  path.write_bytes(data[:keep])
  with pytest.raises(SummarizerError, match='incomplete subword vocabulary.*cut short'):
    text.vocab_size(str(path))
