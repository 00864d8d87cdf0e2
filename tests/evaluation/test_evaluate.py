"""Evaluation: the three systems scored side by side, its outputs and the command."""

import json
import os

import pytest

from summarizer import evaluate as evaluate_command
from summarizer.errors import SummarizerError
from summarizer.evaluation import scorecard


ARTICLE = ('Mayor Tavin Orsell of Dunsworth opened 3 bridges on Monday. '
           'The cost was $4.7 million.')
REFERENCE = 'Tavin Orsell opens 3 bridges in Dunsworth.\nThey cost $4.7 million.'


def test_table_is_aligned():
  scores = {'rouge1': 0.25, 'rouge2': 0.1, 'rougeL': 0.2,
            'entity_precision': None, 'entity_recall': 0.5}
  text = scorecard.table({'model': scores, 'lead3': scores, 'retrieval': scores, 'n': 2})
  lines = text.splitlines()
  assert lines[0].split() == ['system', *scorecard.METRICS]
  assert [line.split()[0] for line in lines[1:]] == list(scorecard.SYSTEMS)
  assert lines[1].split()[1:] == ['0.250', '0.100', '0.200', '-', '0.500']
  assert len({len(line) for line in lines}) == 1


@pytest.mark.slow
def test_evaluate_end_to_end(random_model_dir, tmp_path):
  out = tmp_path / 'eval'
  results = scorecard.evaluate(random_model_dir, 'news', 'test', limit=3,
                              max_length=8, retrieval_pool=40,
                              output_dir=str(out))
  assert set(results) == {'model', 'lead3', 'retrieval', 'n'}
  assert results['n'] == 3
  for system in scorecard.SYSTEMS:
    assert set(results[system]) == set(scorecard.METRICS)
  assert results['lead3']['entity_precision'] == 1.0  # Copied from the article.
  predictions = (out / 'generated_predictions.txt').read_text().split('\n')
  assert len(predictions) == 4 and predictions[-1] == ''  # 3 lines.
  saved = json.loads((out / 'eval_results.json').read_text())
  assert {k: saved[k] for k in results} == results
  assert saved['data'] == 'news' and saved['split'] == 'test'
  assert saved['settings']['max_length'] == 8


@pytest.mark.slow
def test_facts_only_scores_the_articles_cut_to_their_facts(random_model_dir, tmp_path,
                                                           monkeypatch):
  from summarizer.corpus import news
  from summarizer.corpus import sentences
  summarised = []
  summarize_articles = scorecard.summarize_articles

  def recording(articles, *args):
    summarised.extend(articles)
    return summarize_articles(articles, *args)

  monkeypatch.setattr(scorecard, 'summarize_articles', recording)
  assert evaluate_command.main(['--model', random_model_dir, '--limit', '2', '--max-length', '4',
                                '--retrieval-pool', '20', '--output-dir', str(tmp_path),
                                '--facts-only', '--json']) == 0
  stories = [news.story('test', i) for i in range(2)]
  for article, story in zip(summarised, stories):
    assert len(article) < len(story.article) / 2
    assert set(sentences.sentences(article)) < set(sentences.sentences(story.article))
  saved = json.loads((tmp_path / 'eval_results.json').read_text())
  assert saved['settings']['facts_only'] is True and len(summarised) == 2


@pytest.mark.parametrize('argv,fragment', [
    (['--split', 'nope'], 'unknown split'),
    (['--data', 'nowhere:x'], 'unknown data source'),
    (['--limit', '0'], 'limit must be at least 1'),
    (['--limit', '-2'], 'limit must be at least 1'),
    (['--retrieval-pool', '0'], 'retrieval-pool must be at least 1'),
    (['--model', '/nonexistent/model'], 'model directory not found'),
])
def test_bad_input_is_one_line_and_status_2(random_model_dir, tmp_path, capsys,
                                            argv, fragment):
  assert evaluate_command.main(['--model', random_model_dir, '--output-dir',
                                str(tmp_path), *argv]) == 2
  captured = capsys.readouterr()
  assert captured.out == ''
  assert captured.err.startswith('error: ') and captured.err.count('\n') == 1
  assert fragment in captured.err


def test_other_files_and_a_new_directory_are_fine(random_model_dir, tmp_path):
  (tmp_path / 'notes.txt').write_text('mine')
  scorecard.check_output_dir(str(tmp_path))
  scorecard.check_output_dir(str(tmp_path / 'new'))
  (tmp_path / scorecard.PREDICTIONS_FILE).write_text('old\n')
  with pytest.raises(SummarizerError, match=r'earlier evaluation \(generated_predictions.txt\)'):
    scorecard.check_output_dir(str(tmp_path))
  scorecard.check_output_dir(str(tmp_path), overwrite_output_dir=True)


def test_a_second_evaluation_into_the_same_directory_stops_at_once(random_model_dir, tmp_path,
                                                                   capsys):
  from summarizer.runs import locks  # pylint: disable=g-import-not-at-top
  out = tmp_path / 'new'
  with locks.locked(str(out)):  # Another evaluation is writing there.
    assert evaluate_command.main(['--model', random_model_dir, '--limit', '1',
                                  '--max-length', '2', '--retrieval-pool', '5',
                                  '--output-dir', str(out)]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'is in use by process' in err
  assert not any((out / name).exists() for name in scorecard.OUTPUT_FILES)


def test_results_are_replaced_only_once_the_new_ones_are_whole(tmp_path, monkeypatch):
  # A full disk (or any failed write) part-way keeps the earlier results, whole.
  scorecard.write_outputs(str(tmp_path), {'n': 1}, ['old summary'], {})
  before = {name: (tmp_path / name).read_bytes() for name in scorecard.OUTPUT_FILES}
  synced = []
  real_fsync = os.fsync

  def full_disk_at_the_second_file(fd):
    synced.append(fd)
    if len(synced) == 2:
      raise OSError(28, 'No space left on device')
    real_fsync(fd)

  monkeypatch.setattr(os, 'fsync', full_disk_at_the_second_file)
  with pytest.raises(SummarizerError, match='No space left on device.*earlier results there '
                     'are kept'):
    scorecard.write_outputs(str(tmp_path), {'n': 2}, ['new summary'] * 2, {})
  monkeypatch.undo()
  assert len(synced) == 2
  assert {name: (tmp_path / name).read_bytes() for name in scorecard.OUTPUT_FILES} == before
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(scorecard.OUTPUT_FILES)


def test_temporary_names_planted_as_links_are_never_written_through(tmp_path):
  thesis = tmp_path / 'thesis.md'
  thesis.write_text('my thesis\n')
  out = tmp_path / 'eval'
  out.mkdir()
  for name in scorecard.OUTPUT_FILES:  # The names results were first written under.
    (out / f'{name}.tmp').symlink_to(thesis)
  scorecard.write_outputs(str(out), {'n': 1}, ['a summary'], {})
  assert thesis.read_text() == 'my thesis\n'
  assert all((out / f'{name}.tmp').is_symlink() for name in scorecard.OUTPUT_FILES)
  assert (out / scorecard.PREDICTIONS_FILE).read_text() == 'a summary\n'
  assert json.loads((out / scorecard.RESULTS_FILE).read_text())['n'] == 1
  assert sorted(p.name for p in out.iterdir()) == sorted(
      [*scorecard.OUTPUT_FILES, *(f'{name}.tmp' for name in scorecard.OUTPUT_FILES)])
  # Written with the usual mode, not a temporary file's private one.
  umask = os.umask(0)
  os.umask(umask)
  assert all((out / name).stat().st_mode & 0o777 == 0o666 & ~umask
             for name in scorecard.OUTPUT_FILES)


def test_results_json_is_valid_json_when_a_score_is_not_a_number(tmp_path):
  scorecard.write_outputs(str(tmp_path), {'model': {'rouge1': float('nan')}, 'n': 1}, ['x'], {})
  saved = json.loads((tmp_path / scorecard.RESULTS_FILE).read_text())
  assert saved['model'] == {'rouge1': None}
