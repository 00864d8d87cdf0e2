"""Lessons: copy, extract, short and long examples for training."""

import random

import pytest

from summarizer.corpus import entities
from summarizer.corpus import lessons
from summarizer.corpus import sentences


def test_copy_lessons_copy_article_sentences():
  article = 'First sentence is here today. Second one follows after it. Third.'
  mixed = list(lessons.MixCopyExamples(1.0, seed=1)(iter([(article, 'x')] * 5)))
  for _, highlights in mixed:
    assert all(line in sentences.sentences(article) for line in highlights.split('\n'))


def test_short_lessons_keep_the_sentences_with_the_highlights_facts():
  article = ('The day was long. Rain fell on Marmofield for 3 days. Officials said '
             'little. Kaisie Garmoez of the agency issued a warning. Nobody knew why.')
  highlights = 'Marmofield soaked for 3 days.\nGarmoez warns residents.'
  (short, kept), = lessons.MixShortExamples(1.0, keep_other=0.0)(iter([(article, highlights)]))
  assert short == ('Rain fell on Marmofield for 3 days. Kaisie Garmoez of the agency '
                   'issued a warning.')
  assert kept == highlights
  # 'The' is capitalised in the highlights but no name: the article has 'the'.
  assert entities.entities('The agency: 12,500 homes.', context=article) == {'12,500'}
  untouched = list(lessons.MixShortExamples(0.0)(iter([(article, highlights)])))
  assert untouched == [(article, highlights)]


def test_extract_lessons_copy_the_sentences_with_the_highlights_facts_in_order():
  article = ('The day was long. Rain fell on Marmofield for 3 days. Officials said '
             'little. Kaisie Garmoez of the agency issued a warning. Nobody knew why.')
  highlights = 'Garmoez warns residents.\nMarmofield soaked for 3 days.'
  (kept, summary), = lessons.MixExtractExamples(1.0)(iter([(article, highlights)]))
  assert kept == article
  assert summary == ('Rain fell on Marmofield for 3 days.\n'
                     'Kaisie Garmoez of the agency issued a warning.')
  # Highlights without a name or number found in the article stay as they are.
  (_, unchanged), = lessons.MixExtractExamples(1.0)(iter([(article, 'All was calm.')]))
  assert unchanged == 'All was calm.'
  assert list(lessons.MixExtractExamples(0.0)(iter([(article, highlights)]))) == [
      (article, highlights)]


def test_joined_stories_keep_every_part_and_a_highlight_of_each():
  parts = [('Story one.', 'One a.\nOne b.\nOne c.'), ('Story two.', 'Two a.\nTwo b.'),
           ('Story three.', 'Three a.')]
  article, highlights = lessons.join_stories(parts)
  assert article == 'Story one.\n\nStory two.\n\nStory three.'
  assert highlights == 'One a.\nOne b.\nTwo a.\nThree a.'


def test_long_lessons_join_the_stories_that_follow():
  pairs = [(f'Article {i}.', f'Highlight {i}.') for i in range(60)]
  mixed = list(lessons.MixLongExamples(1.0, seed=3)(iter(pairs)))
  # Every example joined with the next one or two; none is lost or repeated.
  parts = [article.split('\n\n') for article, _ in mixed]
  assert all(2 <= len(p) <= 3 for p in parts[:-1])
  assert [a for p in parts for a in p] == [a for a, _ in pairs]
  assert {len(p) for p in parts[:-1]} == {2, 3}
  assert list(lessons.MixLongExamples(0.0)(iter(pairs))) == pairs


def test_repeat_lessons_list_two_articles_names_and_numbers_twice_in_a_drawn_order():
  first = 'Rain fell on Marmofield for 3 days. Kaisie Garmoez issued a warning.'
  second = 'Keltalex Athletic beat Zelvalon Athletic on Tuesday. 40,443 watched.'
  made = list(lessons.RepeatLessons(seed=1)(iter([(first, 'x'), (second, 'y')] * 3)))
  assert len(made) == 3
  expected = entities.entities(first) | entities.entities(second)
  orders = set()
  for listed, again in made:
    assert listed == again and listed.endswith('.') and len(listed) <= lessons.REPEAT_CHARS
    assert set(listed[:-1].split(', ')) <= expected and listed.count(', ') >= 2
    orders.add(listed)
  whole, _ = lessons.repeat_lesson([first, second], random.Random(2), max_chars=200)
  assert set(whole[:-1].split(', ')) == expected  # Long enough for all of them.
  assert len(orders) > 1  # Each lesson in an order of its own: only copying predicts it.
  assert lessons.repeat_lesson(['no names here at all.'], None) is None
  many = ' '.join(f'Name{chr(97 + i)}son met Place{chr(97 + i)}ville.' for i in range(26))
  listed, _ = lessons.repeat_lesson([many], random.Random(0))
  assert len(listed) <= lessons.REPEAT_CHARS and listed.count(', ') >= 3


@pytest.mark.slow
def test_repeat_lessons_weigh_the_second_list_only():
  from summarizer.config import EOS
  from summarizer.corpus import streams
  inputs, _, weights = next(streams.batches('news', 'train', boundaries=(256,),
                                            batch_sizes=(4, 2), max_joint_length=512,
                                            truncate=True, repeat_lessons=True,
                                            article_loss_weight=1.0))
  assert inputs.shape[1] == 64  # The lists twice fit a row of 64: little padding.
  for row, weight in zip(inputs, weights):
    first_eos = int(list(row).index(EOS))
    listed = row[:first_eos]
    again = row[first_eos + 2:first_eos + 2 + len(listed)]
    assert list(again) == list(listed)
    assert not weight[:first_eos + 2].any() and weight[first_eos + 2:].sum() == len(listed) + 1
