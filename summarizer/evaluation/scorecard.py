"""Scoring a model's summaries against the highlights, beside two baselines.

The command is ``python -m summarizer.evaluate``. Three systems summarise
the same articles: the model (greedy argmax by default, or beam search;
``summarizer.inference``, several articles side by side), Lead-3 and
retrieval (``summarizer.evaluation.baselines``).
Each is scored with ROUGE-1, ROUGE-2, ROUGE-L and the precision and recall
of its names and numbers (``summarizer.evaluation.scoring``, which defines them).
"""

import collections
import itertools
import os
import sys
import time

from summarizer import files
from summarizer import progress
from summarizer.config import DEFAULT_MODEL_DIR
from summarizer.corpus import lessons
from summarizer.corpus import sources
from summarizer.errors import SummarizerError, json_text
from summarizer.evaluation import METHODS, OUTPUT_FILES, PREDICTIONS_FILE, RESULTS_FILE  # pylint: disable=unused-import
from summarizer.evaluation import baselines
from summarizer.evaluation import scoring
from summarizer.inference import article as article_door
from summarizer.inference import beam
from summarizer.inference import loaded_model
from summarizer.inference import search_options
from summarizer.inference import summaries
from summarizer.runs import locks
from summarizer.runs import run_dir

SYSTEMS = ('model', 'lead3', 'retrieval')
METRICS = scoring.METRICS


def summarize_articles(articles, loaded, max_length=64, method='fast',
                       show_progress=False, search=None,
                       batch_size=search_options.BATCH_SIZE):
  """Summarises articles with a ``LoadedModel``, ``batch_size`` side by side.

  Returns:
    (summaries, cut): the summaries, line breaks kept, and how many
    articles had to be cut to fit the model's context.
  """
  bar = progress.bar(total=len(articles), desc='summarising', unit='article',
                     disable=not show_progress)
  try:
    runs = summaries.summarize_many(articles, loaded, max_length, method, search,
                                    batch_size, on_batch=bar.update)
  finally:
    bar.close()
  cut = sum(run.cut for run in runs)
  if cut and show_progress:
    print(f'note: {cut} of {len(articles)} articles were cut to fit the '
          'model\'s context', file=sys.stderr)
  return [run.details()['summary_text'] for run in runs], cut


def scored_pairs(source='news', split='test', limit=None, data_dir=None, download=True,
                 join=1, facts_only=False):
  """Returns the (article, highlights) pairs an evaluation scores.

  Args:
    source, split, data_dir, download: Where the pairs come from
      (``sources.examples``).
    limit: At most this many pairs (None: all).
    join: Articles of this many consecutive stories (``lessons.join_stories``).
    facts_only: Articles cut down to the sentences with their highlights'
      names and numbers (``lessons.MixShortExamples``).
  """
  if join < 1:
    raise SummarizerError(f'join must be at least 1, not {join}')
  stream = sources.examples(source, split, data_dir, download)
  pairs = list(itertools.islice(stream, None if limit is None else limit * join))
  if not pairs:
    raise SummarizerError(f'{source}: no examples in the {split} split')
  if join > 1:
    pairs = [lessons.join_stories(pairs[i:i + join])
             for i in range(0, len(pairs) - join + 1, join)]
  if facts_only:
    pairs = list(lessons.MixShortExamples(1.0, keep_other=0.0)(iter(pairs)))
  return _cleaned_pairs(pairs)


def _cleaned_pairs(pairs):
  """The pairs as the model reads them (``inference.article.cleaned``): Lead-3, retrieval
  and the scores read what it reads; what was taken out is said in one line."""
  counts, kept = collections.Counter(), []
  for article, highlights in pairs:
    (article, removed), (highlights, also) = (article_door.cleaned(article),
                                              article_door.cleaned(highlights))
    counts.update(removed)
    counts.update(also)
    kept.append((article, highlights))
  message = article_door.cleaning_message(dict(counts))
  if message:
    print(f'warning: {message.replace("the article held", "the stories held", 1)}',
          file=sys.stderr)
  return kept


def _check_settings(limit, max_length, method, retrieval_pool, batch_size=1, search=None,
                    output_dir=None, overwrite_output_dir=False):
  """Refuses bad settings; returns the search (default: greedy), checked."""
  for name, value in (('limit', limit), ('max_length', max_length),
                      ('retrieval_pool', retrieval_pool), ('batch_size', batch_size)):
    if value is not None and value < 1:
      raise SummarizerError(f'{name.replace("_", "-")} must be at least 1, not {value}')
  if method not in METHODS:
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")
  search = search or beam.Search()
  search.check(max_length)
  if output_dir:
    check_output_dir(output_dir, overwrite_output_dir)
  return search


def check_output_dir(output_dir, overwrite_output_dir=False):
  """Refuses an output directory with an earlier evaluation's results, as training does.

  Raises:
    SummarizerError: ``output_dir`` holds ``OUTPUT_FILES`` and
      ``overwrite_output_dir`` is False.
  """
  earlier = sorted(os.path.basename(path) for path in run_dir.own_files(output_dir, OUTPUT_FILES))
  if earlier and not overwrite_output_dir:
    raise SummarizerError(f'--output-dir {output_dir} holds an earlier evaluation '
                          f'({", ".join(earlier)}): pass --overwrite-output-dir to '
                          'replace it, or choose another --output-dir')


def evaluate(model_dir=None, source='news', split='test', limit=None,
             max_length=64, method='fast', data_dir=None, retrieval_pool=5000,
             output_dir=None, show_progress=False, facts_only=False, join=1,
             download=True, n_heads=None, search=None, batch_size=search_options.BATCH_SIZE,
             overwrite_output_dir=False):
  """Summarises a split with a model and scores it beside Lead-3 and retrieval.

  Args:
    model_dir: A model directory; default: the shipped model.
    source: A data source string (see ``summarizer.corpus.sources``).
    split: The split to score ('test', 'validation', ...).
    limit: Score only the first ``limit`` articles.
    max_length: Most summary tokens.
    method: 'fast' or 'greedy' (same summaries; greedy is the course's slow loop).
    data_dir: TFDS data directory (``tfds:`` sources).
    retrieval_pool: Training articles the retrieval baseline indexes.
    output_dir: If given, where ``RESULTS_FILE`` and ``PREDICTIONS_FILE`` go;
      one holding an earlier evaluation's is refused unless ``overwrite_output_dir``.
    show_progress: Show progress bars (and notes) on standard error.
    facts_only: Score short texts: each article cut down to the sentences
      that name something its highlights name (``lessons.MixShortExamples``).
    join: Score long texts: each article made of this many consecutive
      stories (``lessons.join_stories``); ``limit`` counts joined articles.
    download: Whether a missing ``tfds:`` dataset may be downloaded.
    n_heads: Attention heads of a checkpoint without config.json.
    search: A ``beam.Search``: beams and constraints (default: greedy).
    batch_size: Articles decoded side by side (the same summaries).
    overwrite_output_dir: Replace an earlier evaluation's results (kept until
      the new ones are written).

  Returns:
    {'model': {...}, 'lead3': {...}, 'retrieval': {...}, 'n': N}: each system's
    five ``METRICS``, rounded to 4 decimals (None where undefined).

  Raises:
    SummarizerError: bad settings, an unknown source or split, a missing model
      directory, an output directory unwritable or with an earlier evaluation.
  """
  search = _check_settings(limit, max_length, method, retrieval_pool, batch_size, search,
                           output_dir, overwrite_output_dir)
  # One evaluation at a time in an output directory: a second one stops at once.
  with locks.locked(output_dir):
    if output_dir:  # Again, now that it is ours: another may have finished meanwhile.
      check_output_dir(output_dir, overwrite_output_dir)
    return _evaluate_locked(model_dir, source, split, limit, max_length, method, data_dir,
                            retrieval_pool, output_dir, show_progress, facts_only, join,
                            download, n_heads, search, batch_size)


def _evaluate_locked(model_dir, source, split, limit, max_length, method, data_dir,
                     retrieval_pool, output_dir, show_progress, facts_only, join, download,
                     n_heads, search, batch_size):
  """``evaluate``'s work, its output directory locked; the arguments are its."""
  split = sources.canonical_split(split)
  pairs = scored_pairs(source, split, limit, data_dir, download, join, facts_only)
  articles, references = [a for a, _ in pairs], [h for _, h in pairs]
  loaded = loaded_model.load(model_dir, None, n_heads)  # Before the indexing: a bad one fails at once.
  retriever = baselines.build_retriever(source, data_dir, retrieval_pool, show_progress)
  start = time.monotonic()
  predictions, cut = summarize_articles(articles, loaded, max_length, method,
                                        show_progress, search, batch_size)
  seconds = time.monotonic() - start
  results = dict(_scores(articles, references, predictions, retriever), n=len(pairs))
  if output_dir:
    settings = dict(limit=limit, max_length=max_length, method=method,
                    facts_only=facts_only, join=join,
                    retrieval_pool=len(retriever.highlights), data_dir=data_dir,
                    articles_cut=cut, summarising_seconds=round(seconds, 2),
                    batch_size=batch_size, **search.to_dict())
    write_outputs(output_dir, results, predictions, settings,
                  model_dir=os.path.abspath(model_dir or DEFAULT_MODEL_DIR),
                  data=source, split=split)
  return results


def _scores(articles, references, predictions, retriever):
  """The model's scores and the two baselines', by system."""
  systems = {
      'model': predictions,
      'lead3': [baselines.lead3(article) for article in articles],
      'retrieval': [retriever.nearest_highlights(article) for article in articles],
  }
  return {name: _rounded(scoring.score_system(texts, articles, references))
          for name, texts in systems.items()}


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
  # One line per summary: line breaks within one would shift the rest.
  contents = {
      results_path: json_text(dict(results, **described, settings=settings), indent=2) + '\n',
      predictions_path: ''.join(' '.join(p.split()) + '\n' for p in predictions),
  }
  try:
    os.makedirs(output_dir, exist_ok=True)
    # Both written whole under new names of their own first (files.replacing):
    # earlier results are replaced only once both new ones are complete (a
    # full disk keeps them), and a link planted at either name is replaced,
    # never written through.
    with files.replacing(results_path) as results_file, \
         files.replacing(predictions_path) as predictions_file:
      for path, temporary in ((results_path, results_file),
                              (predictions_path, predictions_file)):
        with open(temporary, 'w', encoding='utf-8') as f:
          f.write(contents[path])
          f.flush()
          os.fsync(f.fileno())
  except OSError as e:
    raise SummarizerError(f'{output_dir}: cannot write the results '
                          f'({e.strerror or e}); earlier results there are kept') from None
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

