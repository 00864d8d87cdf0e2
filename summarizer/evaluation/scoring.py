"""Scores of a summary: ROUGE, and the names and numbers it gets right.

Scores:

* rouge1, rouge2, rougeL: F1 of ``rouge_score`` with the Porter stemmer,
  averaged over articles. rougeL is computed on the texts with their line
  breaks turned into spaces (not rougeLsum, which splits at line breaks):
  the model writes one running text, and one rule for every system keeps
  them comparable.
* entity_precision: the share of the names and numbers in the summaries
  that occur in their articles, i.e. 1 minus the hallucination rate (after
  Nan et al. 2021, "Entity-level Factual Consistency of Abstractive Text
  Summarization").
* entity_recall: the share of the names and numbers in the reference
  highlights that the summaries contain.

Both entity scores are micro-averaged: the counts are pooled over all
articles before dividing, so a summary without entities adds nothing to
precision instead of counting as perfect or as zero. A score with nothing
to count (no entity in any summary, or in any reference) is None (JSON
null).

Names and numbers are found by ``summarizer.corpus.entities``'s rules.
"""

import collections
import functools

from summarizer.corpus.entities import entities, occurs

ROUGE_TYPES = ('rouge1', 'rouge2', 'rougeL')
METRICS = ROUGE_TYPES + ('entity_precision', 'entity_recall')


def entity_counts(summary, article, reference):
  """Counts what the entity scores of one summary are made of.

  Returns:
    A Counter: ``found`` (entities in the summary), ``supported`` (of those,
    the ones that occur in the article), ``wanted`` (entities in the
    reference) and ``recalled`` (of those, the ones the summary contains).
  """
  mine, theirs = entities(summary), entities(reference)
  return collections.Counter(
      found=len(mine),
      supported=sum(occurs(e, article) for e in mine),
      wanted=len(theirs),
      recalled=sum(occurs(e, summary) for e in theirs))


def entity_ratios(counts):
  """Turns (pooled) ``entity_counts`` into precision and recall, None if undefined."""
  return {
      'entity_precision': counts['supported'] / counts['found'] if counts['found'] else None,
      'entity_recall': counts['recalled'] / counts['wanted'] if counts['wanted'] else None,
  }


def entity_scores(summary, article, reference):
  """Returns entity precision and recall of one summary (None where undefined).

  Args:
    summary: The summary to check.
    article: The article it summarises (what precision checks against).
    reference: The reference highlights (what recall looks for).

  Returns:
    {'entity_precision': float or None, 'entity_recall': float or None}.
  """
  return entity_ratios(entity_counts(summary, article, reference))


@functools.lru_cache(maxsize=1)
def _rouge_scorer():
  # Imported here: building the stemmer costs time that --help should not pay.
  from rouge_score import rouge_scorer  # pylint: disable=g-import-not-at-top
  return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge_scores(prediction, reference):
  """Returns ROUGE-1, ROUGE-2 and ROUGE-L F1 of a prediction, line breaks as spaces.

  Returns:
    {'rouge1': float, 'rouge2': float, 'rougeL': float}, each in [0, 1].
  """
  scores = _rouge_scorer().score(reference.replace('\n', ' '),
                                 prediction.replace('\n', ' '))
  return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


def score_system(predictions, articles, references):
  """Scores one system: ROUGE averaged over articles, entities micro-averaged.

  Args:
    predictions: The system's summaries.
    articles: The articles, in the same order.
    references: The reference highlights, in the same order.

  Returns:
    A dict with the five ``METRICS``.
  """
  if not len(predictions) == len(articles) == len(references) > 0:
    raise ValueError('predictions, articles and references must be equally '
                     'many, and not none')
  rouge = collections.Counter()
  counts = collections.Counter()
  for prediction, article, reference in zip(predictions, articles, references):
    rouge.update(rouge_scores(prediction, reference))
    counts.update(entity_counts(prediction, article, reference))
  result = {name: rouge[name] / len(predictions) for name in ROUGE_TYPES}
  result.update(entity_ratios(counts))
  return result
