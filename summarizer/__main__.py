"""Summarise articles from the command line with the shipped model.

  python -m summarizer data/samples/sport.txt
  python -m summarizer a.txt b.txt --json       # one object per file, in order
  cat article.txt | python -m summarizer -
  python -m summarizer --text "Heavy rain closed ..." --stream
  python -m summarizer article.txt --model model/  # the course's checkpoint

Summaries are searched with 4 beams, a length penalty of 2 and no trigram twice
(--num-beams 1: greedy search, the course's way; --method greedy: the course's
own decoder). A text far from what the model was trained on (its perplexity under the
model far above that of the model's own validation articles) gets a
warning on standard error; the summary is printed all the same.
"""

import argparse
import io
import os
import sys

from summarizer import __version__
from summarizer.errors import (OneLineParser, SummarizerError, finite_float, json_text,
                               output_lost, run_command, seed, user_path)
from summarizer.inference import search_options
from summarizer.inference.article import cut_message, read_article


EPILOG = """examples:
  python -m summarizer data/samples/sport.txt          summary of a file (beam search)
  cat story.txt | python -m summarizer -               ... of standard input
  python -m summarizer --text "..." --stream           print tokens as they come
  python -m summarizer a.txt b.txt --json             [{"summary_text": ..., ...}, ...]
  python -m summarizer story.txt --model model/        the course's checkpoint
  python -m summarizer story.txt --method greedy       the course's decoder (slow)
  python -m summarizer story.txt --temperature 0.8 --top-k 40 --seed 1
  python -m summarizer story.txt --explain story.html  what it read, per word
  python -m summarizer story.txt --num-beams 1           greedy search, the course's way, cached
  python -m summarizer *.txt --batch-size 16           many articles side by side
"""


def _add_explain_arguments(p):
  """--explain PATH, and --force to replace an existing PATH."""
  p.add_argument('--explain', type=user_path, default=None, metavar='PATH',
                 help='also write what the model attended to while writing the '
                      'summary: PATH.html, a page to explore in a browser, or '
                      'PATH.png, a heatmap')
  p.add_argument('--force', action='store_true',
                 help='overwrite the --explain PATH if it exists')


def parse_args(argv=None):
  p = OneLineParser(prog='python -m summarizer', description=__doc__.split('\n')[0],
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('files', type=user_path, nargs='*', metavar='FILE',
                 help="articles: UTF-8 text files, or '-' for standard input")
  p.add_argument('--text', default=None, help='the article as a string')
  p.add_argument('--version', action='version', version=f'summarizer {__version__}')
  p.add_argument('--model', type=user_path, default=None,
                 help="a model directory: ours, or the course's checkpoint "
                      '(model.pkl.gz and model.weights.npy.gz; default: the '
                      'shipped data/model)')
  p.add_argument('--vocab', type=user_path, default=None,
                 help="a vocabulary to use instead of the model's own")
  p.add_argument('--n-heads', type=int, default=None,
                 help="attention heads of a checkpoint without config.json "
                      "(default: the course's 8)")
  p.add_argument('--max-length', type=int, default=64,
                 help='most summary tokens (default: 64)')
  p.add_argument('--method', choices=('fast', 'greedy'), default='fast',
                 help='fast (cached, default) or greedy (the course decoder)')
  p.add_argument('--temperature', type=finite_float, default=0.0,
                 help='0 (default) for the most likely summary; above 0 samples')
  p.add_argument('--top-k', type=int, default=None,
                 help='sample among the k most likely tokens')
  p.add_argument('--seed', type=seed, default=0, help='seed of the sampling')
  search_options.add_search_arguments(p, 'articles (FILEs) decoded side by side', best=True)
  p.add_argument('--stream', action='store_true',
                 help='print the summary as it is generated')
  p.add_argument('--json', action='store_true',
                 help='print a JSON list, one object per article: summary_text, '
                      'article_perplexity, out_of_domain')
  _add_explain_arguments(p)
  args = p.parse_args(argv)
  if args.explain is not None and not args.explain.lower().endswith(('.html', '.png')):
    p.error(f'argument --explain: {args.explain} ends in neither .html (the page) '
            'nor .png (the heatmap)')
  if args.explain is not None and (args.stream or args.json):
    p.error('--explain prints the summary itself: leave out --stream and --json')
  if args.max_length < 1:
    p.error('argument --max-length: must be at least 1')
  problem = search_options.temperature_problem(args.temperature)
  if problem:
    p.error(f'argument --temperature: {problem}')
  _check_top_k_and_force(p, args)
  if args.n_heads is not None and args.n_heads < 1:
    p.error('argument --n-heads: must be at least 1')
  # Beam search unless the course's decoder, sampling or streaming is asked for.
  search_options.fill_search_arguments(
      args, search_options.greedy_for(args.method, args.temperature, args.stream))
  search_options.check_search_arguments(p, args)
  if args.num_beams > 1 and args.temperature > 0:
    p.error('--num-beams and --temperature exclude each other (beam search does not sample)')
  if args.num_beams > 1 and args.stream:
    p.error('--stream needs --num-beams 1 (a beam\'s summary is known only at its end)')
  if args.stream and args.json:
    p.error('--stream and --json exclude each other')
  if args.files.count('-') > 1:
    p.error("standard input ('-') can be read once")
  return args


def _check_top_k_and_force(p, args):
  """Refuses a --top-k below 1; and a flag that would change nothing, not ignored."""
  if args.top_k is not None and args.top_k < 1:
    p.error('argument --top-k: must be at least 1')
  if args.top_k is not None and args.temperature == 0:
    p.error('argument --top-k: only sampling (--temperature above 0) reads it')
  if args.force and args.explain is None:
    p.error('argument --force: only --explain writes a file; leave out --force')


def read_articles(args, stdin=None):
  """Returns [(name, text)] for --text, the files, or standard input.

  Every article is read before the model loads, so a bad file costs no wait.
  """
  if args.text is not None:
    if args.files:
      raise SummarizerError('give FILEs or --text, not both')
    return [('--text', read_article(text=args.text))]
  if not args.files:
    return [('standard input', read_article(stdin=stdin))]
  return [(path, read_article(path, stdin=stdin)) for path in args.files]


def _warn_if_unknown(summary_run, loaded, where, err):
  """Warns if the article (read by now) is out of the model's domain."""
  from summarizer.inference import calibration  # pylint: disable=g-import-not-at-top
  if summary_run.out_of_domain:
    print(f'warning: {where}' + calibration.ood_warning(summary_run.article_perplexity,
                                                        loaded.calibration), file=err)


def _summary_runs(articles, loaded, args, search, err):
  """Yields (name, where, SummaryRun) per article: decoded side by side, or started in turn."""
  from summarizer.inference import summaries  # pylint: disable=g-import-not-at-top
  several = len(articles) > 1
  batched = None
  if several and not args.stream and args.temperature == 0:
    batched = summaries.summarize_many(
        [article for _, article in articles], loaded, args.max_length, args.method,
        search, args.batch_size)
  for number, (name, article) in enumerate(articles):
    where = f'{name}: ' if several else ''

    def warn_cut(kept, total, where=where):
      print(f'warning: {where}{cut_message(kept, total)}', file=err)

    if batched:
      summary_run = batched[number]
      if summary_run.cut:
        warn_cut(summary_run.kept_tokens, summary_run.article_tokens)
    else:
      summary_run = summaries.summarize_tokens(
          article, loaded, args.max_length, args.method, args.temperature,
          args.top_k, args.seed, on_cut=warn_cut, search=search, stream=args.stream)
    if summary_run.cleaning:
      print(f'warning: {where}{summary_run.cleaning}', file=err)
    yield name, where, summary_run


def _write(out, text, flush=False):
  """Writes ``text`` to the output; a failed write's error is marked as the output's own.

  Without a file name in the error, ``errors.output_lost`` could not tell the
  summary's own write from another file's (a cache entry, a checkpoint).
  """
  try:
    out.write(text)
    if flush:
      out.flush()
  except OSError as e:
    e.output_lost = True
    raise


def _generate(summary_run, loaded, stream, where, out, err):
  """Generates the summary, judging the article at its first token; prints it as it comes."""
  shown = ''
  for _ in summary_run:
    if len(summary_run.ids) == 1:  # The model has read the article: judge it first.
      _warn_if_unknown(summary_run, loaded, where, err)
    if stream:
      so_far = loaded.detokenize(summary_run.ids)
      if so_far.startswith(shown):  # A subword may still change a word's end.
        _write(out, so_far[len(shown):], flush=True)
        shown = so_far


def _explain(articles, args, out, err):
  """The ``--explain PATH``: writes the page or the heatmap, prints the summary and warnings."""
  from summarizer.explorer import explanation  # pylint: disable=g-import-not-at-top
  from summarizer.inference import beam, calibration, loaded_model, undertrained  # pylint: disable=g-import-not-at-top
  if len(articles) != 1:
    raise SummarizerError('--explain takes one article')
  explanation.check_output_path(args.explain, args.force)  # Before the model loads.

  def warn_cut(kept, total):
    print(f'warning: {cut_message(kept, total)}', file=err)

  explained = explanation.explain(
      articles[0][1], args.model, args.max_length, args.method, args.temperature, args.top_k,
      args.seed, args.vocab, args.n_heads, on_cut=warn_cut, search=beam.Search.from_args(args),
      on_clean=lambda line: print(f'warning: {line}', file=err))
  explained.save(args.explain, args.force)
  loaded = loaded_model.load(args.model, args.vocab, args.n_heads)
  if explained.out_of_domain:
    print('warning: ' + calibration.ood_warning(explained.article_perplexity,
                                                loaded.calibration), file=err)
  warning = undertrained.undertrained_warning(explained.summary_ids, loaded,
                                              beam.Search.from_args(args))
  if warning:
    print(f'warning: {warning}', file=err)
  _write(out, explained.summary + '\n')
  made_up = [f.text for f in explained.facts if not f.in_article]
  print(f'wrote {args.explain}' + (f' (not in the article: {", ".join(made_up)})'
                                   if made_up else ''), file=err)
  return 0


def run(args, stdin=None, out=None, err=None, compilation_cache=False):
  """Summarises as ``args`` say; returns the exit status.

  With ``compilation_cache``, jax's compiled programs are kept on disk for
  the next run (``inference.disk_cache``); the command turns it on.
  """
  out = out or sys.stdout
  err = err or sys.stderr or io.StringIO()  # `2>&-`: warnings go nowhere, not to stdout.
  if out is None:  # `>&-`: the process has no standard output at all.
    raise SummarizerError('standard output is closed: nowhere to write the summary')
  articles = read_articles(args, stdin)
  if args.explain is not None:
    return _explain(articles, args, out, err)
  # Imported on use: reading the input needs neither Trax nor the decoder.
  from summarizer.inference import beam, disk_cache, loaded_model, undertrained  # pylint: disable=g-import-not-at-top
  if compilation_cache:
    disk_cache.use_compilation_cache(warn=lambda line: print(f'warning: {line}', file=err))
  loaded = loaded_model.load(args.model, args.vocab, args.n_heads)
  results = []
  runs = _summary_runs(articles, loaded, args, beam.Search.from_args(args), err)
  for number, (name, where, summary_run) in enumerate(runs):
    if len(articles) > 1 and not args.json:
      _write(out, f'{"" if number == 0 else chr(10)}==> {name} <==\n')
    _generate(summary_run, loaded, args.stream, where, out, err)
    details = summary_run.details()
    warning = undertrained.undertrained_warning(summary_run.ids, loaded, summary_run.search)
    if warning:
      print(f'warning: {where}{warning}', file=err)
    if not summary_run.ids:  # An empty summary: the article was read all the same.
      _warn_if_unknown(summary_run, loaded, where, err)
    if args.stream:
      _write(out, '\n')
    elif args.json:
      results.append({key: details[key] for key in
                      ('summary_text', 'article_perplexity', 'out_of_domain')})
    else:
      _write(out, details['summary_text'] + '\n')
  if args.json:
    _write(out, json_text(results) + '\n')
  return 0


def main(argv=None, compilation_cache=False):
  args = parse_args(argv)
  return run_command(lambda: run(args, compilation_cache=compilation_cache),
                     interrupted='stopped')


def exit_now(status):
  """Flushes the output and ends the process without Python's teardown.

  Unloading TensorFlow and jax at exit takes over a second, a fifth of the
  command's time, and there is nothing to save: the summary is printed.
  If it cannot be (a full disk), that is said in one line and the status
  is not 0; a reader that left (`... | head -c 10`) is no error.
  """
  try:
    if sys.stdout is not None:  # None: `>&-`, which run refused.
      sys.stdout.flush()
  except BrokenPipeError:  # The reader left (`... | head -c 10`).
    pass
  except OSError as e:  # What run_command flushed cannot fail again: this is new.
    e.output_lost = True  # The summary's own stream.
    status = output_lost(e) if status == 0 else status
  try:
    if sys.stderr is not None:
      sys.stderr.flush()
  except OSError:  # Nowhere left to say anything.
    pass
  os._exit(status)  # pylint: disable=protected-access


if __name__ == '__main__':
  exit_now(main(compilation_cache=True))
