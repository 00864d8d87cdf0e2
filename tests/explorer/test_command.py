"""python -m summarizer --explain: the page written, bad input in one line."""

import os

import pytest

import summarizer
from summarizer.__main__ import main

from .conftest import BUSINESS, COURT, MADE_UP, read


def test_explain_option_writes_the_page(capsys, tmp_path):
  (tmp_path / 'c.html').write_text('an earlier page')  # Replaced: --force.
  status, out, err = run_main(capsys, COURT, '--explain', str(tmp_path / 'c.html'), '--force')
  assert status == 0
  assert out.strip() == summarizer.summarize(read(COURT))
  assert err == f'wrote {tmp_path / "c.html"} (not in the article: {MADE_UP})\n'
  page = (tmp_path / 'c.html').read_text(encoding='utf-8')
  first_line = out.splitlines()[0]
  assert f'<title>What the model read: {first_line}</title>' in page


@pytest.mark.parametrize('argv, message', [
    (['--text', ' ', '--explain', 'x.html'], 'error: --text: the article is empty'),
    ([BUSINESS, '--explain', 'x.txt'],
     'error: argument --explain: x.txt ends in neither .html (the page) nor .png (the heatmap)'),
    ([BUSINESS, BUSINESS, '--explain', 'x.html'], 'error: --explain takes one article'),
    ([BUSINESS, '--explain', 'x.html', '--json'], 'error: --explain prints the summary itself'),
    ([BUSINESS, '--explain', 'a_file/x.html'], 'error: a_file/x.html: cannot write, no folder'),
])
def test_bad_explain_input_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message):
  monkeypatch.chdir(tmp_path)
  (tmp_path / 'a_file').write_text('x')
  status, out, err = run_main(capsys, *argv)
  assert status == 2 and out == ''
  assert err.startswith(message) and err.count('\n') == 1, err
  assert sorted(os.listdir(tmp_path)) == ['a_file']


def model_work_must_not_start(*args, **kwargs):
  raise AssertionError('the model was asked before the output path was checked')


@pytest.mark.parametrize('existing', ['a file', 'a link'])
def test_an_existing_page_is_replaced_only_with_force(capsys, tmp_path, monkeypatch, existing):
  from summarizer.explorer import explanation  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(explanation, 'explain', model_work_must_not_start)
  thesis = tmp_path / 'thesis.html'
  thesis.write_text('my thesis')
  page = tmp_path / 'page.html'
  if existing == 'a file':
    page.write_text('my page')
  else:
    page.symlink_to(thesis)
  status, out, err = run_main(capsys, COURT, '--explain', str(page))
  assert status == 2 and out == ''
  assert err == f'error: {page} exists: pass --force to overwrite it\n'
  assert thesis.read_text() == 'my thesis'
  assert page.is_symlink() if existing == 'a link' else page.read_text() == 'my page'


def test_an_existing_picture_is_replaced_only_with_force(capsys, tmp_path, monkeypatch):
  # pylint: disable=g-import-not-at-top
  from summarizer.explorer import __main__ as explorer_command
  from summarizer.explorer import pictures
  monkeypatch.setattr(pictures, 'picture', model_work_must_not_start)
  png = tmp_path / 'mine.png'
  png.write_bytes(b'my picture')
  assert explorer_command.main(['--picture', COURT, str(png)]) == 2
  assert capsys.readouterr().err == f'error: {png} exists: pass --force to overwrite it\n'
  assert png.read_bytes() == b'my picture'
  written = {}
  monkeypatch.setattr(pictures, 'picture',
                      lambda text, path, force, model_dir: written.update(
                          path=path, force=force, model_dir=model_dir))
  assert explorer_command.main(['--picture', COURT, str(png), '--force']) == 0
  assert written == {'path': str(png), 'force': True, 'model_dir': None}
  # --model is the picture's model too.
  assert explorer_command.main(['--picture', COURT, str(png), '--force', '--model', 'm']) == 0
  assert written == {'path': str(png), 'force': True, 'model_dir': 'm'}


@pytest.mark.parametrize('argv, message', [
    (['--measure', 'page.html', '--model', 'm'], 'argument --model: --measure times a page'),
    (['--agreement', '3', '--force'], 'argument --force: only --picture writes a file'),
])
def test_a_flag_the_explorer_would_ignore_is_refused(capsys, argv, message):
  from summarizer.explorer import __main__ as explorer_command  # pylint: disable=g-import-not-at-top
  with pytest.raises(SystemExit) as stopped:
    explorer_command.main(argv)
  err = capsys.readouterr().err
  assert stopped.value.code == 2 and err.startswith(f'error: {message}') and err.count('\n') == 1


@pytest.mark.slow
def test_the_picture_is_drawn_with_the_model_asked_for(tmp_path):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  folder = tmp_path / 'not-a-model'
  folder.mkdir()
  png = tmp_path / 'page.png'
  done = subprocess.run([sys.executable, '-m', 'summarizer.explorer', '--picture', COURT,
                         str(png), '--model', str(folder)], capture_output=True, text=True,
                        timeout=600, check=False)
  assert (done.returncode, done.stderr) == (
      2, f'error: {folder}: not a model directory (no config.json and no model.pkl.gz)\n')
  assert not png.exists() and list(folder.iterdir()) == []


@pytest.mark.skipif(hasattr(os, 'geteuid') and os.geteuid() == 0,
                    reason='root writes through permissions')
def test_unwritable_folder_is_one_line(capsys, tmp_path):
  locked = tmp_path / 'locked'
  locked.mkdir(mode=0o500)
  status, _, err = run_main(capsys, BUSINESS, '--explain', str(locked / 'x.html'))
  assert status == 2 and err.startswith(f'error: {locked / "x.html"}: cannot write')


def run_main(capsys, *argv):
  try:
    status = main(list(argv))
  except SystemExit as e:                                      # argparse's errors.
    status = e.code
  captured = capsys.readouterr()
  return status, captured.out, captured.err


@pytest.mark.slow
def test_explain_prints_the_warnings_of_the_plain_command(random_model_dir, tmp_path, capsys):
  import shutil  # pylint: disable=g-import-not-at-top
  from summarizer.config import CALIBRATION_KEY, update_config  # pylint: disable=g-import-not-at-top
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  # Calibrated so that any article is out of its domain.
  update_config(str(model_dir), **{CALIBRATION_KEY: {
      'split': 'validation', 'n': 1, 'p50': 1.0, 'max': 1.0, 'threshold': 1.0}})
  article = ['--text', 'Heavy rain closed roads in Paris on Monday.', '--model', str(model_dir),
             '--max-length', '4']

  def warnings(argv):
    assert main(argv) == 0
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith('warning:')]

  plain = warnings(article)
  assert any('unlike anything it was trained on' in line for line in plain)
  assert warnings(article + ['--explain', str(tmp_path / 'page.html')]) == plain
