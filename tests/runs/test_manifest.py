"""--overwrite-output-dir removes only what a run of ours recorded; --init-from is never the output."""

import json
import os

import pytest

from summarizer import config as config_module, train
from summarizer.runs import loop as run_loop
from summarizer.runs import manifest
from summarizer.errors import SummarizerError
from conftest import MICRO
from conftest import micro_args as run_args
from conftest import train_run


def micro_args(output_dir, **changes):
  """One step, saved."""
  return run_args(output_dir, **dict(dict(max_steps=1, eval_steps=1, save_steps=1,
                                          calibration_articles=0), **changes))


def users_files(directory):
  """The issue's repro: a user's files named like a run's, in a directory with no run."""
  (directory / 'train').mkdir(parents=True)
  (directory / 'train' / 'part1.jsonl').write_text('{"article": "mine"}\n')
  (directory / 'model.py').write_text('print("mine")\n')
  (directory / 'config.json').write_text('{"mine": true}\n')
  return {p: p.read_text() for p in directory.rglob('*') if p.is_file()}


def test_a_directory_with_no_run_is_refused_and_kept(tmp_path, capsys):
  before = users_files(tmp_path / 'p')
  status = train.main(['--output-dir', str(tmp_path / 'p'), '--overwrite-output-dir',
                       '--max-steps', '1', '--preset', 'micro', '--no-progress'])
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'holds no run of ours' in err
  assert {p: p.read_text() for p in (tmp_path / 'p').rglob('*') if p.is_file()} == before


@pytest.mark.slow
def test_only_the_earlier_runs_files_are_removed(tmp_path):
  out = tmp_path / 'run'
  train_run(micro_args(out))
  recorded = manifest.read(str(out))
  assert {'config.json', 'vocab.subwords', 'model.pkl.gz', 'model.weights.npy.gz',
          'model.opt_slots0.npy.gz', 'train.log', 'loss.png'} <= recorded
  assert any(f.startswith('train/events.out.tfevents') for f in recorded)
  # The user's files, added to the run's directory afterwards.
  (out / 'model.py').write_text('mine')
  (out / 'train' / 'notes.jsonl').write_text('mine')
  (out / 'notes.txt').write_text('mine')
  old_events = sorted(f for f in recorded if f.startswith('train/'))
  summary = train_run(micro_args(out, overwrite_output_dir=True))
  assert summary['step'] == 1
  for name in ('model.py', 'train/notes.jsonl', 'notes.txt'):
    assert (out / name).read_text() == 'mine', name
  for name in old_events:  # The earlier run's logs went; the new run wrote its own.
    assert not (out / name).exists()
  assert manifest.read(str(out)) >= {'config.json', 'model.pkl.gz'}
  assert 'model.py' not in manifest.read(str(out))


@pytest.mark.slow
def test_a_symlinked_train_folder_is_refused_not_followed(tmp_path, capsys):
  out = tmp_path / 'run'
  train_run(micro_args(out))
  elsewhere = tmp_path / 'elsewhere'
  os.rename(out / 'train', elsewhere)
  os.symlink(elsewhere, out / 'train')
  kept = sorted(os.listdir(elsewhere))
  status = train.main(['--output-dir', str(out), '--overwrite-output-dir', '--max-steps', '1',
                       '--preset', 'micro', '--no-progress', '--calibration-articles', '0', '--verdict-stories', '0'])
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'not the file the run wrote' in err
  assert sorted(os.listdir(elsewhere)) == kept and (out / 'model.pkl.gz').exists()


def test_a_manifest_naming_paths_outside_is_refused(tmp_path):
  (tmp_path / manifest.RUN_MANIFEST).write_text(json.dumps({'files': ['../victim']}))
  (tmp_path.parent / 'victim').write_text('mine')
  with pytest.raises(SummarizerError, match='outside its directory'):
    manifest.remove_run(str(tmp_path))
  assert (tmp_path.parent / 'victim').read_text() == 'mine'


@pytest.mark.parametrize('overwrite', [False, True])
def test_init_from_cannot_be_the_output_directory(tmp_path, random_model_dir, overwrite):
  before = {name: os.path.getsize(os.path.join(random_model_dir, name))
            for name in os.listdir(random_model_dir)}
  with pytest.raises(SummarizerError, match='also the --output-dir'):
    train_run(micro_args(random_model_dir + '/', init_from=random_model_dir,
                           overwrite_output_dir=overwrite))
  assert {name: os.path.getsize(os.path.join(random_model_dir, name))
          for name in os.listdir(random_model_dir)} == before


@pytest.mark.slow
def test_a_run_that_stopped_before_its_first_checkpoint_does_not_block_the_next(
    tmp_path, monkeypatch, capsys):
  out = tmp_path / 'run'

  def bad_data(*args, **kwargs):
    raise SummarizerError('bad data')

  monkeypatch.setattr(run_loop, 'tasks', bad_data)
  with pytest.raises(SummarizerError, match='bad data'):
    train_run(micro_args(out))
  assert (out / 'config.json').exists() or (out / 'vocab.subwords').exists()
  (out / 'notes.txt').write_text('mine')
  monkeypatch.undo()
  monkeypatch.setitem(config_module.PRESETS, 'micro', MICRO)
  with pytest.raises(SummarizerError, match=r'not empty \(notes.txt\)'):
    train_run(micro_args(out))  # The user's file still counts.
  assert (out / 'notes.txt').read_text() == 'mine'
  assert 'stopped before its first checkpoint' in capsys.readouterr().out
  os.remove(out / 'notes.txt')
  assert train_run(micro_args(out))['step'] == 1


def test_the_checkpoint_is_recorded_before_it_is_written(tmp_path):
  # Trax's Loop saves at its first step on its own; a run killed before it
  # next records must not leave a checkpoint that --overwrite-output-dir keeps
  # (and the next run would silently resume).
  from summarizer.runs.prepare import prepare
  from conftest import micro_args
  out = tmp_path / 'run'
  prepare(micro_args(out))
  assert not (out / 'model.pkl.gz').exists()
  assert set(manifest.CHECKPOINT_FILES) <= manifest.read(str(out))
  for name in manifest.CHECKPOINT_FILES:  # As a kill right after Loop's own save leaves them.
    (out / name).write_bytes(b'x')
  manifest.remove_run(str(out))
  assert not any((out / name).exists() for name in manifest.CHECKPOINT_FILES)


@pytest.mark.slow
def test_overwrite_on_a_new_or_empty_directory_starts_a_run(tmp_path):
  # Nothing there to overwrite: a careless --overwrite-output-dir is no reason to refuse.
  for out in (tmp_path / 'new', tmp_path / 'empty'):
    if out.name == 'empty':
      out.mkdir()
    assert train.main(['--output-dir', str(out), '--overwrite-output-dir', '--max-steps', '1',
                       '--preset', 'micro', '--no-progress', '--calibration-articles', '0',
                       '--verdict-stories', '0']) == 0
    assert manifest.read(str(out)) is not None
