"""The Python API: ``summarize(text)``, ``summarize_details(text)``, ``summarize_many(texts)``."""

import functools
import warnings

from summarizer.decoding import MAX_SUMMARY_TOKENS
from summarizer.inference import beam
from summarizer.inference import search_options
from summarizer.inference import undertrained
from summarizer.inference.article import cut_message
from summarizer.inference.loaded_model import load
from summarizer.inference import summaries
from summarizer.inference.summaries import check_article, summarize_tokens


class ArticleCutWarning(UserWarning):
  """An article was longer than the model reads, and its end was left out."""


class ArticleCleanedWarning(UserWarning):
  """An article held characters no reader sees (zero-width, bidi controls, ...): removed."""


def warn_cleaned(run, stacklevel=4, on_clean='warn'):
  """Says that ``run``'s article was cleaned before it was read, if it was.

  ``on_clean``: 'warn' raises an ``ArticleCleanedWarning``; a function is
  called with the warning line; None says nothing.
  """
  if not run.cleaning or on_clean is None:
    return
  if on_clean == 'warn':
    warnings.warn(run.cleaning, ArticleCleanedWarning, stacklevel=stacklevel)
  else:
    on_clean(run.cleaning)


def warn_cut(kept, total, stacklevel=4):
  """Raises an ``ArticleCutWarning`` for an article cut to ``kept`` of its ``total`` tokens.

  ``stacklevel`` 4 names the line that called the function that called
  ``summarize_tokens``: the user's call of ``summarize`` or ``explain``.
  """
  warnings.warn(cut_message(kept, total), ArticleCutWarning, stacklevel=stacklevel)


def summarize_details(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                      method='fast', temperature=0.0, num_beams=None, length_penalty=None,
                      no_repeat_ngram_size=None, min_length=0):
  """Summarises an article and says how familiar it was to the model.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method: 'fast' (cached decoder) or 'greedy' (the course's decoder).
    temperature: 0 for the most likely summary; above 0 samples.
    num_beams: 1 for greedy search (the course's way); more for beam search.
    length_penalty: Beam search ranks finished summaries by their
      log-probability / length ** length_penalty (Hugging Face's).
    no_repeat_ngram_size: Forbid any n-gram of this many tokens twice in the
      summary (0: allowed).
    The three search settings not given are ``search_options.BEST``'s (4
    beams, length penalty 2, no trigram twice), or ``GREEDY``'s where
    ``method`` is 'greedy' or ``temperature`` is above 0.
    min_length: Forbid the summary to end before this many tokens.

  Returns:
    A dict: ``summary_text``; ``article_perplexity``, the perplexity of the
    article under the model; ``out_of_domain``, True if that is far above
    the model's own validation articles' (the summary is then likely wrong),
    None if the model has no calibration; ``article_tokens`` and
    ``kept_tokens``, the article's length and what the model read of it;
    ``undertrained``, a warning line if the summary is mostly one token
    repeated, or if the model scored below Lead-3 when its run ended
    (``summarizer.inference.undertrained``), else None.
    An article cut to fit the model also raises an ``ArticleCutWarning``;
    one cleaned of characters no reader sees (``inference.article.cleaned``)
    an ``ArticleCleanedWarning``.
  """
  run = _summary_run(text, model_dir, max_length, method, temperature, num_beams,
                     length_penalty, no_repeat_ngram_size, min_length)
  details = run.details()  # The summary is written here: its ids are known after.
  return dict(details, undertrained=undertrained.undertrained_warning(run.ids, run.loaded,
                                                                      run.search))


def summarize(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
              method='fast', temperature=0.0, num_beams=None, length_penalty=None,
              no_repeat_ngram_size=None, min_length=0):
  """Summarises an article; returns the summary as a string.

  The arguments are ``summarize_details``'s, which also tells how familiar
  the article was to the model. An article cut to fit the model raises an
  ``ArticleCutWarning``.
  """
  run = _summary_run(text, model_dir, max_length, method, temperature, num_beams,
                     length_penalty, no_repeat_ngram_size, min_length)
  return run.details()['summary_text']


def summarize_many(texts, model_dir=None, max_length=MAX_SUMMARY_TOKENS, method='fast',
                   num_beams=None, length_penalty=None, no_repeat_ngram_size=None,
                   min_length=0, batch_size=search_options.BATCH_SIZE):
  """Summarises several articles, decoded side by side; returns their summaries, in order.

  Each summary is the one ``summarize`` gives its article alone (the
  arguments are its own; ``batch_size``: the most articles decoded side by
  side). An article cut to fit the model raises an ``ArticleCutWarning``,
  one cleaned an ``ArticleCleanedWarning``.
  """
  texts = summaries.check_articles(texts)
  settings = search_options.chosen(num_beams, length_penalty, no_repeat_ngram_size,
                                   search_options.greedy_for(method, 0.0))
  runs = summaries.summarize_many(
      texts, load(model_dir), max_length, method, beam.Search(*settings, min_length),
      batch_size, on_cut=lambda index, kept, total: warn_cut(kept, total, stacklevel=5))
  for run in runs:
    warn_cleaned(run, stacklevel=3)
  return [run.details()['summary_text'] for run in runs]


def _summary_run(text, model_dir, max_length, method, temperature, num_beams,
                 length_penalty, no_repeat_ngram_size, min_length):
  """The article's ``SummaryRun``; a text that is no article is refused before the model loads."""
  check_article(text)
  settings = search_options.chosen(num_beams, length_penalty, no_repeat_ngram_size,
                                   search_options.greedy_for(method, temperature))
  search = beam.Search(*settings, min_length)
  run = summarize_tokens(text, load(model_dir), max_length, method, temperature,
                         on_cut=functools.partial(warn_cut, stacklevel=5), search=search,
                         stream=False)
  warn_cleaned(run)
  return run
