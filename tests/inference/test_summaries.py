"""Summarising an article: the methods agree, arguments are checked, long articles are cut."""

import pytest

from summarizer import summarize
from summarizer.errors import SummarizerError
from summarizer.inference import loaded_model
from summarizer.inference import search_options
from summarizer.inference import summaries

from conftest import ARTICLES


@pytest.mark.slow
def test_summarize_methods_agree(random_model_dir):
  # An article the random model answers with more than EOS.
  fast = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10, num_beams=1)
  greedy = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10,
                     method='greedy')
  assert isinstance(fast, str) and fast
  assert fast == greedy


def test_summarize_rejects_bad_arguments(random_model_dir):
  with pytest.raises(SummarizerError, match='empty'):
    summarize('   \n', model_dir=random_model_dir)
  with pytest.raises(SummarizerError, match='unknown method'):
    summarize('text', model_dir=random_model_dir, method='beam')


@pytest.mark.slow
def test_long_article_is_cut_to_fit(random_model_dir):
  cuts = []
  ids = list(summaries.summarize_tokens(
      'word ' * 2000, loaded_model.load(random_model_dir), max_length=5,
      on_cut=lambda kept, total: cuts.append((kept, total))))
  assert len(ids) <= 5
  (kept, total), = cuts
  assert kept == 512 - 5 - 3 and total > kept


def test_the_default_is_beam_search_and_one_beam_is_the_courses_greedy_search(random_model_dir):
  def summary(**search):
    return summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10, **search)
  assert summary() == summary(num_beams=4, length_penalty=2.0, no_repeat_ngram_size=3)
  assert summary(num_beams=1) == summary(method='greedy') == summary(
      num_beams=1, length_penalty=1.0, no_repeat_ngram_size=0)


def test_search_settings_left_out_come_from_the_best_or_from_greedy_search():
  assert search_options.chosen(None, None, None) == (4, 2.0, 3)
  assert search_options.chosen(None, None, None, greedy=True) == (1, 1.0, 0)
  assert search_options.chosen(1, None, None) == (1, 1.0, 0)        # One beam: greedy search.
  assert search_options.chosen(8, None, 0) == (8, 2.0, 0)
  assert search_options.greedy_for('greedy') and search_options.greedy_for('fast', 0.7)
  assert search_options.greedy_for('fast', stream=True) and not search_options.greedy_for('fast')
