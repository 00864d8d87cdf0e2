"""Measure our speed claims side by side, in one run, on this machine.

  python -m summarizer.bench            # all but beam, tiny preset (a few minutes)
  python -m summarizer.bench --full     # training throughput with the course preset
  python -m summarizer.bench --preset tiny --only train,data
  python -m summarizer.bench --only import,decode --json
  python -m summarizer.bench --only batch,beam   # batches; beam search vs greedy (10 min)
  python -m summarizer.bench --only first-model  # your own model in 10 minutes vs Lead-3
  python -m summarizer.bench --only first-model --shared-core  # ... on one busy core
  python -m summarizer.bench --only grading      # a class of ten, one at a time and side by side

Each line compares two things measured in the same run and states its goal:

  import    the package's Trax (`from summarizer import TransformerLM`) vs
            `import trax` (fresh processes, median of 3)
  init      seconds to initialise TransformerLM with Trax's own init vs the
            package's, which traces each layer once (median of 5, interleaved)
  train     tokens/s of our TransformerLM vs trax.models.TransformerLM
  decode    the fast cached decoder vs the course's greedy_decode, one jitted
            call a token and the whole loop in one compiled call
  batch     articles/s decoding news test stories one at a time vs 16 side by
            side (same summaries)
  beam      greedy vs beam search: time per article, ROUGE and entity scores
            and how often a summary repeats a trigram, on test stories and
            on joined stories (two an article)
  data      examples/s the pipeline delivers vs examples/s training consumes
  cli       peak memory and wall time of `python -m summarizer` on a sample,
            and where that time goes (import, load, first token, the rest)
  start     `python -m summarizer data/samples/sport.txt` vs `import jax` and a
            first array, and `from summarizer import TransformerLM` (fresh
            processes, interleaved, best of 3): time, ratio and peak memory;
            the command again with the compilation cache off
  first-model  `python -m summarizer.train --max-minutes 10` from random weights
            (the default recipe), then its summaries of 100 test stories
            beside Lead-3's: ROUGE-1/2/L and names-and-numbers precision and
            recall, and whether they clear the bar (--minutes, --seed)
  grading   `nbgrader autograde` on a class of full-marks submissions (--class-size,
            10 by default), as notebooks/README.md runs a course: one at a
            time, then side by side (a sandbox a core, the written config);
            seconds a submission (the package's results, computed once a run,
            included) vs at most 20 (a class of 30 in 10 minutes)
"""

import argparse
import json
import os
import sys

from summarizer.errors import OneLineParser, finite_float, run_command, seed, user_path
from summarizer.evaluation import BENCH_SECTIONS, DEFAULT_BENCH_SECTIONS


def main(argv=None):
  p = OneLineParser(prog='python -m summarizer.bench', description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--preset', default='tiny',
                 help='preset of the training and data comparisons (default: tiny)')
  p.add_argument('--full', action='store_true', help='the same as --preset course')
  p.add_argument('--only', default=','.join(DEFAULT_BENCH_SECTIONS),
                 help='comma-separated sections: ' + ','.join(BENCH_SECTIONS)
                      + ' (default: all but beam, first-model and grading)')
  p.add_argument('--model', type=user_path, default=None,
                 help='model directory (default: shipped)')
  p.add_argument('--minutes', type=finite_float, default=10.0,
                 help="first-model: the training run's --max-minutes (default: 10)")
  p.add_argument('--seed', type=seed, default=0, help="first-model: the run's --seed")
  p.add_argument('--shared-core', action='store_true',
                 help='first-model: train on one core beside a busy loop on the same core '
                      '(a slow or busy machine: about a third of a 2-core machine)')
  p.add_argument('--class-size', type=int, default=10,
                 help='grading: the submissions of the class, graded twice (default: 10)')
  p.add_argument('--json', action='store_true', help='print JSON only')
  args = p.parse_args(argv)
  if args.minutes <= 0:
    p.error(f'--minutes must be above 0, not {args.minutes:g}')
  if args.class_size < 1:
    p.error(f'--class-size must be at least 1, not {args.class_size}')
  sections = [s.strip() for s in args.only.split(',') if s.strip()]
  unknown = set(sections) - set(BENCH_SECTIONS)
  if unknown:
    p.error(f'unknown section(s) {", ".join(sorted(unknown))}; choose from '
            + ', '.join(BENCH_SECTIONS))

  def command():
    # Imported now, not at the top: --help and a bad flag answer at once.
    from summarizer.evaluation.benchmarks import run, table  # pylint: disable=g-import-not-at-top
    results = run(sections, 'course' if args.full else args.preset, args.model,
                  args.minutes, args.seed, args.shared_core, args.class_size)
    if args.json:
      print(json.dumps(results, indent=2))
    else:
      load = ', '.join(f'{x:.2f}' for x in os.getloadavg())
      print(f'machine: {os.cpu_count()} cores, {sys.platform}, Python '
            f'{sys.version.split()[0]}, load average {load} at the end')
      print(table(results))
    return 0
  return run_command(command, interrupted='stopped')


if __name__ == '__main__':
  sys.exit(main())
