"""Score a model's summaries against the highlights, beside two baselines.

  python -m summarizer.evaluate --split test --limit 100
  python -m summarizer.evaluate --model runs/tiny --data news --json

Three systems summarise the same articles:

* model: the model's summary (``summarizer.decoding``, greedy argmax).
* lead3: the article's first three sentences.
* retrieval: the highlights of the most similar *training* article by TF-IDF
  cosine (at most ``--retrieval-pool`` of them indexed): what recalling
  training summaries achieves without reading the article closely.

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

Entities are found by rules, not a tagger:

* Sentences end at a line break, or at white space after . ! or ? (a
  closing quote may come between) when the next sentence starts with a
  capital, a digit or an opening quote or bracket, and the full stop does
  not end a title (Mr. Dr. St. ...) or initials (J. U.S.).
* A name is a run of consecutive capitalised words ("Port Velmara"),
  possessive 's dropped. The first word of a sentence, or after an
  opening quote or a colon, is capitalised anyway, so it never counts:
  "Striker Kaev Darviski scored" gives "Kaev Darviski", "Officials said"
  gives nothing. "I" and titles are not names.
* A number is digits with inner commas or points ("1,200", "4.7"), and a
  following %, ordinal ending or scale word ("12.5%", "21st", "4.7
  million"); "per cent" and "percent" are written "%". A currency sign is
  not part of it.
* An entity "occurs" in a text if it appears there as whole words (a
  number not inside a longer number), case-sensitively: the article's
  "Port Velmara" supports a summary's "Velmara", but "4" is not in "4.7".
"""

import argparse
import collections
import functools
import itertools
import json
import math
import os
import re
import sys
import time

import numpy as np
from tqdm import tqdm

from summarizer import data
from summarizer import decoding
from summarizer import sources
from summarizer.config import DEFAULT_MODEL_DIR
from summarizer.errors import OneLineParser, SummarizerError

SYSTEMS = ('model', 'lead3', 'retrieval')
ROUGE_TYPES = ('rouge1', 'rouge2', 'rougeL')
METRICS = ROUGE_TYPES + ('entity_precision', 'entity_recall')
METHODS = ('fast', 'greedy')
RESULTS_FILE = 'eval_results.json'
PREDICTIONS_FILE = 'generated_predictions.txt'

# Words ending in a full stop that does not end a sentence; also never names.
TITLES = frozenset('Mr Mrs Ms Dr Prof St Gen Col Capt Lt Sgt Gov Sen Rep Rev '
                   'Jr Sr Mt'.split())
# Capitalised words that are not names wherever they stand.
NOT_NAMES = TITLES | {'I'}

_OPENERS = '"\'\u201c\u2018(['  # Quotes and brackets a sentence may open with.
_INITIALS_AT_END = re.compile(r'(?:^|\s)(?:[A-Z]\.)+$')
_PER_CENT = re.compile(r'(\d)\s*(?:per\s?cent|percent)\b', re.IGNORECASE)
_TOKEN = re.compile(r"""
    (?P<number>(?<![^\W\d_])\d+(?:[.,]\d+)*(?:%|st\b|nd\b|rd\b|th\b)?
               (?:\s(?:thousand|million|billion|trillion)\b)?)
  | (?P<initials>(?:[A-Z]\.)+(?!\w))
  | (?P<word>[^\W\d_][\w'\u2019-]*)
  | (?P<opener>["\u201c\u2018'(\[](?=\S))
  | (?P<other>\S)
""", re.VERBOSE)
_POSSESSIVE = re.compile(r"(?:['\u2019]s|['\u2019])$")


# --- Sentences and Lead-3 ----------------------------------------------------


def _cut_is_sentence_end(before, after):
  """Tells whether a candidate cut between two pieces ends a sentence."""
  last_word = before.rsplit(None, 1)[-1]
  if last_word.endswith('.') and last_word[:-1] in TITLES:
    return False
  if _INITIALS_AT_END.search(before):
    return False
  first = after[0]
  return first.isupper() or first.isdigit() or first in _OPENERS


def split_sentences(text):
  """Splits text into sentences (rules in the module docstring).

  ``data.sentences`` cuts at every white space after . ! or ?; of those
  cuts, only the ones followed by a likely sentence start are kept.

  Args:
    text: Any text; each line is split on its own.

  Returns:
    A list of sentences, stripped, in order.
  """
  found = []
  for line in text.splitlines():
    line_sentences = []
    for piece in data.sentences(line):
      if line_sentences and not _cut_is_sentence_end(line_sentences[-1], piece):
        line_sentences[-1] += ' ' + piece
      else:
        line_sentences.append(piece)
    found.extend(line_sentences)
  return found


def lead3(article):
  """Returns the Lead-3 baseline: the first three sentences, one a line."""
  return '\n'.join(split_sentences(article)[:3])


# --- Entities ----------------------------------------------------------------


def _canonical(text):
  """Writes "per cent" as % and collapses white space, for extraction and search."""
  return ' '.join(_PER_CENT.sub(r'\1%', text).split())


def _sentence_entities(sentence):
  """Yields the names and numbers of one sentence."""
  run = []
  opens_sentence = True  # The next word stands first: capitalised anyway.
  for match in _TOKEN.finditer(sentence):
    kind, token = match.lastgroup, match.group()
    is_word = kind in ('word', 'initials')
    if (is_word and token[0].isupper() and not opens_sentence
        and token not in NOT_NAMES):
      run.append(_POSSESSIVE.sub('', token))
      opens_sentence = False
      continue
    if run:
      yield ' '.join(run)
      run = []
    if kind == 'number':
      yield token
    if is_word or kind == 'number':
      opens_sentence = False
    elif kind == 'opener' or token == ':':
      opens_sentence = True
  if run:
    yield ' '.join(run)


def entities(text):
  """Returns the set of names and numbers in ``text`` (rules in the module docstring).

  Args:
    text: A summary, an article or highlights (one sentence a line is fine).

  Returns:
    A set of strings such as {'Port Velmara', '1,200', '12.5%'}.
  """
  found = set()
  for sentence in split_sentences(text):
    found.update(_sentence_entities(_canonical(sentence)))
  return found


def occurs(entity, text):
  """Tells whether ``entity`` appears in ``text`` as whole words.

  A number must not be part of a longer one: '4' is not in '4.7' or '14',
  '60' is not in '60%'.
  """
  pattern = (r'(?<!\w)(?<!\d[.,])' + re.escape(entity) + r'(?![\w%])(?![.,]\d)')
  return re.search(pattern, _canonical(text)) is not None


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


# --- ROUGE ---------------------------------------------------------------------


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


# --- Retrieval baseline ------------------------------------------------------------


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


def build_retriever(source='news', data_dir=None, pool=5000, progress=False):
  """Indexes the first ``pool`` training articles of a source."""
  pairs = itertools.islice(sources.examples(source, 'train', data_dir), pool)
  return Retriever(tqdm(pairs, total=pool, desc='indexing training articles',
                        unit='article', file=sys.stderr, disable=not progress))


# --- The evaluation ------------------------------------------------------------------


def summarize_articles(articles, model_dir=None, max_length=64, method='fast',
                       progress=False, n_heads=None):
  """Summarises articles with a model directory.

  Returns:
    (summaries, cut): the summaries, line breaks kept, and how many
    articles had to be cut to fit the model's context.
  """
  # The same arguments as summarize_tokens passes, so the cached model is shared.
  vocab_file = decoding.load(model_dir, None, n_heads).vocab_file
  summaries, cut = [], []
  for article in tqdm(articles, desc='summarising', unit='article',
                      file=sys.stderr, disable=not progress):
    ids = decoding.summarize_tokens(article, model_dir, max_length, method,
                                    on_cut=lambda kept, total: cut.append(total),
                                    n_heads=n_heads)
    summaries.append(data.detokenize(list(ids), vocab_file).strip())
  return summaries, len(cut)


def _check_settings(limit, max_length, method, retrieval_pool):
  for name, value in (('limit', limit), ('max_length', max_length),
                      ('retrieval_pool', retrieval_pool)):
    if value is not None and value < 1:
      raise SummarizerError(f'{name.replace("_", "-")} must be at least 1, not {value}')
  if method not in METHODS:
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")


def evaluate(model_dir=None, source='news', split='test', limit=None,
             max_length=64, method='fast', data_dir=None, retrieval_pool=5000,
             output_dir=None, progress=False, facts_only=False, join=1,
             download=True, n_heads=None):
  """Summarises a split with a model and scores it beside Lead-3 and retrieval.

  Args:
    model_dir: A model directory; default: the shipped model.
    source: A data source string (see ``summarizer.sources``).
    split: The split to score ('test', 'validation', ...).
    limit: Score only the first ``limit`` articles.
    max_length: Most summary tokens.
    method: 'fast' or 'greedy' (same summaries; greedy is the course's slow loop).
    data_dir: TFDS data directory (``tfds:`` sources).
    retrieval_pool: Training articles the retrieval baseline indexes.
    output_dir: If given, where ``eval_results.json`` and
      ``generated_predictions.txt`` are written.
    progress: Show progress bars (and notes) on standard error.
    facts_only: Score short texts: each article cut down to the sentences
      that name something its highlights name (``data.MixShortExamples``).
    join: Score long texts: each article made of this many consecutive
      stories (``data.join_stories``); ``limit`` counts joined articles.
    download: Whether a ``tfds:`` dataset missing from ``data_dir`` may be
      downloaded.
    n_heads: Attention heads of a checkpoint without config.json.

  Returns:
    {'model': {...}, 'lead3': {...}, 'retrieval': {...}, 'n': N}, each
    system with the five ``METRICS`` rounded to 4 decimals (None where
    undefined).

  Raises:
    SummarizerError: bad settings, an unknown source or split, a missing
      model directory, an unwritable output directory.
  """
  _check_settings(limit, max_length, method, retrieval_pool)
  split = sources.canonical_split(split)
  if join < 1:
    raise SummarizerError(f'join must be at least 1, not {join}')
  stream = sources.examples(source, split, data_dir, download)
  pairs = list(itertools.islice(stream, None if limit is None else limit * join))
  if not pairs:
    raise SummarizerError(f'{source}: no examples in the {split} split')
  if join > 1:
    pairs = [data.join_stories(pairs[i:i + join])
             for i in range(0, len(pairs) - join + 1, join)]
  if facts_only:
    pairs = list(data.MixShortExamples(1.0, keep_other=0.0)(iter(pairs)))
  articles = [article for article, _ in pairs]
  references = [highlights for _, highlights in pairs]
  decoding.load(model_dir, None, n_heads)  # A missing model fails before the indexing.
  retriever = build_retriever(source, data_dir, retrieval_pool, progress)
  start = time.monotonic()
  predictions, cut = summarize_articles(articles, model_dir, max_length, method,
                                        progress, n_heads)
  seconds = time.monotonic() - start
  if cut and progress:
    print(f'note: {cut} of {len(articles)} articles were cut to fit the '
          'model\'s context', file=sys.stderr)
  systems = {
      'model': predictions,
      'lead3': [lead3(article) for article in articles],
      'retrieval': [retriever.nearest_highlights(article) for article in articles],
  }
  results = {name: _rounded(score_system(texts, articles, references))
             for name, texts in systems.items()}
  results['n'] = len(pairs)
  if output_dir:
    settings = dict(limit=limit, max_length=max_length, method=method,
                    facts_only=facts_only, join=join,
                    retrieval_pool=len(retriever.highlights), data_dir=data_dir,
                    articles_cut=cut, summarising_seconds=round(seconds, 2))
    write_outputs(output_dir, results, predictions, settings,
                  model_dir=os.path.abspath(model_dir or DEFAULT_MODEL_DIR),
                  data=source, split=split)
  return results


def _rounded(scores):
  return {k: None if v is None else round(v, 4) for k, v in scores.items()}


def write_outputs(output_dir, results, predictions, settings, **described):
  """Writes ``eval_results.json`` and ``generated_predictions.txt``.

  Args:
    output_dir: Created if missing.
    results: The scores (``evaluate``'s dict).
    predictions: The model's summaries; each becomes one line.
    settings: How the evaluation ran (saved under "settings").
    **described: More top-level entries (model_dir, data, split).

  Returns:
    The paths written.
  """
  results_path = os.path.join(output_dir, RESULTS_FILE)
  predictions_path = os.path.join(output_dir, PREDICTIONS_FILE)
  try:
    os.makedirs(output_dir, exist_ok=True)
    with open(results_path, 'w', encoding='utf-8') as f:
      json.dump(dict(results, **described, settings=settings), f, indent=2)
      f.write('\n')
    with open(predictions_path, 'w', encoding='utf-8') as f:
      # One line per summary: line breaks within one would shift the rest.
      f.writelines(' '.join(p.split()) + '\n' for p in predictions)
  except OSError as e:
    raise SummarizerError(f'{output_dir}: cannot write the results '
                          f'({e.strerror or e})') from None
  return results_path, predictions_path


def table(results):
  """Formats ``evaluate``'s scores as an aligned text table (0-1, 3 decimals)."""
  width = max(len(name) for name in SYSTEMS)
  lines = [' '.join([f'{"system":<{width}}'] + list(METRICS))]
  for name in SYSTEMS:
    cells = [f'{name:<{width}}']
    for metric in METRICS:
      value = results[name][metric]
      cells.append(f'{"-" if value is None else f"{value:.3f}":>{len(metric)}}')
    lines.append(' '.join(cells))
  return '\n'.join(lines)


# --- Command line ------------------------------------------------------------------------


def parse_args(argv=None):
  """Parses the command line of ``python -m summarizer.evaluate``."""
  p = OneLineParser(prog='python -m summarizer.evaluate', description=__doc__,
              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--model', default=None,
                 help='model directory (default: the shipped data/model)')
  p.add_argument('--data', default='news',
                 help='data source: news (default), tfds:NAME, .story files, '
                      'JSONL or CSV')
  p.add_argument('--data-dir', default=None,
                 help='TFDS data directory (default: ~/tensorflow_datasets)')
  p.add_argument('--no-download', action='store_true',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--split', default='test', help='split to score (default: test)')
  p.add_argument('--limit', type=int, default=None,
                 help='score only the first N articles')
  p.add_argument('--max-length', type=int, default=decoding.MAX_SUMMARY_TOKENS,
                 help='most summary tokens (default: %(default)s)')
  p.add_argument('--method', choices=METHODS, default='fast',
                 help="decoder: fast (cached) or greedy (the course's loop)")
  p.add_argument('--retrieval-pool', type=int, default=5000,
                 help='training articles the retrieval baseline indexes '
                      '(default: %(default)s)')
  p.add_argument('--output-dir', default=os.path.join('runs', 'eval'),
                 help=f'where {RESULTS_FILE} and {PREDICTIONS_FILE} go '
                      '(default: %(default)s)')
  p.add_argument('--facts-only', action='store_true',
                 help="score short texts: each article cut to the sentences "
                      "that name its highlights' names and numbers")
  p.add_argument('--join', type=int, default=1, metavar='N',
                 help='score long texts: articles of N consecutive stories '
                      '(default: 1)')
  p.add_argument('--n-heads', type=int, default=None,
                 help="attention heads of a checkpoint without config.json "
                      "(default: the course's 8)")
  p.add_argument('--json', action='store_true',
                 help='print the scores as one JSON object instead of a table')
  return p.parse_args(argv)


def main(argv=None):
  args = parse_args(argv)
  try:
    results = evaluate(args.model, args.data, args.split, args.limit,
                       args.max_length, args.method, args.data_dir,
                       args.retrieval_pool, args.output_dir, progress=True,
                       facts_only=args.facts_only, join=args.join,
                       download=not args.no_download, n_heads=args.n_heads)
  except SummarizerError as e:
    print(f'error: {e}', file=sys.stderr)
    return 2
  except KeyboardInterrupt:
    print('stopped: nothing was written', file=sys.stderr)
    return 130
  if args.json:
    print(json.dumps(results))
  else:
    print(table(results))
    print(f'{results["n"]} articles; scores and summaries in {args.output_dir}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
