"""Summarising an article: the methods agree, arguments are checked, long articles are cut."""

import pytest

from summarizer import summarize
from summarizer.errors import SummarizerError
from summarizer.inference import loaded_model
from summarizer.inference import summaries

from conftest import ARTICLES


def test_summarize_methods_agree(random_model_dir):
  # An article the random model answers with more than EOS.
  fast = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10)
  greedy = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10,
                     method='greedy')
  assert isinstance(fast, str) and fast
  assert fast == greedy


def test_summarize_rejects_bad_arguments(random_model_dir):
  with pytest.raises(SummarizerError, match='empty'):
    summarize('   \n', model_dir=random_model_dir)
  with pytest.raises(SummarizerError, match='unknown method'):
    summarize('text', model_dir=random_model_dir, method='beam')


def test_long_article_is_cut_to_fit(random_model_dir):
  cuts = []
  ids = list(summaries.summarize_tokens(
      'word ' * 2000, loaded_model.load(random_model_dir), max_length=5,
      on_cut=lambda kept, total: cuts.append((kept, total))))
  assert len(ids) <= 5
  (kept, total), = cuts
  assert kept == 512 - 5 - 3 and total > kept
