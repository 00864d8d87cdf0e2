"""Train the summarizer as the course does: TrainTask, EvalTask and Loop.

  python -m summarizer.train                       # tiny model on the news corpus
  python -m summarizer.train --preset course --data tfds:cnn_dailymail
  python -m summarizer.train --output-dir runs/tiny --resume --max-steps 4000

A run writes into ``--output-dir``: ``config.json``, the vocabulary, the
checkpoint, Trax's metric logs (``train/``, ``eval/``, readable by
TensorBoard), ``train.log`` and a ``loss.png`` learning curve. An existing
checkpoint is resumed only with ``--resume``; Ctrl-C saves and exits (130).
"""

import argparse
import contextlib
import dataclasses
import glob
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
from summarizer._trax import tl, trax
from summarizer.config import (COURSE_VOCAB_FILE, DEFAULT_VOCAB_FILE, EOS, get_preset,
                               load_config, save_config)
from summarizer.errors import OneLineParser, SummarizerError
from summarizer.model import TransformerLM

training = trax.supervised.training

# Config entries that fix the architecture: a checkpoint resumes only into
# a model that agrees on all of them.
ARCHITECTURE = ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'n_heads', 'max_len')
# Training examples a run's own vocabulary is built from (enough for its
# frequent words; the whole of CNN/DailyMail would take an hour).
VOCAB_EXAMPLES = 20000
# What --overwrite-output-dir may delete: files a run writes, nothing else.
RUN_FILES = ('config.json', checkpoint.VOCAB_NAME, 'train.log', 'loss.png',
             'data_counters*', 'model.*', 'train', 'eval')


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


class _Interrupted(Exception):
  """Raised between two steps after Ctrl-C, so the step count is whole."""


class _Loop(training.Loop):
  """Trax's Loop with atomic checkpoints and a step hook."""

  def __init__(self, *args, on_step=None, **kwargs):
    self._on_step = on_step
    super().__init__(*args, **kwargs)

  def save_checkpoint(self, basename):
    if basename != checkpoint.BASENAME:
      return super().save_checkpoint(basename)
    checkpoint.save_atomically(super().save_checkpoint, self._output_dir)

  def _run_one_step(self, task_index, task_changed):
    loss, metrics = super()._run_one_step(task_index, task_changed)
    if self._on_step is not None:
      self._on_step(self.step, loss)
    return loss, metrics


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


def resolve_config(args, vocab_file=None):
  """Returns the Config of a run: the preset with the flags' overrides.

  Args:
    args: A ``TrainArgs``.
    vocab_file: The run's vocabulary; the model gets at least as many ids.
  """
  config = get_preset(args.preset)
  overrides = {}
  if args.learning_rate is not None:
    overrides['learning_rate'] = args.learning_rate
  if args.warmup_steps is not None:
    overrides['warmup_steps'] = args.warmup_steps
  if args.truncate is not None:
    overrides['truncate'] = args.truncate
  n_ids = data.vocab_size(vocab_file) if vocab_file else 0
  if n_ids > config.vocab_size:  # Round up to a multiple of 128 for speed.
    overrides['vocab_size'] = -(-n_ids // 128) * 128
  return dataclasses.replace(config, **overrides)


def chosen_vocab(args):
  """Returns the vocabulary a run uses, or None if one must be built for it.

  In order: ``--vocab``; the one a resumed run already has; the one of the
  model ``--init-from`` starts from; the course's for the ``course`` preset
  (as the course does); the project's for ``news``. A ``tiny`` run on other
  data needs a vocabulary of its own: the news one would cut its words
  into meaningless pieces.
  """
  if args.vocab:
    return data.vocab_path(args.vocab)
  own = os.path.join(args.output_dir, checkpoint.VOCAB_NAME)
  if args.resume and os.path.isfile(own):
    return own
  if args.init_from:
    return checkpoint.model_vocab(args.init_from)
  if args.preset == 'course':
    return COURSE_VOCAB_FILE
  if args.data == 'news':
    return DEFAULT_VOCAB_FILE
  return None


def build_run_vocab(args, config, path):
  """Builds a vocabulary of the preset's size from the run's training data."""
  from summarizer import vocab  # pylint: disable=g-import-not-at-top
  print(f'no --vocab: building a {config.vocab_size}-subword vocabulary from the '
        f'training split of {args.data} into {path}', flush=True)
  vocab.build_vocab(args.data, config.vocab_size, path, args.data_dir,
                    limit=VOCAB_EXAMPLES, progress=args.progress, download=args.download)
  return path


def architecture_differences(saved, config, where):
  """Describes how two configs' architectures differ ('' if they agree)."""
  return '; '.join(f'{key} {getattr(saved, key)} in {where}, '
                   f'{getattr(config, key)} requested'
                   for key in ARCHITECTURE if getattr(saved, key) != getattr(config, key))


def initial_weights(model_dir, config):
  """Returns the weights of a model directory, checked to fit ``config``.

  A fresh run may start from a trained model (fine-tuning) instead of a
  random one; the optimizer and the learning-rate schedule start afresh.
  The course's checkpoint (no config.json) is read with the preset's heads.
  """
  has_config = os.path.exists(os.path.join(model_dir, 'config.json'))
  model, saved, _ = checkpoint.load_model(
      model_dir, mode='eval', n_heads=None if has_config else config.n_heads)
  differences = architecture_differences(saved, config, model_dir)
  if differences:
    raise SummarizerError(f'--init-from {model_dir}: the model does not match '
                          'the requested one: ' + differences)
  return model.weights


def _run_files(directory):
  """Lists the files and folders in ``directory`` that a run writes."""
  found = []
  for pattern in RUN_FILES:
    found += glob.glob(os.path.join(glob.escape(directory), pattern))
  return found


def prepare_output_dir(args, config):
  """Checks the output directory against --resume / --overwrite-output-dir.

  Returns:
    True if a checkpoint is to be resumed.
  """
  out = args.output_dir
  if args.resume and args.overwrite_output_dir:
    raise SummarizerError('--resume and --overwrite-output-dir exclude each other')
  if os.path.exists(out) and not os.path.isdir(out):
    raise SummarizerError(f'--output-dir {out}: exists and is not a directory')
  os.makedirs(out, exist_ok=True)
  checkpoint.recover(out)
  if args.overwrite_output_dir:
    for path in _run_files(out):
      if os.path.isdir(path):
        shutil.rmtree(path)
      else:
        os.remove(path)
    return False
  if args.resume:
    if not checkpoint.has_checkpoint(out):
      raise SummarizerError(f'--resume: no checkpoint in {out}')
    saved, _ = load_config(out)
    differences = architecture_differences(saved, config, 'the checkpoint')
    if differences:
      raise SummarizerError(f'{out}: checkpoint does not match the requested '
                            'model: ' + differences)
    return True
  if os.listdir(out):
    raise SummarizerError(f'--output-dir {out} is not empty: pass --resume to '
                          'continue its checkpoint or --overwrite-output-dir '
                          'to start over')
  return False


@contextlib.contextmanager
def quiet_loop_log(log_path=None):
  """Sends Trax Loop's own progress prints to a log file instead of stdout.

  Args:
    log_path: The file to append them to (``train.log``); None drops them.
  """
  log = open(log_path or os.devnull, 'a', encoding='utf-8')  # pylint: disable=consider-using-with
  original = training._log  # pylint: disable=protected-access

  def to_file(message, stdout=True):
    del stdout
    log.write(f'{message}\n')
    log.flush()

  training._log = to_file  # pylint: disable=protected-access
  try:
    yield log
  finally:
    training._log = original  # pylint: disable=protected-access
    log.close()


@contextlib.contextmanager
def _interrupt_flag():
  """Turns Ctrl-C into a flag checked between steps; yields the flag.

  A second Ctrl-C raises KeyboardInterrupt at once (for a long evaluation).
  """
  flag = {'set': False}

  def handler(signum, frame):
    del signum, frame
    if flag['set']:  # A second Ctrl-C: stop now; checkpoints stay loadable.
      raise KeyboardInterrupt
    flag['set'] = True
    print('\nstopping after this step (Ctrl-C again to stop at once)',
          file=sys.stderr, flush=True)

  previous = signal.signal(signal.SIGINT, handler)
  try:
    yield flag
  finally:
    signal.signal(signal.SIGINT, previous)


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


def _lineage(args, resuming):
  """Returns the earlier runs behind this one, and the longest article they read.

  A run started ``--init-from`` a model directory inherits that model's
  runs; a resumed run keeps the record it wrote when it started.
  """
  if resuming:
    values = load_config(args.output_dir)[1]
    return values.get('lineage', [])[:-1], values.get('max_article_tokens', 0)
  if not args.init_from:
    return [], 0
  values = _model_values(args.init_from)
  runs = values.get('lineage') or [{'init_from': None, 'steps': values.get('trained_steps'),
                                    'note': 'trained elsewhere'}]
  return list(runs), values.get('max_article_tokens', 0)


def _model_values(model_dir):
  """The config.json values of a model directory ({} for the course's checkpoint)."""
  try:
    return load_config(model_dir)[1]
  except SummarizerError:
    return {'trained_steps': checkpoint.saved_step(model_dir)}


def _save_run_config(args, config, earlier_runs, steps, longest_article):
  """Writes the run's config.json: the preset, the data, the levers and the lineage."""
  levers = dict(data=args.data, learning_rate=config.learning_rate,
                warmup_steps=config.warmup_steps, seed=args.seed,
                article_loss_weight=args.article_loss_weight,
                copy_fraction=args.copy_fraction, short_fraction=args.short_fraction,
                long_fraction=args.long_fraction)
  this_run = dict(levers, init_from=args.init_from, steps=steps)
  lineage = list(earlier_runs) + [this_run]
  save_config(config, args.output_dir, vocab_file=checkpoint.VOCAB_NAME,
              max_steps=args.max_steps, init_from=args.init_from,
              max_article_tokens=longest_article, lineage=lineage,
              total_steps=sum(run.get('steps') or 0 for run in lineage), **levers)


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


def train(args):
  """Runs (or resumes) a training run; returns a summary dict.

  Args:
    args: A ``TrainArgs``.

  Returns:
    dict with 'step', 'train_loss', 'eval_loss', 'eval_accuracy', 'seconds',
    'tokens_per_second', 'interrupted', 'output_dir'.
  """
  if args.init_from and args.resume:
    raise SummarizerError('--init-from starts a new run; it cannot be '
                          'combined with --resume')
  vocab_src = chosen_vocab(args)
  config = resolve_config(args, vocab_src)
  # Loaded before the output directory is prepared: --overwrite-output-dir
  # must not delete the weights a run was asked to start from.
  start_weights = initial_weights(args.init_from, config) if args.init_from else None
  resuming = prepare_output_dir(args, config)
  out = args.output_dir
  vocab_copy = os.path.join(out, checkpoint.VOCAB_NAME)
  if vocab_src is None:
    vocab_src = build_run_vocab(args, config, vocab_copy)
    config = resolve_config(args, vocab_src)
  elif not resuming:
    shutil.copyfile(vocab_src, vocab_copy)
  n_devices = trax.fastmath.local_device_count()

  def stream(split, **lessons):
    # Training may weigh the article too; evaluation weighs the summary only,
    # as the course does, so eval losses of all runs compare.
    training_split = split == 'train'
    return data.batches(
        args.data, split, vocab_file=vocab_copy, data_dir=args.data_dir,
        boundaries=config.boundaries, batch_sizes=config.batch_sizes,
        max_joint_length=config.max_joint_length, truncate=config.truncate,
        article_loss_weight=args.article_loss_weight if training_split else 0.0,
        repeat=True, shuffle=training_split, n_devices=n_devices, seed=args.seed,
        download=args.download, **lessons)

  earlier_runs, longest_article = _lineage(args, resuming)
  counter = {'tokens': 0, 'longest_article': longest_article}
  train_task = training.TrainTask(
      labeled_data=_counted(
          stream('train', copy_fraction=args.copy_fraction,
                 short_fraction=args.short_fraction,
                 long_fraction=args.long_fraction), counter),
      loss_layer=tl.CrossEntropyLoss(),
      optimizer=trax.optimizers.Adam(config.learning_rate),
      lr_schedule=trax.lr.warmup_and_rsqrt_decay(config.warmup_steps,
                                                 config.learning_rate),
      n_steps_per_checkpoint=args.save_steps)
  eval_task = training.EvalTask(
      labeled_data=stream('validation'),
      metrics=[tl.CrossEntropyLoss(), tl.Accuracy()],
      n_eval_batches=args.eval_batches)

  train_losses = []
  bar = None
  started = time.time()

  def on_step(step, loss):
    loss = float(np.mean(loss))  # One value per device when data-parallel.
    train_losses.append((step, loss))
    if bar is not None:
      bar.update(1)
      elapsed = max(time.time() - started, 1e-9)
      bar.set_postfix(loss=f'{loss:.3f}', tok_s=f'{counter["tokens"] / elapsed:.0f}')
    if flag['set']:
      raise _Interrupted()

  if resuming:  # A resumed run keeps the record of the weights it first started from.
    args = dataclasses.replace(args, init_from=load_config(out)[1].get('init_from'))
  interrupted = False
  with quiet_loop_log(os.path.join(out, 'train.log')) as log, \
       _interrupt_flag() as flag:
    loop = _Loop(
        TransformerLM(**config.model_kwargs(), mode='train'), [train_task],
        eval_model=TransformerLM(**config.model_kwargs(), mode='eval'),
        eval_tasks=[eval_task], output_dir=out,
        eval_at=lambda step: step % args.eval_steps == 0 or step == args.max_steps,
        random_seed=args.seed, on_step=on_step)
    if start_weights is not None:
      loop.update_weights_and_state(weights=start_weights)
    first = loop.step

    def record():
      _save_run_config(args, config, earlier_runs, loop.step, counter['longest_article'])

    record()
    print(f'{"resuming" if resuming else "training"} {config.preset} '
          f'({_count_weights(loop)/1e6:.1f}M parameters) on {args.data} '
          f'from step {first} to {args.max_steps}, {n_devices} device(s), '
          f'output in {out}', flush=True)
    print('config: ' + ', '.join(f'{k}={v}' for k, v in config.to_dict().items()),
          flush=True)
    if args.progress:
      from tqdm import tqdm  # pylint: disable=g-import-not-at-top
      bar = tqdm(total=args.max_steps, initial=first, unit='step',
                 dynamic_ncols=True, file=sys.stderr)
    last_reported = None
    try:
      while loop.step < args.max_steps:
        # Run up to the next evaluation, then report it as one grep-able line.
        target = min(args.max_steps,
                     (loop.step // args.eval_steps + 1) * args.eval_steps)
        loop.run(target - loop.step)
        record()
        line = _eval_line(loop, train_losses)
        if line and line != last_reported:
          (bar.write if bar else print)(line)
          log.write(line + '\n')
          last_reported = line
    except _Interrupted:
      interrupted = True
      loop.save_checkpoint(checkpoint.BASENAME)
    finally:
      if bar is not None:
        bar.close()
    if not interrupted and loop.step % args.save_steps:
      loop.save_checkpoint(checkpoint.BASENAME)
    record()

  eval_losses = loop.history.get('eval', 'metrics/CrossEntropyLoss')
  plot_losses(train_losses, eval_losses, os.path.join(out, 'loss.png'))
  if args.calibration_articles and not interrupted:
    calibration.save_calibration(out, calibration.calibrate(
        out, args.data, 'validation', args.calibration_articles, args.data_dir,
        progress=args.progress))
  seconds = time.time() - started
  accuracy = loop.history.get('eval', 'metrics/Accuracy')
  summary = {
      'step': loop.step,
      'train_loss': _mean_tail(train_losses),
      'eval_loss': eval_losses[-1][1] if eval_losses else None,
      'eval_accuracy': accuracy[-1][1] if accuracy else None,
      'seconds': round(seconds, 1),
      'tokens_per_second': round(counter['tokens'] / max(seconds, 1e-9)),
      'interrupted': interrupted,
      'output_dir': out,
  }
  if args.export_to:
    checkpoint.export(out, args.export_to, args.calibration_articles)
    summary['exported_to'] = args.export_to
  if interrupted:
    print(f'interrupted: checkpoint of step {loop.step} saved in {out}; '
          'continue with --resume', file=sys.stderr)
  return summary


def _count_weights(loop):
  return sum(int(np.prod(w.shape)) for w in jax.tree_util.tree_leaves(loop.model.weights))


def _mean_tail(losses, n=50):
  """Mean of the last ``n`` step losses (one step's loss is noisy)."""
  if not losses:
    return None
  return float(np.mean([loss for _, loss in losses[-n:]]))


def _eval_line(loop, train_losses):
  """Formats 'step N: train loss X, eval loss Y, eval accuracy Z'."""
  evals = loop.history.get('eval', 'metrics/CrossEntropyLoss')
  accuracy = loop.history.get('eval', 'metrics/Accuracy')
  if not evals or evals[-1][0] != loop.step:
    return None
  return (f'step {loop.step}: train loss {_mean_tail(train_losses):.4f}, '
          f'eval loss {evals[-1][1]:.4f}, eval accuracy {accuracy[-1][1]:.4f}')


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
  p.add_argument('--learning-rate', type=float, default=None,
                 help="peak learning rate (default: the preset's)")
  p.add_argument('--warmup-steps', type=int, default=None,
                 help="warmup steps (default: the preset's)")
  p.add_argument('--seed', type=int, default=defaults.seed)
  p.add_argument('--output-dir', default=defaults.output_dir)
  p.add_argument('--resume', action='store_true',
                 help='continue the checkpoint in --output-dir')
  p.add_argument('--overwrite-output-dir', action='store_true',
                 help="delete a previous run's files in --output-dir first")
  p.add_argument('--article-loss-weight', type=float,
                 default=defaults.article_loss_weight,
                 help='loss weight of article tokens (course: 0)')
  p.add_argument('--copy-fraction', type=float, default=defaults.copy_fraction,
                 help='share of training examples whose summary is a sentence '
                      'copied from the article (teaches copying names)')
  p.add_argument('--short-fraction', type=float, default=defaults.short_fraction,
                 help='share of training articles cut down to the sentences '
                      'with their facts (teaches summarising short texts)')
  p.add_argument('--long-fraction', type=float, default=defaults.long_fraction,
                 help='share of training examples joined with the next one or '
                      'two into a longer article (teaches long articles)')
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
  return TrainArgs(**vars(ns))


def main(argv=None):
  args = parse_args(argv)
  try:
    summary = train(args)
  except SummarizerError as e:
    print(f'error: {e}', file=sys.stderr)
    return 2
  except KeyboardInterrupt:
    print(f'stopped: the last checkpoint in {args.output_dir} is kept; '
          'continue with --resume', file=sys.stderr)
    return 130
  print('done: ' + ', '.join(f'{k}={v}' for k, v in summary.items()))
  return 130 if summary['interrupted'] else 0


if __name__ == '__main__':
  sys.exit(main())
