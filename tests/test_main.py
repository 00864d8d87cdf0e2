"""`python -m summarizer`: output forms, and one-line errors for bad input."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

from summarizer.__main__ import main

from conftest import SMALL_CONFIG, write_model_dir

ARTICLE = 'The mayor of the city opened a new library on Friday, officials said.'


def run_main(capsys, *argv):
  status = main(list(argv))
  captured = capsys.readouterr()
  return status, captured.out, captured.err


def test_summary_text_json_and_stream_agree(capsys, random_model_dir, tmp_path):
  path = tmp_path / 'a.txt'
  path.write_text(ARTICLE, encoding='utf-8')
  common = ('--model', random_model_dir, '--max-length', '8')
  status, plain, err = run_main(capsys, str(path), *common)
  # A random model may well repeat itself: the one warning it may get is that.
  assert status == 0 and plain.strip()
  assert all('likely undertrained' in line for line in err.splitlines())
  status, as_json, _ = run_main(capsys, '--text', ARTICLE, *common, '--json')
  (result,) = json.loads(as_json)
  assert result['summary_text'] == plain.strip()
  assert result['out_of_domain'] is None and result['article_perplexity'] > 1
  status, streamed, _ = run_main(capsys, str(path), *common, '--stream')
  assert streamed.strip() == plain.strip()


def _model_with(tmp_path, name, **changes):
  return write_model_dir(tmp_path / name, dataclasses.replace(SMALL_CONFIG, **changes))


@pytest.fixture
def bad_inputs(tmp_path, random_model_dir):
  """Each case: argv and a fragment the one-line error must contain."""
  (tmp_path / 'blank.txt').write_text('  \n\t\n', encoding='utf-8')
  (tmp_path / 'binary.bin').write_bytes(b'\x89PNG\x00\x01\x02')
  (tmp_path / 'latin1.txt').write_bytes('caf\xe9 au lait'.encode('latin-1'))
  corrupt = tmp_path / 'corrupt_model'
  write_model_dir(corrupt)
  (corrupt / 'model.pkl.gz').write_bytes(b'not a gzip file')
  small_vocab_model = tmp_path / 'small_vocab_model'
  write_model_dir(small_vocab_model)
  config = json.loads((small_vocab_model / 'config.json').read_text())
  config['vocab_size'] = 100
  (small_vocab_model / 'config.json').write_text(json.dumps(config))
  model = ('--model', random_model_dir)
  return [
      (['--text', '   ', *model], 'empty'),
      ([str(tmp_path / 'blank.txt'), *model], 'empty'),
      ([str(tmp_path / 'missing.txt'), *model], 'no such file'),
      ([str(tmp_path), *model], 'is a directory'),
      ([str(tmp_path / 'binary.bin'), *model], 'binary'),
      ([str(tmp_path / 'latin1.txt'), *model], 'not UTF-8'),
      (['--text', ARTICLE, '--model', str(tmp_path / 'nowhere')], 'not found'),
      (['--text', ARTICLE, '--model', str(tmp_path)], 'no config.json'),
      (['--text', ARTICLE, '--model', str(corrupt)], 'cannot load the weights'),
      (['--text', ARTICLE, '--model', str(small_vocab_model)], 'do not match'),
      (['--text', ARTICLE, '--method', 'beam', *model], 'invalid choice'),
      (['--text', ARTICLE, '--max-length', '0', *model], 'at least 1'),
  ]


def test_bad_input_is_one_line_and_status_2(capsys, bad_inputs):
  for argv, fragment in bad_inputs:
    try:
      status = main(argv)
    except SystemExit as e:  # argparse's errors exit from inside.
      status = e.code
    out, err = capsys.readouterr()
    assert status == 2, argv
    assert out == '', argv
    assert err.count('\n') == 1 and err.startswith('error: '), (argv, err)
    assert fragment in err, (argv, err)


def test_real_process_help_and_error(tmp_path):
  env = dict(os.environ, PYTHONWARNINGS='ignore')
  shown = subprocess.run([sys.executable, '-m', 'summarizer', '--help'],
                         capture_output=True, text=True, env=env, check=False)
  assert shown.returncode == 0 and 'examples:' in shown.stdout
  failed = subprocess.run(
      [sys.executable, '-m', 'summarizer', str(tmp_path / 'nope.txt')],
      capture_output=True, text=True, env=env, check=False)
  assert failed.returncode == 2
  assert failed.stderr == f'error: {tmp_path / "nope.txt"}: no such file\n'


def test_real_process_prints_the_summary_and_exits_0(random_model_dir, capsys):
  # The command leaves through os._exit: what it printed must still arrive.
  env = dict(os.environ, PYTHONWARNINGS='ignore')
  done = subprocess.run(
      [sys.executable, '-m', 'summarizer', '--text', ARTICLE, '--model', random_model_dir,
       '--max-length', '6', '--json'],
      capture_output=True, text=True, env=env, check=False)
  assert done.returncode == 0 and done.stderr == ''
  assert main(['--text', ARTICLE, '--model', random_model_dir, '--max-length', '6',
               '--json']) == 0
  assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)


def test_a_reader_that_leaves_is_not_an_error(random_model_dir, monkeypatch):
  class ClosedPipe:
    def write(self, text):
      raise BrokenPipeError(32, 'Broken pipe')

    def flush(self):
      pass

  monkeypatch.setattr(sys, 'stdout', ClosedPipe())
  assert main(['--text', ARTICLE, '--model', random_model_dir, '--max-length', '4',
               '--stream']) == 0


def test_help_version_and_argument_errors_answer_before_trax_is_imported():
  code = textwrap.dedent('''
      import sys
      from summarizer.__main__ import parse_args
      for argv in (['--help'], ['--version'], ['--max-length', '0']):
        try:
          parse_args(argv)
        except SystemExit as e:
          print(argv[0], e.code)
      print(sorted(m for m in ('trax', 'tensorflow', 'jax') if m in sys.modules))
  ''')
  done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                        check=True)
  lines = done.stdout.splitlines()
  assert {'--help 0', '--version 0', '--max-length 2'} <= set(lines)
  assert 'summarizer 0.' in done.stdout and lines[-1] == '[]'  # The version; no Trax.
