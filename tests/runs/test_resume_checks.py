"""--resume reads the checkpoint whole first: a damaged one stops the run and is left as it was.

Also: a loss that turns NaN stops the run and keeps the last finite
checkpoint; a full disk during a save is one line and keeps the previous one.
"""

import gzip
import hashlib
import os
import pickle
import shutil
import subprocess

import numpy as np
import pytest

from summarizer import config as config_module, train
from summarizer.inference import model_directory
from summarizer.runs import prepare, saving
from summarizer.errors import SummarizerError
from summarizer import safe_pickle
from conftest import MICRO
from conftest import micro_args as run_args
from conftest import train_run


def micro_args(output_dir, **changes):
  """Two steps, a checkpoint at each."""
  return run_args(output_dir, **dict(dict(max_steps=2, save_steps=1, calibration_articles=0),
                                     **changes))


@pytest.fixture(scope='module')
def trained_run(tmp_path_factory):
  """A two-step micro run, copied by each test that damages it."""
  out = tmp_path_factory.mktemp('trained') / 'run'
  config_module.PRESETS['micro'] = MICRO
  try:
    train_run(micro_args(out))
  finally:
    del config_module.PRESETS['micro']
  return out


def fingerprints(directory):
  return {name: hashlib.sha256((directory / name).read_bytes()).hexdigest()
          for name in sorted(os.listdir(directory)) if (directory / name).is_file()}


def truncate(path):
  data = gzip.decompress(path.read_bytes())
  path.write_bytes(gzip.compress(data[:len(data) // 2 + 7]))  # Within an array.


def wrong_shapes(path):
  arrays = safe_pickle.load_arrays(str(path))
  arrays[-1] = np.zeros((3, 3), np.float32)
  with gzip.open(path, 'wb') as f:
    for array in arrays:
      np.save(f, array, allow_pickle=False)


DAMAGES = {
    'truncated weights': ('model.weights.npy.gz', truncate, 'cannot load the weights'),
    'missing weights': ('model.weights.npy.gz', os.remove, 'missing'),
    'weights of other shapes': ('model.weights.npy.gz', wrong_shapes, 'do not read whole'),
    'truncated optimizer state': ('model.opt_slots0.npy.gz', truncate, 'cannot load'),
    'no optimizer state (an export)': ('model.opt_slots0.npy.gz', os.remove,
                                       'no optimizer state to continue'),
    'truncated pickle': ('model.pkl.gz', lambda p: p.write_bytes(p.read_bytes()[:100]),
                         'cannot load'),
}


@pytest.mark.parametrize('damage', DAMAGES, ids=list(DAMAGES))
@pytest.mark.slow
def test_a_damaged_checkpoint_stops_resume_and_is_left_as_it_was(trained_run, tmp_path,
                                                                 capsys, damage):
  out = tmp_path / 'run'
  shutil.copytree(trained_run, out)
  name, spoil, message = DAMAGES[damage]
  spoil(out / name)
  before = fingerprints(out)
  status = train.main(['--output-dir', str(out), '--resume', '--max-steps', '4',
                       '--preset', 'micro', '--no-progress', '--calibration-articles', '0', '--verdict-stories', '0'])
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err, err
  after = fingerprints(out)
  after.pop(os.path.basename(saving.COMPLETE), None)
  assert {k: v for k, v in after.items() if not k.startswith('.summarizer')} == \
         {k: v for k, v in before.items() if not k.startswith('.summarizer')}


@pytest.mark.slow
def test_resume_past_max_steps_is_refused(trained_run, tmp_path):
  out = tmp_path / 'run'
  shutil.copytree(trained_run, out)
  with pytest.raises(SummarizerError, match='at step 2, past --max-steps 1'):
    train_run(micro_args(out, resume=True, max_steps=1))


class _Touch:
  def __init__(self, path):
    self.path = path

  def __reduce__(self):
    return (os.system, (f'touch {self.path}',))


@pytest.mark.slow
def test_a_hostile_data_counters_pickle_runs_nothing(trained_run, tmp_path):
  # Trax's Loop reads data_counters0.pkl from the directory it resumes.
  out = tmp_path / 'run'
  shutil.copytree(trained_run, out)
  marker = tmp_path / 'ran'
  (out / 'data_counters0.pkl').write_bytes(pickle.dumps({'x': _Touch(marker)}))
  with pytest.raises(SummarizerError, match=r'data_counters0\.pkl: refused: it names posix\.system'):
    train_run(micro_args(out, resume=True, max_steps=3))
  assert not marker.exists()


@pytest.mark.slow
def test_a_loss_that_turns_nan_stops_the_run_keeping_the_last_good_checkpoint(
    tmp_path, monkeypatch):
  counted = prepare._counted  # pylint: disable=protected-access

  def poisoned(stream, counter):
    for number, (inputs, targets, weights) in enumerate(counted(stream, counter)):
      # Trax reads one batch for the input signature: batch 3 is step 3's.
      if number >= 3:
        weights = np.full_like(weights, np.nan)
      yield inputs, targets, weights

  monkeypatch.setattr(prepare, '_counted', poisoned)
  out = tmp_path / 'run'
  with pytest.raises(SummarizerError, match='not a number at step 3.*last good checkpoint '
                     r'\(step 2\)'):
    train_run(micro_args(out, max_steps=4))
  assert model_directory.saved_step(str(out)) == 2
  weights = model_directory.read_weights(str(out / 'model.pkl.gz'))
  assert all(np.all(np.isfinite(w)) for w in weights)


@pytest.mark.slow
def test_a_loss_that_is_nan_at_the_first_step_does_not_blame_the_learning_rate(
    tmp_path, monkeypatch):
  counted = prepare._counted  # pylint: disable=protected-access

  def poisoned(stream, counter):
    for inputs, targets, weights in counted(stream, counter):
      yield inputs, targets, np.full_like(weights, np.nan)

  monkeypatch.setattr(prepare, '_counted', poisoned)
  with pytest.raises(SummarizerError) as raised:
    train_run(micro_args(tmp_path / 'run', max_steps=2))
  message = str(raised.value)
  assert message.startswith('the loss is not a number at step 1, the first, before any update')
  assert 'learning' not in message



def _small_tmpfs(path, size):
  path.mkdir()
  done = subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={size}', 'tmpfs', str(path)],
                        capture_output=True, check=False)
  if done.returncode:
    pytest.skip('cannot mount a small tmpfs here (needs root): ' + done.stderr.decode()[:80])
  return path


@pytest.mark.slow
def test_a_full_disk_during_a_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
  disk = _small_tmpfs(tmp_path / 'disk', '16m')
  try:
    out = disk / 'run'
    save = saving.save_or_explain
    saves = []

    def fill_after_first(write, directory):
      if saves:  # Fill the disk before the second save.
        with open(disk / 'filler', 'wb') as f:
          try:
            while True:
              f.write(b'\0' * (1 << 20))
              f.flush()
          except OSError:
            pass
      saves.append(directory)
      return save(write, directory)

    monkeypatch.setattr(saving, 'save_or_explain', fill_after_first)
    with pytest.raises(SummarizerError, match=r'saving the checkpoint failed: the disk is full; '
                       r'the previous checkpoint \(step 1\) is kept'):
      train_run(micro_args(out, max_steps=2))
    os.remove(disk / 'filler')
    assert model_directory.saved_step(str(out)) == 1
    model_directory.read(str(out)).model()  # Loadable.
  finally:
    subprocess.run(['umount', str(disk)], check=False)


def test_a_read_only_output_directory_is_one_line(tmp_path, capsys):
  disk = tmp_path / 'ro'
  disk.mkdir()
  done = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', str(disk)],
                        capture_output=True, check=False)
  if done.returncode:
    pytest.skip('cannot mount a read-only tmpfs here (needs root): ' + done.stderr.decode()[:80])
  try:
    status = train.main(['--output-dir', str(disk), '--preset', 'micro', '--no-progress',
                         '--max-steps', '1'])
    assert status == 2
    err = capsys.readouterr().err
    assert err == f'error: {disk}: cannot write in it (Read-only file system)\n'
  finally:
    subprocess.run(['umount', str(disk)], check=False)
