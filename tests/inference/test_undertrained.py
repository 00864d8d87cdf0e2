"""What a learner sees after a short run: labelled losses, and a warning on a one-token summary."""

import json

import pytest

from summarizer import __main__
from summarizer.config import DEFAULT_MODEL_DIR
from summarizer.inference import api
from summarizer.inference import model_directory
from summarizer.inference import undertrained

from conftest import micro_args
from conftest import train_run

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
  assert model_directory.shipped_steps() == sum(run['steps'] for run in lineage) > 0
  assert model_directory.trained_steps(model_directory.read_values(str(tmp_path))) is None


@pytest.mark.slow
def test_the_shipped_model_is_not_flagged():
  with open(SAMPLE, encoding='utf-8') as f:
    assert api.summarize_details(f.read())['undertrained'] is None


@pytest.mark.slow
def test_a_short_run_labels_its_losses_and_its_summary_is_flagged(tmp_path, micro_preset,
                                                                  capsys):
  del micro_preset
  out = tmp_path / 'run'
  train_run(micro_args(out, max_steps=10, eval_steps=10, save_steps=10, eval_batches=2,
                            calibration_articles=0))
  lines = capsys.readouterr().out.splitlines()
  legend = ("losses: the bar's batch_loss is the last step's batch; each evaluation line's "
            "train loss is the mean over the last 50 steps' batches (or all, if fewer), its "
            "eval loss and accuracy the mean over 2 validation batches")
  assert lines[2] == legend and lines[3].startswith("after each, the model's summary of ")
  assert lines[4].startswith('step 10: train loss ')
  assert lines[5].startswith('  summary of validation story 1: ')
  assert legend in (out / 'train.log').read_text()

  # Ten steps in, this model ends its summary at once when searched greedily; made
  # to write 64 tokens (--min-length), it writes one token over and over. Each
  # gets its warning.
  shipped = f'{model_directory.shipped_steps():,}'
  assert __main__.main([SAMPLE, '--model', str(out), '--num-beams', '1']) == 0
  captured = capsys.readouterr()
  assert captured.out == '\n'
  assert [line for line in captured.err.splitlines() if 'undertrained' in line] == [
      'warning: the summary is empty: the model is likely undertrained (trained 10 steps; '
      f'the shipped model: {shipped}); train it longer (--resume with a higher --max-steps)']
  assert __main__.main([SAMPLE, '--model', str(out), '--num-beams', '1', '--min-length', '64']) == 0
  captured = capsys.readouterr()
  warnings = [line for line in captured.err.splitlines() if 'undertrained' in line]
  assert len(warnings) == 1
  assert warnings[0].startswith('warning: the summary is mostly one token repeated (')
  assert warnings[0].endswith(' of 64 tokens): the model is likely undertrained (trained 10 '
                              f'steps; the shipped model: {shipped}); train it longer (--resume '
                              'with a higher --max-steps)')
  with open(SAMPLE, encoding='utf-8') as f, pytest.warns(api.ArticleCutWarning):
    details = api.summarize_details(f.read(), str(out), num_beams=1, min_length=64)
  assert details['undertrained'] == warnings[0][len('warning: '):]


def test_a_summary_of_a_few_tokens_repeated_or_of_no_sentence_is_flagged():
  two, comma = 17, 4
  # '2, 2, 2, ...': two tokens again and again, neither more than half alone.
  assert undertrained.repeated_token([two, comma] * 6 + [9, 10, 11]) is None
  assert undertrained.repeated_run([two, comma] * 6 + [9, 10, 11]) == (two, comma)
  assert undertrained.repeated_run([1, 2, 3] * 4) == (1, 2, 3)
  assert undertrained.repeated_run(list(range(20))) is None        # A real summary.
  assert undertrained.repeated_run([1, 2, 1, 2]) is None           # Too short to tell.
  assert undertrained.not_a_sentence('Rasis.') and undertrained.not_a_sentence(' , . ')
  assert not undertrained.not_a_sentence('Heavy rain.')
  assert not undertrained.not_a_sentence('Rasis')  # Cut short by a length limit: not judged.

  def detokenize(ids):
    return ''.join({two: '2', comma: ', '}.get(i, 'x') for i in ids)

  assert undertrained.unreadable([], '', detokenize) == 'the summary is empty'
  assert undertrained.unreadable([two, comma] * 6 + [9, 10, 11], '2, ' * 6, detokenize) == (
      "the summary is mostly a few tokens repeated ('2, ' again and again)")
  assert undertrained.unreadable([5, 6], 'Rasis.', detokenize) == (
      "the summary is not a sentence ('Rasis.')")
  assert undertrained.unreadable(list(range(12)), 'Striker Kaev scored 3 goals.',
                                 detokenize) is None


def test_an_empty_summary_under_a_negative_length_penalty_names_the_flag_not_training():
  from summarizer.inference import beam  # pylint: disable=g-import-not-at-top
  from summarizer.inference import loaded_model  # pylint: disable=g-import-not-at-top
  loaded = loaded_model.load(DEFAULT_MODEL_DIR)
  warning = undertrained.undertrained_warning([], loaded, beam.Search(4, -1000000.0, 3))
  assert warning.startswith('the summary is empty with a length penalty of -1000000 '
                            '(--length-penalty')
  assert 'undertrained' not in warning
  # Greedy search has no length penalty: an empty summary is the model's.
  assert 'undertrained' in undertrained.undertrained_warning([], loaded, beam.Search(1, -1.0))
