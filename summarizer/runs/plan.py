"""A run's plan: its phases, this machine's speed, and a look at the model once a minute.

A run measures its own speed over its first seconds of steps (after the
first, which compiles), then says in one line what it will do::

  plan: repeat lessons until their loss is below 0.3 (at most 1,240 steps), then the
  stories; this machine: 10,547 tokens/s (the recipe's: 16,000), about 3,100 steps
  in the 9 min 31 s of training left

A run with a time budget fits itself to that speed: the repeat lessons may
take at most ``MAX_LESSON_SHARE`` of the steps the machine makes in the
budget (on a slow machine the stories need the rest), and the budget keeps
back the seconds the verdict and the calibration take at that speed
(``Budget.fit_to_speed``). Evaluations come on the clock (``EvalClock``),
about once a minute whatever a step costs, unless ``--eval-steps`` asks for
a step count.
"""

import time

# Tokens a second each preset's recipe was tuned at: the quick preset's ten
# minutes on a 2-core CPU with both cores free (16,000 to 16,900 here).
RECIPE_TOKENS_PER_SECOND = {'quick': 16000}
# A run slower than this share of its recipe's speed says so at its end.
SLOW_SHARE = 0.75
# The speed is measured over at least this many seconds and steps, from the
# end of the step MEASURE_FROM_STEP into the run: the first steps compile
# (Trax's second compiles again), and counting them says a third of the speed.
MEASURE_FROM_STEP = 3
MEASURE_SECONDS = 8.0
MEASURE_STEPS = 5
# Seconds between two evaluations (and previews) without --eval-steps.
EVAL_SECONDS = 60.0
# The most of a budgeted run's steps the repeat lessons may take: on a slow
# machine, a model that writes the stories' sentences beats one that never
# read a story. Refitted at each evaluation to the run's speed so far.
MAX_LESSON_SHARE = 0.5


class EvalClock:
  """When a run evaluates: every ``every_steps`` steps, or every ``seconds``.

  The last step (``max_steps``) is always evaluated.
  """

  def __init__(self, every_steps=None, max_steps=None, seconds=None):
    self.every_steps, self.max_steps = every_steps, max_steps
    self.seconds = EVAL_SECONDS if seconds is None else seconds
    self.last_time = time.monotonic()
    self.last_step = None

  def due(self, step):
    """Whether the loop evaluates after ``step`` (Trax's ``eval_at``)."""
    if step == self.max_steps:
      return True
    if self.every_steps is not None:
      return step % self.every_steps == 0
    return time.monotonic() - self.last_time >= self.seconds

  def evaluated(self, step):
    """Records an evaluation after ``step``: the clock starts again."""
    self.last_time, self.last_step = time.monotonic(), step


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

  def __init__(self, run, budget, first_step):
    self.run, self.budget, self.first_step = run, budget, first_step
    self.recipe_speed = RECIPE_TOKENS_PER_SECOND.get(run.config.preset)
    self.tokens_per_second = None
    self.run_tokens_per_second = None  # The whole run's, once it has ended.
    self._start = None  # (time, step, tokens) where the measure starts.
    # The preset's most lesson steps: a plan may lower the phase's max_steps, never raise it above.
    self._lesson_steps = run.repeat.max_steps if run.repeat is not None else None

  def measure(self, step, tokens):
    """Takes a step's end (the loop's hook); returns the plan's line once measured, else None."""
    now = time.monotonic()
    if self.tokens_per_second is not None:
      return None
    if self._start is None:
      if step - self.first_step >= MEASURE_FROM_STEP:
        self._start = (now, step, tokens)
      return None
    started, first, counted = self._start
    if now - started < MEASURE_SECONDS or step - first < MEASURE_STEPS:
      return None
    self.tokens_per_second = (tokens - counted) / max(now - started, 1e-9)
    steps_per_second = (step - first) / max(now - started, 1e-9)
    if self.budget is not None and self.recipe_speed:
      self.budget.fit_to_speed(self.recipe_speed / self.tokens_per_second)
    return self._line(step, steps_per_second)

  def _line(self, step, steps_per_second):
    args, repeat = self.run.args, self.run.repeat
    if self.budget is not None:
      seconds = max(self.budget.seconds_left(), 0.0)
      steps = int(seconds * steps_per_second)
      if args.max_steps is not None:
        steps = min(steps, args.max_steps - step)
      room = f'about {steps:,} steps in the {_duration(seconds)} of training left'
    else:
      steps = args.max_steps - step
      room = f'about {_duration(steps / max(steps_per_second, 1e-9))} to step {args.max_steps:,}'
    phases = 'the stories'
    if repeat is not None and repeat.ended_at is None:
      share = ''
      if self.budget is not None and self._fit_lessons(step, steps):
        share = f': {MAX_LESSON_SHARE:.0%} of the steps this machine makes in the budget'
      until = (f'until their loss is below {repeat.until_loss:g} '
               if repeat.until_loss is not None else '')
      phases = f'repeat lessons {until}(at most {repeat.max_steps:,} steps{share}), then the stories'
    speed = f'{self.tokens_per_second:,.0f} tokens/s'
    if self.recipe_speed:
      speed += f" (the recipe's: {self.recipe_speed:,})"
    return f'plan: {phases}; this machine: {speed}, {room}'

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


def _duration(seconds):
  """'9 min 31 s', '45 s'."""
  seconds = int(round(seconds))
  return f'{seconds // 60} min {seconds % 60} s' if seconds >= 60 else f'{seconds} s'
