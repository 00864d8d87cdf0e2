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


def test_a_second_evaluation_into_the_same_directory_stops_at_once(random_model_dir, tmp_path,
                                                                   capsys):
  from summarizer import locks  # pylint: disable=g-import-not-at-top
  out = tmp_path / 'new'
  with locks.locked(str(out)):  # Another evaluation is writing there.
    assert run(random_model_dir, out, 1) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'is in use by process' in err
  assert not any((out / name).exists() for name in evaluate.OUTPUT_FILES)


def test_results_are_replaced_only_once_the_new_ones_are_whole(tmp_path, monkeypatch):
  # A full disk (or any failed write) part-way keeps the earlier results, whole.
  evaluate.write_outputs(str(tmp_path), {'n': 1}, ['old summary'], {})
  before = {name: (tmp_path / name).read_bytes() for name in evaluate.OUTPUT_FILES}
  real_open = open

  def full_disk_open(path, *args, **kwargs):
    f = real_open(path, *args, **kwargs)
    if str(path).endswith(evaluate.PREDICTIONS_FILE + '.tmp'):
      f.close()
      raise OSError(28, 'No space left on device')
    return f

  monkeypatch.setattr('builtins.open', full_disk_open)
  with pytest.raises(SummarizerError, match='No space left on device.*earlier results there '
                     'are kept'):
    evaluate.write_outputs(str(tmp_path), {'n': 2}, ['new summary'] * 2, {})
  monkeypatch.undo()
  assert {name: (tmp_path / name).read_bytes() for name in evaluate.OUTPUT_FILES} == before
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(evaluate.OUTPUT_FILES)


def test_json_output_is_valid_json_when_a_score_is_not_a_number(capsys):
  from summarizer.errors import json_text  # pylint: disable=g-import-not-at-top
  text = json_text({'model': {'rouge1': float('nan'), 'ppl': float('inf')}, 'n': 1})
  assert json.loads(text) == {'model': {'rouge1': None, 'ppl': None}, 'n': 1}
