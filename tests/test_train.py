"""The train command: its arguments and one-line refusals."""

import pytest

from summarizer import train as train_command
from summarizer.corpus import sources

pytestmark = pytest.mark.usefixtures('micro_preset')


def test_cli_refuses_with_one_line(tmp_path, capsys):
  (tmp_path / 'x').write_text('x')
  assert train_command.main(['--output-dir', str(tmp_path), '--preset', 'micro',
                             '--no-progress']) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'not empty' in err


@pytest.mark.parametrize('flag', ['--copy-fraction', '--short-fraction'])
def test_lesson_fractions_outside_0_to_1_are_refused(tmp_path, capsys, flag):
  with pytest.raises(SystemExit) as exited:
    train_command.main(['--output-dir', str(tmp_path / 'run'), flag, '1.5'])
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and f'{flag} must be between 0 and 1' in err
  assert not (tmp_path / 'run').exists()


@pytest.mark.parametrize('flags,message', [
    (['--embedding-scale', '0'], '--embedding-scale must be above 0'),
    (['--tied-init', '--resume'], 'cannot be combined with --init-from or --resume'),
    (['--embedding-scale', '2', '--init-from', 'data/model'], 'cannot be combined'),
])
def test_initialisation_levers_are_refused_where_they_would_not_apply(tmp_path, capsys, flags,
                                                                       message):
  with pytest.raises(SystemExit) as exited:
    train_command.main(['--output-dir', str(tmp_path / 'run'), *flags])
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err
  assert not (tmp_path / 'run').exists()


def test_a_new_run_with_a_budget_takes_the_quick_presets_lessons_and_others_keep_theirs(tmp_path):
  from summarizer.runs.args import PRESET_LESSONS
  recipe = train_command.parse_args(['--max-minutes', '10'])
  assert recipe.preset == 'quick'
  assert {k: getattr(recipe, k) for k in PRESET_LESSONS['quick']} == PRESET_LESSONS['quick']
  for argv in ([], ['--max-steps', '50'], ['--max-minutes', '10', '--preset', 'tiny']):
    plain = train_command.parse_args(argv)  # The course's way: no lesson.
    assert plain.preset == 'tiny' and plain.article_loss_weight == 0.0
    assert (plain.copy_fraction, plain.tied_init, plain.repeat_steps) == (0.0, False, 0)
  mine = train_command.parse_args(['--max-minutes', '10', '--copy-fraction', '0',
                                   '--no-tied-init', '--repeat-steps', '0'])
  assert (mine.copy_fraction, mine.tied_init, mine.repeat_steps) == (0.0, False, 0)
  assert mine.repeat_until_loss is None and mine.article_loss_weight == 0.25
  # Resumed, or started from a model: the preset's own, without what shapes new weights.
  (tmp_path / 'config.json').write_text('{"preset": "quick"}')
  resumed = train_command.parse_args(['--resume', '--output-dir', str(tmp_path),
                                      '--max-minutes', '5'])
  assert resumed.preset == 'quick' and resumed.copy_fraction == 0.3
  assert (resumed.tied_init, resumed.embedding_scale, resumed.repeat_steps) == (False, 1.0, 0)
  started = train_command.parse_args(['--init-from', 'data/model', '--max-minutes', '5'])
  assert started.preset == 'tiny' and started.repeat_steps == 0


def test_help_gives_the_quick_presets_article_weight_as_it_is(capsys):
  from summarizer.runs.args import PRESET_LESSONS
  with pytest.raises(SystemExit):
    train_command.parse_args(['--help'])
  words = ' '.join(capsys.readouterr().out.split())
  weight = PRESET_LESSONS['quick']['article_loss_weight']
  assert f'loss weight of article tokens (course: 0; quick preset: {weight:g})' in words


@pytest.mark.parametrize('data', ['missing.jsonl', 'gone.story', 'stories'])
def test_a_missing_data_file_is_one_line_and_leaves_no_output_folder(tmp_path, capsys, data):
  out = tmp_path / 'run'
  source = str(tmp_path / data)
  assert train_command.main(['--output-dir', str(out), '--data', source, '--max-steps', '2']) == 2
  err = capsys.readouterr().err
  assert err == (f'error: {source}: no such file or folder\n' if '.' in data
                 else f"error: unknown data source '{source}'; use {sources.ACCEPTED}\n")
  assert not out.exists()


def test_a_token_budget_takes_its_recipes_lessons_and_a_flag_still_wins():
  from summarizer.config import TOKEN_RECIPES  # pylint: disable=import-outside-toplevel
  from summarizer.runs.args import PRESET_LESSONS  # pylint: disable=import-outside-toplevel
  lessons = TOKEN_RECIPES['quick']['lessons']
  assert any(PRESET_LESSONS['quick'][k] != v for k, v in lessons.items())
  tokens = train_command.parse_args(['--max-tokens', '2500000'])
  assert tokens.preset == 'quick'
  assert {k: getattr(tokens, k) for k in lessons} == lessons
  # The ten-minute recipe keeps the lessons it was measured with.
  minutes = train_command.parse_args(['--max-minutes', '10'])
  assert {k: getattr(minutes, k) for k in lessons} == {k: PRESET_LESSONS['quick'][k]
                                                     for k in lessons}
  mine = train_command.parse_args(['--max-tokens', '2500000', '--copy-fraction', '0.3'])
  assert mine.copy_fraction == 0.3


def test_a_slow_machines_clock_takes_its_own_lessons_where_the_preset_chose_them():
  from summarizer.runs.args import SPLIT_LESSONS, on_split_batches  # pylint: disable=import-outside-toplevel
  slow = SPLIT_LESSONS['quick']
  minutes = train_command.parse_args(['--max-minutes', '10'])
  assert any(getattr(minutes, k) != v for k, v in slow.items())  # Whole batches: the preset's.
  on_split = on_split_batches(minutes, 'quick')
  assert {k: getattr(on_split, k) for k in slow} == slow
  # A flag wins; a preset without split lessons keeps its own.
  mine = train_command.parse_args(['--max-minutes', '10', '--copy-fraction', '0.3'])
  assert on_split_batches(mine, 'quick').copy_fraction == 0.3
  assert on_split_batches(minutes, 'tiny') == minutes
