"""Scores: names and numbers, their precision and recall, ROUGE."""

from summarizer.evaluation import scoring

ARTICLE = ('Mayor Tavin Orsell of Dunsworth opened 3 bridges on Monday. '
           'The cost was $4.7 million.')
REFERENCE = 'Tavin Orsell opens 3 bridges in Dunsworth.\nThey cost $4.7 million.'


def test_entity_precision_and_recall_are_exact_fractions():
  summary = 'Mayor Tavin Orsell opened 4 bridges in Dunsworth.'
  # Summary: Tavin Orsell (in the article), 4 (not: 3 and 4.7 are), Dunsworth.
  # Reference: Orsell (in the summary), 3, Dunsworth (in it), 4.7 million.
  assert scoring.entity_scores(summary, ARTICLE, REFERENCE) == {
      'entity_precision': 2 / 3, 'entity_recall': 2 / 4}
  assert scoring.entity_scores('nothing to see here.', ARTICLE, REFERENCE) == {
      'entity_precision': None, 'entity_recall': 0.0}
  assert scoring.entity_scores('x', ARTICLE, 'no names here.') == {
      'entity_precision': None, 'entity_recall': None}


def test_entity_scores_are_micro_averaged():
  summaries = ['Mayor Tavin Orsell opened 4 bridges in Dunsworth.',
               'bridges opened.']
  articles = [ARTICLE, ARTICLE]
  references = [REFERENCE, 'The bridges cost 9 million in Dunsworth.']
  scores = scoring.score_system(summaries, articles, references)
  # The second summary has no entities: it adds nothing to precision (2/3)
  # and misses both reference entities (recall 2 of 4 + 0 of 2).
  assert scores['entity_precision'] == 2 / 3
  assert scores['entity_recall'] == 2 / 6
  assert set(scores) == set(scoring.METRICS)


def test_rouge_of_identical_and_disjoint_texts():
  assert scoring.rouge_scores('the cat sat', 'the cat sat') == {
      'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0}
  assert scoring.rouge_scores('dogs bark loudly', 'the cat sat') == {
      'rouge1': 0.0, 'rouge2': 0.0, 'rougeL': 0.0}
  # Line breaks count as spaces, and stemming matches "opens" and "opened".
  assert scoring.rouge_scores('bridge opens\ntoday', 'bridge opened today') == {
      'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0}
