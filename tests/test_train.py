"""The train command: its arguments and one-line refusals."""

import pytest

from summarizer import train as train_command

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
