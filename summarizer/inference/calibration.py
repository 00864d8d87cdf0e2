"""How familiar a text is to a model: article perplexity, calibrated.

Before it writes a word of summary the model reads the article, and in doing
so it predicts each article token from the ones before it. The mean negative
log-probability of those predictions, exponentiated, is the article's
perplexity under the model: low for text like its training data, high for
text it has never seen the like of. It costs nothing more than the reading.

What counts as high depends on the model, so a model is calibrated on its own
validation split when it is trained or exported: the percentiles of its
articles' perplexities go into ``config.json``, with the threshold above
which an article is called out of the model's domain::

  "perplexity_calibration": {"split": "validation", "n": 500, "p50": ...,
                             "p90": ..., "p99": ..., "max": ..., "threshold": ...}

The threshold is ``THRESHOLD_FACTOR`` times the largest validation
perplexity: far outside what the model saw, not merely at its edge.
"""

import itertools
import math

import numpy as np

from summarizer import progress
from summarizer.corpus import sources
from summarizer.decoding import MAX_SUMMARY_TOKENS
from summarizer.inference.article import article_ids
from summarizer.config import CALIBRATION_ARTICLES, CALIBRATION_KEY, EOS, SEP, update_config

# How far above the largest validation perplexity "out of domain" starts.
THRESHOLD_FACTOR = 2.0


def article_perplexity(loaded, article):
  """Returns the perplexity of an article under a loaded model.

  The article is read as a summary would read it: cleaned, and cut to what
  the model reads (``articles.article_room``).

  Args:
    loaded: A ``LoadedModel``.
    article: The article text.
  """
  ids, _ = article_ids(loaded, article, MAX_SUMMARY_TOKENS)
  _, mean_nll = loaded.decoder.start(ids + [EOS, SEP], n_scored=len(ids))
  return math.exp(mean_nll)


def summarize_perplexities(perplexities, split):
  """Returns the calibration record of a model's perplexities on ``split``."""
  values = np.asarray(perplexities, dtype=np.float64)
  p50, p90, p99 = np.percentile(values, [50, 90, 99])
  largest = float(values.max())
  return {'split': split, 'n': int(values.size), 'p50': round(float(p50), 3),
          'p90': round(float(p90), 3), 'p99': round(float(p99), 3),
          'max': round(largest, 3), 'threshold': round(THRESHOLD_FACTOR * largest, 3)}


def calibrate(loaded, source='news', split='validation', limit=CALIBRATION_ARTICLES,
              data_dir=None, show_progress=False):
  """Measures the perplexities of a model's validation articles.

  Args:
    loaded: The ``LoadedModel`` (of a run's model directory, read when the
      run has saved it).
    source: The data source the model was trained on.
    split: The split to read.
    limit: Read at most this many articles.
    data_dir: TFDS data directory (``tfds:`` sources).
    show_progress: Show a progress bar on standard error.

  Returns:
    The calibration record (see the module docstring).
  """
  pairs = itertools.islice(sources.examples(source, split, data_dir, download=False), limit)
  pairs = progress.bar(pairs, total=limit, desc='calibrating perplexity', unit='article',
                       disable=not show_progress)
  perplexities = []
  for article, _ in pairs:
    perplexities.append(article_perplexity(loaded, article))
  if not perplexities:
    return None
  return summarize_perplexities(perplexities, split)


def save_calibration(model_dir, calibration):
  """Writes a calibration record into a model directory's config.json."""
  update_config(model_dir, **{CALIBRATION_KEY: calibration})


def ood_warning(perplexity, calibration):
  """The one line that tells a user the model does not know this kind of text."""
  return (f'perplexity {perplexity:,.1f}, where the model\'s own validation articles '
          f'have at most {calibration["max"]:.1f} (median {calibration["p50"]:.1f}): '
          'the text is unlike anything it was trained on, so its summary is likely '
          "wrong. Train on your kind of text (data/README.md: 'Train on your own text') or "
          "use the course's model (data/model/README.md: 'Use the course's model')")
