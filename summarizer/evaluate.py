"""Score a model's summaries against the highlights, beside two baselines.

  python -m summarizer.evaluate --split test --limit 100
  python -m summarizer.evaluate --model runs/tiny --data news --json
  python -m summarizer.evaluate --facts-only     # short texts
  python -m summarizer.evaluate --join 2         # long texts: two stories an article
  python -m summarizer.evaluate --num-beams 4 --length-penalty 2 --no-repeat-ngram-size 3

Three systems summarise the same articles: the model (greedy argmax by
default, or beam search; ``summarizer.decoding``, several articles side by
side), Lead-3 and retrieval (``summarizer.baselines``).
Each is scored with ROUGE-1, ROUGE-2, ROUGE-L and the precision and recall
of its names and numbers (``summarizer.scoring``, which defines them).
"""

import argparse
import os
import sys

from summarizer.errors import OneLineParser, json_text, run_command, user_path
from summarizer.evaluation import METHODS, PREDICTIONS_FILE, RESULTS_FILE
from summarizer.inference import search_options

# decoding.MAX_SUMMARY_TOKENS, written here so that parsing loads no jax (a test
# checks they agree).
MAX_SUMMARY_TOKENS = 64


def parse_args(argv=None):
  """Parses the command line of ``python -m summarizer.evaluate``."""
  p = OneLineParser(prog='python -m summarizer.evaluate', description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--model', type=user_path, default=None,
                 help='model directory (default: the shipped data/model)')
  p.add_argument('--data', type=user_path, default='news',
                 help='data source: news (default), tfds:NAME, .story files, '
                      'JSONL or CSV')
  p.add_argument('--data-dir', type=user_path, default=None,
                 help='TFDS data directory (default: ~/tensorflow_datasets)')
  p.add_argument('--no-download', action='store_true',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--split', default='test', help='split to score (default: test)')
  p.add_argument('--limit', type=int, default=None,
                 help='score only the first N articles')
  p.add_argument('--max-length', type=int, default=MAX_SUMMARY_TOKENS,
                 help='most summary tokens (default: %(default)s)')
  p.add_argument('--method', choices=METHODS, default='fast',
                 help="decoder: fast (cached) or greedy (the course's loop)")
  search_options.add_search_arguments(p)
  p.add_argument('--retrieval-pool', type=int, default=5000,
                 help='training articles the retrieval baseline indexes '
                      '(default: %(default)s)')
  p.add_argument('--output-dir', type=user_path, default=os.path.join('runs', 'eval'),
                 help=f'where {RESULTS_FILE} and {PREDICTIONS_FILE} go '
                      '(default: %(default)s)')
  p.add_argument('--overwrite-output-dir', action='store_true',
                 help="replace an earlier evaluation's results in --output-dir")
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
  args = p.parse_args(argv)
  search_options.fill_search_arguments(args, greedy=True)  # The course's way unless told.
  search_options.check_search_arguments(p, args)
  return args


def command(args):
  """Evaluates as the command line says, prints the scores; returns 0."""
  from summarizer.evaluation.scorecard import evaluate, table  # pylint: disable=g-import-not-at-top
  from summarizer.inference import beam  # pylint: disable=g-import-not-at-top
  results = evaluate(args.model, args.data, args.split, args.limit,
                     args.max_length, args.method, args.data_dir,
                     args.retrieval_pool, args.output_dir, show_progress=True,
                     facts_only=args.facts_only, join=args.join,
                     download=not args.no_download, n_heads=args.n_heads,
                     search=beam.Search.from_args(args),
                     batch_size=args.batch_size,
                     overwrite_output_dir=args.overwrite_output_dir)
  if args.json:
    print(json_text(results))
  else:
    print(table(results))
    print(f'{results["n"]} articles; scores and summaries in {args.output_dir}')
  return 0


def main(argv=None):
  args = parse_args(argv)
  return run_command(lambda: command(args), interrupted='stopped: nothing was written')


if __name__ == '__main__':
  sys.exit(main())
