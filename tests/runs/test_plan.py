"""A run's plan: its speed measured in its first seconds, lessons fitted to it, a clock for
evaluations, and the plain words at its end."""

import math
import types

import numpy as np
import pytest

from summarizer.runs import budget as run_budget
from summarizer.runs import diagnosis
from summarizer.runs import plan as run_plan
from summarizer.runs.prepare import RepeatPhase, SplitBatches


class Clock:
  """A time.monotonic that tests move by hand."""

  def __init__(self, now=1000.0):
    self.now = now

  def __call__(self):
    return self.now


@pytest.fixture
def clock(monkeypatch):
  fake = Clock()
  monkeypatch.setattr(run_plan.time, 'monotonic', fake)
  monkeypatch.setattr(run_budget.time, 'monotonic', fake)
  return fake


def _run(preset='quick', repeat=None, max_steps=None, resuming=False, data='news'):
  return types.SimpleNamespace(
      config=types.SimpleNamespace(preset=preset), repeat=repeat, resuming=resuming,
      start_weights=None, split=SplitBatches(),
      args=types.SimpleNamespace(max_steps=max_steps, max_tokens=None, output_dir='runs/mine',
                                 data=data,
                                 verdict_stories=100, calibration_articles=500))


def test_evaluations_come_on_the_clock_or_every_n_steps(clock):
  by_clock = run_plan.EvalClock(max_steps=None, seconds=60)
  assert not by_clock.due(1)
  clock.now += 59
  assert not by_clock.due(500)  # However many steps: a minute has not passed.
  clock.now += 1
  assert by_clock.due(501)
  by_clock.evaluated(501)
  assert not by_clock.due(502) and by_clock.last_step == 501
  by_steps = run_plan.EvalClock(every_steps=200, max_steps=450)
  assert by_steps.due(400) and not by_steps.due(401) and by_steps.due(450)


def test_a_token_budget_alone_evaluates_at_each_tenth_of_its_tokens_whatever_the_clock(clock):
  counter = {'tokens': 0}
  tokens = run_budget.TokenBudget(1000, counter)
  by_tokens = run_plan.EvalClock(max_steps=None, seconds=60, tokens=tokens)
  due = []
  for step in range(1, 16):
    counter['tokens'] += 70  # A tenth is 100 tokens: due past 100, 200, 300, ...
    clock.now += 3600 if step % 2 else 0.001  # An hour or a moment between steps: no matter.
    if by_tokens.due(step):
      due.append(step)
      by_tokens.evaluated(step)
  assert due == [2, 3, 5, 6, 8, 9, 10, 12, 13, 15]
  # --eval-steps still wins, and the last step is evaluated.
  by_steps = run_plan.EvalClock(every_steps=4, max_steps=10, tokens=tokens)
  assert [s for s in range(1, 11) if by_steps.due(s)] == [4, 8, 10]


def test_a_slow_machine_gets_shorter_lessons_and_keeps_back_more_for_the_verdict(clock):
  budget = run_budget.Budget(10, started=clock.now, verdict_stories=100,
                             calibration_articles=500)
  kept = budget.ending_seconds
  repeat = RepeatPhase(2000, until_loss=0.3)
  plan = run_plan.Plan(_run(repeat=repeat), budget, first_step=0)
  clock.now += 30  # Start-up and compiling: the first steps are not measured.
  assert plan.measure(1, tokens=1000) is None
  clock.now += 5  # Trax's second step compiles again.
  assert plan.measure(2, tokens=1500) is None
  clock.now += 0.5
  assert plan.measure(3, tokens=2000) is None  # The measure starts here.
  clock.now += 4
  assert plan.measure(11, tokens=18000) is None  # Too soon to tell.
  clock.now += 6  # Ten seconds, 20 steps, 40,000 tokens: 4,000 tokens/s, 2 steps/s.
  line = plan.measure(23, tokens=42000)
  assert plan.tokens_per_second == pytest.approx(4000)
  assert budget.ending_seconds == pytest.approx(4 * kept)  # 16,000 / 4,000.
  left = budget.seconds_left()
  # A quarter of the recipe's speed: split batches from here, WAYS times the steps (and
  # lessons).
  assert plan.run.split.on
  ways = SplitBatches.WAYS
  steps = int(ways * 2 * left)
  most = int(run_plan.MAX_LESSON_SHARE * (23 + steps))
  assert repeat.max_steps == most < ways * 2000
  assert line == (f'plan: repeat lessons until their loss is below 0.3 (at most {most:,} '
                  'steps: 50% of the steps this machine makes in the budget), then the '
                  "stories; this machine: 4,000 tokens/s (the recipe's: 16,000), about "
                  f'{steps:,} steps of a quarter batch in the {int(round(left)) // 60} min '
                  f'{int(round(left)) % 60} s of training left (at this speed a step costs '
                  'what its rows do, and more, smaller steps learn more)')
  # The budget reads more than half the tokens the recipe took to the bar: no warning.
  assert 4000 * left >= run_plan.FAR_SHORT * run_plan.BAR_TOKENS['quick']
  assert plan.measure(24, tokens=44000) is None  # Said once.
  assert plan.slow()
  # The first seconds were slow for a moment: the budget follows the run's speed since.
  clock.now += 30  # 40 s since the measure began, 320,000 tokens more: 8,000 tokens/s.
  plan.update(323, tokens=2000 + 320000)
  assert budget.ending_seconds == pytest.approx(2 * kept)
  # ... and the lessons' most steps: half of the steps at 8 steps/s from here.
  assert repeat.max_steps == int(run_plan.MAX_LESSON_SHARE * (323 + 8 * budget.seconds_left()))
  assert most < repeat.max_steps < ways * 2000
  plan.ended(tokens=16000 * 100, seconds=100)
  assert not plan.slow()  # Judged on the whole run.


def test_a_fast_machine_keeps_the_recipe(clock):
  repeat = RepeatPhase(2000, until_loss=0.3)
  budget = run_budget.Budget(10, started=clock.now)
  plan = run_plan.Plan(_run(repeat=repeat), budget, first_step=0)
  plan.measure(3, 0)
  clock.now += 10
  line = plan.measure(103, 170000)  # 17,000 tokens/s, 10 steps/s: 5,000 and more steps.
  assert repeat.max_steps == 2000 and ': 40%' not in line and not plan.slow()
  assert not plan.run.split.on and 'quarter batch' not in line
  assert line.startswith('plan: repeat lessons until their loss is below 0.3 (at most 2,000 '
                         'steps), then the stories; this machine: 17,000 tokens/s')


def test_a_step_that_compiles_a_new_shape_is_not_counted_in_the_speed(clock):
  # A resumed run on a slow core: its first story batches bring shapes it has not
  # compiled, each a few seconds, among steps of 0.5 s and 1,000 tokens.
  plan = run_plan.Plan(_run(resuming=True), run_budget.Budget(10, started=clock.now),
                       first_step=1342)
  plan.measure(1345, 0)
  step, tokens, line = 1345, 0, None
  for seconds in [0.5, 6.0, 0.5, 0.5, 5.0] + [0.5] * 20:
    clock.now += seconds
    step, tokens = step + 1, tokens + 1000
    line = plan.measure(step, tokens) or line
  assert plan.tokens_per_second == pytest.approx(2000)  # Not 1,000 * 25 / 23.5.
  assert 'this machine: 2,000 tokens/s' in line
  # Its earlier runs read tokens this one does not count: no claim about the bar.
  assert 'the bar' not in line


def test_a_run_below_the_bar_is_told_the_minutes_its_pace_needs(clock):
  # A machine this slow splits its batches: the bar is a step a part of the recipe's batches.
  bar = SplitBatches.WAYS * run_plan.BAR_STEPS['quick']
  lessons, end = bar // 5, bar // 2
  repeat = RepeatPhase(2000, until_loss=0.3)
  plan = run_plan.Plan(_run(repeat=repeat), run_budget.Budget(10, started=clock.now),
                       first_step=0)
  for step in range(1, lessons + 1):  # Lessons, 4 a second: their pace is not the stories'.
    clock.now += 0.25
    plan.measure(step, 700 * step)
  repeat.ended_at = lessons
  for step in range(lessons + 1, end + 1):  # Stories, 1 a second (evaluations included).
    clock.now += 1.0
    plan.measure(step, 700 * lessons + 1800 * (step - lessons))
  assert plan.run.split.on
  # The steps to the bar at 1 a second, and the minutes besides the steps.
  minutes = math.ceil((bar - end) / 60 + run_plan.RESUME_MINUTES)
  assert plan.minutes_to_bar(end) == minutes > diagnosis.DEFAULT_MORE_MINUTES
  assert plan.minutes_to_bar(bar) is None  # It made the recipe's steps: more will not say.
  verdict = {'n': 100, 'step': end, 'sentences': 0.95,
             'lead3': {'rouge1': 0.29, 'rouge2': 0.13, 'rougeL': 0.21},
             'model': {'rouge1': 0.25, 'rouge2': 0.13, 'rougeL': 0.2, 'entity_precision': 0.3}}
  lines = diagnosis.diagnose(_run(repeat=repeat), end, plan, None, verdict, 10.0)
  assert lines[-1].endswith(f'--resume --max-minutes {minutes}')
  # Just short of the recipe's steps: runs of as many fall short too, so at least the default.
  assert plan.minutes_to_bar(bar - 30) < diagnosis.DEFAULT_MORE_MINUTES
  lines = diagnosis.diagnose(_run(repeat=repeat), bar - 30, plan, None, verdict, 10.0)
  assert lines[-1].endswith(f'--resume --max-minutes {diagnosis.DEFAULT_MORE_MINUTES}')
  # A preset without a recipe (tiny) has no pace to go by: the default minutes.
  assert run_plan.Plan(_run(preset='tiny'), None, first_step=0).minutes_to_bar(10) is None


def test_the_recipes_bar_is_the_news_corpus_own(clock):
  # The quick preset on CNN/DailyMail: a slow machine, a short budget, but the
  # news recipe's tokens and steps say nothing about its bar.
  def two_steps_a_second(data):
    plan = run_plan.Plan(_run(data=data), run_budget.Budget(10, started=clock.now), first_step=0)
    plan.measure(3, 0)
    line = None
    for step in range(4, 200):
      clock.now += 0.5
      line = plan.measure(step, 1000 * (step - 3)) or line
    return plan, line

  plan, line = two_steps_a_second('tfds:cnn_dailymail')
  assert plan.tokens_per_second == pytest.approx(2000) and 'the bar' not in line
  assert plan.minutes_to_bar(199) is None
  # The same run on the news corpus is told both.
  news, line = two_steps_a_second('news')
  took = run_plan.BAR_TOKENS['quick'] / 1e6
  assert f'where the recipe took {took:.1f} million to clear the bar: expect a model below' in line
  assert news.minutes_to_bar(199) is not None


def test_the_stories_pace_leaves_out_the_first_steps_compile(clock):
  # A resumed run past the lessons: its first step compiles for 20 s, then 2 steps a
  # second of 8,000 tokens, the recipe's speed: whole batches, the recipe's steps to the bar.
  bar = run_plan.BAR_STEPS['quick']
  first = bar // 2
  plan = run_plan.Plan(_run(resuming=True), run_budget.Budget(10, started=clock.now),
                       first_step=first)
  clock.now += 20
  plan.measure(first + 1, 8000)
  for step in range(first + 2, first + 242):
    clock.now += 0.5
    plan.measure(step, 8000 * (step - first))
  step = first + 241
  assert not plan.run.split.on
  assert plan.minutes_to_bar(step) == math.ceil((bar - step) / 2 / 60 + run_plan.RESUME_MINUTES)


def test_a_run_bounded_by_steps_says_how_long_they_take(clock):
  plan = run_plan.Plan(_run(preset='tiny', max_steps=1000), None, first_step=0)
  plan.measure(3, 0)
  clock.now += 10
  assert plan.measure(103, 30000) == ('plan: the stories; this machine: 3,000 tokens/s, '
                                      'about 1 min 30 s to step 1,000')
  assert not plan.slow()  # No recipe speed to be slow against.


def test_the_end_of_a_run_says_what_went_wrong_in_plain_words(clock):
  repeat = RepeatPhase(2000, until_loss=0.3)
  for step in range(1, 30):
    repeat.feed(step, 2.5)
  budget = run_budget.Budget(10, started=clock.now)
  plan = run_plan.Plan(_run(repeat=repeat), budget, first_step=0)
  plan.ended(tokens=3119 * 500, seconds=500)
  clock.now += 625
  verdict = {'n': 100, 'step': 1095, 'sentences': 0.0, 'lead3': {
      'rouge1': 0.29, 'rouge2': 0.13, 'rougeL': 0.21},
      'model': {'rouge1': 0.003, 'rouge2': 0.0, 'rougeL': 0.003, 'entity_precision': 0.05}}
  lines = diagnosis.diagnose(_run(repeat=repeat), 1095, plan, budget, verdict, 40.0)
  more = 'python -m summarizer.train --output-dir runs/mine --resume --max-minutes 5'
  assert lines == [
      'diagnosis: the run never left the repeat lessons: after 1,095 steps their loss is 2.50, '
      f'not yet below 0.3, so its model has read no story; more time goes to the stories: {more}',
      'diagnosis: this machine trained at 3,119 tokens/s, against the 16,000 the recipe was '
      'tuned at: it is busy (other programs use its cores) or slow, so its minutes taught '
      f'less; close other programs, or give the run more minutes: {more}',
      'diagnosis: the run ended 25 s past its budget: the verdict (100 stories) and the '
      'calibration (500 articles) took 40 s, and always read all they are given',
      'diagnosis: the model is below the bar (rouge1 0.003 against 0.290; rouge2 0.000 '
      'against 0.130; rougeL 0.003 against 0.210; 5% of the names and numbers it writes are '
      f'in the article): each of its summaries will warn so; train it longer: {more}']
  # A run that went as planned has nothing to say.
  repeat.ended_at = 900
  fast = run_plan.Plan(_run(repeat=repeat), None, first_step=0)
  fast.ended(tokens=16500 * 500, seconds=500)
  good = dict(verdict, model={'rouge1': 0.4, 'rouge2': 0.2, 'rougeL': 0.3,
                              'entity_precision': 0.9})
  assert diagnosis.diagnose(_run(repeat=repeat), 5000, fast, None, good, 9.0) == []
  # A slow machine whose model clears the bar all the same is not sent for more minutes.
  assert diagnosis.diagnose(_run(repeat=repeat), 1869, plan, None, good, 9.0) == [
      'diagnosis: this machine trained at 3,119 tokens/s, against the 16,000 the recipe was '
      'tuned at: it is busy (other programs use its cores) or slow, so its minutes taught '
      'less; its model clears the bar all the same']
  # A run budgeted by tokens alone learns as much on a slow machine: it is sent for more
  # tokens, and its speed is no cause.
  by_tokens = _run(repeat=repeat)
  by_tokens.args.max_tokens = 2_500_000
  below = dict(verdict, model=dict(good['model'], entity_precision=0.7))
  assert diagnosis.diagnose(by_tokens, 7000, plan, None, below, 9.0) == [
      'diagnosis: the model is below the bar (70% of the names and numbers it writes are in '
      'the article): each of its summaries will warn so; train it longer: python -m '
      'summarizer.train --output-dir runs/mine --resume --max-tokens 1200000']


def test_the_train_loss_of_the_stories_is_not_averaged_with_the_lessons():
  from summarizer.runs.report import Report  # pylint: disable=import-outside-toplevel
  report = Report({'tokens': 0}, 0, lessons=True, max_steps=10, eval_batches=1,
                  show_progress=False)
  for step, loss in enumerate([0.5, 0.3, 0.1], start=1):
    report.step(step, loss)
  assert report.mean_train_loss() == pytest.approx(0.3)
  report.new_phase()
  assert report.mean_train_loss() is None
  report.step(4, 6.0)
  report.step(5, 5.0)
  assert report.mean_train_loss() == pytest.approx(5.5)
  assert 'the run begins with repeat lessons' in report.legend()


def test_loss_png_marks_the_repeat_lessons(tmp_path):
  from summarizer.runs.report import plot_losses  # pylint: disable=import-outside-toplevel
  import matplotlib.image  # pylint: disable=import-outside-toplevel
  train = [(step, 5.0 - step / 100) for step in range(1, 301)]
  plot_losses(train, [(100, 6.0), (300, 4.0)], str(tmp_path / 'plain.png'))
  plot_losses(train, [(100, 6.0), (300, 4.0)], str(tmp_path / 'phases.png'), lessons_ended=120)
  plain = matplotlib.image.imread(str(tmp_path / 'plain.png'))
  phases = matplotlib.image.imread(str(tmp_path / 'phases.png'))
  # The shaded span: light grey pixels that the plain curve does not have.
  def grey(image):
    rgb = image[..., :3]
    return int(((abs(rgb - 0.9) < 0.02).all(axis=-1)).sum())
  assert grey(phases) > grey(plain) + 1000


def test_batches_are_split_below_the_share_of_the_recipes_speed_in_a_budgeted_run(clock):
  def split(tokens_per_second, max_steps=None):
    plan = run_plan.Plan(_run(max_steps=max_steps), run_budget.Budget(10, started=clock.now),
                         first_step=0)
    plan.measure(3, 0)
    clock.now += 10
    plan.measure(103, tokens_per_second * 10)
    return plan.run.split.on

  share = run_plan.SPLIT_SHARE * run_plan.RECIPE_TOKENS_PER_SECOND['quick']
  assert split(share - 100) and not split(share + 100)
  assert not split(share - 100, max_steps=5000)  # Its steps are whole batches' steps.


def test_a_probe_that_finds_the_machine_slow_splits_from_the_first_step_until_measured(clock):
  recipe = run_plan.RECIPE_TOKENS_PER_SECOND['quick']
  budget = run_budget.Budget(10, started=clock.now)
  run = _run(repeat=RepeatPhase(2000, until_loss=0.3))
  # A third of the probe's rate here: a third of the recipe's speed, guessed.
  assert run_plan.split_from_start(run, budget, probe=run_plan.PROBE_RATE / 3) == (
      pytest.approx(recipe / 3))
  assert run.split.on
  plan = run_plan.Plan(run, budget, first_step=0)
  assert run.repeat.max_steps == SplitBatches.WAYS * 2000  # Split: WAYS times the lessons' steps.
  # The steps say otherwise (a machine busy for the probe's second): whole batches again.
  plan.measure(3, 0)
  clock.now += 10
  line = plan.measure(403, 340000)  # 34,000 tokens/s and 40 steps/s on split batches.
  assert not run.split.on and run.repeat.max_steps == 2000
  left = budget.seconds_left()
  assert f'about {int(40 / SplitBatches.WAYS * left):,} steps in the' in line and 'quarter batch' not in line
  fast = _run()
  assert run_plan.split_from_start(fast, budget, probe=run_plan.PROBE_RATE) == recipe
  assert not fast.split.on
  for unprobed in (_run(max_steps=5000), _run(preset='tiny')):
    assert run_plan.split_from_start(unprobed, budget, probe=1.0) is None
    assert not unprobed.split.on
  assert run_plan.split_from_start(_run(), None, probe=1.0) is None


def test_the_probe_times_the_machines_products():
  rate = run_plan.probe_speed(seconds=0.2)
  assert math.isfinite(rate) and rate > 1  # Each product takes milliseconds, not seconds.


def test_split_batches_part_each_batch_and_keep_its_rows_at_a_lower_peak():
  ways = SplitBatches.WAYS
  # Rows that divide by WAYS, rows that do not but are even, odd rows.
  batches = [tuple(np.arange(4 * ways).reshape(2 * ways, 2) + k for k in range(3)),
             tuple(np.arange(4 * ways + 4).reshape(2 * ways + 2, 2) for _ in range(3)),
             tuple(np.arange(4 * ways + 2).reshape(2 * ways + 1, 2) for _ in range(3))]
  split = SplitBatches()
  schedule = run_budget.BudgetSchedule(0.005, 1, max_steps=100, split=split)
  assert [b[0].shape for b in split.parts(iter(batches))] == [
      (2 * ways, 2), (2 * ways + 2, 2), (2 * ways + 1, 2)]
  assert schedule(1) == pytest.approx(0.005 * 0.99)
  split.on = True
  parts = list(split.parts(iter(batches)))
  # Rows by WAYS, or else by two, or whole (one long story).
  assert [b[0].shape for b in parts] == (
      [(2, 2)] * ways + [(ways + 1, 2)] * 2 + [(2 * ways + 1, 2)])
  for k in range(3):  # Inputs, targets and weights split alike, no row lost or repeated.
    np.testing.assert_array_equal(np.concatenate([p[k] for p in parts[:ways]]), batches[0][k])
    np.testing.assert_array_equal(np.concatenate([p[k] for p in parts[ways:ways + 2]]),
                                  batches[1][k])
  assert split.per_batch == ways
  assert schedule(2) == pytest.approx(0.005 * SplitBatches.PEAK_SCALE * 0.98)


def _batches(rows, length, tokens_per_row):
  """Batches of ``rows`` rows ``length`` long, each with ``tokens_per_row`` tokens, forever."""
  inputs = np.zeros((rows, length), np.int32)
  inputs[:, :tokens_per_row] = 5
  while True:
    yield inputs, inputs, np.ones_like(inputs, np.float32)


def test_a_plan_made_on_the_lessons_prices_the_stories_steps_as_theirs(clock):
  # The lessons: 16 rows of 64 positions, 40 tokens each; the stories: 8 rows of 256, 210
  # tokens each. Measured on the lessons, a plan that counted every step at their pace
  # promised about twice the steps the run made.
  from summarizer.config import PRESETS
  config = PRESETS['quick']
  repeat = RepeatPhase(2000, until_loss=0.3)
  batches = repeat.lessons_then_stories(_batches(16, 64, 40), _batches(8, 256, 210))
  next(batches)  # Trax's sample batch: the lessons' shape.
  run = _run(repeat=repeat)
  run.config = config
  counter = {'tokens': 0}
  tokens = run_budget.TokenBudget(2_000_000, counter)
  plan = run_plan.Plan(run, None, first_step=0, tokens=tokens)
  line, step = None, 0
  while line is None:  # 8 lesson steps a second, 640 tokens each.
    clock.now += 0.125
    step += 1
    counter['tokens'] = 640 * step
    line = plan.measure(step, counter['tokens'])
  assert plan.tokens_per_second == pytest.approx(5120)
  lesson_steps = run_plan.LESSON_STEPS_SEEN[1] - step
  story_steps = (2_000_000 - 640 * step - 640 * lesson_steps) / (8 * 210)
  cost = run_plan.step_work(config, (8, 256)) / run_plan.step_work(config, (16, 64))
  assert 1.5 < cost < 3  # A story step costs more than a lesson step, less than its tokens.
  seconds = lesson_steps / 8 + story_steps * cost / 8
  assert f'about {int(lesson_steps + story_steps):,} steps' in line
  assert f'({run_plan._duration(seconds)}) to 2,000,000 tokens' in line
  assert int(lesson_steps + story_steps) < 0.6 * (2_000_000 - 640 * step) / 640
  # The stories read ahead are trained on, first, once the lessons end.
  repeat.ended_at = 50
  story = next(batches)
  assert story[0].shape == (8, 256)


def test_the_bar_of_a_run_budgeted_by_tokens_counts_its_tokens():
  from summarizer.runs.report import Report  # pylint: disable=import-outside-toplevel
  counter = {'tokens': 0}
  tokens = run_budget.TokenBudget(1000, counter)
  report = Report(counter, 0, tokens=tokens, eval_batches=1, show_progress=False)
  assert report.bar.total == 1000 and report.bar.unit == 'token'
  for step, read in enumerate([300, 700, 1100], start=1):
    counter['tokens'] = read
    report.step(step, 1.0)
    assert report.bar.n == min(read, 1000)


def test_a_time_budget_planned_on_the_lessons_prices_the_stories_steps_too(clock):
  from summarizer.config import PRESETS  # pylint: disable=import-outside-toplevel
  config = PRESETS['quick']
  repeat = RepeatPhase(2000, until_loss=0.3)
  batches = repeat.lessons_then_stories(_batches(16, 64, 40), _batches(8, 256, 210))
  next(batches)
  run = _run(repeat=repeat)
  run.config = config
  budget = run_budget.Budget(10, started=clock.now)
  plan = run_plan.Plan(run, budget, first_step=0)
  clock.now += 1.0
  line, step = None, 0
  while line is None:  # 20 lesson steps a second of 640 tokens: 12,800 tokens/s, whole batches.
    clock.now += 0.05
    step += 1
    line = plan.measure(step, 640 * step)
  assert not run.split.on
  seconds = budget.seconds_left()
  lessons = run_plan.LESSON_STEPS_SEEN[1] - step
  cost = run_plan.step_work(config, (8, 256)) / run_plan.step_work(config, (16, 64))
  steps = int(lessons + (seconds - lessons / 20) * 20 / cost)
  assert f'about {steps:,} steps in the ' in line
  assert steps < 0.6 * seconds * 20  # Not every step at the lessons' pace.


def test_a_token_budget_plans_the_same_lessons_on_a_fast_and_a_slow_machine(clock):
  # The lesson steps read different tokens each (30 to 50 a row); one machine makes 40 steps a
  # second, another 5, with a step that compiles a new shape. Planned on seconds, the two
  # measured over different steps and capped the lessons at different steps.
  from summarizer.config import PRESETS  # pylint: disable=import-outside-toplevel

  def planned(steps_per_second, slow_step):
    repeat = RepeatPhase(3000, until_loss=0.3)
    batches = repeat.lessons_then_stories(_batches(16, 64, 40), _batches(8, 256, 210))
    next(batches)
    run = _run(repeat=repeat)
    run.config = PRESETS['quick']
    counter = {'tokens': 0}
    plan = run_plan.Plan(run, None, first_step=0,
                         tokens=run_budget.TokenBudget(400_000, counter))
    line, step = None, 0
    while line is None:
      step += 1
      clock.now += (20.0 if step == slow_step else 1.0) / steps_per_second
      counter['tokens'] += 16 * (30 + 20 * (step % 3) // 2)
      line = plan.measure(step, counter['tokens'])
    return step, line.split('; this machine')[0], line.split('about ')[1].split(' steps')[0], \
        repeat.max_steps

  fast, slow = planned(40, slow_step=None), planned(5, slow_step=30)
  assert fast == slow
  # Counted from the tokens, the steps are the same at any pace, to the last one.
  assert {planned(pace / 7, slow_step=pace) for pace in range(1, 60)} == {fast}
  assert fast[0] == run_plan.MEASURE_FROM_STEP + run_plan.TOKEN_PLAN_STEPS
  assert fast[3] < 3000  # The lessons' most steps: half the budget's, fewer than the phase's.
  assert "(at most 312 steps: 50% of the steps the budget's tokens make)" in fast[1]
