"""The Python API answers a non-string article with a TypeError naming its type, before loading."""

import pytest

from summarizer.inference import api, summaries
from summarizer.errors import SummarizerError

MISSING_MODEL = '/nonexistent/model'  # Loading it would fail: the type is checked first.


@pytest.mark.parametrize('article,named', [
    (None, 'NoneType'), (b'Rain fell.', 'bytes'), (42, 'int'), (['Rain fell.'], 'list')])
def test_a_non_string_article_is_a_type_error(article, named):
  with pytest.raises(TypeError, match=f'the article must be a str, not {named}'):
    api.summarize(article, MISSING_MODEL)
  with pytest.raises(TypeError, match=f'not {named}'):
    summaries.summarize_many(['Fine.', article], None)


def test_hints_say_what_to_do_instead():
  with pytest.raises(TypeError, match=r'decode it first'):
    api.summarize(b'Rain fell.', MISSING_MODEL)
  with pytest.raises(TypeError, match='summarize_many'):
    api.summarize(['Rain fell.'], MISSING_MODEL)
  with pytest.raises(TypeError, match='a list of articles, not one str'):
    summaries.summarize_many('Rain fell.', None)


def test_an_empty_string_is_still_the_empty_article():
  with pytest.raises(SummarizerError, match='the article is empty'):
    api.summarize('  ', MISSING_MODEL)


def test_temperature_must_be_a_number(random_model_dir):
  with pytest.raises(SummarizerError, match='temperature must be a number'):
    api.summarize('Rain fell.', random_model_dir, temperature=float('nan'))


def test_a_temperature_too_small_to_sample_with_is_refused_not_turned_into_nan(random_model_dir):
  # 1e-320 is a float above 0: dividing the log-probabilities by it overflows.
  with pytest.raises(SummarizerError, match='too small to sample with'):
    api.summarize('Rain fell.', random_model_dir, temperature=1e-320)
