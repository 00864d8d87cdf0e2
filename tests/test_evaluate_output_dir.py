"""An evaluation never silently replaces an earlier one's results."""

import json

import pytest

from summarizer import evaluate
from summarizer.errors import SummarizerError


def run(random_model_dir, out, limit, *extra):
  return evaluate.main(['--model', random_model_dir, '--limit', str(limit), '--max-length', '2',
                        '--retrieval-pool', '5', '--output-dir', str(out), '--json', *extra])


def test_earlier_results_are_kept_unless_overwrite_is_asked(random_model_dir, tmp_path, capsys):
  out = tmp_path / 'eval'
  assert run(random_model_dir, out, 1) == 0
  before = {name: (out / name).read_bytes() for name in evaluate.OUTPUT_FILES}
  capsys.readouterr()
  assert run(random_model_dir, out, 2) == 2
  captured = capsys.readouterr()
  assert captured.out == '' and captured.err.count('\n') == 1
  assert captured.err == (f'error: --output-dir {out} holds an earlier evaluation '
                          '(eval_results.json, generated_predictions.txt): pass '
                          '--overwrite-output-dir to replace it, or choose another '
                          '--output-dir\n')
  assert {name: (out / name).read_bytes() for name in evaluate.OUTPUT_FILES} == before
  assert run(random_model_dir, out, 2, '--overwrite-output-dir') == 0
  assert json.loads((out / evaluate.RESULTS_FILE).read_text())['n'] == 2
  assert len((out / evaluate.PREDICTIONS_FILE).read_text().splitlines()) == 2


def test_other_files_and_a_new_directory_are_fine(random_model_dir, tmp_path):
  (tmp_path / 'notes.txt').write_text('mine')
  evaluate.check_output_dir(str(tmp_path))
  evaluate.check_output_dir(str(tmp_path / 'new'))
  (tmp_path / evaluate.PREDICTIONS_FILE).write_text('old\n')
  with pytest.raises(SummarizerError, match=r'earlier evaluation \(generated_predictions.txt\)'):
    evaluate.check_output_dir(str(tmp_path))
  evaluate.check_output_dir(str(tmp_path), overwrite_output_dir=True)
