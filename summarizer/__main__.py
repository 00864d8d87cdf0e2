"""Summarise articles from the command line with the shipped model.

  python -m summarizer data/samples/sport.txt
  python -m summarizer a.txt b.txt --json       # one object per file, in order
  cat article.txt | python -m summarizer -
  python -m summarizer --text "Heavy rain closed ..." --stream
  python -m summarizer article.txt --model model/  # the course's checkpoint

A text far from what the model was trained on (its perplexity under the
model far above that of the model's own validation articles) gets a
warning on standard error; the summary is printed all the same.
"""

import argparse
import json
import os
import sys

from summarizer import __version__, options
from summarizer.errors import OneLineParser, SummarizerError, run_command

EPILOG = """examples:
  python -m summarizer data/samples/sport.txt          summary of a file
  cat story.txt | python -m summarizer -               ... of standard input
  python -m summarizer --text "..." --stream           print tokens as they come
  python -m summarizer a.txt b.txt --json             [{"summary_text": ..., ...}, ...]
  python -m summarizer story.txt --model model/        the course's checkpoint
  python -m summarizer story.txt --method greedy       the course's decoder (slow)
  python -m summarizer story.txt --temperature 0.8 --top-k 40 --seed 1
  python -m summarizer story.txt --explain story.html  what it read, per word
  python -m summarizer story.txt --num-beams 4 --no-repeat-ngram-size 3
  python -m summarizer *.txt --batch-size 16           many articles side by side
"""


def read_article(path=None, text=None, stdin=None):
  """Returns the article from ``--text``, a file, or standard input ('-').

  Raises:
    SummarizerError: naming the problem (missing, a directory, binary, not
      UTF-8, empty).
  """
  if text is not None and path is not None:
    raise SummarizerError('give a FILE or --text, not both')
  if text is None:
    if path is None or path == '-':
      stream = stdin if stdin is not None else sys.stdin
      if path is None and stream.isatty():
        raise SummarizerError("no article: give a FILE, '-' for standard input, or --text")
      raw = stream.buffer.read() if hasattr(stream, 'buffer') else stream.read()
      where = 'standard input'
    else:
      if not os.path.exists(path):
        raise SummarizerError(f'{path}: no such file')
      if os.path.isdir(path):
        raise SummarizerError(f'{path}: is a directory, not a text file')
      try:
        with open(path, 'rb') as f:
          raw = f.read()
      except OSError as e:
        raise SummarizerError(f'{path}: cannot read ({e.strerror})') from None
      where = path
    if isinstance(raw, bytes):
      if b'\x00' in raw:
        raise SummarizerError(f'{where}: binary data, not text')
      try:
        raw = raw.decode('utf-8')
      except UnicodeDecodeError:
        raise SummarizerError(f'{where}: not UTF-8 text') from None
    text = raw
  else:
    where = '--text'
  if not text.strip():
    raise SummarizerError(f'{where}: the article is empty')
  return text


def parse_args(argv=None):
  p = OneLineParser(prog='python -m summarizer', description=__doc__.split('\n')[0],
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('files', nargs='*', metavar='FILE',
                 help="articles: UTF-8 text files, or '-' for standard input")
  p.add_argument('--text', default=None, help='the article as a string')
  p.add_argument('--version', action='version', version=f'summarizer {__version__}')
  p.add_argument('--model', default=None,
                 help="a model directory: ours, or the course's checkpoint "
                      '(model.pkl.gz and model.weights.npy.gz; default: the '
                      'shipped data/model)')
  p.add_argument('--vocab', default=None,
                 help="a vocabulary to use instead of the model's own")
  p.add_argument('--n-heads', type=int, default=None,
                 help="attention heads of a checkpoint without config.json "
                      "(default: the course's 8)")
  p.add_argument('--max-length', type=int, default=64,
                 help='most summary tokens (default: 64)')
  p.add_argument('--method', choices=('fast', 'greedy'), default='fast',
                 help='fast (cached, default) or greedy (the course decoder)')
  p.add_argument('--temperature', type=float, default=0.0,
                 help='0 (default) for the most likely summary; above 0 samples')
  p.add_argument('--top-k', type=int, default=None,
                 help='sample among the k most likely tokens')
  p.add_argument('--seed', type=int, default=0, help='seed of the sampling')
  options.add_search_arguments(p, 'articles (FILEs) decoded side by side')
  p.add_argument('--stream', action='store_true',
                 help='print the summary as it is generated')
  p.add_argument('--json', action='store_true',
                 help='print a JSON list, one object per article: summary_text, '
                      'article_perplexity, out_of_domain')
  p.add_argument('--explain', default=None, metavar='PATH',
                 help='also write what the model attended to while writing the '
                      'summary: PATH.html, a page to explore in a browser, or '
                      'PATH.png, a heatmap')
  args = p.parse_args(argv)
  if args.explain is not None and not args.explain.lower().endswith(('.html', '.png')):
    p.error(f'argument --explain: {args.explain} ends in neither .html (the page) '
            'nor .png (the heatmap)')
  if args.explain is not None and (args.stream or args.json):
    p.error('--explain prints the summary itself: leave out --stream and --json')
  if args.max_length < 1:
    p.error('argument --max-length: must be at least 1')
  if args.temperature < 0:
    p.error('argument --temperature: must not be negative')
  if args.top_k is not None and args.top_k < 1:
    p.error('argument --top-k: must be at least 1')
  if args.n_heads is not None and args.n_heads < 1:
    p.error('argument --n-heads: must be at least 1')
  options.check_search_arguments(p, args)
  if args.num_beams > 1 and args.temperature > 0:
    p.error('--num-beams and --temperature exclude each other (beam search does not sample)')
  if args.num_beams > 1 and args.stream:
    p.error('--stream needs --num-beams 1 (a beam\'s summary is known only at its end)')
  if args.stream and args.json:
    p.error('--stream and --json exclude each other')
  if args.files.count('-') > 1:
    p.error("standard input ('-') can be read once")
  return args


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


def ood_warning(perplexity, calibration):
  """The one line that tells a user the model does not know this kind of text."""
  return (f'perplexity {perplexity:,.1f}, where the model\'s own validation articles '
          f'have at most {calibration["max"]:.1f} (median {calibration["p50"]:.1f}): '
          'the text is unlike anything it was trained on, so its summary is likely '
          "wrong. Train on your kind of text (README: 'Train on your own text') or "
          "use the course's model (README: 'Use the course's model')")


def _warn_if_unknown(summary_run, loaded, where, err):
  """Warns if the article (read by now) is out of the model's domain."""
  if summary_run.out_of_domain:
    print(f'warning: {where}' + ood_warning(summary_run.article_perplexity,
                                            loaded.calibration), file=err)


def run(args, stdin=None, out=None, err=None, compilation_cache=False):
  """Summarises as ``args`` say; returns the exit status.

  With ``compilation_cache``, jax's compiled programs are kept on disk for
  the next run (``_trax.use_compilation_cache``); the command turns it on.
  """
  out = out or sys.stdout
  err = err or sys.stderr
  articles = read_articles(args, stdin)
  if args.explain is not None:
    from summarizer import explorer  # pylint: disable=g-import-not-at-top
    return explorer.run_explain(articles, args, out, err)
  # Imported on use: the decoder's modules are not needed to read input.
  from summarizer import _trax, beam, decoding, text, undertrained  # pylint: disable=g-import-not-at-top
  if compilation_cache:
    _trax.use_compilation_cache()
  loaded = decoding.load(args.model, args.vocab, args.n_heads)
  several = len(articles) > 1
  search = beam.Search.from_args(args)
  batched = None
  if several and not args.stream and args.temperature == 0:
    batched = decoding.summarize_many(
        [article for _, article in articles], args.model, args.max_length, args.method,
        search, args.batch_size, vocab_file=args.vocab, n_heads=args.n_heads)
  results = []
  for number, (name, article) in enumerate(articles):
    where = f'{name}: ' if several else ''

    def warn_cut(kept, total, where=where):
      print(f'warning: {where}article cut to its first {kept} of {total} tokens '
            '(the most this model reads)', file=err)

    if batched:
      summary_run = batched[number]
      if summary_run.cut:
        warn_cut(summary_run.kept_tokens, summary_run.article_tokens)
    else:
      summary_run = decoding.summarize_tokens(
          article, args.model, args.max_length, args.method, args.temperature,
          args.top_k, args.seed, on_cut=warn_cut, vocab_file=args.vocab,
          n_heads=args.n_heads, search=search, stream=args.stream)
    if several and not args.json:
      out.write(f'{"" if number == 0 else chr(10)}==> {name} <==\n')
    shown = ''
    for _ in summary_run:
      if len(summary_run.ids) == 1:  # The model has read the article: judge it first.
        _warn_if_unknown(summary_run, loaded, where, err)
      if args.stream:
        so_far = text.detokenize(summary_run.ids, loaded.vocab_file)
        if so_far.startswith(shown):  # A subword may still change a word's end.
          out.write(so_far[len(shown):])
          out.flush()
          shown = so_far
    details = summary_run.details()
    warning = undertrained.undertrained_warning(summary_run.ids, args.model, loaded.vocab_file)
    if warning:
      print(f'warning: {where}{warning}', file=err)
    if not summary_run.ids:  # An empty summary: the article was read all the same.
      _warn_if_unknown(summary_run, loaded, where, err)
    if args.stream:
      out.write('\n')
    elif args.json:
      results.append({key: details[key] for key in
                      ('summary_text', 'article_perplexity', 'out_of_domain')})
    else:
      out.write(details['summary_text'] + '\n')
  if args.json:
    out.write(json.dumps(results) + '\n')
  return 0


def main(argv=None, compilation_cache=False):
  args = parse_args(argv)
  return run_command(lambda: run(args, compilation_cache=compilation_cache),
                     interrupted='stopped')


def exit_now(status):
  """Flushes the output and ends the process without Python's teardown.

  Unloading TensorFlow and jax at exit takes over a second, a fifth of the
  command's time, and there is nothing to save: the summary is printed.
  """
  try:
    sys.stdout.flush()
  except BrokenPipeError:  # The reader left (`... | head -c 10`).
    pass
  sys.stderr.flush()
  os._exit(status)  # pylint: disable=protected-access


if __name__ == '__main__':
  exit_now(main(compilation_cache=True))
