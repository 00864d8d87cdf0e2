"""A run's plan: its phases, this machine's speed, and a look at the model as it learns.

A run measures its own speed over its first seconds of steps (after the
first, which compiles), then says in one line what it will do::

  plan: repeat lessons until their loss is below 0.3 (at most 1,240 steps), then the
  stories; this machine: 10,547 tokens/s (the recipe's: 16,000), about 3,100 steps
  in the 9 min 31 s of training left

A run with a time budget fits itself to that speed: the repeat lessons may
take at most ``MAX_LESSON_SHARE`` of the steps the machine makes in the
budget (on a slow machine the stories need the rest), the budget keeps
back the seconds the verdict and the calibration take at that speed
(``Budget.fit_to_speed``), and a machine below ``SPLIT_SHARE`` of the
recipe's speed trains on quarter batches, four times the steps. Evaluations come on
the clock (``EvalClock``), about once a minute whatever a step costs, unless
``--eval-steps`` asks for a step count. A run budgeted by tokens alone decides
nothing by the clock: it plans at a step count, on the tokens its steps read
(``TOKEN_PLAN_STEPS``), and evaluates at each tenth of its tokens; the seconds
only show in its lines. Where the budget reads far fewer tokens than the recipe took to
clear the bar, the plan says so at the start; where the run ends below the
bar, ``minutes_to_bar`` gives the minutes its pace needs for the recipe's
steps (the diagnosis's ``--resume --max-minutes N``).
"""

import math
import time

import numpy as np

from summarizer._trax import fastmath, jnp

# Tokens a second each preset's recipe was tuned at: the quick preset's ten
# minutes on a 2-core CPU with both cores free (15,485 to 15,702 here with its
# 1k vocabulary, 2026-11-26; 16,000 to 16,900 with 2,048 subwords, 2026-11-25).
RECIPE_TOKENS_PER_SECOND = {'quick': 16000}
# A run slower than this share of its recipe's speed says so at its end.
SLOW_SHARE = 0.75
# The speed is measured over at least this many seconds and steps, from the
# end of the step MEASURE_FROM_STEP into the run: the first steps compile
# (Trax's second compiles again), and counting them says a third of the speed.
MEASURE_FROM_STEP = 3
MEASURE_SECONDS = 8.0
MEASURE_STEPS = 5
# A run budgeted by tokens alone plans at this many steps past MEASURE_FROM_STEP, whatever
# the seconds, from the tokens those steps read: its repeat lessons' most steps then follow
# the tokens, not the machine's speed, and a seed's run is the same on every machine (planned
# on seconds, one seed's lessons ran to 875 steps on a free core and 868 on a shared one).
TOKEN_PLAN_STEPS = 100
# A step this many times slower than the measure's typical one compiled a
# batch shape it had not seen (a resumed run meets the stories' four in its
# first seconds, each a few seconds on a slow core) and is left out: counted,
# a resumed run on one shared core measured 1,026 tokens/s where it made 3,000.
COMPILE_SLOWDOWN = 4.0
# Seconds between two evaluations (and previews) without --eval-steps.
EVAL_SECONDS = 60.0
# ... and in a run budgeted by tokens alone, the evaluations of its budget: one at each tenth
# of its tokens (2.5 million tokens, about seven minutes on one free core: one every 40 s).
EVALS_PER_TOKEN_BUDGET = 10
# What the quick preset's recipe took to clear the bar (undertrained.bar), at
# the fewest: pinned to one core a busy loop shares, ten minutes from random
# weights made 1,869 steps and read 2.6 million tokens (2026-11-26, seed 0).
# Runs of as many steps may fall short (the same seed once at 1,889 steps,
# seed 1 at 1,861: entity precision 0.71 and 0.49), so a run below the bar is
# told at least diagnosis.DEFAULT_MORE_MINUTES more; twenty minutes there
# (3,642 steps) and ten alone on two cores (5,761 to 5,842) cleared it with
# room. The bar comes with the steps, whatever their pace. These hold for the
# news corpus the recipe was tuned on (``_recipe_bar``), in whole batches: a
# run on split batches (SPLIT_SHARE) needs a step for each part.
BAR_STEPS = {'quick': 1900}
BAR_TOKENS = {'quick': 2_600_000}
# A budget that reads less than this share of BAR_TOKENS at the measured
# speed will not reach the bar, and its plan says so. (Measured on the
# repeat lessons, the speed is off the whole run's by up to a quarter: one
# shared core here measured 5,704 tokens/s and made 4,526, and its ten
# minutes planned 3.0 million tokens.)
FAR_SHORT = 0.5
# Minutes a resumed run spends besides its steps: start-up, compiling, the
# verdict and the calibration (about a minute on one shared core).
RESUME_MINUTES = 1.5
# A budgeted run of a preset with a recipe, measured below this share of the
# recipe's speed, splits each training batch in four (``prepare.SplitBatches``)
# at 0.7 of the peak: on one core a step's time follows its rows, and four
# times the steps of a quarter of the stories learn more. Pinned to one core a
# busy loop shares (5,300 to 6,100 tokens/s measured), ten minutes made about
# 1,850 steps of whole batches (entity precision 0.49 to 0.81 on the
# validation stories), 3,500 to 4,100 of half ones (0.68 to 0.87, recall 0.28
# to 0.43) and 8,400 to 8,900 of quarter ones (0.76 to 0.92, recall 0.34 to
# 0.51; 2026-11-26 and 27). On two cores (15,500 tokens/s here) a half batch
# takes more than half a step's time: whole batches there.
SPLIT_SHARE = 0.5
# A new run draws its first batch before its steps can be timed, so a second's
# probe of the machine (``probe_speed``) guesses whether to split from the first
# step; the measure of its steps then confirms it, or undoes it. Matrix
# products of the quick model's widths, on as many threads as the machine
# gives a step: here, both cores free, PROBE_RATE of them a second; one core
# 248; one core a busy loop shares 116 (2026-11-27).
PROBE_SECONDS = 0.5
PROBE_ROWS = 1024
PROBE_RATE = 416
# The steps the quick preset's repeat lessons took to end on their loss, new runs on the
# news corpus: on whole batches about 900 (the phase's docstring: 800 to over 1,000), on
# quarter batches 1,818 and 1,860 (2026-11-27, seeds 0). A plan made during the lessons
# counts on them, at most the phase's most steps; a phase with no loss to end on, on those.
LESSON_STEPS_SEEN = {1: 900, 4: 1850}
# Story batches the plan reads ahead to learn what a story step holds and costs.
STORY_SAMPLE = 8
# The most of a budgeted run's steps the repeat lessons may take: on a slow
# machine, a model that writes the stories' sentences beats one that never
# read a story. Refitted at each evaluation to the run's speed so far.
MAX_LESSON_SHARE = 0.5


class EvalClock:
  """When a run evaluates: every ``every_steps`` steps, at each tenth of a token budget, or
  every ``seconds``.

  The last step (``max_steps``) is always evaluated. A run budgeted by tokens
  alone (``tokens``, its ``TokenBudget``, and no time budget) evaluates at the
  first step past each ``EVALS_PER_TOKEN_BUDGET``-th of its tokens: an
  evaluation draws from the loop's random numbers, so a clock's evaluations
  would make the same seed's run another on a slower machine.
  """

  def __init__(self, every_steps=None, max_steps=None, seconds=None, tokens=None):
    self.every_steps, self.max_steps = every_steps, max_steps
    self.seconds = EVAL_SECONDS if seconds is None else seconds
    self.tokens = tokens if every_steps is None else None
    self.last_time = time.monotonic()
    self.last_step = None
    self._shares_done = 0  # The budget's shares read at the last evaluation.

  def _shares(self):
    """How many whole ``EVALS_PER_TOKEN_BUDGET``-ths of the token budget are read."""
    return self.tokens.read() * EVALS_PER_TOKEN_BUDGET // max(self.tokens.tokens, 1)

  def due(self, step):
    """Whether the loop evaluates after ``step`` (Trax's ``eval_at``)."""
    if step == self.max_steps:
      return True
    if self.every_steps is not None:
      return step % self.every_steps == 0
    if self.tokens is not None:
      return self._shares() > self._shares_done
    return time.monotonic() - self.last_time >= self.seconds

  def evaluated(self, step):
    """Records an evaluation after ``step``: the clock (or the tokens' count) starts again."""
    self.last_time, self.last_step = time.monotonic(), step
    if self.tokens is not None:
      self._shares_done = self._shares()


class Plan:
  """The run's speed, measured over its first steps, and what it plans from it.

  Args:
    run: The prepared ``Run`` (its ``repeat`` phase, if any, may be shortened).
    budget: The run's ``Budget``, or None for a run bounded by steps alone.
    first_step: The step the run starts from.

  Attributes:
    tokens_per_second: The speed measured over the first steps (None until then).
    run_tokens_per_second: The whole run's speed (None until it ends).
    recipe_speed: The tokens a second the preset was tuned at, or None.
  """

  def __init__(self, run, budget, first_step, tokens=None):
    self.run, self.budget, self.first_step, self.tokens = run, budget, first_step, tokens
    self.recipe_speed = RECIPE_TOKENS_PER_SECOND.get(run.config.preset)
    self.tokens_per_second = None
    self.run_tokens_per_second = None  # The whole run's, once it has ended.
    self._start = None  # (time, step, tokens) where the measure starts.
    self._stories = None  # (time, step) where the stories began (or the run, without lessons).
    self._latest = None  # (time, step) of the last step.
    self._last = None  # ... and where the last step measured ended.
    self._spans = []  # (seconds, steps, tokens) from one measured step's end to the next's.
    # The preset's most lesson steps: a plan may lower the phase's max_steps, never raise it above.
    self._lesson_steps = run.repeat.max_steps if run.repeat is not None else None
    self._token_seconds = math.inf  # How long the token budget lasts, once planned.
    self._tokens_per_step = None  # Counted over TOKEN_PLAN_STEPS, where tokens alone bound the run.
    if run.split.on and run.repeat is not None:  # Split from the first step (split_from_start).
      self._lesson_steps *= run.split.per_batch
      run.repeat.max_steps = self._lesson_steps

  def measure(self, step, tokens):
    """Takes a step's end (the loop's hook); returns the plan's line once measured, else None."""
    now = time.monotonic()
    self._latest = (now, step)
    if (self._stories is None and step - self.first_step >= MEASURE_FROM_STEP
        and (self.run.repeat is None or self.run.repeat.ended_at is not None)):
      self._stories = (now, step)  # Not before MEASURE_FROM_STEP: the first steps compile.
    if self.tokens_per_second is not None:
      return None
    if self._start is None:
      if step - self.first_step >= MEASURE_FROM_STEP:
        self._start = self._last = (now, step, tokens)
      return None
    last_time, last_step, last_tokens = self._last
    self._spans.append((now - last_time, step - last_step, tokens - last_tokens))
    self._last = (now, step, tokens)
    seconds, steps, counted = _steady(self._spans)
    if self.budget is None and self.tokens is not None:  # Tokens alone: a plan by steps.
      if step - self._start[1] < TOKEN_PLAN_STEPS:
        return None
      self._tokens_per_step = (tokens - self._start[2]) / (step - self._start[1])
    elif seconds < MEASURE_SECONDS or steps < MEASURE_STEPS:
      return None
    self.tokens_per_second = counted / max(seconds, 1e-9)
    measured_on = self.run.split.per_batch  # The steps just timed: whole or split batches.
    if self.budget is not None and self.recipe_speed:
      self.budget.fit_to_speed(self.recipe_speed / self.tokens_per_second)
      if may_split(self.run, self.budget):
        self._split_batches(self.tokens_per_second < SPLIT_SHARE * self.recipe_speed)
    return self._line(step, steps / max(seconds, 1e-9) * self.run.split.per_batch / measured_on)

  def _split_batches(self, on):
    """From the next step on, split batches (a step a part, and as many lessons), or whole."""
    if self._lesson_steps is not None:  # _line refits the phase's max_steps to it.
      self._lesson_steps //= self.run.split.per_batch
    self.run.split.on = on
    if self._lesson_steps is not None:
      self._lesson_steps *= self.run.split.per_batch

  def _line(self, step, steps_per_second):
    args, repeat = self.run.args, self.run.repeat
    parts = ' of a quarter batch' if self.run.split.on else ''
    if self.budget is not None or self.tokens is not None:
      seconds, steps = self._steps_left(step, steps_per_second)
      if args.max_steps is not None:
        steps = min(steps, args.max_steps - step)
      room = (f'about {steps:,} steps{parts} in the {_duration(seconds)} of training left'
              if self.tokens is None or seconds < self._token_seconds else
              f'about {steps:,} steps{parts} ({_duration(seconds)}) to '
              f'{self.tokens.tokens:,} tokens')
    else:
      steps = args.max_steps - step
      room = f'about {_duration(steps / max(steps_per_second, 1e-9))} to step {args.max_steps:,}'
    phases = 'the stories'
    if repeat is not None and repeat.ended_at is None:
      share = ''
      if (self.budget is not None or self.tokens is not None) and self._fit_lessons(step, steps):
        whose = ("the budget's tokens make" if self.budget is None
                 else 'this machine makes in the budget')
        share = f': {MAX_LESSON_SHARE:.0%} of the steps {whose}'
      until = (f'until their loss is below {repeat.until_loss:g} '
               if repeat.until_loss is not None else '')
      phases = f'repeat lessons {until}(at most {repeat.max_steps:,} steps{share}), then the stories'
    speed = f'{self.tokens_per_second:,.0f} tokens/s'
    if self.recipe_speed:
      speed += f" (the recipe's: {self.recipe_speed:,})"
    split = (' (at this speed a step costs what its rows do, and more, smaller steps learn '
             'more)' if self.run.split.on else '')
    return f'plan: {phases}; this machine: {speed}, {room}{split}{self._short_of_bar()}'

  def _steps_left(self, step, steps_per_second):
    """(seconds, steps) of training left by the budgets, the lessons' steps priced as theirs.

    Measured on the repeat lessons, the pace says nothing of the stories'
    steps: a story step holds about 2.5 times a lesson step's tokens and
    costs about 2.3 times its time (their shapes' ``step_work``). Counting
    every step at the lessons' pace promised twice the steps a run made.
    Where the tokens end the run, its steps are counted from the tokens
    alone: the pace only prices them in seconds.
    """
    tokens_per_step = (self._tokens_per_step if self._tokens_per_step is not None
                       else self.tokens_per_second / max(steps_per_second, 1e-9))
    lessons = self._lesson_steps_left(step)
    story = self._story_step() if lessons else None
    if story is None:  # Measured on the stories themselves (or no sample of them).
      lessons, story = 0, (tokens_per_step, 1.0)
    story_tokens, cost = story
    pace = max(steps_per_second, 1e-9)
    seconds = self.budget.seconds_left() if self.budget is not None else math.inf
    if self.tokens is not None:
      left = self.tokens.left()
      lesson_steps = lessons if lessons * tokens_per_step <= left else left / tokens_per_step
      story_steps = max(left - lessons * tokens_per_step, 0) / story_tokens
      # The seconds the token budget lasts at these paces, a story step costing ``cost`` lessons'.
      self._token_seconds = (lesson_steps + story_steps * cost) / pace
      if self._token_seconds <= seconds:
        return self._token_seconds, int(lesson_steps + story_steps)
    seconds = max(seconds, 0.0)
    lesson_seconds = lessons / pace
    if seconds <= lesson_seconds:
      return seconds, int(seconds * steps_per_second)
    return seconds, int(lessons + (seconds - lesson_seconds) * steps_per_second / cost)

  def _lesson_steps_left(self, step):
    """The repeat lessons' steps a plan counts on from ``step`` (0 once they are over)."""
    repeat = self.run.repeat
    if repeat is None or repeat.ended_at is not None:
      return 0
    most = repeat.max_steps
    if repeat.until_loss is not None:
      most = min(most, LESSON_STEPS_SEEN.get(self.run.split.per_batch, most))
    return max(most - (step - self.first_step), 0)

  def _story_step(self):
    """(tokens, cost) of a story step, its cost in lesson steps; None without a sample."""
    repeat = self.run.repeat
    sample = repeat.story_batches(STORY_SAMPLE) if repeat.lesson_shape is not None else []
    if not sample:
      return None
    ways = self.run.split.per_batch
    config = self.run.config
    tokens = np.mean([np.count_nonzero(batch[0]) for batch in sample]) / ways
    work = np.mean([step_work(config, batch[0].shape) for batch in sample])
    lesson_work = step_work(config, repeat.lesson_shape)
    return tokens, work / lesson_work

  def _short_of_bar(self):
    """'; at this speed ...' where the budget reads far fewer tokens than the bar took, else ''."""
    bar = self._recipe_bar(BAR_TOKENS)
    if self.budget is None or bar is None or self.run.resuming or self.run.start_weights is not None:
      return ''  # The bar's tokens are a new run's, from random weights.
    reads = self.tokens_per_second * max(self.budget.seconds_left(), 0.0)
    if reads >= FAR_SHORT * bar:
      return ''
    return (f'; at this speed the budget reads about {reads / 1e6:.1f} million tokens, where '
            f'the recipe took {bar / 1e6:.1f} million to clear the bar: expect a model below '
            'it, and the end of the run says how many minutes more it needs')

  def minutes_to_bar(self, step):
    """Minutes a run resumed at ``step`` needs to make the recipe's steps to the bar, or None.

    At the pace of the steps this run made on the stories (evaluations
    included), when it made them for at least a minute; None where the run
    already made as many steps, or its preset has no recipe.
    """
    bar = self._recipe_bar(BAR_STEPS)
    if bar is not None:
      bar *= self.run.split.per_batch  # BAR_STEPS are whole batches'.
    if bar is None or step >= bar or self._stories is None or self._latest is None:
      return None
    seconds = self._latest[0] - self._stories[0]
    steps = self._latest[1] - self._stories[1]
    if seconds < 60 or steps <= 0:
      return None
    return math.ceil((bar - step) / (steps / seconds) / 60 + RESUME_MINUTES)

  def _recipe_bar(self, table):
    """The preset's entry of ``table`` where the run reads the recipe's data (news), else None."""
    if self.run.args.data != 'news':
      return None  # Other stories (CNN/DailyMail) take other steps to other bars.
    return table.get(self.run.config.preset)

  def _fit_lessons(self, step, steps_left):
    """Caps the repeat lessons at a share of the run's steps; returns whether that cut them."""
    most = max(int(MAX_LESSON_SHARE * (step + steps_left - self.first_step)), 1)
    self.run.repeat.max_steps = min(self._lesson_steps, most)
    return most < self._lesson_steps

  def update(self, step, tokens):
    """Refits the plan to the speed since the first step (called at each evaluation).

    The first seconds' measure can be off (a machine busy for a moment): the
    seconds kept back for the verdict and the calibration, and the repeat
    lessons' most steps, follow the speed of the whole run so far.
    """
    if self._start is None or self.tokens_per_second is None or self.budget is None:
      return
    started, first, counted = self._start
    seconds = max(time.monotonic() - started, 1e-9)
    if self.recipe_speed and tokens > counted:
      self.budget.fit_to_speed(self.recipe_speed / ((tokens - counted) / seconds))
    repeat = self.run.repeat
    if repeat is not None and repeat.ended_at is None:
      steps_left = max(self.budget.seconds_left(), 0.0) * (step - first) / seconds
      self._fit_lessons(step, steps_left)

  def ended(self, tokens, seconds):
    """Takes the run's whole count at its end: the speed its diagnosis speaks of."""
    if seconds > 0:
      self.run_tokens_per_second = tokens / seconds

  def slow(self):
    """Whether the run as a whole went well below its recipe's speed."""
    speed = self.run_tokens_per_second or self.tokens_per_second
    return (self.recipe_speed is not None and speed is not None
            and speed < SLOW_SHARE * self.recipe_speed)


def step_work(config, shape):
  """The arithmetic of a training step on a batch of ``shape`` (rows, length), in any unit.

  Per position, the layers' matrix products and the output layer; per pair
  of positions, the attention. A step of quarter batches does a quarter of it.
  """
  rows, length = shape
  per_position = (config.n_layers * (4 * config.d_model ** 2 + 2 * config.d_model * config.d_ff)
                  + config.d_model * config.vocab_size)
  return rows * length * (per_position + 2 * config.n_layers * config.d_model * length)


def may_split(run, budget):
  """Whether a run may split its batches by its measured speed.

  It may where it is budgeted by time alone (no ``--max-steps``, no
  ``--max-tokens``) and its preset has a recipe. A run with ``--max-tokens``
  splits or not whatever the machine (``splits_by_tokens``).
  """
  return (budget is not None and run.config.preset in RECIPE_TOKENS_PER_SECOND
          and run.args.max_steps is None and run.args.max_tokens is None)


def splits_by_tokens(run):
  """Whether a run splits its batches from the first step for its token budget, on any machine.

  A run of a preset with a recipe, budgeted by tokens and not by steps: its
  budget learns most from small steps (``SPLIT_SHARE``), wherever it runs.
  """
  return (run.args.max_tokens is not None and run.args.max_steps is None
          and run.config.preset in RECIPE_TOKENS_PER_SECOND)


def split_from_start(run, budget, probe=None):
  """Splits a run's batches from its first step where a probe of the machine says it is slow.

  The plan's measure of the first steps confirms or undoes it (``Plan.measure``).

  Args:
    run: The prepared ``Run``, before its tasks draw a batch.
    budget: The run's ``Budget``, or None.
    probe: Products a second this machine makes now (default: ``probe_speed()``).

  Returns:
    The tokens a second the probe guesses for the run, or None where it may not split.
  """
  if splits_by_tokens(run):
    run.split.on = True
    return None
  if not may_split(run, budget):
    return None
  rate = probe_speed() if probe is None else probe
  recipe = RECIPE_TOKENS_PER_SECOND[run.config.preset]
  guess = recipe * rate / PROBE_RATE
  run.split.on = guess < SPLIT_SHARE * recipe
  return guess


def probe_speed(seconds=PROBE_SECONDS):
  """The matrix products of the quick model's widths this machine makes a second now."""
  generator = np.random.default_rng(0)
  rows = jnp.asarray(generator.standard_normal((PROBE_ROWS, 128), np.float32))
  weights = jnp.asarray(generator.standard_normal((128, 1024), np.float32) * 0.05)

  @fastmath.jit
  def products(x, w):
    hidden = jnp.tanh(x @ w)      # (R, 128) @ (128, 1024) -> (R, 1024)
    return jnp.sum(hidden @ w.T)  # (R, 1024) @ (1024, 128) -> (R, 128) -> ()

  products(rows, weights).block_until_ready()  # Compiles.
  start, made = time.perf_counter(), 0
  while (elapsed := time.perf_counter() - start) < seconds:
    products(rows, weights).block_until_ready()
    made += 1
  return made / elapsed


def _steady(spans):
  """(seconds, steps, tokens) of the spans, less those that compiled a new shape.

  Args:
    spans: (seconds, steps, tokens) between one measured step's end and the next's.
  """
  per_step = sorted(seconds / max(steps, 1) for seconds, steps, _ in spans)
  typical = per_step[len(per_step) // 2]
  kept = [span for span in spans if span[0] / max(span[1], 1) <= COMPILE_SLOWDOWN * typical]
  return tuple(sum(values) for values in zip(*kept)) if kept else (0.0, 0, 0)


def _duration(seconds):
  """'9 min 31 s', '45 s'."""
  seconds = int(round(seconds))
  return f'{seconds // 60} min {seconds % 60} s' if seconds >= 60 else f'{seconds} s'
