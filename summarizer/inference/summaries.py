"""Summarising: one article as a ``SummaryRun``, or many side by side.

``summarize_tokens`` gives the summary's ids as they are generated, with the
article's length and perplexity; ``summarize_many`` decodes several articles
as rows of one batch, each getting exactly the summary it gets alone.
"""

import numpy as np

from summarizer.config import EOS, SEP
from summarizer.decoding import MAX_SUMMARY_TOKENS, greedy_tokens
from summarizer.errors import SummarizerError
from summarizer.inference import beam
from summarizer.inference import search_options
from summarizer.inference.article import article_ids, cleaned, cleaning_message


class SummaryRun:
  """One article being summarised: iterate for the summary's token ids.

  Iterating yields the ids as they are generated (EOS excluded). Known
  before the first: how long the article is and how much of it was kept;
  known from the first on: its perplexity under the model and whether that
  is far outside what the model saw in training.

  Attributes:
    article_tokens: Tokens of the whole article (EOS excluded).
    kept_tokens: Of those, the tokens the model reads.
    article_perplexity: exp of the mean negative log-probability of the kept
      tokens, each given those before it (None until iterated).
    ids: The summary's token ids generated so far.
  """

  def __init__(self, loaded, text, max_length=MAX_SUMMARY_TOKENS, method='fast',
               temperature=0.0, top_k=None, seed=0, search=None, stream=True):
    search = search or beam.Search()
    _check_arguments(text, max_length, method, temperature, search)
    self._loaded = loaded
    self.search = search  # How the summary is searched for (what a warning names).
    kept, self.article_tokens = article_ids(loaded, text, max_length)
    # What the article was cleaned of before it was read (one warning line; None: nothing).
    self.cleaning = cleaning_message(cleaned(text)[1])
    self.kept_tokens = len(kept)
    self.prefix = kept + [EOS, SEP]
    self.article_perplexity = None
    self.ids = []
    self._tokens = self._generate(self.prefix, max_length, method,
                                  temperature, top_k, seed, search, stream)

  @property
  def loaded(self):
    """The ``LoadedModel`` that writes the summary."""
    return self._loaded

  @property
  def article_ids(self):
    """The ids of the article tokens the model reads (EOS excluded)."""
    return self.prefix[:-2]

  @property
  def cut(self):
    """Whether the article was cut to fit the model."""
    return self.kept_tokens < self.article_tokens

  @property
  def out_of_domain(self):
    """Whether the article's perplexity is far above the model's validation
    articles' (None when the model has no calibration or before iterating)."""
    if self.article_perplexity is None or not self._loaded.calibration:
      return None
    return self.article_perplexity > self._loaded.calibration['threshold']

  def _generate(self, prefix, max_length, method, temperature, top_k, seed,
                search, stream):
    decoder = self._loaded.decoder
    decoder.check_fits(len(prefix), max_length)
    started, mean_nll = decoder.start(prefix, n_scored=self.kept_tokens,
                                      max_length=max_length)
    self.article_perplexity = float(np.exp(mean_nll))
    if method == 'greedy':
      tokens = greedy_tokens(prefix, self._loaded.model, max_length)
    elif temperature > 0 or (stream and search.num_beams == 1):
      tokens = decoder.resume(started, max_length, temperature, top_k, seed,
                              min_length=search.min_length,
                              no_repeat_ngram_size=search.no_repeat_ngram_size)
    else:  # The whole loop in one compiled call (beams cannot stream).
      (tokens,) = decoder.decode_rows(started, max_length, search)
    for token in tokens:
      if token == EOS:
        return
      yield token

  def _decoded(self, ids, mean_nll):
    """Takes the summary ``ids`` (EOS included if reached) decoded in a batch."""
    self.article_perplexity = float(np.exp(mean_nll))
    self._tokens = iter(ids[:ids.index(EOS)] if EOS in ids else ids)

  def __iter__(self):
    return self

  def __next__(self):
    token = next(self._tokens)
    self.ids.append(token)
    return token

  def details(self):
    """Generates what is left and returns the summary with what is known of it.

    Returns:
      {'summary_text': str, 'article_perplexity': float, 'out_of_domain':
      bool or None, 'article_tokens': int, 'kept_tokens': int}.
    """
    for _ in self:
      pass
    return {
        'summary_text': self._loaded.detokenize(self.ids).strip(),
        'article_perplexity': self.article_perplexity,
        'out_of_domain': self.out_of_domain,
        'article_tokens': self.article_tokens,
        'kept_tokens': self.kept_tokens,
    }


def check_article(text):
  """Refuses what is not an article before any model loads.

  Raises:
    TypeError: ``text`` is not a string (naming its type: bytes must be
      decoded first, a list summarised with ``summarize_many``).
    SummarizerError: it is empty.
  """
  if not isinstance(text, str):
    hint = {bytes: ' (decode it first: text.decode("utf-8"))',
            list: ' (several articles: summarizer.summarize_many)',
            tuple: ' (several articles: summarizer.summarize_many)'}.get(type(text), '')
    raise TypeError(f'the article must be a str, not {type(text).__name__}{hint}')
  if not text.strip():
    raise SummarizerError('the article is empty')


def check_articles(texts):
  """``check_article`` for each of a list of articles; returns them as a list."""
  if isinstance(texts, (str, bytes)):
    raise TypeError(f'texts must be a list of articles, not one {type(texts).__name__}')
  texts = list(texts)
  for text in texts:
    check_article(text)
  return texts


def _check_arguments(text, max_length, method, temperature, search=beam.Search()):
  if method not in ('fast', 'greedy'):
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")
  check_article(text)
  if max_length < 1:
    raise SummarizerError('max_length must be at least 1')
  if search_options.temperature_problem(temperature):
    raise SummarizerError(f'temperature {search_options.temperature_problem(temperature)}')
  if method == 'greedy' and temperature > 0:
    raise SummarizerError("sampling (temperature > 0) needs method='fast'")
  search.check(max_length)
  if method == 'greedy' and search.constrained:
    raise SummarizerError("beams, min_length and no_repeat_ngram_size need method='fast'")
  if temperature > 0 and search.num_beams > 1:
    raise SummarizerError('sampling (temperature > 0) and beam search exclude each other')


def summarize_tokens(text, loaded, max_length=MAX_SUMMARY_TOKENS,
                     method='fast', temperature=0.0, top_k=None, seed=0,
                     on_cut=None, search=None, stream=True):
  """Returns a ``SummaryRun``: the summary's token ids as they are generated.

  Args:
    text: The article.
    loaded: The ``LoadedModel`` that writes the summary (``loaded_model.load``).
    max_length: Most summary tokens.
    method: 'fast' (cached) or 'greedy' (the course's decoder).
    temperature: 0 for greedy; above 0 samples (fast method only).
    top_k: Sample among the k most likely tokens.
    seed: Seed of the sampling.
    on_cut: Called with (kept, total) token counts if the article is cut.
    search: A ``beam.Search``: beams and constraints (default: greedy).
    stream: Generate one token a call (True), or the whole summary in one
      compiled call when it is first asked for (faster; beams always do).
  """
  run = SummaryRun(loaded, text, max_length, method, temperature, top_k, seed, search, stream)
  if run.cut and on_cut is not None:
    on_cut(run.kept_tokens, run.article_tokens)
  return run


def summarize_many(texts, loaded, max_length=MAX_SUMMARY_TOKENS, method='fast',
                   search=None, batch_size=search_options.BATCH_SIZE, on_cut=None,
                   on_batch=None):
  """Summarises several articles, decoding up to ``batch_size`` side by side.

  Each article gets exactly the summary it gets alone: the rows of a batch
  keep their own positions and caches (see ``FastDecoder``). Articles of
  similar lengths are batched together (less padding in the prefill), and
  a batch is made smaller if its caches would take more than
  ``beam.ROWS_MEMORY_BYTES``. The course's decoder (``method='greedy'``)
  decodes one at a time.

  Args:
    texts: The articles.
    loaded, max_length, method, search: As for ``summarize_tokens``.
    batch_size: Most articles decoded side by side.
    on_cut: Called with (index, kept, total) for each article cut to fit.
    on_batch: Called with the number of articles of each batch decoded.

  Returns:
    A list of finished ``SummaryRun``s, in the order of ``texts``.
  """
  if batch_size < 1:
    raise SummarizerError(f'batch_size must be at least 1, not {batch_size}')
  texts = check_articles(texts)
  search = search or beam.Search()
  runs = [SummaryRun(loaded, text, max_length, method, search=search, stream=False)
          for text in texts]
  for index, run in enumerate(runs):
    loaded.decoder.check_fits(len(run.prefix), max_length)
    if run.cut and on_cut is not None:
      on_cut(index, run.kept_tokens, run.article_tokens)
  if method == 'greedy':
    batch_size = 1  # The course's decoder reads one article at a time.
  batch_size = min(batch_size, loaded.decoder.rows_per_batch(search.num_beams))
  order = sorted(range(len(runs)), key=lambda i: len(runs[i].prefix))
  for first in range(0, len(order), batch_size):
    batch = [runs[i] for i in order[first:first + batch_size]]
    if method == 'greedy':
      batch[0].details()
    else:
      started, mean_nlls = loaded.decoder.start_rows(
          [run.prefix for run in batch], [run.kept_tokens for run in batch], max_length)
      summaries = loaded.decoder.decode_rows(started, max_length, search)
      for run, ids, mean_nll in zip(batch, summaries, mean_nlls):
        run._decoded(ids, mean_nll)  # pylint: disable=protected-access
    if on_batch is not None:
      on_batch(len(batch))
  return runs
