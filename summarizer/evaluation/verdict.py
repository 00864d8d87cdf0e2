"""A run's verdict: its model against Lead-3 on validation stories, kept for every summary.

A model's summaries read well long before they are right: a ten-minute
model writes fluent highlights whose names and numbers it makes up. So
the train command ends by summarising the first validation stories with
the model it saved, scoring them and Lead-3 (each story's first three
sentences) on the same stories, and ``config.json`` keeps both::

  "verdict": {"split": "validation", "n": 100, "step": 1702, "sentences": 0.98,
              "model": {"rouge1": ..., "entity_precision": ..., ...},
              "lead3": {"rouge1": ..., ...}}

Every summary of a model that does not beat Lead-3 there comes with a
warning (``summarizer.inference.undertrained.verdict_warning`` says when).
"""

import itertools

from summarizer import progress
from summarizer.corpus import sources
from summarizer.decoding import MAX_SUMMARY_TOKENS
from summarizer.evaluation import baselines
from summarizer.evaluation import scoring
from summarizer.inference import summaries
from summarizer.inference import undertrained

# Validation stories a verdict reads (the first ones of the split).
VERDICT_STORIES = 100
# Articles summarised side by side.
BATCH_SIZE = 16


def judge(loaded, source='news', data_dir=None, limit=VERDICT_STORIES, show_progress=False):
  """Scores a model and Lead-3 on the first validation stories.

  Args:
    loaded: The ``LoadedModel`` to judge (of a run's model directory, read
      when the run has saved it).
    source: The data source the model was trained on.
    data_dir: TFDS data directory (``tfds:`` sources).
    limit: Read at most this many stories (all of them, however long they take).
    show_progress: Show a progress bar on standard error.

  Returns:
    The verdict record (see the module docstring), or None if no story
    was read.
  """
  pairs = list(itertools.islice(sources.examples(source, 'validation', data_dir,
                                                 download=False), limit))
  bar = progress.bar(total=len(pairs), desc='judging against Lead-3', unit='story',
                     disable=not show_progress)
  read = []
  try:
    for first in range(0, len(pairs), BATCH_SIZE):
      batch = pairs[first:first + BATCH_SIZE]
      runs = summaries.summarize_many([article for article, _ in batch], loaded,
                                      MAX_SUMMARY_TOKENS)
      for (article, reference), run in zip(batch, runs):
        text = run.details()['summary_text']
        read.append((article, reference, text,
                     undertrained.unreadable(run.ids, text, loaded.detokenize) is None))
      bar.update(len(batch))
  finally:
    bar.close()
  if not read:
    return None
  articles, references, predictions, sentences = zip(*read)
  lead3 = [baselines.lead3(article) for article in articles]
  return {'split': 'validation', 'n': len(read), 'step': loaded.source.step,
          'sentences': round(sum(sentences) / len(sentences), 4),
          'model': _rounded(scoring.score_system(predictions, articles, references)),
          'lead3': _rounded(scoring.score_system(lead3, articles, references))}


def _rounded(scores):
  return {name: None if value is None else round(value, 4) for name, value in scores.items()}
