"""A run's time budget: the schedule that ends with it, and a run that keeps to it."""

import json
import time

import pytest

from summarizer import train as train_command
from summarizer.runs import args as run_args
from summarizer.runs import budget as run_budget
from summarizer.runs import plan as run_plan
from summarizer.runs import prepare as run_prepare

from conftest import micro_args
from conftest import train_run


def test_the_schedule_warms_up_then_decays_to_zero_as_the_clock_runs_out(monkeypatch):
  now = {'t': 100.0}
  monkeypatch.setattr(run_budget.time, 'monotonic', lambda: now['t'])
  budget = run_budget.Budget(minutes=10, started=100.0)
  train_seconds = 600 - run_budget.TAIL_SECONDS
  schedule = run_budget.BudgetSchedule(0.01, warmup_steps=4, budget=budget)
  assert schedule(1) == pytest.approx(0.0025)   # Step 1 of 4 of the warm-up.
  assert schedule(4) == pytest.approx(0.01)
  now['t'] = 100.0 + train_seconds / 4
  assert schedule(50) == pytest.approx(0.0075)  # A quarter of the time: 3/4 of the peak.
  now['t'] = 100.0 + train_seconds * 0.9
  assert schedule(60) == pytest.approx(0.001)
  assert not budget.spent()
  now['t'] = 100.0 + train_seconds + 1
  assert budget.spent() and schedule(70) == 0.0


def test_the_schedule_ends_at_max_steps_when_those_come_first(monkeypatch):
  monkeypatch.setattr(run_budget.time, 'monotonic', lambda: 0.0)
  budget = run_budget.Budget(minutes=60, started=0.0)
  # A resumed run (first call at step 101) warms up again and decays over its own steps.
  schedule = run_budget.BudgetSchedule(1.0, warmup_steps=10, budget=budget, max_steps=200)
  assert schedule(101) == pytest.approx(0.1 * 0.99)
  assert schedule(150) == pytest.approx(0.5)
  assert schedule(200) == 0.0


def test_the_verdict_and_the_calibration_are_kept_back_by_their_size_and_the_speed():
  bare = run_budget.Budget(minutes=10, started=0.0)
  judged = run_budget.Budget(minutes=10, started=0.0, verdict_stories=100,
                             calibration_articles=500)
  # Each reads its own, after compiling its own function once.
  kept = (2 * run_budget.FIRST_CALL_SECONDS + 100 * run_budget.VERDICT_SECONDS_PER_STORY
          + 500 * run_budget.CALIBRATION_SECONDS_PER_ARTICLE)
  assert run_budget.ending_work(0, 3) == pytest.approx(
      run_budget.FIRST_CALL_SECONDS + 3 * run_budget.CALIBRATION_SECONDS_PER_ARTICLE)
  assert bare.train_end - judged.train_end == pytest.approx(kept)
  assert judged.ending_seconds == pytest.approx(kept)
  # On a machine five times slower than the recipe's, five times as much is kept back.
  judged.fit_to_speed(5.0)
  assert bare.train_end - judged.train_end == pytest.approx(5 * kept)
  # However slow, at most a share of the budget (the run then ends late and says so).
  judged.fit_to_speed(1000.0)
  assert judged.ending_seconds == pytest.approx(600 * run_budget.MAX_ENDING_SHARE)
  # A faster machine keeps back no less than the recipe's.
  judged.fit_to_speed(0.5)
  assert judged.ending_seconds == pytest.approx(kept)


def test_overrun_counts_the_seconds_past_the_end():
  budget = run_budget.Budget(minutes=1, started=0.0)
  assert budget.overrun(now=59.0) == 0 and budget.overrun(now=72.5) == pytest.approx(12.5)


@pytest.mark.slow
def test_a_run_ends_within_its_minutes_and_records_them(tmp_path):
  out = tmp_path / 'run'
  started = time.monotonic()
  # A minute: room for a first step that compiles slowly on a busy machine.
  summary = train_run(micro_args(out, max_steps=None, max_minutes=1.0, eval_steps=1000,
                                      save_steps=1000), started=started)
  seconds = time.monotonic() - started
  assert seconds <= 60, seconds
  assert summary['wall_seconds'] <= 60 and summary['step'] > 4 and not summary['interrupted']
  # Trained until the budget's end, less the tail kept for saving and calibrating.
  assert seconds >= 60 - 2 * run_budget.TAIL_SECONDS - 1
  values = json.loads((out / 'config.json').read_text())
  assert values['max_minutes'] == 1.0 and values['max_steps'] is None
  assert values['lineage'][-1]['max_minutes'] == 1.0
  assert values['perplexity_calibration']['n'] >= 1
  # The final evaluation is of the last step, not of an earlier one.
  assert f"step {summary['step']}: train loss" in (out / 'train.log').read_text()
  # Resumed for more minutes, and stopped by --max-steps when that comes first.
  resumed = train_run(micro_args(out, resume=True, max_steps=summary['step'] + 3,
                                      max_minutes=5))
  assert resumed['step'] == summary['step'] + 3 and resumed['wall_seconds'] < 300


def test_max_minutes_is_refused_out_of_range_and_lifts_the_step_default(tmp_path, capsys):
  for bad in ('0', '-1', 'nan', '1e9'):
    with pytest.raises(SystemExit) as exited:
      train_command.main(['--output-dir', str(tmp_path / 'run'), '--max-minutes', bad])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--max-minutes' in err
  assert not (tmp_path / 'run').exists()
  assert train_command.parse_args(['--max-minutes', '3']).max_steps is None
  assert train_command.parse_args([]).max_steps == 1000
  both = train_command.parse_args(['--max-minutes', '3', '--max-steps', '50'])
  assert (both.max_minutes, both.max_steps) == (3.0, 50)


def _slow_micro_run(out, monkeypatch, probe, minutes=0.5, **changes):
  """A budgeted micro run on a machine slower than its recipe; returns (summary, rows a step).

  Args:
    out: The run's output directory.
    probe: Stands in for ``plan.probe_speed`` (the machine's rate before the first step).
    minutes: The run's budget, setting up included (the vocabulary, the first compile).
    **changes: Other flags of the run.
  """
  monkeypatch.setitem(run_plan.RECIPE_TOKENS_PER_SECOND, 'micro', 10**9)  # Any machine is slow.
  monkeypatch.setattr(run_plan, 'MEASURE_SECONDS', 0.0)
  monkeypatch.setattr(run_plan, 'probe_speed', probe)
  rows, counted = [], run_prepare._counted

  def recording(stream, counter):
    for batch in counted(stream, counter):
      rows.append(len(batch[0]))  # (B, L): B stories a step.
      yield batch

  monkeypatch.setattr(run_prepare, '_counted', recording)
  summary = train_run(micro_args(out, max_steps=None, max_minutes=minutes, eval_steps=1000,
                                 save_steps=1000, **changes))
  return summary, rows


@pytest.mark.slow
def test_a_slow_machine_trains_on_split_batches_and_records_it(tmp_path, monkeypatch):
  out = tmp_path / 'run'
  # The probe before the first step finds the recipe's machine: whole batches until measured.
  # A minute: setting up takes most of half a minute on a busy 2-core machine, and the run
  # must go well past the measured steps.
  summary, rows = _slow_micro_run(out, monkeypatch,
                                  lambda: run_plan.PROBE_RATE * 10**9 / 16000, minutes=1.0)
  # The micro preset's batches hold 2 stories: whole until the speed is measured, then halved.
  measured = run_plan.MEASURE_FROM_STEP + run_plan.MEASURE_STEPS
  assert summary['split_batches'] and summary['step'] > measured + 10
  assert set(rows[:measured]) == {2} and set(rows[measured + 2:]) == {1}
  values = json.loads((out / 'config.json').read_text())
  assert values['lineage'][-1]['split_batches'] is True
  plan = next(l for l in (out / 'train.log').read_text().splitlines() if l.startswith('plan: '))
  assert 'steps of a quarter batch' in plan


@pytest.mark.slow
def test_a_machine_the_probe_finds_slow_trains_on_split_batches_from_the_first_step(
    tmp_path, monkeypatch):
  probed = []
  # The copy lessons' share is the preset's: on split batches the run takes the slow machine's.
  monkeypatch.setitem(run_args.SPLIT_LESSONS, 'micro', dict(copy_fraction=0.25))
  # A minute, as above: setting up on a busy machine takes most of half a minute.
  summary, rows = _slow_micro_run(tmp_path / 'run', monkeypatch, lambda: probed.append(1) or 1.0,
                                  minutes=1.0, preset_lessons=('copy_fraction',))
  assert probed == [1] and summary['split_batches'] and set(rows) == {1}
  assert summary['step'] > run_plan.MEASURE_FROM_STEP + run_plan.MEASURE_STEPS
  assert json.loads((tmp_path / 'run' / 'config.json').read_text())['copy_fraction'] == 0.25
  # Bounded by steps, a run is not probed and its batches stay whole, with the preset's lessons.
  whole = train_run(micro_args(tmp_path / 'steps', max_steps=4, max_minutes=0.5,
                               eval_steps=1000, save_steps=1000, preset_lessons=('copy_fraction',)))
  assert probed == [1] and not whole['split_batches']
  assert json.loads((tmp_path / 'steps' / 'config.json').read_text())['copy_fraction'] == 0.0


def test_the_schedule_decays_to_zero_as_the_tokens_are_read():
  counter = {'tokens': 0}
  tokens = run_budget.TokenBudget(1000, counter)
  schedule = run_budget.BudgetSchedule(0.01, warmup_steps=2, tokens=tokens)
  assert schedule(1) == pytest.approx(0.005)  # Warming up, nothing read.
  counter['tokens'] = 250
  assert schedule(3) == pytest.approx(0.0075) and not tokens.spent()
  counter['tokens'] = 1000
  assert schedule(9) == 0.0 and tokens.spent() and tokens.left() == 0
  # With a step limit too, whichever ends first: half the steps, a tenth of the tokens.
  counter['tokens'] = 100
  both = run_budget.BudgetSchedule(1.0, warmup_steps=1, first_step=0, max_steps=20,
                                   tokens=tokens)
  assert both(10) == pytest.approx(0.5)


@pytest.mark.slow
def test_a_run_ends_after_its_tokens_and_resumes_for_as_many_more(tmp_path):
  out = tmp_path / 'run'
  first = train_run(micro_args(out, max_steps=None, max_tokens=2000, eval_steps=1000,
                                    save_steps=1000))
  assert first['step'] > 1 and not first['interrupted']
  values = json.loads((out / 'config.json').read_text())
  assert values['max_tokens'] == 2000 and values['max_steps'] is None
  assert values['lineage'][-1]['max_tokens'] == 2000
  # It stopped at the first step that read its tokens: the step before had not.
  read = first['tokens_per_second'] * first['seconds']
  assert read >= 2000 * 0.98
  resumed = train_run(micro_args(out, resume=True, max_steps=None, max_tokens=2000,
                                      eval_steps=1000, save_steps=1000))
  assert resumed['step'] - first['step'] == pytest.approx(first['step'], abs=first['step'] // 2 + 1)
  # A time budget that ends first ends the run before its tokens.
  short = train_run(micro_args(tmp_path / 'short', max_steps=None, max_tokens=10**9,
                                    max_minutes=1.0, eval_steps=1000, save_steps=1000))
  assert short['wall_seconds'] <= 75 and not short['interrupted']


def test_max_tokens_is_refused_below_one_lifts_the_step_default_and_picks_the_recipe(
    tmp_path, capsys):
  for bad in ('0', '-5', 'x'):
    with pytest.raises(SystemExit) as exited:
      train_command.main(['--output-dir', str(tmp_path / 'run'), '--max-tokens', bad])
    assert exited.value.code == 2
    assert '--max-tokens' in capsys.readouterr().err
  assert not (tmp_path / 'run').exists()
  args = train_command.parse_args(['--max-tokens', '2500000'])
  assert (args.max_steps, args.max_tokens, args.preset) == (None, 2_500_000, 'quick')
  both = train_command.parse_args(['--max-tokens', '100', '--max-minutes', '3'])
  assert (both.max_tokens, both.max_minutes, both.max_steps) == (100, 3.0, None)


def test_the_schedule_holds_its_peak_until_its_last_share_then_decays():
  counter = {'tokens': 0}
  tokens = run_budget.TokenBudget(1000, counter)
  schedule = run_budget.BudgetSchedule(0.01, warmup_steps=1, tokens=tokens, decay_share=0.4)
  schedule(1)
  for read, rate in ((100, 0.01), (600, 0.01), (800, 0.005), (900, 0.0025), (1000, 0.0)):
    counter['tokens'] = read
    assert schedule(5) == pytest.approx(rate), read
  # The quick preset's recipe holds it; the others decay over the whole budget.
  from summarizer.config import PRESETS  # pylint: disable=import-outside-toplevel
  assert 0 < PRESETS['quick'].decay_share < 1 and PRESETS['tiny'].decay_share == 1.0


def test_a_token_budget_or_split_batches_hold_the_peak_and_whole_batches_on_a_clock_do_not():
  # The ten-minute figures at full speed were measured with a decay over the whole clock budget.
  from summarizer.config import PRESETS  # pylint: disable=import-outside-toplevel
  from summarizer.runs.prepare import SplitBatches  # pylint: disable=import-outside-toplevel
  share = PRESETS['quick'].decay_share
  assert 0 < share < 1
  counter = {'tokens': 0}
  clock = run_budget.Budget(10, started=0.0)
  split = SplitBatches()

  def rate_at(done, tokens=None):
    schedule = run_budget.BudgetSchedule(0.01, warmup_steps=1, budget=None if tokens else clock,
                                         split=split, tokens=tokens, decay_share=share)
    schedule(1)
    clock.train_fraction = lambda: done
    counter['tokens'] = int(done * 1000)
    return schedule(5) / (0.01 * split.peak_scale)

  middle = (1 - share) / 2
  assert rate_at(middle) == pytest.approx(1 - middle)  # Whole batches: the whole run decays.
  split.on = True
  assert rate_at(middle) == pytest.approx(1.0)  # Quarter batches: the peak holds ...
  assert rate_at(1 - share / 2) == pytest.approx(0.5)  # ... then decays over the last share.
  split.on = False
  assert rate_at(middle, run_budget.TokenBudget(1000, counter)) == pytest.approx(1.0)


def test_a_run_budgeted_by_tokens_alone_computes_on_one_cpu_thread_unless_told():
  def threads(environ, **flags):
    args = run_args.TrainArgs(**flags)
    return run_budget.one_thread_for_tokens(args, environ), environ

  assert threads({}, max_tokens=1000, max_steps=None) == ('1', {'PJRT_NPROC': '1'})
  # A clock, or no budget of tokens, keeps a thread a core.
  assert threads({}, max_tokens=1000, max_minutes=5.0) == (None, {})
  assert threads({}) == (None, {})
  # A thread count of the user's is kept, whichever variable says it.
  assert threads({'NPROC': '4'}, max_tokens=1000) == ('4', {'NPROC': '4'})
  assert threads({'PJRT_NPROC': '2'}, max_tokens=1000) == ('2', {'PJRT_NPROC': '2'})
