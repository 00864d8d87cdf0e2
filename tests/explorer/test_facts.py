"""Where a summary's names and numbers come from, traced through attention."""

import numpy as np
import pytest

from summarizer.corpus import news
from summarizer.explorer.explanation import explain
from summarizer.explorer.facts import spans_of, token_pieces, trace_facts, vocabulary_words

from .conftest import COURT, MADE_UP, read


def test_token_pieces_join_to_the_text():
  from summarizer.text import tokenize  # pylint: disable=g-import-not-at-top
  text = 'Port Velmara\u2019s 12.5% rise: "odd"  spacing\n\nand a new line.'
  pieces = token_pieces(tokenize(text)[:-1])
  assert ''.join(pieces) == text and len(pieces) > 10


def test_trace_facts_on_a_hand_made_attention():
  article = ['Port', ' Vel', 'mara', ' won', ' 3', '-', '1', ' on', ' Sunday', '.']
  summary = ['Vel', 'mara', ' won', ' 4', '-', '1', ' at', ' Kel', 'ton', '.']
  view = np.full((10, 10), 0.01)
  for i, j in {0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 7: 1, 8: 8}.items():
    view[i, j] = 0.5                   # 'Vel' reads ' Vel', ' 4' reads ' 3', ...
  facts = trace_facts(summary, article, view)
  got = [(f.text, f.status, f.summary_tokens, f.attended, f.attended_text, f.agrees)
         for f in facts]
  assert got == [
      ('Velmara', 'from the article', [0, 1], [1, 2], 'Velmara', True),
      ('4', 'not in the article', [3], [4], '3-1', False),
      ('1', 'from the article', [5], [6], '3-1', True),
      ('Kelton', 'not in the article', [7, 8], [1, 8], 'Velmara ... Sunday', False),
  ]
  assert facts[0].occurrences == [(5, 12)] and facts[0].peak in (1, 2)


def test_the_made_up_name_is_marked_and_the_copied_ones_traced(court):
  facts = {f.text: f for f in court.facts}
  assert facts[MADE_UP].status == 'not in the article'
  assert MADE_UP not in read(COURT) and not facts[MADE_UP].agrees
  # It read the judge's first name, Samoren, while it wrote its first part, 'Samo'.
  assert 'Samoren' in facts[MADE_UP].attended_text.split()
  for name in ('Holmilus Torulard', '375,000'):           # The story's own facts.
    assert facts[name].status == 'from the article' and facts[name].agrees
    assert name in facts[name].attended_text


def test_known_names_of_test_stories_are_traced_to_where_they_stand():
  traced = agree = 0
  for index in range(8):
    story = news.story('test', index)
    explanation = explain(story.article)
    for fact in explanation.facts:
      if fact.text in story.facts['entities']:                 # A name the story made.
        assert fact.status == 'from the article'
        traced += 1
        if fact.agrees:
          agree += 1
          # What it read is the name, or a part of it (a copy head may read
          # the token before the one it copies).
          assert fact.text in fact.attended_text or fact.attended_text in fact.text
          start, end = spans_of(explanation.article_pieces)[fact.peak]  # pylint: disable=protected-access
          assert any(a <= start and end <= b for a, b in fact.occurrences)
  assert traced >= 10 and agree >= 0.9 * traced, (traced, agree)


def test_a_common_word_opening_a_sentence_is_not_a_made_up_name():
  article = ['The', ' flights', ' of', ' Kel', 'ton', ' Air', ' stopped', '.']
  summary = ['Del', 'ays', ' at', ' Kel', 'ton', ' Air', '.\n', 'Sel', 'jorer', ' said', ' so', '.']
  view = np.full((12, 8), 0.1)
  texts = lambda common: [f.text for f in trace_facts(summary, article, view, common)]
  # Neither first word is in the article: without a vocabulary both look made up.
  assert texts(frozenset()) == ['Delays', 'Kelton Air', 'Seljorer']
  assert texts(frozenset({'delays', 'said'})) == ['Kelton Air', 'Seljorer']


def test_the_shipped_vocabulary_keeps_headline_words_whole_and_not_made_up_names():
  words = vocabulary_words()
  assert {'delays', 'scientists', 'gusts', 'chief', 'the'} <= words
  assert not {'seljorer', 'samorman', 'sorethard', 'kaev'} & words


@pytest.mark.slow
def test_only_made_up_names_are_marked_in_test_stories():
  # Stories 85-159 open highlights with "Delays", "Gusts", "Chief", "Scientists"
  # ..., words their articles never write; two make up a name.
  made_up = {}
  for index in range(85, 160):
    for fact in explain(news.story('test', index).article).facts:
      if not fact.in_article:
        made_up.setdefault(index, []).append(fact.text)
  assert made_up == {142: ['Judge Samorman'], 147: ['Sorethard']}
