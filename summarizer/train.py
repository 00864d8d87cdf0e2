"""Train the summarizer as the course does: TrainTask, EvalTask and Loop.

  python -m summarizer.train --max-minutes 10      # your own summarizer in ten minutes
  python -m summarizer.train --max-tokens 2500000  # ... in 2.5 million tokens, on any machine
  python -m summarizer.train                       # tiny model on the news corpus
  python -m summarizer.train --preset course --data tfds:cnn_dailymail
  python -m summarizer.train --output-dir runs/tiny --resume --max-steps 4000

A run writes into ``--output-dir``: ``config.json``, the vocabulary, the
checkpoint, Trax's metric logs (``train/``, ``eval/``, readable by
TensorBoard), ``train.log`` and a ``loss.png`` learning curve
(``summarizer.runs`` decides what a run starts from and records). An
existing checkpoint is resumed only with ``--resume``. Ctrl-C, or the
SIGTERM a job scheduler sends before it stops a job, saves a checkpoint
after the step under way and exits (130, or 143 for SIGTERM).
"""

import argparse
import signal
import sys
import time

# When the command started: --max-minutes counts from here.
STARTED = time.monotonic()

from summarizer.config import OPTIMIZERS, TOKEN_RECIPES, load_config
from summarizer.errors import (OneLineParser, SummarizerError, finite_float, run_command, seed,
                               user_path)
from summarizer.runs.args import NEW_RUN_LESSONS, PRESET_LESSONS, TrainArgs
from summarizer.runs.budget import one_thread_for_tokens
from summarizer.runs.stopping import STOP_SIGNALS

# The flags whose default is the preset's (PRESET_LESSONS).
LESSON_FLAGS = ('article_loss_weight', 'copy_fraction', 'extract_fraction', 'tied_init',
                'embedding_scale', 'repeat_steps', 'repeat_until_loss', 'short_fraction',
                'long_fraction')
# The most a learning rate may be: beyond it a run is a mistake.
MAX_LEARNING_RATE = 10.0
# The longest budget --max-minutes takes: a month.
MAX_MINUTES = 60.0 * 24 * 31


def _add_length_flags(p, defaults):
  """How long a run trains: a step count, a time budget, a token budget, or several."""
  p.add_argument('--max-steps', type=int, default=None,
                 help=f'train to this step (default: {defaults.max_steps}, or no limit '
                      'with --max-minutes or --max-tokens; with several, whichever comes '
                      'first)')
  p.add_argument('--max-tokens', type=int, default=None,
                 help='end training after this many training tokens, lessons included '
                      '(the same run busy or free, on any number of cores; a new run takes '
                      'its own recipe: four blocks on Muon); the learning rate decays to '
                      'zero as they are read. With --resume: this many more tokens')
  p.add_argument('--max-minutes', type=finite_float, default=None,
                 help='end the whole command (compiling, training, evaluation, saving, '
                      'calibration) within this many minutes of wall time; the '
                      'learning rate decays to zero as they run out. With --resume: '
                      'this many more minutes')


def _add_lesson_flags(p):
  """The levers that reshape training: the article's loss weight, the lessons, the start.

  Each defaults to its preset's (``runs.args.PRESET_LESSONS``): the quick
  preset's are the ten-minute recipe; the others', the course's way (none).
  """
  p.add_argument('--article-loss-weight', type=finite_float,
                 help='loss weight of article tokens (course: 0; quick preset: '
                      f"{PRESET_LESSONS['quick']['article_loss_weight']:g})")
  p.add_argument('--copy-fraction', type=finite_float,
                 help='share of training examples whose summary is a sentence '
                      'copied from the article (teaches copying names)')
  p.add_argument('--extract-fraction', type=finite_float,
                 help="share of training examples whose summary is the article's "
                      "sentences with the highlights' facts (teaches finding and "
                      'copying them)')
  p.add_argument('--tied-init', action=argparse.BooleanOptionalAction,
                 help="start the output projection as the embedding's transpose "
                      '(a new run from random weights only)')
  p.add_argument('--embedding-scale', type=finite_float,
                 help="start the embedding this many times Trax's initial one "
                      '(a new run from random weights only)')
  p.add_argument('--repeat-steps', type=int,
                 help='train the first N steps on repeat lessons: a story\'s names and '
                      'numbers listed twice, which teaches copying (a new run only)')
  p.add_argument('--repeat-until-loss', type=finite_float,
                 help='end the repeat lessons before --repeat-steps once their loss '
                      '(mean of the last 20 steps) is below this: the model copies')
  p.add_argument('--short-fraction', type=finite_float,
                 help='share of training articles cut down to the sentences '
                      'with their facts (teaches summarising short texts)')
  p.add_argument('--long-fraction', type=finite_float,
                 help='share of training examples joined with the next one or '
                      'two into a longer article (teaches long articles)')


def _resolve_preset(ns, defaults):
  """The preset a run uses and the lessons it takes from it, where no flag gave them.

  No ``--preset``: a resumed run's own; a new run with ``--max-minutes`` or
  ``--max-tokens`` (from random weights), ``quick``, the ten-minute recipe;
  else ``tiny``. A token budget takes its preset's ``config.TOKEN_RECIPES`` lessons.
  A resumed run, or one started from a model, takes no lesson that shapes
  new weights (``NEW_RUN_LESSONS``) unless a flag asks for it (and is refused).
  """
  if ns.preset is None:
    saved = _saved_preset(ns.output_dir) if ns.resume else None
    budgeted = ns.max_minutes is not None or ns.max_tokens is not None
    fresh_budget = budgeted and not ns.resume and not ns.init_from
    ns.preset = saved or ('quick' if fresh_budget else defaults.preset)
  lessons = dict(PRESET_LESSONS.get(ns.preset, {}))
  if ns.max_tokens is not None:  # A token budget's own; a time budget's are as measured.
    lessons.update(TOKEN_RECIPES.get(ns.preset, {}).get('lessons', {}))
  if ns.resume or ns.init_from:
    lessons = {k: v for k, v in lessons.items() if k not in NEW_RUN_LESSONS}
  unset = [name for name in LESSON_FLAGS if getattr(ns, name) is None]
  for name in unset:
    setattr(ns, name, lessons.get(name, getattr(defaults, name)))
  ns.preset_lessons = tuple(name for name in unset if name in lessons)
  if 'repeat_until_loss' in unset and not ns.repeat_steps:  # --repeat-steps 0: none.
    ns.repeat_until_loss = None


def _saved_preset(output_dir):
  """The preset named in a run directory's config.json, or None."""
  try:
    preset = load_config(output_dir)[1].get('preset')
  except SummarizerError:
    return None  # No run there, or not ours: preparing the run says so.
  return preset if isinstance(preset, str) else None


def _add_ending_flags(p, defaults):
  """What a run starts from and what it ends with: the start weights, export, calibration, verdict."""
  p.add_argument('--export-to', type=user_path, default=None,
                 help='afterwards, copy config, vocabulary and weights (no '
                      'optimizer state) to this model directory')
  p.add_argument('--init-from', type=user_path, default=None, metavar='MODEL_DIR',
                 help='start from the weights of a model directory of the same '
                      'architecture (e.g. data/model) instead of random ones')
  p.add_argument('--calibration-articles', type=int,
                 default=defaults.calibration_articles,
                 help='validation articles whose perplexity calibrates the '
                      "model's out-of-domain warning (default: %(default)s; 0: none)")
  p.add_argument('--verdict-stories', type=int, default=defaults.verdict_stories,
                 help='validation stories on which the model is scored against Lead-3 '
                      'at the end; a model below it warns on every summary '
                      '(default: %(default)s; 0: none)')


def parse_args(argv=None):
  """Parses the command line into a ``TrainArgs``."""
  defaults = TrainArgs()
  p = OneLineParser(
      prog='python -m summarizer.train', description=__doc__,
      formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--data', type=user_path, default=defaults.data,
                 help='news (default), tfds:cnn_dailymail[:VERSION], a folder '
                      'of .story files or archives, or JSONL/CSV files')
  p.add_argument('--data-dir', type=user_path, default=None, help='TFDS data directory')
  p.add_argument('--vocab', type=user_path, default=None,
                 help='a .subwords vocabulary (default: that of --init-from; '
                      "the course's for --preset course; for news, "
                      'data/news1k.subwords with --preset quick, else '
                      'data/news.subwords; else one built from the training data)')
  p.add_argument('--preset', default=None,
                 help="tiny (the default), quick (the default of a new run with "
                      "--max-minutes: the ten-minute recipe) or course; a resumed run "
                      "keeps its own")
  _add_length_flags(p, defaults)
  p.add_argument('--eval-steps', type=int, default=defaults.eval_steps,
                 help='evaluate (and preview a summary) every N steps (default: about '
                      'once a minute, or at each tenth of a --max-tokens budget without '
                      '--max-minutes; and at the last step)')
  p.add_argument('--save-steps', type=int, default=defaults.save_steps,
                 help='checkpoint every N steps')
  p.add_argument('--eval-batches', type=int, default=defaults.eval_batches)
  p.add_argument('--learning-rate', type=finite_float, default=None,
                 help="peak learning rate (default: the preset's)")
  p.add_argument('--warmup-steps', type=int, default=None,
                 help="warmup steps (default: the preset's)")
  _add_optimizer_flags(p)
  p.add_argument('--seed', type=seed, default=defaults.seed)
  p.add_argument('--output-dir', type=user_path, default=defaults.output_dir)
  p.add_argument('--resume', action='store_true',
                 help='continue the checkpoint in --output-dir')
  p.add_argument('--overwrite-output-dir', action='store_true',
                 help="delete a previous run's files in --output-dir first")
  _add_lesson_flags(p)
  p.add_argument('--truncate', dest='truncate', action='store_true', default=None,
                 help="cut over-long articles to fit (the tiny preset's choice)")
  p.add_argument('--no-truncate', dest='truncate', action='store_false',
                 help='drop over-long examples, as the course does (the course '
                      "preset's choice)")
  p.add_argument('--no-download', dest='download', action='store_false',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--no-progress', dest='progress', action='store_false')
  _add_ending_flags(p, defaults)
  ns = p.parse_args(argv)
  if ns.max_steps is None and ns.max_minutes is None and ns.max_tokens is None:
    ns.max_steps = defaults.max_steps
  _resolve_preset(ns, defaults)
  _check_numbers(p, ns)
  return TrainArgs(**vars(ns))


def _add_optimizer_flags(p):
  """--optimizer and Muon's --matrix-scale (``runs/optimizers.py``)."""
  p.add_argument('--optimizer', choices=OPTIMIZERS, default=None,
                 help="adam (Trax's, the course's; every preset's default) or muon (the "
                      "hidden matrices step along their orthogonalised momentum; a new "
                      "--max-tokens run's default: data/model/README.md)")
  p.add_argument('--matrix-scale', type=finite_float, default=None,
                 help="with muon: a hidden matrix's step, in learning rates (default: the "
                      "preset's, 2; a new --max-tokens run's, 2.5)")


def _check_numbers(p, ns):
  """Refuses counts and fractions out of range, as argparse refuses a bad flag."""
  if ns.calibration_articles < 0:
    p.error('--calibration-articles must not be negative')
  if ns.verdict_stories < 0:
    p.error('--verdict-stories must not be negative')
  for name in ('max_steps', 'max_tokens', 'eval_steps', 'save_steps', 'eval_batches'):
    if getattr(ns, name) is not None and getattr(ns, name) < 1:
      p.error(f'--{name.replace("_", "-")} must be at least 1')
  for name in ('copy_fraction', 'extract_fraction', 'short_fraction', 'long_fraction'):
    if not 0 <= getattr(ns, name) <= 1:
      p.error(f'--{name.replace("_", "-")} must be between 0 and 1')
  if ns.learning_rate is not None and not 0 <= ns.learning_rate <= MAX_LEARNING_RATE:
    p.error(f'--learning-rate must be between 0 and {MAX_LEARNING_RATE:g}, not '
            f'{ns.learning_rate:g}')
  if ns.warmup_steps is not None and ns.warmup_steps < 1:
    p.error(f'--warmup-steps must be at least 1, not {ns.warmup_steps}')
  if ns.matrix_scale is not None and ns.matrix_scale <= 0:
    p.error(f'--matrix-scale must be above 0, not {ns.matrix_scale:g}')
  if ns.max_minutes is not None and not 0 < ns.max_minutes <= MAX_MINUTES:
    p.error(f'--max-minutes must be above 0 and at most {MAX_MINUTES:g} (a month), '
            f'not {ns.max_minutes:g}')
  if ns.embedding_scale <= 0:
    p.error(f'--embedding-scale must be above 0, not {ns.embedding_scale:g}')
  if (ns.tied_init or ns.embedding_scale != 1) and (ns.init_from or ns.resume):
    p.error('--tied-init and --embedding-scale shape random weights: they cannot be '
            'combined with --init-from or --resume')
  if ns.repeat_steps < 0:
    p.error(f'--repeat-steps must not be negative, not {ns.repeat_steps}')
  if ns.repeat_until_loss is not None and ns.repeat_until_loss <= 0:
    p.error(f'--repeat-until-loss must be above 0, not {ns.repeat_until_loss:g}')
  if ns.repeat_until_loss is not None and not ns.repeat_steps:
    p.error('--repeat-until-loss ends the repeat lessons early: give --repeat-steps, '
            'their most steps, too')
  if ns.repeat_steps and (ns.init_from or ns.resume):
    p.error('--repeat-steps begins a new run from random weights: it cannot be combined '
            'with --init-from or --resume')
  if ns.article_loss_weight < 0:
    p.error(f'--article-loss-weight must not be negative, not {ns.article_loss_weight:g}')


def main(argv=None):
  args = parse_args(argv)
  one_thread_for_tokens(args)  # Before jax's first computation sizes its CPU threads.

  def command():
    from summarizer.corpus.sources import check_source  # pylint: disable=g-import-not-at-top
    check_source(args.data)  # A missing file refused before the output directory is made.
    # Imported now, not at the top: a bad flag is refused before jax loads.
    from summarizer.runs.loop import train  # pylint: disable=g-import-not-at-top
    from summarizer.runs.prepare import prepared  # pylint: disable=g-import-not-at-top
    from summarizer.evaluation.verdict import judge  # pylint: disable=g-import-not-at-top
    try:
      with prepared(args, started=STARTED, judge=judge) as run:  # The flags resolved once.
        summary = train(run)
    except OSError as e:  # A write that failed outside a checkpoint's save.
      where = e.filename or args.output_dir
      raise SummarizerError(f'{where}: cannot write ({e.strerror or e}); the last '
                            f'checkpoint in {args.output_dir}, if any, is kept') from None
    print('done: ' + ', '.join(f'{k}={v}' for k, v in summary.items()))
    return STOP_SIGNALS[signal.Signals[summary['stopped_by']]] if summary['stopped_by'] else 0

  return run_command(command, interrupted=f'stopped: the last checkpoint in '
                     f'{args.output_dir} is kept; continue with --resume')


if __name__ == '__main__':
  sys.exit(main())
