"""Preparing a run: config, vocabulary, start weights, output directory, tasks.

``prepared`` is the one step from the train command's flags to a run: it
checks the export target, locks the directories and ``prepare``s the run,
turning a ``TrainArgs`` into a ``Run`` (``run_dir`` decides what a run starts
from); ``runs.loop.train`` takes only that ``Run`` (the flags are one of its
parts) and hands it, or plain values, down. ``tasks`` builds the course's
TrainTask and EvalTask over the run's batches (``summarizer.corpus.batches``),
counting tokens as they pass.
"""

import collections
import contextlib
import dataclasses
import os
import shutil
import time

import numpy as np

from summarizer import text
from summarizer.corpus import streams
from summarizer._trax import tl, training, trax
from summarizer.config import EOS, TOKEN_RECIPES
from summarizer.errors import SummarizerError
from summarizer.inference.model_directory import VOCAB_NAME
from summarizer.runs import export
from summarizer.runs import locks
from summarizer.runs import manifest
from summarizer.runs import optimizers
from summarizer.runs import run_dir
from summarizer.runs.args import TrainArgs
from summarizer.runs.budget import Budget, BudgetSchedule


# How many times a story batch's rows a batch of repeat lessons holds.
REPEAT_ROWS = 2
# The Config fields of a run's optimizer: a resumed run keeps its own, unless a flag gives one.
OPTIMIZER_FIELDS = ('optimizer', 'matrix_scale')


class SplitBatches:
  """Passes training batches through whole, or each split in four once ``on`` is set.

  On one core a step's time follows its rows (the quick model beside a busy
  loop: 8 stories of 256 tokens 288 ms a step, 4 stories 138 ms), so four
  quarter batches cost what one whole batch does, and early in a run more,
  smaller updates learn more from the same stories, at a lower peak
  (``peak_scale``). The plan (``runs.plan``) sets ``on`` where it finds the
  machine slow. A batch whose rows do not divide by four is halved, one of
  odd rows (one long story) passes whole.
  """

  # The parts of a batch, and the share of the peak learning rate its steps take.
  # Pinned to one core a busy loop shares, the quick recipe's quarter batches at 0.7
  # of the peak met the bar on the validation stories in six runs of seven (entity
  # precision 0.82 to 0.92, recall 0.42 to 0.51; seed 1 once 0.76/0.34; 2026-11-27),
  # where half batches at the peak did in one of three; at the peak itself the quarter
  # batches' lessons never learned the copy. At 0.42 (0.0021) they learn it in 1,538
  # to 1,744 steps, not 2,213 to 2,512, and in 2.5 million tokens seeds 0, 1 and 2
  # each cleared the bar on the test stories where two of three fell short at 0.7
  # (data/model/README.md, the bar in 2.5 million tokens).
  WAYS = 4
  PEAK_SCALE = 0.42

  def __init__(self):
    self.on = False

  @property
  def per_batch(self):
    """Steps a batch of the stream makes: ``WAYS`` once split, else 1."""
    return self.WAYS if self.on else 1

  @property
  def peak_scale(self):
    """The share of the peak learning rate the run's steps take now."""
    return self.PEAK_SCALE if self.on else 1.0

  def parts(self, stream):
    """Yields the batches of ``stream``: whole, or each in ``WAYS`` (or two) parts of its rows."""
    for batch in stream:
      rows = len(batch[0])
      ways = 1 if not self.on else self.WAYS if rows % self.WAYS == 0 else 2 - rows % 2
      part = rows // ways
      for k in range(ways):
        yield tuple(array[k * part:(k + 1) * part] for array in batch)  # (B, L) -> (B/ways, L)


@dataclasses.dataclass
class Run:
  """A run once prepared: what it trains and what it has counted so far.

  Attributes:
    args: The ``TrainArgs`` (for a resumed run, with the ``init_from`` it
      first started from).
    config: The preset with the flags' overrides and the vocabulary's size.
    vocab_file: The run's copy of its vocabulary.
    vocab_fingerprint: That copy's ``text.vocab_fingerprint`` (its config.json records it).
    resuming: Whether a checkpoint in the output directory is continued.
    start_weights: Weights to start from (``--init-from``), or None.
    earlier_runs: The lineage of the weights before this run.
    counter: Tokens read so far and the longest article among them.
    directory: Its output directory as the run found it, read once
      (``run_dir.RunDirectory``).
    repeat: The run's ``RepeatPhase`` once ``tasks`` built it (a new run
      with ``--repeat-steps``), or None.
    split: The ``SplitBatches`` its training batches pass through.
    started: ``time.monotonic()`` when the command started, from which
      ``args.max_minutes`` counts.
    budget: Its time budget (``runs.budget.Budget``), or None.
    judge: What judges the saved model against Lead-3 at the end
      (``summarizer.evaluation.verdict.judge``), or None: no verdict.
  """
  args: TrainArgs
  config: object
  vocab_file: str
  vocab_fingerprint: str
  resuming: bool
  start_weights: object
  earlier_runs: list
  counter: dict
  directory: run_dir.RunDirectory
  repeat: object = None
  split: SplitBatches = dataclasses.field(default_factory=SplitBatches)
  started: float = None
  budget: Budget = None
  judge: object = None

  @property
  def phase(self):
    """'repeat lessons' while they last, 'stories' after them, None in a run without them."""
    if self.repeat is None:
      return None
    return 'repeat lessons' if self.repeat.ended_at is None else 'stories'


@contextlib.contextmanager
def prepared(args, started=None, judge=None):
  """Checks, locks and prepares a run; the train command's one step from its flags to a ``Run``.

  Args:
    args: A ``TrainArgs``.
    started: ``time.monotonic()`` when the command started, from which
      ``args.max_minutes`` counts (default: now).
    judge: ``summarizer.evaluation.verdict.judge`` (the train command
      passes it), run on the saved model after training unless
      ``args.verdict_stories`` is 0; None: no verdict.

  Yields:
    The ``Run``, its output directory (and export directory) locked until
    the block ends.

  Raises:
    SummarizerError: among others, when another process is using the output
      directory or the export directory (``summarizer.runs.locks``).
  """
  if args.export_to:  # Before its lock is made in it: a link is not followed.
    export.check_export_target(args.export_to, args.output_dir)
  started = time.monotonic() if started is None else started
  judge = judge if args.verdict_stories else None
  budget = (Budget(args.max_minutes, started,
                   verdict_stories=args.verdict_stories if judge is not None else 0,
                   calibration_articles=args.calibration_articles)
            if args.max_minutes is not None else None)
  with locks.locked(args.output_dir, args.export_to):
    yield dataclasses.replace(prepare(args), started=started, budget=budget, judge=judge)


def prepare(args):
  """Checks the request and prepares config, vocabulary, weights and directory.

  Returns:
    A ``Run`` (with no budget, judge or start time: ``prepared`` adds them).
  """
  if args.init_from and args.resume:
    raise SummarizerError('--init-from starts a new run; it cannot be '
                          'combined with --resume')
  if args.resume and args.overwrite_output_dir:
    raise SummarizerError('--resume and --overwrite-output-dir exclude each other')
  run_dir.refuse_init_from_output(args.init_from, args.output_dir)
  # Read before the output directory is prepared: --overwrite-output-dir
  # must not delete the weights a run was asked to start from.
  start = run_dir.start_model(args.init_from, args.preset)
  directory = run_dir.RunDirectory.read(args.output_dir, resume=args.resume)
  vocab_src = run_dir.chosen_vocab(args, directory, start)
  config = _budget_config(args, run_dir.resolve_config(args, vocab_src), directory, start)
  start_weights = run_dir.initial_weights(start, config) if start else None
  resuming = run_dir.prepare_output_dir(directory, config, args.resume, args.overwrite_output_dir,
                                        args.max_steps)
  earlier_runs, longest_article = run_dir.earlier_runs(directory, resuming, start)
  # From now on the directory holds a run of ours, and the checkpoint it will write.
  manifest.record_run(directory.path, planned=manifest.CHECKPOINT_FILES)
  vocab_file = os.path.join(directory.path, VOCAB_NAME)
  if vocab_src is None:
    run_dir.build_run_vocab(args, config, vocab_file)
    config = _budget_config(args, run_dir.resolve_config(args, vocab_file), directory, start)
  elif not resuming:
    shutil.copyfile(vocab_src, vocab_file)
  manifest.record_run(directory.path)
  if resuming:  # A resumed run keeps the record of the weights it first started from.
    args = dataclasses.replace(args, init_from=directory.values.get('init_from'))
  return Run(args, config, vocab_file, text.vocab_fingerprint(vocab_file), resuming,
             start_weights, earlier_runs, {'tokens': 0, 'longest_article': longest_article},
             directory)


def _budget_config(args, config, directory, start):
  """The run's config for its budget: a new token-budgeted run takes its preset's token recipe.

  ``config.TOKEN_RECIPES`` gives the fields (the quick preset's: its shape),
  for a new run from random weights with --max-tokens; a resumed run keeps
  its checkpoint's, whatever its budget now, and its optimizer (unless
  --optimizer or --matrix-scale names another); one started from a model
  keeps the preset's, as that model has.
  """
  recipe = TOKEN_RECIPES.get(config.preset, {}).get('config', {})
  flags = {k for k in OPTIMIZER_FIELDS if getattr(args, k) is not None}
  if args.resume and directory.config is not None:  # Its optimizer too, unless a flag names one.
    kept = (set(recipe) | set(OPTIMIZER_FIELDS)) - flags
    return dataclasses.replace(config, **{k: getattr(directory.config, k) for k in kept})
  if args.max_tokens is not None and start is None:  # A flag the user gave wins over the recipe.
    return dataclasses.replace(config, **{k: v for k, v in recipe.items() if k not in flags})
  return config


def tasks(run, budget=None, tokens=None):
  """Returns the course's TrainTask and EvalTask for a prepared run.

  Training may weigh the article too and mixes in the lessons; evaluation
  weighs the summary only, as the course does, so eval losses compare
  across runs. A run with a time budget or a token budget (``tokens``, a
  ``summarizer.runs.budget.TokenBudget``) has a learning rate that decays to
  zero as the budget ends; any other, the course's warm-up and rsqrt decay.
  """
  args, config = run.args, run.config

  def stream(split, article_loss_weight=0.0, rows=1, **lessons):
    return streams.batches(
        args.data, split, vocab_file=run.vocab_file, data_dir=args.data_dir,
        boundaries=config.boundaries, batch_sizes=tuple(rows * b for b in config.batch_sizes),
        max_joint_length=config.max_joint_length, truncate=config.truncate,
        article_loss_weight=article_loss_weight, repeat=True,
        shuffle=split == 'train', seed=args.seed, download=args.download, **lessons)

  train_batches = stream('train', args.article_loss_weight, copy_fraction=args.copy_fraction,
                         short_fraction=args.short_fraction,
                         extract_fraction=args.extract_fraction,
                         long_fraction=args.long_fraction)
  if args.repeat_steps and not run.resuming:
    run.repeat = RepeatPhase(args.repeat_steps, args.repeat_until_loss)
    # A lesson's row is padded to 64 tokens where the shortest stories' is
    # to 256: twice the rows make a step of half the tokens, and less than half the cost.
    lessons = stream('train', repeat_lessons=True, rows=REPEAT_ROWS)
    train_batches = run.repeat.lessons_then_stories(lessons, train_batches)
  train_task = training.TrainTask(
      labeled_data=_counted(run.split.parts(train_batches), run.counter),
      loss_layer=tl.CrossEntropyLoss(),
      optimizer=optimizers.for_config(config),
      lr_schedule=_schedule(run, budget, tokens),
      n_steps_per_checkpoint=args.save_steps)
  eval_task = training.EvalTask(
      labeled_data=stream('validation'),
      metrics=[tl.CrossEntropyLoss(), tl.Accuracy()],
      n_eval_batches=args.eval_batches)
  return train_task, eval_task


class RepeatPhase:
  """A new run's first steps: repeat lessons, until the model copies them.

  The phase lasts ``max_steps`` steps, or ends sooner once the mean loss of
  its last ``window`` steps is below ``until_loss``: the step at which a
  model learns to copy varies with the seed (about 800 to over 1,000 steps
  for the 2-layer model), and the stories teach the rest.

  Attributes:
    ended_at: The step the stories began at, None while the phase lasts.
    loss: The phase's mean loss over its last steps when it ended.
    learned: Whether it ended because that loss was below ``until_loss``.
  """

  def __init__(self, max_steps, until_loss=None, window=20):
    self.max_steps, self.until_loss = max_steps, until_loss
    self.ended_at, self.loss, self.learned = None, None, False
    self._losses = collections.deque(maxlen=window)
    self._steps = 0
    self.lesson_shape = None  # The (rows, length) of the lessons' first batch.
    self._stories, self._peeked = None, []

  def feed(self, step, loss):
    """Takes a step's loss (the train loop's hook); ends the phase when it is time."""
    if self.ended_at is not None:
      return
    self._steps += 1
    self._losses.append(float(np.mean(loss)))
    mean = float(np.mean(self._losses))
    self.learned = (self.until_loss is not None and len(self._losses) == self._losses.maxlen
                    and mean < self.until_loss)
    if self.learned or self._steps >= self.max_steps:
      self.ended_at, self.loss = step, mean

  def ended_line(self):
    """The line that says the repeat lessons are over, and why."""
    why = (f'their loss {self.loss:.3f} is below {self.until_loss:g}: the model copies'
           if self.learned else f'their {self.max_steps} steps are done (loss {self.loss:.3f})')
    return f'step {self.ended_at}: repeat lessons over, {why}; on to the stories'

  def recent_loss(self):
    """The mean loss of the phase's last steps (None before its first)."""
    return float(np.mean(self._losses)) if self._losses else None

  def lessons_then_stories(self, lessons, stories):
    """Returns the batches: repeat lessons while the phase lasts (at most its steps), then the stories."""
    self._stories = stories
    return self._drawn(lessons)

  def _drawn(self, lessons):
    # One more than the steps: Trax's TrainTask takes the first batch as its sample.
    first = next(lessons)
    self.lesson_shape = getattr(first[0], 'shape', None)  # None: not an array (a stand-in).
    yield first
    drawn = 0
    while self.ended_at is None and drawn < self.max_steps:  # A plan may lower max_steps.
      drawn += 1
      yield next(lessons)
    if self.ended_at is None:  # Drawn without a loop feeding the losses.
      self.ended_at = self.max_steps
    yield from self._peeked
    self._peeked = []
    yield from self._stories

  def story_batches(self, n):
    """The stories' first ``n`` batches, read ahead (they are trained on as they come), or []."""
    if self._stories is None:
      return []
    while len(self._peeked) < n:
      self._peeked.append(next(self._stories))
    return self._peeked[:n]


def _schedule(run, budget, tokens=None):
  """The run's learning-rate schedule: fitted to its budgets, or the course's."""
  config = run.config
  if budget is None and tokens is None:
    return trax.lr.warmup_and_rsqrt_decay(config.warmup_steps, config.learning_rate)
  return BudgetSchedule(config.learning_rate, config.warmup_steps, budget,
                        max_steps=run.args.max_steps, split=run.split, tokens=tokens,
                        decay_share=config.decay_share)


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
