"""Train the summarizer as the course does: TrainTask, EvalTask and Loop.

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
import contextlib
import dataclasses
import os
import shutil
import signal
import sys
import time

import jax
import numpy as np

from summarizer import calibration
from summarizer import checkpoint
from summarizer import data
from summarizer import export
from summarizer import locks
from summarizer import manifest
from summarizer import progress
from summarizer import runs
from summarizer._trax import HookedLoop, quiet_loop_log, tl, training, trax
from summarizer.config import EOS, load_config
from summarizer.errors import OneLineParser, SummarizerError, finite_float, run_command, seed
from summarizer.model import TransformerLM

@dataclasses.dataclass
class TrainArgs:
  """What a training run is asked to do (the command line's flags)."""
  data: str = 'news'
  data_dir: str = None
  vocab: str = None
  preset: str = 'tiny'
  max_steps: int = 1000
  eval_steps: int = 200
  save_steps: int = 200
  eval_batches: int = 8
  learning_rate: float = None
  warmup_steps: int = None
  seed: int = 0
  output_dir: str = 'runs/tiny'
  resume: bool = False
  overwrite_output_dir: bool = False
  article_loss_weight: float = 0.0
  copy_fraction: float = 0.0
  short_fraction: float = 0.0
  long_fraction: float = 0.0
  truncate: bool = None  # None: the preset's choice.
  download: bool = True
  progress: bool = True
  export_to: str = None
  init_from: str = None
  calibration_articles: int = calibration.CALIBRATION_ARTICLES


def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):  # pylint: disable=invalid-name,redefined-outer-name
  """Returns the course's training loop (UNQ_C8) over a small TransformerLM.

  The course's exercise: cross-entropy loss, Adam at 0.01 with a warmup of
  1,000 steps then an rsqrt decay, a checkpoint every 10 steps, and
  cross-entropy and accuracy on evaluation. ``loop.run(n)`` trains n steps.

  Args:
    TransformerLM: The model function to train (the learner's or ours); it
      is built with d_model=4, d_ff=16, n_layers=1, n_heads=2 in 'train'
      mode, as in the course.
    train_gen: Stream of ``(inputs, targets, weights)`` training batches.
    eval_gen: Stream of such batches for evaluation.
    output_dir: Where checkpoints and metrics go. Trax resumes from a
      checkpoint it finds there.

  Returns:
    A ``trax.supervised.training.Loop``.
  """
  output_dir = os.path.expanduser(output_dir)
  learning_rate = 0.01
  train_task = training.TrainTask(
      labeled_data=train_gen,
      loss_layer=tl.CrossEntropyLoss(),
      optimizer=trax.optimizers.Adam(learning_rate),
      lr_schedule=trax.lr.warmup_and_rsqrt_decay(1000, learning_rate),
      n_steps_per_checkpoint=10)
  eval_task = training.EvalTask(
      labeled_data=eval_gen,
      metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
  return training.Loop(
      TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train'),
      train_task, eval_tasks=[eval_task], output_dir=output_dir)


@dataclasses.dataclass
class Run:
  """A run once prepared: what it trains and what it has counted so far.

  Attributes:
    args: The ``TrainArgs`` (for a resumed run, with the ``init_from`` it
      first started from).
    config: The preset with the flags' overrides and the vocabulary's size.
    vocab_file: The run's copy of its vocabulary.
    resuming: Whether a checkpoint in the output directory is continued.
    start_weights: Weights to start from (``--init-from``), or None.
    earlier_runs: The lineage of the weights before this run.
    counter: Tokens read so far and the longest article among them.
  """
  args: TrainArgs
  config: object
  vocab_file: str
  resuming: bool
  start_weights: object
  earlier_runs: list
  counter: dict


def prepare(args):
  """Checks the request and prepares config, vocabulary, weights and directory.

  Returns:
    A ``Run``.
  """
  if args.init_from and args.resume:
    raise SummarizerError('--init-from starts a new run; it cannot be '
                          'combined with --resume')
  runs.refuse_init_from_output(args)
  vocab_src = runs.chosen_vocab(args)
  config = runs.resolve_config(args, vocab_src)
  # Loaded before the output directory is prepared: --overwrite-output-dir
  # must not delete the weights a run was asked to start from.
  start_weights = runs.initial_weights(args.init_from, config) if args.init_from else None
  resuming = runs.prepare_output_dir(args, config)
  manifest.record_run(args.output_dir)
  vocab_file = os.path.join(args.output_dir, checkpoint.VOCAB_NAME)
  if vocab_src is None:
    runs.build_run_vocab(args, config, vocab_file)
    config = runs.resolve_config(args, vocab_file)
  elif not resuming:
    shutil.copyfile(vocab_src, vocab_file)
  manifest.record_run(args.output_dir)
  earlier_runs, longest_article = runs.earlier_runs(args, resuming)
  if resuming:  # A resumed run keeps the record of the weights it first started from.
    args = dataclasses.replace(args, init_from=load_config(args.output_dir)[1].get('init_from'))
  return Run(args, config, vocab_file, resuming, start_weights, earlier_runs,
             {'tokens': 0, 'longest_article': longest_article})


def tasks(run):
  """Returns the course's TrainTask and EvalTask for a prepared run.

  Training may weigh the article too and mixes in the lessons; evaluation
  weighs the summary only, as the course does, so eval losses compare
  across runs.
  """
  args, config = run.args, run.config

  def stream(split, article_loss_weight=0.0, **lessons):
    return data.batches(
        args.data, split, vocab_file=run.vocab_file, data_dir=args.data_dir,
        boundaries=config.boundaries, batch_sizes=config.batch_sizes,
        max_joint_length=config.max_joint_length, truncate=config.truncate,
        article_loss_weight=article_loss_weight, repeat=True,
        shuffle=split == 'train', seed=args.seed, download=args.download, **lessons)

  train_batches = stream('train', args.article_loss_weight, copy_fraction=args.copy_fraction,
                         short_fraction=args.short_fraction,
                         long_fraction=args.long_fraction)
  train_task = training.TrainTask(
      labeled_data=_counted(train_batches, run.counter),
      loss_layer=tl.CrossEntropyLoss(),
      optimizer=trax.optimizers.Adam(config.learning_rate),
      lr_schedule=trax.lr.warmup_and_rsqrt_decay(config.warmup_steps,
                                                 config.learning_rate),
      n_steps_per_checkpoint=args.save_steps)
  eval_task = training.EvalTask(
      labeled_data=stream('validation'),
      metrics=[tl.CrossEntropyLoss(), tl.Accuracy()],
      n_eval_batches=args.eval_batches)
  return train_task, eval_task


def _counted(stream, counter):
  """Passes batches through, counting tokens and the longest article.

  ``counter['tokens']`` adds up the non-padding tokens; the longest article
  (the tokens before the first EOS of a row) goes to
  ``counter['longest_article']``.
  """
  for batch in stream:
    inputs = batch[0]                                    # (B, L)
    counter['tokens'] += int(np.count_nonzero(inputs))
    article_lengths = np.argmax(inputs == EOS, axis=1)  # (B,)
    counter['longest_article'] = max(counter['longest_article'],
                                     int(article_lengths.max()))
    yield batch


class _Stopped(Exception):
  """Raised between two steps after Ctrl-C or SIGTERM, so the step count is whole."""


class _Diverged(Exception):
  """Raised when a step's loss, or the weights about to be saved, are not finite."""

  def __init__(self, step):
    super().__init__(step)
    self.step = step


def _finite(tree):
  """Tells whether every number in ``tree`` (a loss, the weights) is finite."""
  return all(bool(np.all(np.isfinite(np.asarray(leaf))))
             for leaf in jax.tree_util.tree_leaves(tree))


def _is_write_error(error):
  """Tells whether ``error`` is a failed write: an OSError or TensorFlow's file errors."""
  return isinstance(error, OSError) or type(error).__module__.startswith('tensorflow')


def save_or_explain(write, directory):
  """``checkpoint.save_atomically``, with a failed write (a full disk, no permission) as one line.

  What the failed save left half-written is removed; the previous
  checkpoint was never touched and stays loadable.
  """
  try:
    checkpoint.save_atomically(write, directory)
  except Exception as e:  # pylint: disable=broad-except
    if not _is_write_error(e):
      raise
    reason = getattr(e, 'strerror', None) or getattr(e, 'message', None) or str(e)
    try:
      checkpoint.recover(directory)  # Drops the partial files (and frees their space).
    except OSError:
      pass
    kept = (f'the previous checkpoint (step {checkpoint.saved_step(directory)}) is kept'
            if checkpoint.has_checkpoint(directory) else 'no earlier checkpoint existed')
    full = 'full' if 'space' in reason.lower() or 'exhausted' in type(e).__name__.lower() else ''
    what = 'the disk is full' if full else f'cannot write ({reason.splitlines()[0][:200]})'
    raise SummarizerError(f'{directory}: saving the checkpoint failed: {what}; {kept}') from None


def _diverged_error(run, step):
  """The one line for a run stopped by a loss that turned NaN; records the kept step."""
  out = run.args.output_dir
  kept = checkpoint.saved_step(out) if checkpoint.has_checkpoint(out) else None
  if kept is not None:
    runs.save_run_config(run.args, run.config, run.earlier_runs, kept,
                         run.counter['longest_article'])
  where = (f'the last good checkpoint (step {kept}) in {out} is kept' if kept is not None
           else 'no checkpoint had been saved')
  return SummarizerError(
      f'the loss is not a number at step {step} (training diverged, at learning rate '
      f'{run.config.learning_rate:g}): the run stopped and {where}; try a lower '
      '--learning-rate or a longer --warmup-steps')


# The signals that stop a run cleanly, and the exit status each leaves with.
STOP_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143}


@contextlib.contextmanager
def _stop_signals():
  """Turns Ctrl-C and SIGTERM into a request checked between steps.

  Yields a dict whose 'signal' becomes the first signal received. A second
  one raises KeyboardInterrupt at once (for a long evaluation); the last
  checkpoint stays loadable either way.
  """
  stop = {'signal': None}

  def handler(signum, frame):
    del frame
    if stop['signal'] is not None:
      raise KeyboardInterrupt
    stop['signal'] = signal.Signals(signum)
    print(f'\n{stop["signal"].name}: stopping after this step (again to stop at once)',
          file=sys.stderr, flush=True)

  previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
  try:
    yield stop
  finally:
    for signum, old in previous.items():
      signal.signal(signum, old)


# Steps whose batch losses the evaluation line's train loss averages.
TRAIN_LOSS_WINDOW = 50


class Report:
  """The run as its user sees it: a progress bar, a line per evaluation, the losses.

  The bar shows the loss of the last step's batch (``batch_loss``); each
  evaluation line, the mean of the last ``TRAIN_LOSS_WINDOW`` of those and
  the mean over the evaluation batches. A line before the first says so,
  so that the two do not seem to disagree.

  Args:
    args: The run's ``TrainArgs``.
    counter: The run's token counter (for tokens/s).
    first_step: The step the run starts from.
  """

  def __init__(self, args, counter, first_step):
    self.counter = counter
    self.eval_batches = args.eval_batches
    self.train_losses = []
    self.started = time.time()
    self._last_line = None
    self.bar = progress.bar(total=args.max_steps, initial=first_step, unit='step',
                            desc='training', disable=not args.progress)

  def step(self, step, loss):
    """Records a step's loss and moves the bar."""
    loss = float(np.mean(loss))  # One value per device when data-parallel.
    self.train_losses.append((step, loss))
    elapsed = max(time.time() - self.started, 1e-9)
    self.bar.set_postfix(batch_loss=f'{loss:.3f}', tok_s=f'{self.counter["tokens"] / elapsed:.0f}')
    self.bar.update(1)

  def evaluation(self, loop, log):
    """Prints 'step N: train loss X, eval loss Y, eval accuracy Z' once per evaluation."""
    evals = loop.history.get('eval', 'metrics/CrossEntropyLoss')
    accuracy = loop.history.get('eval', 'metrics/Accuracy')
    if not evals or evals[-1][0] != loop.step:
      return
    line = (f'step {loop.step}: train loss {self.mean_train_loss():.4f}, '
            f'eval loss {evals[-1][1]:.4f}, eval accuracy {accuracy[-1][1]:.4f}')
    if self._last_line is None:
      legend = self.legend()
      self.bar.write(legend)
      log.write(legend + '\n')
    if line != self._last_line:
      self.bar.write(line)
      log.write(line + '\n')
      self._last_line = line

  def legend(self):
    """Says which loss the bar and the evaluation lines show."""
    return (f"losses: the bar's batch_loss is the last step's batch; each evaluation line's "
            f"train loss is the mean over the last {TRAIN_LOSS_WINDOW} steps' batches (or all, "
            f"if fewer), its eval loss and accuracy the mean over {self.eval_batches} "
            f"validation batch{'' if self.eval_batches == 1 else 'es'}")

  def mean_train_loss(self, n=TRAIN_LOSS_WINDOW):
    """Mean of the last ``n`` step losses (one step's loss is noisy)."""
    if not self.train_losses:
      return None
    return float(np.mean([loss for _, loss in self.train_losses[-n:]]))


def _steps(loop, run, report, log, stop):
  """Trains to ``max_steps``, evaluating every ``eval_steps``; saves at the end.

  Returns:
    The signal that stopped the run early, or None.
  """
  args = run.args

  def record():
    runs.save_run_config(args, run.config, run.earlier_runs, loop.step,
                         run.counter['longest_article'])

  record()
  try:
    while loop.step < args.max_steps:
      target = min(args.max_steps, (loop.step // args.eval_steps + 1) * args.eval_steps)
      loop.run(target - loop.step)
      record()
      report.evaluation(loop, log)
  except _Stopped:
    loop.save_checkpoint(checkpoint.BASENAME)
  finally:
    report.bar.close()
  if stop['signal'] is None and loop.step % args.save_steps:
    loop.save_checkpoint(checkpoint.BASENAME)
  record()
  return stop['signal']


def train(args):
  """Runs (or resumes) a training run; returns a summary dict.

  Args:
    args: A ``TrainArgs``.

  Returns:
    dict with 'step', 'train_loss', 'eval_loss', 'eval_accuracy', 'seconds',
    'tokens_per_second', 'interrupted', 'stopped_by' (a signal's name or
    None), 'output_dir' (and 'exported_to').

  Raises:
    SummarizerError: among others, when another process is using the output
      directory or the export directory (``summarizer.locks``).
  """
  if args.export_to:  # Before its lock is made in it: a link is not followed.
    export.check_export_target(args.export_to)
  with locks.locked(args.output_dir, args.export_to):
    return _train_locked(args)


def _train_locked(args):
  run = prepare(args)
  args, config, out = run.args, run.config, run.args.output_dir
  train_task, eval_task = tasks(run)
  with quiet_loop_log(os.path.join(out, 'train.log')) as log, _stop_signals() as stop:

    def on_step(step, loss):
      report.step(step, loss)
      if not _finite(loss):
        raise _Diverged(step)
      if stop['signal'] is not None:
        raise _Stopped()

    def save(write, directory):
      # A finite loss can still come with an update to NaN: never save such weights.
      if not _finite(loop.model.weights):
        raise _Diverged(loop.step)
      save_or_explain(write, directory)

    loop = HookedLoop(
        TransformerLM(**config.model_kwargs(), mode='train'), [train_task],
        eval_model=TransformerLM(**config.model_kwargs(), mode='eval'),
        eval_tasks=[eval_task], output_dir=out,
        eval_at=lambda step: step % args.eval_steps == 0 or step == args.max_steps,
        random_seed=args.seed, on_step=on_step, save=save)
    if run.start_weights is not None:
      loop.update_weights_and_state(weights=run.start_weights)
    _announce(run, loop)
    report = Report(args, run.counter, loop.step)
    try:
      stopped_by = _steps(loop, run, report, log, stop)
    except _Diverged as e:
      raise _diverged_error(run, e.step) from None
  return _finish(run, loop, report, stopped_by)


def _announce(run, loop):
  """Prints what is trained, on what, from where to where."""
  args, config = run.args, run.config
  n_weights = sum(int(np.prod(w.shape)) for w in jax.tree_util.tree_leaves(loop.model.weights))
  print(f'{"resuming" if run.resuming else "training"} {config.preset} '
        f'({n_weights / 1e6:.1f}M parameters) on {args.data} '
        f'from step {loop.step} to {args.max_steps}, '
        f'{trax.fastmath.local_device_count()} device(s), output in {args.output_dir}',
        flush=True)
  print('config: ' + ', '.join(f'{k}={v}' for k, v in config.to_dict().items()), flush=True)


def _finish(run, loop, report, stopped_by):
  """Plots, calibrates and exports a run that was not stopped; returns its summary."""
  args, out = run.args, run.args.output_dir
  eval_losses = loop.history.get('eval', 'metrics/CrossEntropyLoss')
  plot_losses(report.train_losses, eval_losses, os.path.join(out, 'loss.png'))
  manifest.record_run(out)
  if args.calibration_articles and stopped_by is None:
    calibration.save_calibration(out, calibration.calibrate(
        out, args.data, 'validation', args.calibration_articles, args.data_dir,
        show_progress=args.progress))
  seconds = time.time() - report.started
  accuracy = loop.history.get('eval', 'metrics/Accuracy')
  summary = {
      'step': loop.step,
      'train_loss': report.mean_train_loss(),
      'eval_loss': eval_losses[-1][1] if eval_losses else None,
      'eval_accuracy': accuracy[-1][1] if accuracy else None,
      'seconds': round(seconds, 1),
      'tokens_per_second': round(run.counter['tokens'] / max(seconds, 1e-9)),
      'interrupted': stopped_by is not None,
      'stopped_by': stopped_by.name if stopped_by else None,
      'output_dir': out,
  }
  if args.export_to and stopped_by is None:
    export.export(out, args.export_to, args.calibration_articles)
    summary['exported_to'] = args.export_to
  if stopped_by is not None:
    print(f'interrupted: checkpoint of step {loop.step} saved in {out}; '
          'continue with --resume', file=sys.stderr)
  return summary


def plot_losses(train_losses, eval_losses, path):
  """Writes the learning curve: train loss per step (smoothed) and eval loss."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(7, 4))
  if train_losses:
    steps, values = zip(*train_losses)
    window = max(1, len(values) // 50)
    smooth = np.convolve(values, np.ones(window) / window, mode='valid')
    ax.plot(steps[window - 1:], smooth, label='train (weighted cross-entropy)')
  if eval_losses:
    steps, values = zip(*eval_losses)
    ax.plot(steps, values, 'o-', label='eval')
  ax.set_xlabel('step')
  ax.set_ylabel('loss')
  ax.legend()
  ax.grid(alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def _add_lesson_flags(p, defaults):
  """The levers that reshape training: the article's loss weight and the lessons."""
  p.add_argument('--article-loss-weight', type=finite_float,
                 default=defaults.article_loss_weight,
                 help='loss weight of article tokens (course: 0)')
  p.add_argument('--copy-fraction', type=finite_float, default=defaults.copy_fraction,
                 help='share of training examples whose summary is a sentence '
                      'copied from the article (teaches copying names)')
  p.add_argument('--short-fraction', type=finite_float, default=defaults.short_fraction,
                 help='share of training articles cut down to the sentences '
                      'with their facts (teaches summarising short texts)')
  p.add_argument('--long-fraction', type=finite_float, default=defaults.long_fraction,
                 help='share of training examples joined with the next one or '
                      'two into a longer article (teaches long articles)')


def parse_args(argv=None):
  """Parses the command line into a ``TrainArgs``."""
  defaults = TrainArgs()
  p = OneLineParser(
      prog='python -m summarizer.train', description=__doc__,
      formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--data', default=defaults.data,
                 help='news (default), tfds:cnn_dailymail[:VERSION], a folder '
                      'of .story files or archives, or JSONL/CSV files')
  p.add_argument('--data-dir', default=None, help='TFDS data directory')
  p.add_argument('--vocab', default=None,
                 help='a .subwords vocabulary (default: that of --init-from; '
                      "the course's for --preset course; data/news.subwords "
                      'for news; else one built from the training data)')
  p.add_argument('--preset', default=defaults.preset, help='tiny or course')
  p.add_argument('--max-steps', type=int, default=defaults.max_steps)
  p.add_argument('--eval-steps', type=int, default=defaults.eval_steps,
                 help='evaluate every N steps')
  p.add_argument('--save-steps', type=int, default=defaults.save_steps,
                 help='checkpoint every N steps')
  p.add_argument('--eval-batches', type=int, default=defaults.eval_batches)
  p.add_argument('--learning-rate', type=finite_float, default=None,
                 help="peak learning rate (default: the preset's)")
  p.add_argument('--warmup-steps', type=int, default=None,
                 help="warmup steps (default: the preset's)")
  p.add_argument('--seed', type=seed, default=defaults.seed)
  p.add_argument('--output-dir', default=defaults.output_dir)
  p.add_argument('--resume', action='store_true',
                 help='continue the checkpoint in --output-dir')
  p.add_argument('--overwrite-output-dir', action='store_true',
                 help="delete a previous run's files in --output-dir first")
  _add_lesson_flags(p, defaults)
  p.add_argument('--truncate', dest='truncate', action='store_true', default=None,
                 help="cut over-long articles to fit (the tiny preset's choice)")
  p.add_argument('--no-truncate', dest='truncate', action='store_false',
                 help='drop over-long examples, as the course does (the course '
                      "preset's choice)")
  p.add_argument('--no-download', dest='download', action='store_false',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--no-progress', dest='progress', action='store_false')
  p.add_argument('--export-to', default=None,
                 help='afterwards, copy config, vocabulary and weights (no '
                      'optimizer state) to this model directory')
  p.add_argument('--init-from', default=None, metavar='MODEL_DIR',
                 help='start from the weights of a model directory of the same '
                      'architecture (e.g. data/model) instead of random ones')
  p.add_argument('--calibration-articles', type=int,
                 default=defaults.calibration_articles,
                 help='validation articles whose perplexity calibrates the '
                      "model's out-of-domain warning (default: %(default)s; 0: none)")
  ns = p.parse_args(argv)
  if ns.calibration_articles < 0:
    p.error('--calibration-articles must not be negative')
  for name in ('max_steps', 'eval_steps', 'save_steps', 'eval_batches'):
    if getattr(ns, name) < 1:
      p.error(f'--{name.replace("_", "-")} must be at least 1')
  for name in ('copy_fraction', 'short_fraction', 'long_fraction'):
    if not 0 <= getattr(ns, name) <= 1:
      p.error(f'--{name.replace("_", "-")} must be between 0 and 1')
  check_training_numbers(p, ns)
  return TrainArgs(**vars(ns))


# The most the numbers a run is given may be: beyond them a run is a mistake.
MAX_LEARNING_RATE = 10.0


def check_training_numbers(p, ns):
  """Ends with ``p.error`` on a learning rate, warmup or loss weight that cannot train."""
  if ns.learning_rate is not None and not 0 <= ns.learning_rate <= MAX_LEARNING_RATE:
    p.error(f'--learning-rate must be between 0 and {MAX_LEARNING_RATE:g}, not '
            f'{ns.learning_rate:g}')
  if ns.warmup_steps is not None and ns.warmup_steps < 1:
    p.error(f'--warmup-steps must be at least 1, not {ns.warmup_steps}')
  if ns.article_loss_weight < 0:
    p.error(f'--article-loss-weight must not be negative, not {ns.article_loss_weight:g}')


def main(argv=None):
  args = parse_args(argv)

  def command():
    try:
      summary = train(args)
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
