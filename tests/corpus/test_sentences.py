"""Sentences, split two ways."""

from summarizer.corpus import sentences


def test_split_sentences_keeps_titles_initials_and_quotes_together():
  passage = ('Mr. Tavin Orsell arrived at 9 a.m. on Monday. "We are ready!" he '
             'said. Dr. Ka Lin agreed? She did. The U.S. Senate met at 5 p.m. '
             '2,000 people came.\nA new line starts a sentence')
  assert sentences.split_sentences(passage) == [
      'Mr. Tavin Orsell arrived at 9 a.m. on Monday.',
      '"We are ready!" he said.',
      'Dr. Ka Lin agreed?',
      'She did.',
      'The U.S. Senate met at 5 p.m.',
      '2,000 people came.',
      'A new line starts a sentence',
  ]
  assert sentences.split_sentences('  \n') == []
