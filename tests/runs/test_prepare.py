"""A prepared run: its tasks weigh and cut as the preset says."""

import dataclasses
import json

import pytest

from summarizer import train as train_command
from summarizer.runs import plan as run_plan
from summarizer.runs import run_dir

from conftest import micro_args
from conftest import train_run


@pytest.mark.slow
def test_evaluation_weighs_the_summary_only(tmp_path):
  # With a zero learning rate both runs keep their (same) initial weights:
  # the article's weight in training must not change the eval metric.
  losses = [train_run(micro_args(tmp_path / str(weight), max_steps=2, learning_rate=0.0,
                                      article_loss_weight=weight))['eval_loss']
            for weight in (0.0, 1.0)]
  assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_the_course_preset_drops_over_long_examples_and_tiny_cuts_them():
  course, tiny = micro_args('x', preset='course'), micro_args('x', preset='tiny')
  assert run_dir.resolve_config(course).truncate is False  # The course's FilterByLength.
  assert run_dir.resolve_config(tiny).truncate is True
  assert run_dir.resolve_config(dataclasses.replace(course, truncate=True)).truncate is True
  assert train_command.parse_args(['--no-truncate']).truncate is False
  assert train_command.parse_args([]).truncate is None  # The preset decides.


@pytest.mark.slow
def test_repeat_steps_train_first_on_repeat_lessons_then_on_the_stories(tmp_path):
  from summarizer.config import EOS
  from summarizer.runs import prepare as run_prepare
  run = run_prepare.prepare(micro_args(tmp_path / 'run', repeat_steps=2))
  train_task, _ = run_prepare.tasks(run)
  batches = [train_task.next_batch()[0] for _ in range(3)]  # The steps' batches.

  def is_repeat(row):
    eos = int(list(row).index(EOS))
    return list(row[eos + 2:2 * eos + 2]) == list(row[:eos])
  assert all(is_repeat(row) for batch in batches[:2] for row in batch)
  assert not any(is_repeat(row) for row in batches[2])
  # Lessons a quarter of a story's length come twice the rows to a batch: half a step's tokens.
  assert len(batches[0]) == run_prepare.REPEAT_ROWS * len(batches[2]) == 4
  assert batches[0].shape[1] == 64 and batches[2].shape[1] == 256


def test_the_repeat_phase_ends_once_its_loss_is_low_or_its_steps_are_done():
  from summarizer.runs.prepare import RepeatPhase
  learning = RepeatPhase(100, until_loss=0.5, window=3)
  losses = [3.0, 2.0, 1.0, 0.6, 0.4, 0.3, 0.2]  # Means of three: 2.0, 1.2, 0.67, 0.43.
  for step, loss in enumerate(losses, 1):
    learning.feed(step, loss)
    if learning.ended_at is not None:
      break
  assert learning.ended_at == 6 and learning.loss == pytest.approx(0.433, abs=1e-3)
  stubborn = RepeatPhase(5, until_loss=0.5, window=3)
  for step in range(1, 9):
    stubborn.feed(step, 2.0)
  assert stubborn.ended_at == 5  # Its most steps, then the stories whatever the loss.

  phase = RepeatPhase(100, until_loss=0.5, window=2)
  stream = phase.lessons_then_stories(iter(['lesson'] * 50), iter(['story'] * 5))
  drawn = [next(stream)]  # Trax's sample batch, before any step.
  for step, loss in enumerate([1.0, 0.4, 0.4], 1):
    drawn.append(next(stream))
    phase.feed(step, loss)
  drawn += list(stream)
  assert drawn == ['lesson'] * 4 + ['story'] * 5


@pytest.mark.slow
def test_repeat_lessons_end_early_in_a_run_and_it_says_so(tmp_path, monkeypatch):
  monkeypatch.setattr(run_plan, 'EVAL_SECONDS', 0.0)  # An evaluation after every step.
  monkeypatch.setattr(run_plan, 'MEASURE_SECONDS', 0.0)
  out = tmp_path / 'run'
  summary = train_run(micro_args(out, max_steps=22, eval_steps=None, save_steps=22,
                                      repeat_steps=50, repeat_until_loss=100.0))
  # Any loss is below 100: the phase ends as soon as its window of 20 steps is full.
  assert summary['repeat_steps_taken'] == 20
  log = (out / 'train.log').read_text()
  assert 'step 20: repeat lessons over, their loss' in log and 'on to the stories' in log
  lines = log.splitlines()
  # The plan, once measured: the phases and the speed.
  plans = [line for line in lines if line.startswith('plan: ')]
  assert len(plans) == 1 and plans[0].startswith(
      'plan: repeat lessons until their loss is below 100 (at most 50 steps), then the '
      'stories; this machine: ')
  assert plans[0].endswith(' to step 22')
  # Each evaluation says its phase; the lessons' loss is named as theirs, and the
  # stories' train loss is theirs alone.
  assert next(l for l in lines if l.startswith('step 19,')).startswith(
      "step 19, repeat lessons: the lessons' train loss ")
  assert next(l for l in lines if l.startswith('step 22,')).startswith(
      'step 22, stories: train loss ')
  values = json.loads((out / 'config.json').read_text())
  assert values['repeat_until_loss'] == 100.0


@pytest.mark.slow
def test_repeat_steps_are_recorded_and_refused_where_they_cannot_apply(tmp_path, capsys):
  out = tmp_path / 'run'
  train_run(micro_args(out, max_steps=2, repeat_steps=1))
  import json
  values = json.loads((out / 'config.json').read_text())
  assert values['repeat_steps'] == 1 and values['lineage'][-1]['repeat_steps'] == 1
  for flags in (['--repeat-steps', '-1'], ['--repeat-steps', '5', '--resume'],
                ['--repeat-steps', '5', '--init-from', 'data/model'],
                ['--repeat-until-loss', '0.3'],
                ['--repeat-steps', '5', '--repeat-until-loss', '0']):
    with pytest.raises(SystemExit) as exited:
      train_command.main(['--output-dir', str(tmp_path / 'other'), *flags])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--repeat-' in err


@pytest.mark.slow
def test_adam_remembers_squared_gradients_as_long_as_the_preset_says(tmp_path, monkeypatch):
  import json
  from summarizer import config as config_module
  from summarizer.runs import prepare as run_prepare
  forgetful = dataclasses.replace(config_module.PRESETS['micro'], adam_b2=0.9, clip_grad_norm=0.5)
  monkeypatch.setitem(config_module.PRESETS, 'micro', forgetful)
  out = tmp_path / 'run'
  train_task, _ = run_prepare.tasks(run_prepare.prepare(micro_args(out)))
  assert train_task.optimizer.opt_params['b2'] == pytest.approx(0.9)
  assert train_task.optimizer._clip_grad_norm == 0.5  # pylint: disable=protected-access
  train_run(micro_args(out, max_steps=2, overwrite_output_dir=True))
  values = json.loads((out / 'config.json').read_text())
  assert values['adam_b2'] == pytest.approx(0.9) and values['clip_grad_norm'] == 0.5
  # A model saved before the fields existed takes its preset's: Trax's defaults for tiny.
  del values['adam_b2'], values['clip_grad_norm']
  old = config_module.Config.from_dict(dict(values, preset='tiny'))
  assert (old.adam_b2, old.clip_grad_norm) == (0.999, None)
  assert config_module.PRESETS['quick'].adam_b2 < config_module.PRESETS['tiny'].adam_b2


def test_a_new_token_budgeted_run_takes_its_presets_token_recipe_and_others_keep_the_preset(
    tmp_path):
  from summarizer.config import PRESETS, TOKEN_RECIPES
  from summarizer.runs import prepare as run_prepare
  shape = TOKEN_RECIPES['quick']['config']
  assert any(PRESETS['quick'].to_dict()[k] != v for k, v in shape.items())
  tokens = run_prepare.prepare(micro_args(tmp_path / 'tokens', preset='quick', max_steps=None,
                                          max_tokens=1000))
  assert {k: getattr(tokens.config, k) for k in shape} == shape
  # The ten minutes keep the preset they were measured with, and tiny has no token recipe.
  minutes = run_prepare.prepare(micro_args(tmp_path / 'minutes', preset='quick', max_steps=None,
                                           max_minutes=10.0))
  assert minutes.config == PRESETS['quick']
  tiny = run_prepare.prepare(micro_args(tmp_path / 'tiny', preset='tiny', max_tokens=1000))
  assert tiny.config.n_layers == PRESETS['tiny'].n_layers
  # A flag's peak stands beside the recipe's shape.
  mine = run_prepare.prepare(micro_args(tmp_path / 'mine', preset='quick', max_steps=None,
                                        max_tokens=1000, learning_rate=0.0042))
  assert mine.config.learning_rate == 0.0042 and mine.config.n_layers == shape['n_layers']


def test_a_resumed_run_keeps_its_checkpoints_shape_whatever_its_budget_now():
  from summarizer.config import PRESETS
  from summarizer.runs import prepare as run_prepare
  quick = PRESETS['quick']
  shape_of = run_prepare._budget_config  # pylint: disable=protected-access
  for layers in (2, 3):
    saved = run_dir.RunDirectory(path='x', recorded=frozenset(), entries=(), checkpoint=True,
                                 staged=False, config=dataclasses.replace(quick, n_layers=layers))
    for budget in (dict(max_tokens=1000), dict(max_minutes=5.0)):
      args = micro_args('x', preset='quick', resume=True, **budget)
      shaped = shape_of(args, quick, saved, None)
      assert shaped.n_layers == layers, (layers, budget)
  # Started from a model: the preset's shape, which that model has.
  args = micro_args('x', preset='quick', max_tokens=1000, init_from='data/model')
  assert shape_of(args, quick, None, object()) == quick
