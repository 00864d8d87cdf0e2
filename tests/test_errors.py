"""Every flag is range-checked at parse time: one line, status 2, before any model loads."""

import json

import pytest

from summarizer import __main__ as summarize_command
from summarizer import evaluate, train
from summarizer.errors import json_text

CASES = [
    (train, ['--learning-rate', 'nan'], '--learning-rate: must be a finite number'),
    (train, ['--learning-rate', 'inf'], '--learning-rate: must be a finite number'),
    (train, ['--learning-rate', '-1'], '--learning-rate must be between 0 and 10'),
    (train, ['--article-loss-weight', 'nan'], '--article-loss-weight: must be a finite number'),
    (train, ['--article-loss-weight', '-1'], '--article-loss-weight must not be negative'),
    (train, ['--copy-fraction', 'nan'], '--copy-fraction: must be a finite number'),
    (train, ['--warmup-steps', '-5'], '--warmup-steps must be at least 1'),
    (train, ['--seed', '-1'], '--seed: must be between 0 and'),
    (summarize_command, ['--text', 'x', '--temperature', 'nan'],
     '--temperature: must be a finite number'),
    (summarize_command, ['--text', 'x', '--seed', '-5'], '--seed: must be between 0 and'),
    (summarize_command, ['--text', 'x', '--num-beams', '100000'],
     '--num-beams: must be between 1 and 64'),
    (summarize_command, ['--text', 'x', '--length-penalty', 'nan'],
     '--length-penalty: must be a finite number'),
    (evaluate, ['--num-beams', '100000'], '--num-beams: must be between 1 and 64'),
    (evaluate, ['--batch-size', '0'], '--batch-size: must be between 1 and 1024'),
]


@pytest.mark.parametrize('command,argv,message', CASES,
                         ids=[f'{c.__name__.split(".")[-1]} {" ".join(a)}' for c, a, _ in CASES])
def test_a_bad_flag_is_one_line_and_status_2(capsys, tmp_path, command, argv, message):
  if command is train:
    argv = argv + ['--output-dir', str(tmp_path / 'run')]
  with pytest.raises(SystemExit) as exited:
    command.parse_args(argv)
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err, err
  assert not (tmp_path / 'run').exists()


def test_json_text_writes_null_for_what_is_not_a_number():
  text = json_text([{'article_perplexity': float('nan'), 'summary_text': 'x'}])
  assert 'NaN' not in text
  assert json.loads(text) == [{'article_perplexity': None, 'summary_text': 'x'}]


@pytest.mark.parametrize('argv,message', [
    (['--out', '.'], '--out: . is a directory'),
    (['--out', 'x.subwords', '--limit', '-1'], '--limit: must be at least 1'),
])
def test_the_vocab_command_refuses_a_directory_and_a_negative_limit(capsys, argv, message):
  from summarizer import vocab  # pylint: disable=g-import-not-at-top
  with pytest.raises(SystemExit) as exited:
    vocab.main(argv)
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err


def test_gins_note_on_an_error_is_left_out(capsys):
  import gin  # pylint: disable=g-import-not-at-top
  from summarizer.errors import SummarizerError, run_command  # pylint: disable=g-import-not-at-top

  @gin.configurable
  def configured():
    raise SummarizerError('data/x.jsonl: no highlights column')

  assert run_command(configured) == 2
  assert capsys.readouterr().err == 'error: data/x.jsonl: no highlights column\n'


def test_the_evaluate_commands_default_length_is_the_decoders():
  from summarizer import decoding  # pylint: disable=g-import-not-at-top
  assert evaluate.MAX_SUMMARY_TOKENS == decoding.MAX_SUMMARY_TOKENS
  assert evaluate.parse_args([]).max_length == decoding.MAX_SUMMARY_TOKENS


@pytest.mark.parametrize('command', ['summarizer', 'summarizer.train', 'summarizer.evaluate'])
def test_a_bad_flag_is_refused_before_jax_is_imported(command):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  probe = (f'import runpy, sys; sys.argv = ["x", "--num-beams", "0"]\n'
           f'try:\n  runpy.run_module("{command}", run_name="__main__")\n'
           'except SystemExit as e:\n  print(e.code, "jax" in sys.modules)')
  if command == 'summarizer.train':
    probe = probe.replace('"--num-beams", "0"', '"--learning-rate", "nan"')
  done = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.stdout.split() == ['2', 'False'], done.stderr
