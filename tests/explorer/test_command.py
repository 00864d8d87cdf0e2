"""python -m summarizer --explain: the page written, bad input in one line."""

import os

import pytest

import summarizer
from summarizer.__main__ import main

from .conftest import BUSINESS, read


def test_explain_option_writes_the_page(capsys, tmp_path):
  status, out, err = run_main(capsys, BUSINESS, '--explain', str(tmp_path / 'b.html'))
  assert status == 0
  assert out.strip() == summarizer.summarize(read(BUSINESS))
  assert err == f'wrote {tmp_path / "b.html"} (not in the article: Ulyar Group)\n'
  page = (tmp_path / 'b.html').read_text(encoding='utf-8')
  assert '<title>What the model read: Ulyar Group makes a profit of $67.9 million.</title>' in page


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
