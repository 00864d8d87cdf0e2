"""A run's time and token budgets: when training must stop, and a schedule that fits them.

``--max-minutes N`` bounds the whole command: start-up, compiling, training,
evaluations, the final save, the learning curve, the verdict against Lead-3
and the calibration. The budget keeps back, for what follows training, the
seconds it expects those to take at this machine's measured speed
(``TAIL_SECONDS``, plus the verdict's and the calibration's); training stops
at the first step past what is left, saves, and the run ends as any other.
The verdict and the calibration always read all their stories and articles:
where they take longer than kept for them, the run says by how much.

``--max-tokens N`` bounds the training tokens instead (``TokenBudget``):
training stops at the first step past N, whatever the machine's speed. A run
budgeted by tokens alone decides everything on its steps and tokens, never the
clock, and computes on one CPU thread (``one_thread_for_tokens``), so that a
seed's run is the same, loss for loss, on any number of cores.

The learning rate then follows the clock (or the tokens), not a step count:
a linear warm-up over the preset's warm-up steps, with a token budget or on
split batches (a slow machine) the peak held until the preset's last
``decay_share`` of the budget, then a linear decay
that reaches zero when the training time is spent (or at ``--max-steps``, or
when ``--max-tokens`` are read, whichever comes first). A schedule that ends
with the budget is what a short run learns most from; the course's rsqrt
decay never ends, so a run cut short stops at a learning rate still high.
"""

import os
import time

# Seconds kept back for the end of a run: a final evaluation, the last save,
# loss.png, config.json (measured here at 3-6 s for the tiny preset).
TAIL_SECONDS = 10.0
# Seconds the verdict takes a story, and the calibration an article, on the
# machine the recipe was tuned on, with a little room (the quick preset's 100
# stories took 3.6-4.3 s, its 500 articles 3.8-4.1 s; at 2,348 tokens/s, a
# seventh of the recipe's speed, 22.9 s and 22.2 s). Both always read all of
# theirs; a slower machine keeps back proportionally more (``fit_to_speed``),
# up to ``MAX_ENDING_SHARE`` of the budget: where they take longer still, the
# run ends late and says so.
VERDICT_SECONDS_PER_STORY = 0.04
CALIBRATION_SECONDS_PER_ARTICLE = 0.009
# And each of the two, however few it reads, first compiles its own function of
# the model: 1-2 s here, 5 s for the calibration of a micro run on a busy CI machine
# (3 articles), which ended that run 2 s past its minute.
FIRST_CALL_SECONDS = 2.5
MAX_ENDING_SHARE = 0.12
# The environment variables that size XLA's pool of CPU threads, read once, when jax's
# first computation starts its CPU client (PJRT_NPROC first); unset, the pool has a thread
# for each core the process may use.
THREAD_VARIABLES = ('PJRT_NPROC', 'NPROC')


def ending_work(verdict_stories, calibration_articles):
  """Seconds the verdict and the calibration take after training, at the recipe's speed."""
  return sum(FIRST_CALL_SECONDS + count * seconds for count, seconds in (
      (verdict_stories, VERDICT_SECONDS_PER_STORY),
      (calibration_articles, CALIBRATION_SECONDS_PER_ARTICLE)) if count)


def one_thread_for_tokens(args, environ=None):
  """Has a run budgeted by tokens alone compute on one CPU thread, before jax starts.

  XLA splits a step's sums among its threads, and a sum split another way
  rounds its last bits otherwise: one seed's losses on one core and on two
  parted at step 5, and the repeat lessons, which end on a loss, then ended
  at other steps. On one thread the arithmetic is the same on any number of
  cores (on CPUs of one instruction set). The cost is what a second thread
  adds to the token recipe's small steps: nothing measurable on this
  machine's two shared cores (data/model/README.md, the bar in 2.5 million
  tokens). A thread count the user set is kept.

  Args:
    args: The ``TrainArgs``.
    environ: The environment to set (default: the process's).

  Returns:
    The CPU threads the run computes on where its environment sizes them (a
    string), else None (a thread a core).
  """
  environ = os.environ if environ is None else environ
  if (args.max_tokens is not None and args.max_minutes is None
      and cpu_threads(environ) is None):
    environ['PJRT_NPROC'] = '1'
  return cpu_threads(environ)


def cpu_threads(environ=None):
  """The CPU threads XLA computes on where the environment sizes its pool (a string), else None."""
  environ = os.environ if environ is None else environ
  return next((environ[name] for name in THREAD_VARIABLES if name in environ), None)


class Budget:
  """The wall-clock budget of one run.

  Args:
    minutes: The whole command's budget, in minutes.
    started: ``time.monotonic()`` when the command started.
    verdict_stories: The stories the run's verdict will judge (0: none).
    calibration_articles: The articles its calibration will read (0: none).
  """

  def __init__(self, minutes, started, verdict_stories=0, calibration_articles=0):
    self.end = started + 60.0 * minutes
    self._ending_work = ending_work(verdict_stories, calibration_articles)
    self._most_kept = max(self._ending_work, MAX_ENDING_SHARE * 60.0 * minutes)
    self.slowdown = 1.0
    self.train_started = None  # Set by the first step's schedule call.

  def fit_to_speed(self, slowdown):
    """Keeps back more for the verdict and the calibration on a machine ``slowdown`` times slower."""
    self.slowdown = max(float(slowdown), 1.0)

  @property
  def ending_seconds(self):
    """Seconds kept back for the verdict and the calibration, at the measured speed."""
    return min(self._ending_work * self.slowdown, self._most_kept)

  @property
  def train_end(self):
    """When training must stop (``time.monotonic()``)."""
    return self.end - TAIL_SECONDS - self.ending_seconds

  def seconds_left(self, now=None):
    """Seconds until the training time is spent (negative once it is)."""
    return self.train_end - (time.monotonic() if now is None else now)

  def spent(self):
    """Whether training must stop now."""
    return self.seconds_left() <= 0

  def train_fraction(self, now=None):
    """How much of the training time has passed, from 0 to 1."""
    now = time.monotonic() if now is None else now
    if self.train_started is None:
      self.train_started = now
    span = max(self.train_end - self.train_started, 1e-9)
    return min(max((now - self.train_started) / span, 0.0), 1.0)

  def overrun(self, now=None):
    """Seconds past the budget's end (0 if within it)."""
    return max((time.monotonic() if now is None else now) - self.end, 0.0)


class TokenBudget:
  """A run's budget of training tokens (``--max-tokens``), lessons included.

  Tokens are counted as the training batches are drawn (``prepare.Run.counter``),
  so a run of a given budget reads the same batches on every machine.

  Args:
    tokens: The tokens the run may read.
    counter: The run's counter, whose ``'tokens'`` grows as batches are drawn.
  """

  def __init__(self, tokens, counter):
    self.tokens, self.counter = int(tokens), counter

  def read(self):
    """The tokens read so far."""
    return self.counter['tokens']

  def left(self):
    """The tokens the run may still read (0 once spent)."""
    return max(self.tokens - self.read(), 0)

  def spent(self):
    """Whether training must stop now."""
    return self.read() >= self.tokens

  def fraction(self):
    """How much of the budget has been read, from 0 to 1."""
    return min(self.read() / max(self.tokens, 1), 1.0)


class BudgetSchedule:
  """A learning-rate schedule that warms up, then decays to zero as the budget ends.

  Trax's ``TrainTask`` calls it as ``schedule(step)`` before each step.

  Args:
    peak: The learning rate after the warm-up.
    warmup_steps: Steps of linear warm-up, counted from ``first_step``.
    budget: The run's ``Budget``, or None for a run bounded by steps alone.
    first_step: The step the run starts from (a resumed run warms up
      again); None: the step before the first one it is called with.
    max_steps: The last step, or None: the decay ends at whichever of the
      budget and ``max_steps`` comes first.
    split: The run's ``prepare.SplitBatches``, whose steps on split batches
      take its ``peak_scale`` of the peak; None: the peak.
    tokens: The run's ``TokenBudget``, or None.
    decay_share: The last share of the run over which the rate decays to
      zero, where the run has a token budget or its steps take split
      batches; before it, the peak holds. Whole batches on a clock decay
      over the whole run, as the ten-minute figures at full speed were
      measured.
  """

  def __init__(self, peak, warmup_steps, budget=None, first_step=None, max_steps=None,
               split=None, tokens=None, decay_share=1.0):
    self.peak, self.split, self.tokens = peak, split, tokens
    self.decay_share = decay_share
    self.warmup_steps = max(int(warmup_steps), 1)
    self.budget = budget
    self.first_step = first_step
    self.max_steps = max_steps

  def progress(self, step):
    """The share of the run done at ``step``, by the clock, the tokens or the step count."""
    done = self.budget.train_fraction() if self.budget is not None else 0.0
    if self.tokens is not None:
      done = max(done, self.tokens.fraction())
    if self.max_steps is not None and self.max_steps > self.first_step:
      done = max(done, (step - self.first_step) / (self.max_steps - self.first_step))
    return min(max(done, 0.0), 1.0)

  def __call__(self, step):
    if self.first_step is None:  # Trax counts from 1 (or from a resumed step + 1).
      self.first_step = step - 1
    warm = min((step - self.first_step) / self.warmup_steps, 1.0)
    split = self.split is not None and self.split.on
    peak = self.peak * (self.split.peak_scale if self.split is not None else 1.0)
    share = self.decay_share if split or self.tokens is not None else 1.0
    return peak * max(warm, 0.0) * min((1.0 - self.progress(step)) / share, 1.0)
