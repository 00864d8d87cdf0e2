"""The evaluate command: its output and one-line refusals."""

import json

import pytest

from summarizer import evaluate as evaluate_command
from summarizer.evaluation import scorecard


def run(random_model_dir, out, limit, *extra):
  return evaluate_command.main(['--model', random_model_dir, '--limit', str(limit),
                                '--max-length', '2', '--retrieval-pool', '5',
                                '--output-dir', str(out), '--json', *extra])


@pytest.mark.slow
def test_main_json_prints_one_object_only(random_model_dir, tmp_path, capsys):
  assert evaluate_command.main(['--model', random_model_dir, '--limit', '2',
                                '--max-length', '4', '--retrieval-pool', '20',
                                '--output-dir', str(tmp_path), '--json']) == 0
  captured = capsys.readouterr()
  results = json.loads(captured.out)
  assert set(results) == {'model', 'lead3', 'retrieval', 'n'} and results['n'] == 2
  assert 'summarising' in captured.err  # Progress goes to standard error.


def test_main_prints_the_table(random_model_dir, tmp_path, capsys):
  assert evaluate_command.main(['--model', random_model_dir, '--split', 'validation',
                                '--limit', '1', '--max-length', '2', '--retrieval-pool',
                                '5', '--output-dir', str(tmp_path)]) == 0
  lines = capsys.readouterr().out.splitlines()
  assert lines[0].split() == ['system', *scorecard.METRICS]
  assert lines[-1].startswith('1 articles;')


@pytest.mark.parametrize('argv', [['--limit', 'ten'], ['--method', 'slow']])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
  with pytest.raises(SystemExit) as exit_info:
    evaluate_command.main(argv)
  assert exit_info.value.code == 2
  assert capsys.readouterr().err.count('\n') == 1


def test_earlier_results_are_kept_unless_overwrite_is_asked(random_model_dir, tmp_path, capsys):
  out = tmp_path / 'eval'
  assert run(random_model_dir, out, 1) == 0
  before = {name: (out / name).read_bytes() for name in scorecard.OUTPUT_FILES}
  capsys.readouterr()
  assert run(random_model_dir, out, 2) == 2
  captured = capsys.readouterr()
  assert captured.out == '' and captured.err.count('\n') == 1
  assert captured.err == (f'error: --output-dir {out} holds an earlier evaluation '
                          '(eval_results.json, generated_predictions.txt): pass '
                          '--overwrite-output-dir to replace it, or choose another '
                          '--output-dir\n')
  assert {name: (out / name).read_bytes() for name in scorecard.OUTPUT_FILES} == before
  assert run(random_model_dir, out, 2, '--overwrite-output-dir') == 0
  assert json.loads((out / scorecard.RESULTS_FILE).read_text())['n'] == 2
  assert len((out / scorecard.PREDICTIONS_FILE).read_text().splitlines()) == 2
