"""Training: the course's Loop, resume rules, Ctrl-C, kills, two devices."""

import json
import os
import signal

import pytest

from summarizer.inference import model_directory

from .conftest import start_training, wait_for_line
from conftest import MICRO, micro_args
from conftest import train_run

pytestmark = pytest.mark.slow  # Every test trains.


def test_train_writes_a_self_describing_run(tmp_path):
  out = tmp_path / 'run'
  summary = train_run(micro_args(out))
  assert summary['step'] == 4 and not summary['interrupted']
  assert summary['eval_loss'] is not None and summary['tokens_per_second'] > 0
  for name in ('config.json', 'vocab.subwords', 'model.pkl.gz',
               'model.weights.npy.gz', 'model.opt_slots0.npy.gz', 'loss.png',
               'train.log'):
    assert (out / name).exists(), name
  values = json.loads((out / 'config.json').read_text())
  assert values['preset'] == 'micro' and values['d_model'] == 32
  assert values['data'] == 'news' and values['vocab_file'] == 'vocab.subwords'
  assert 'step 4: train loss' in (out / 'train.log').read_text()
  saved = model_directory.read(str(out))
  assert saved.config == MICRO and saved.step == 4
  saved.model()  # Its weights fit the model it describes.
  resumed = train_run(micro_args(out, resume=True, max_steps=4,
                                      export_to=str(tmp_path / 'shipped')))
  assert resumed['exported_to'] == str(tmp_path / 'shipped')
  assert sorted(p.name for p in (tmp_path / 'shipped').iterdir()) == [
      '.summarizer-export.json', 'config.json', 'model.pkl.gz', 'model.weights.npy.gz',
      'vocab.subwords']
  exported = json.loads((tmp_path / 'shipped' / 'config.json').read_text())
  assert exported['trained_steps'] == 4 and exported['d_model'] == 32
  assert model_directory.read(str(tmp_path / 'shipped')).config == MICRO


@pytest.mark.parametrize('stop,status', [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_saves_and_exits_then_the_run_resumes(tmp_path, stop, status):
  # Ctrl-C, and the SIGTERM a job scheduler sends before it stops a job.
  out = tmp_path / 'run'
  process = start_training(out, '--max-steps', '100000', '--save-steps', '100000',
                           '--eval-steps', '100000')
  before = wait_for_line(process, 'config: ')  # Training is under way: the signal is heard.
  process.send_signal(stop)
  stdout, err = process.communicate(timeout=120)
  stdout = ''.join(before) + stdout
  assert process.returncode == status, err
  assert f'{stop.name}: stopping after this step' in err
  assert 'interrupted: checkpoint of step' in err and f'stopped_by={stop.name}' in stdout
  model_directory.read(str(out)).model()
  step = _saved_step(out)
  assert step > 0
  resumed = start_training(out, '--resume', '--max-steps', str(step + 2),
                           '--eval-steps', '1000')
  stdout, err = resumed.communicate(timeout=180)
  assert resumed.returncode == 0, err
  assert f'from step {step} to {step + 2}' in stdout


def _saved_step(out):
  return model_directory.saved_step(str(out))


def test_data_parallel_over_two_cpu_devices(tmp_path):
  env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=2')
  process = start_training(tmp_path / 'run', '--max-steps', '2',
                           '--eval-steps', '2', env=env)
  stdout, err = process.communicate(timeout=180)
  assert process.returncode == 0, err
  assert '2 device(s)' in stdout
  assert 'step 2: train loss' in stdout


def test_lineage_longest_article_and_calibration_are_recorded(tmp_path):
  source = tmp_path / 'source'
  train_run(micro_args(source, max_steps=2))
  values = json.loads((source / 'config.json').read_text())
  assert [run['steps'] for run in values['lineage']] == [2]
  assert values['lineage'][0]['init_from'] is None and values['total_steps'] == 2
  # The longest article read: the news articles that fit micro's 256 tokens
  # (longer ones are cut to fit, as the tiny preset does).
  assert 150 < values['max_article_tokens'] <= 256
  assert values['perplexity_calibration']['n'] == 3
  tuned = tmp_path / 'tuned'
  train_run(micro_args(tuned, max_steps=3, init_from=str(source),
                            long_fraction=1.0, export_to=str(tmp_path / 'shipped')))
  values = json.loads((tuned / 'config.json').read_text())
  assert [run['steps'] for run in values['lineage']] == [2, 3]
  assert values['lineage'][1]['init_from'] == str(source)
  assert values['lineage'][1]['long_fraction'] == 1.0 and values['total_steps'] == 5
  exported = json.loads((tmp_path / 'shipped' / 'config.json').read_text())
  # An exported model names its lineage, not a directory that may be itself.
  assert 'init_from' not in exported and exported['lineage'] == values['lineage']
  assert exported['perplexity_calibration'] == values['perplexity_calibration']
