"""What a learner sees after a short run: labelled losses, and a warning on a one-token summary."""

import dataclasses
import json

import pytest

from summarizer import __main__
from summarizer import config as config_module
from summarizer.config import DEFAULT_MODEL_DIR
from summarizer.inference import api
from summarizer.inference import undertrained
from summarizer.runs import args as run_args
from summarizer.runs import loop as run_loop

from conftest import SMALL_CONFIG

SAMPLE = 'data/samples/sport.txt'


def test_a_summary_mostly_of_one_token_is_flagged():
  assert undertrained.repeated_token([20] * 64) == (20, 64)
  assert undertrained.repeated_token([5, 20] * 4) == (5, 4)      # Half: flagged.
  assert undertrained.repeated_token([5, 20, 20, 7, 8, 9, 10, 20, 11]) is None  # 3 of 9.
  assert undertrained.repeated_token([20] * 7) is None           # Too short to tell.
  assert undertrained.repeated_token([]) is None


def test_steps_come_from_the_lineage(tmp_path):
  with open(f'{DEFAULT_MODEL_DIR}/config.json', encoding='utf-8') as f:
    lineage = json.load(f)['lineage']
  assert undertrained.trained_steps() == sum(run['steps'] for run in lineage) == 49492
  assert undertrained.trained_steps(str(tmp_path)) is None  # Nothing recorded.


def test_the_shipped_model_is_not_flagged():
  with open(SAMPLE, encoding='utf-8') as f:
    assert api.summarize_details(f.read())['undertrained'] is None


def test_a_short_run_labels_its_losses_and_its_summary_is_flagged(tmp_path, monkeypatch, capsys):
  monkeypatch.setitem(config_module.PRESETS, 'micro', dataclasses.replace(
      SMALL_CONFIG, preset='micro', max_len=256, max_joint_length=256, truncate=True,
      boundaries=(256,), batch_sizes=(2, 1)))
  out = tmp_path / 'run'
  run_loop.train(run_args.TrainArgs(preset='micro', max_steps=10, eval_steps=10, save_steps=10,
                                    eval_batches=2, output_dir=str(out), progress=False,
                                    calibration_articles=0))
  lines = capsys.readouterr().out.splitlines()
  legend = ("losses: the bar's batch_loss is the last step's batch; each evaluation line's "
            "train loss is the mean over the last 50 steps' batches (or all, if fewer), its "
            "eval loss and accuracy the mean over 2 validation batches")
  assert lines[2] == legend and lines[3].startswith("after each, the model's summary of ")
  assert lines[4].startswith('step 10: train loss ')
  assert lines[5].startswith('  summary of validation story 1: ')
  assert legend in (out / 'train.log').read_text()

  # Ten steps in, this model ends its summary at once; made to write 64 tokens
  # (--min-length), it writes one token over and over. Each gets its warning.
  assert __main__.main([SAMPLE, '--model', str(out)]) == 0
  captured = capsys.readouterr()
  assert captured.out == '\n'
  assert [line for line in captured.err.splitlines() if 'undertrained' in line] == [
      'warning: the summary is empty: the model is likely undertrained (trained 10 steps; '
      'the shipped model: 49,492); train it longer (--resume with a higher --max-steps)']
  assert __main__.main([SAMPLE, '--model', str(out), '--min-length', '64']) == 0
  captured = capsys.readouterr()
  warnings = [line for line in captured.err.splitlines() if 'undertrained' in line]
  assert len(warnings) == 1
  assert warnings[0].startswith('warning: the summary is mostly one token repeated (')
  assert warnings[0].endswith(' of 64 tokens): the model is likely undertrained (trained 10 '
                              'steps; the shipped model: 49,492); train it longer (--resume '
                              'with a higher --max-steps)')
  with open(SAMPLE, encoding='utf-8') as f, pytest.warns(api.ArticleCutWarning):
    details = api.summarize_details(f.read(), str(out), min_length=64)
  assert details['undertrained'] == warnings[0][len('warning: '):]
