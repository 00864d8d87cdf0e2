"""Two baselines a summariser must beat: Lead-3 and retrieval.

* Lead-3: the article's first three sentences, a strong baseline on news,
  which puts its facts first.
* Retrieval: the highlights of the most similar *training* article by TF-IDF
  cosine: what recalling training summaries achieves without reading the
  article closely.
"""

import collections
import itertools
import math
import re

import numpy as np

from summarizer import progress
from summarizer.corpus import sources
from summarizer.errors import SummarizerError
from summarizer.corpus.sentences import split_sentences


def lead3(article):
  """Returns the Lead-3 baseline: the first three sentences, one a line."""
  return '\n'.join(split_sentences(article)[:3])


def _terms(text):
  """Lowercase word tokens (letters and digits) of a text."""
  return re.findall(r'[^\W_]+', text.lower())


class Retriever:
  """Finds the training article most like a new one by TF-IDF cosine.

  Term weights are raw counts times a smoothed idf, ``log((1 + N) / (1 +
  df)) + 1``, and each article's vector has unit length. The index maps a
  term to numpy arrays of (article, weight), so a query costs one vector
  addition per distinct term it shares with the training articles.

  Args:
    pairs: (article, highlights) training pairs.
  """

  def __init__(self, pairs):
    self.highlights = []
    counts = []
    for article, highlights in pairs:
      counts.append(collections.Counter(_terms(article)))
      self.highlights.append(highlights)
    if not counts:
      raise SummarizerError('no training articles to retrieve highlights from')
    document_frequency = collections.Counter()
    for article_counts in counts:
      document_frequency.update(article_counts.keys())
    n = len(counts)
    self._idf = {term: math.log((1 + n) / (1 + df)) + 1.0
                 for term, df in document_frequency.items()}
    postings = collections.defaultdict(lambda: ([], []))
    for index, article_counts in enumerate(counts):
      for term, weight in self._vector(article_counts).items():
        postings[term][0].append(index)
        postings[term][1].append(weight)
    self._postings = {term: (np.array(ids, np.int64), np.array(weights, np.float64))
                      for term, (ids, weights) in postings.items()}

  def _vector(self, term_counts):
    """Returns the unit TF-IDF vector (dict) of known terms."""
    vector = {t: c * self._idf[t] for t, c in term_counts.items() if t in self._idf}
    norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
    return {t: w / norm for t, w in vector.items()}

  def similarities(self, article):
    """Returns the cosine similarity of ``article`` to every training article."""
    scores = np.zeros(len(self.highlights))
    for term, weight in self._vector(collections.Counter(_terms(article))).items():
      ids, weights = self._postings[term]
      scores[ids] += weight * weights  # ids are distinct within a posting list.
    return scores

  def nearest(self, article):
    """Returns the index of the most similar training article (first on ties)."""
    return int(np.argmax(self.similarities(article)))

  def nearest_highlights(self, article):
    """Returns the highlights of the most similar training article."""
    return self.highlights[self.nearest(article)]


def build_retriever(source='news', data_dir=None, pool=5000, show_progress=False):
  """Indexes the first ``pool`` training articles of a source."""
  pairs = itertools.islice(sources.examples(source, 'train', data_dir), pool)
  return Retriever(progress.bar(pairs, total=pool, desc='indexing training articles',
                                unit='article', disable=not show_progress))
