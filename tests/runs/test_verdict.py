"""What a learner sees of a model as it trains and after: a story's summary at each
evaluation, and a verdict against Lead-3 that every summary of a weak model repeats."""

import json

import pytest

from summarizer.__main__ import main as summarize_main
from summarizer.config import VERDICT_KEY, update_config
from summarizer.corpus import news
from summarizer.evaluation import verdict as run_verdict
from summarizer.inference import loaded_model
from summarizer.inference import model_directory
from summarizer.inference import undertrained

from .conftest import start_training
from conftest import micro_args, write_model_dir
from conftest import train_run


def _scores(rouge1, rouge2, rouge_l, precision, recall=0.4):
  return {'rouge1': rouge1, 'rouge2': rouge2, 'rougeL': rouge_l,
          'entity_precision': precision, 'entity_recall': recall}


LEAD3 = _scores(0.293, 0.130, 0.214, 1.0, 0.41)


@pytest.mark.slow
def test_each_evaluation_is_followed_by_the_summary_of_one_validation_story(tmp_path):
  out = tmp_path / 'run'
  train_run(micro_args(out))  # Evaluations at steps 2 and 4.
  lines = (out / 'train.log').read_text().splitlines()
  first_highlight = news.story('validation', 0).highlights.splitlines()[0]
  assert any('validation story 1, whose highlights are: ' + first_highlight in line
             for line in lines)
  for step in (2, 4):
    at = next(i for i, line in enumerate(lines) if line.startswith(f'step {step}: train loss'))
    summary = lines[at + 1]
    assert summary.startswith('  summary of validation story 1: ') and len(summary) > 34


@pytest.mark.slow
def test_the_train_command_ends_with_a_verdict_that_config_json_keeps(tmp_path):
  out = tmp_path / 'run'
  process = start_training(out, '--max-steps', '2', '--eval-steps', '2')
  stdout, err = process.communicate(timeout=300)
  assert process.returncode == 0, err
  assert 'against Lead-3 on 3 validation stories, model (Lead-3): rouge1 ' in stdout
  assert 'not yet: its summaries will say so' in stdout  # Two steps learn nothing.
  assert 'verdict_seconds=' in stdout
  verdict = json.loads((out / 'config.json').read_text())[VERDICT_KEY]
  assert verdict['n'] == 3 and verdict['step'] == 2 and verdict['split'] == 'validation'
  assert set(verdict['model']) == set(verdict['lead3']) == set(LEAD3)
  assert verdict['lead3']['rouge1'] > 0.1 and verdict['lead3']['entity_precision'] == 1.0


@pytest.mark.slow
def test_no_verdict_with_zero_stories(tmp_path):
  out = tmp_path / 'run'
  process = start_training(out, '--max-steps', '1', '--verdict-stories', '0')
  stdout, err = process.communicate(timeout=300)
  assert process.returncode == 0, err
  assert 'against Lead-3' not in stdout
  assert VERDICT_KEY not in json.loads((out / 'config.json').read_text())


@pytest.mark.slow
def test_judging_reads_all_its_stories_and_counts_their_sentences(random_model_dir,
                                                                  monkeypatch):
  monkeypatch.setattr(run_verdict, 'BATCH_SIZE', 2)
  loaded = loaded_model.load(random_model_dir)
  seen = []

  def unreadable(ids, text, detokenize):  # Every other summary is no sentence.
    del ids, text, detokenize
    seen.append(None)
    return None if len(seen) % 2 else 'no sentence'

  monkeypatch.setattr(undertrained, 'unreadable', unreadable)
  record = run_verdict.judge(loaded, limit=5)
  assert record['n'] == 5  # However long they take: no deadline shrinks a verdict.
  assert len(seen) == 5 and record['sentences'] == 0.6


def test_a_verdict_of_summaries_that_are_no_sentences_says_so():
  verdict = {'n': 100, 'step': 224, 'model': _scores(0.01, 0.0, 0.01, 0.05), 'lead3': LEAD3,
             'sentences': 0.02}
  warning = undertrained.verdict_warning(verdict)
  assert 'only 2% of its summaries there are sentences' in warning
  assert 'read well' not in warning
  fluent = dict(verdict, model=_scores(0.25, 0.1, 0.2, 0.6), sentences=0.97)
  assert 'read well before they are right' in undertrained.verdict_warning(fluent)


@pytest.mark.parametrize('model,behind', [
    (_scores(0.265, 0.119, 0.231, 0.024), ['rouge1 0.265 against 0.293',
                                            'rouge2 0.119 against 0.130',
                                            '2% of the names and numbers']),
    (_scores(0.40, 0.20, 0.30, 0.70), ['70% of the names and numbers']),
    (_scores(0.40, 0.20, 0.30, None), ['0% of the names and numbers']),
    # Right names, too few of them: fewer of the reference's than Lead-3 finds.
    (_scores(0.40, 0.20, 0.30, 0.95, 0.25), ["it writes 25% of the reference's names and "
                                             'numbers, Lead-3 41%']),
])
def test_a_model_below_lead3_is_called_out(model, behind):
  warning = undertrained.verdict_warning({'n': 100, 'step': 1702, 'model': model,
                                          'lead3': LEAD3})
  assert 'does not yet beat Lead-3' in warning and 'step 1702' in warning
  assert all(part in warning for part in behind)
  assert 'rougeL' not in warning


def test_a_model_that_beats_lead3_or_has_no_verdict_is_not():
  assert undertrained.verdict_warning(
      {'n': 100, 'step': 9, 'model': _scores(0.5, 0.3, 0.4, 0.92, 0.41), 'lead3': LEAD3}) is None
  # A verdict from before Lead-3's recall was recorded is judged on the rest.
  older = {name: value for name, value in LEAD3.items() if name != 'entity_recall'}
  assert undertrained.verdict_warning(
      {'n': 100, 'step': 9, 'model': _scores(0.5, 0.3, 0.4, 0.92, None), 'lead3': older}) is None
  assert undertrained.verdict_warning(None) is None


@pytest.mark.slow
def test_every_summary_of_a_model_below_lead3_carries_the_warning(tmp_path, capsys):
  model_dir = write_model_dir(tmp_path / 'model')
  sample = 'Heavy rain battered Lakeford on Monday. Some 4,000 homes lost power.'
  status = summarize_main(['--model', model_dir, '--text', sample, '--max-length', '6'])
  assert status == 0 and 'Lead-3' not in capsys.readouterr().err  # No verdict: no claim.
  update_config(model_dir, **{VERDICT_KEY: {'n': 100, 'step': 7, 'lead3': LEAD3,
                                            'model': _scores(0.1, 0.05, 0.1, 0.3)}})
  for argv in (['--text', sample], ['--text', sample, '--num-beams', '2'],
               ['--text', sample, '--stream']):
    assert summarize_main(['--model', model_dir, '--max-length', '6', *argv]) == 0
    err = capsys.readouterr().err
    assert err.count('does not yet beat Lead-3') == 1, argv


def test_the_shipped_model_beats_lead3_by_its_own_verdict():
  verdict = model_directory.read_values().get(VERDICT_KEY)
  assert verdict is not None and verdict['n'] >= 100
  assert undertrained.verdict_warning(verdict) is None
