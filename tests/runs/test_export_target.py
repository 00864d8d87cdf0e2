"""--export-to: written whole beside, swapped into place; never over a user's files or through a link."""

import os
import shutil
import time

import pytest

from summarizer.runs import export, manifest
from summarizer.config import CALIBRATION_KEY, update_config
from summarizer.errors import SummarizerError

CALIBRATION = {'split': 'validation', 'n': 3, 'p50': 2.0, 'p90': 2.5, 'p99': 2.9,
               'max': 3.0, 'threshold': 6.0}


@pytest.fixture
def run_dir(random_model_dir, tmp_path):
  """A calibrated model directory standing for a run (the export skips calibrating)."""
  run = tmp_path / 'run'
  shutil.copytree(random_model_dir, run)
  update_config(str(run), **{CALIBRATION_KEY: CALIBRATION})
  return run


def contents(directory):
  return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def test_a_new_directory_then_an_earlier_export_are_written(run_dir, tmp_path):
  target = tmp_path / 'model'
  export.export(str(run_dir), str(target))
  assert sorted(os.listdir(target)) == sorted(export.EXPORT_FILES + (manifest.EXPORT_MANIFEST,))
  export.export(str(run_dir), str(target))  # Over the earlier export: fine.
  assert sorted(os.listdir(target)) == sorted(export.EXPORT_FILES + (manifest.EXPORT_MANIFEST,))
  assert not [n for n in os.listdir(tmp_path) if n.startswith('.model.export-')]


@pytest.mark.parametrize('users', [
    {'config.json': b'{"mine": 1}'},                    # the case
    {'notes.txt': b'mine'},
    {'config.json': b'{}', 'model.pkl.gz': b'x', 'model.py': b'mine'},
])
def test_a_directory_with_anything_but_an_export_is_refused(run_dir, tmp_path, users):
  target = tmp_path / 'model'
  target.mkdir()
  for name, data in users.items():
    (target / name).write_bytes(data)
  before = contents(target)
  with pytest.raises(SummarizerError, match='--export-to'):
    export.export(str(run_dir), str(target))
  assert contents(target) == before


def test_links_are_never_followed(run_dir, tmp_path):
  outside = tmp_path / 'outside.json'
  outside.write_text('mine')
  target = tmp_path / 'model'
  export.export(str(run_dir), str(target))
  os.remove(target / 'config.json')
  os.symlink(outside, target / 'config.json')   # a link inside to a file outside
  with pytest.raises(SummarizerError, match='not a plain file'):
    export.export(str(run_dir), str(target))
  assert outside.read_text() == 'mine'
  real = tmp_path / 'real'
  real.mkdir()
  os.symlink(real, tmp_path / 'linked')          # the directory itself a link
  with pytest.raises(SummarizerError, match='symbolic link'):
    export.export(str(run_dir), str(tmp_path / 'linked'))
  assert os.listdir(real) == []


def test_a_kill_during_the_copy_leaves_the_earlier_export_whole(run_dir, tmp_path, monkeypatch):
  target = tmp_path / 'model'
  export.export(str(run_dir), str(target))
  before = contents(target)
  copied = []
  copyfile = shutil.copyfile

  def copy_then_die(src, dst):
    if copied:
      raise KeyboardInterrupt  # Stands for a SIGKILL mid-copy: nothing after it runs.
    copied.append(dst)
    return copyfile(src, dst)

  monkeypatch.setattr(export.shutil, 'copyfile', copy_then_die)
  with pytest.raises(KeyboardInterrupt):
    export.export(str(run_dir), str(target))
  assert contents(target) == before
  assert copied and not copied[0].startswith(str(target) + os.sep)


@pytest.mark.parametrize('where', ['the output directory', 'inside it', 'around it'])
def test_an_export_into_the_output_directory_is_refused_before_training(tmp_path, capsys, where):
  from summarizer import train  # pylint: disable=g-import-not-at-top
  out = tmp_path / 'run'
  target = {'the output directory': out, 'inside it': out / 'model', 'around it': tmp_path}[where]
  started = time.monotonic()
  assert train.main(['--output-dir', str(out), '--export-to', str(target), '--preset', 'tiny',
                     '--max-steps', '1000']) == 2
  assert time.monotonic() - started < 30  # Refused at once, not after 1,000 steps.
  assert capsys.readouterr().err == (f'error: --export-to {target}: is the output directory '
                                     f'{out}, or inside or around it; export to another '
                                     'directory\n')
  assert not out.exists()
