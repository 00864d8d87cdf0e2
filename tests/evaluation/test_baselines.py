"""Baselines: Lead-3 and retrieval."""

import pytest

from summarizer.errors import SummarizerError
from summarizer.evaluation import baselines


def test_lead3_is_the_first_three_sentences_one_a_line():
  text = ('Mr. Orsell spoke first. "It was wild!" she said. Roads shut at '
          '6 p.m. on Friday. Dr. Lin left. More came.')
  assert baselines.lead3(text) == ('Mr. Orsell spoke first.\n'
                                   '"It was wild!" she said.\n'
                                   'Roads shut at 6 p.m. on Friday.')
  assert baselines.lead3('Just one sentence') == 'Just one sentence'


def test_retriever_returns_the_highlights_of_the_nearest_article():
  retriever = baselines.Retriever([
      ('The river flooded the town after heavy rain, officials said.', 'Flood hits town.'),
      ('The striker scored twice and the club won the cup, officials said.', 'Club wins cup.'),
      ('The bank said profits rose and the shares climbed, officials said.', 'Bank profits rise.'),
  ])
  query = 'Officials said the striker scored a late goal in the cup final.'
  assert retriever.nearest_highlights(query) == 'Club wins cup.'
  assert retriever.nearest_highlights('Heavy rain: the river rose.') == 'Flood hits town.'
  assert retriever.similarities('The bank said profits rose and the shares '
                                'climbed, officials said.')[2] == pytest.approx(1.0)
  # Nothing in common with any article: the first one, by the tie rule.
  assert retriever.nearest('zebras') == 0


def test_retriever_needs_training_articles():
  with pytest.raises(SummarizerError, match='no training articles'):
    baselines.Retriever([])
