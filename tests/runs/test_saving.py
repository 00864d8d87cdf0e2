"""Checkpoints that survive a kill."""

import os

import pytest

from summarizer.errors import SummarizerError
from summarizer.inference import model_directory
from summarizer.runs import saving

from .conftest import start_training, wait_for
from conftest import micro_args
from conftest import train_run


@pytest.mark.slow
def test_interrupted_save_is_finished_or_discarded(tmp_path):
  out = tmp_path / 'run'
  train_run(micro_args(out, max_steps=2))
  before = [(out / f).read_bytes() for f in ('model.pkl.gz', 'model.weights.npy.gz')]

  def dies_while_writing(basename):
    (out / f'{basename}.weights.npy.gz').write_bytes(b'half a file')
    raise KeyboardInterrupt

  with pytest.raises(KeyboardInterrupt):
    saving.save_atomically(dies_while_writing, str(out))
  saving.recover(str(out))
  after = [(out / f).read_bytes() for f in ('model.pkl.gz', 'model.weights.npy.gz')]
  assert after == before and not list(out.glob('model.staged*'))
  # A save marked complete but only half renamed is finished on recovery.
  for name in ('pkl.gz', 'weights.npy.gz', 'opt_slots0.npy.gz'):
    (out / f'model.staged.{name}').write_bytes((out / f'model.{name}').read_bytes())
  (out / 'model.staged.done').write_text('complete\n')
  os.replace(out / 'model.staged.opt_slots0.npy.gz', out / 'model.opt_slots0.npy.gz')
  saving.recover(str(out))
  assert not list(out.glob('model.staged*'))
  model_directory.read(str(out)).model()


@pytest.mark.slow
def test_killed_in_the_middle_of_a_save_still_resumes(tmp_path):
  out, paused = tmp_path / 'run', tmp_path / 'paused'
  process = start_training(out, '--max-steps', '100000', '--save-steps', '1',
                           '--eval-steps', '100000',
                           env=dict(os.environ, SUMMARIZER_TEST_PAUSE_MID_SAVE=str(paused)))
  wait_for(paused, process)  # The second save's files are written, not yet marked whole.
  assert list(out.glob('model.staged*')) and not (out / 'model.staged.done').exists()
  process.kill()
  process.communicate()
  # Whichever step was kept, the resumed run trains on for a few seconds and ends.
  resumed = start_training(out, '--resume', '--max-minutes', '0.25',
                           '--eval-steps', '1000')
  stdout, err = resumed.communicate(timeout=180)
  assert resumed.returncode == 0, err
  assert not list(out.glob('model.staged*'))
  model_directory.read(str(out)).model()


def test_recovery_touches_only_a_runs_own_files(tmp_path):
  out = tmp_path / 'run'
  out.mkdir()
  (out / 'notes.md._tmp_').write_text('mine')       # Not a name a run writes.
  (out / 'model.weights.npy.gz._tmp_').write_bytes(b'half')   # Trax's, cut short.
  (out / 'model.staged.pkl.gz').write_bytes(b'half')         # A save not marked whole.
  saving.recover(str(out))
  assert sorted(p.name for p in out.iterdir()) == ['notes.md._tmp_']


@pytest.mark.parametrize('dangling', [False, True], ids=['a link', 'a dangling link'])
@pytest.mark.parametrize('name', ['model.staged.pkl.gz', 'model.staged.done', 'model.pkl.gz',
                                  'model.weights.npy.gz._tmp_'])
def test_recovery_through_a_link_is_refused_and_nothing_is_touched(tmp_path, name, dangling):
  thesis = tmp_path / 'thesis.md'
  thesis.write_text('my thesis\n')
  out = tmp_path / 'run'
  out.mkdir()
  for staged in ('model.staged.pkl.gz', 'model.staged.done', 'model.pkl.gz'):
    (out / staged).write_bytes(b'a run\'s')
  (out / name).unlink(missing_ok=True)
  (out / name).symlink_to(tmp_path / 'gone' if dangling else thesis)
  before = {p.name: os.readlink(p) if p.is_symlink() else p.read_bytes() for p in out.iterdir()}
  with pytest.raises(SummarizerError, match=f'{out / name}: is a link or not a regular file'):
    saving.recover(str(out))
  assert {p.name: os.readlink(p) if p.is_symlink() else p.read_bytes()
          for p in out.iterdir()} == before
  assert thesis.read_text() == 'my thesis\n'
