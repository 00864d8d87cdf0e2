"""A directory in use by one process is refused to another; a dead holder's lock is taken over."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from summarizer import train as train_command
from summarizer.errors import SummarizerError
from summarizer.runs import locks

from .conftest import start_training, wait_for

# A second process that holds the lock of a directory until its standard input closes.
HOLDER = textwrap.dedent('''
    import sys
    from summarizer.runs import locks
    with locks.locked(sys.argv[1]):
      print('held', flush=True)
      sys.stdin.read()
''')


# Should the lock fail, a run that ends soon.
QUICK = ['--no-progress', '--max-steps', '1', '--eval-batches', '1', '--calibration-articles', '0', '--verdict-stories', '0']


def hold(directory):
  """Starts a process holding ``directory``'s lock; returns it once it holds it."""
  process = subprocess.Popen([sys.executable, '-c', HOLDER, str(directory)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
  assert process.stdout.readline() == 'held\n', process.communicate()
  return process


def release(process):
  process.stdin.close()
  assert process.wait(timeout=30) == 0


def test_a_held_directory_is_refused_naming_the_holder_then_free(tmp_path):
  holder = hold(tmp_path)
  try:
    with pytest.raises(SummarizerError) as refused:
      with locks.locked(str(tmp_path)):
        pass
    message = str(refused.value)
    assert '\n' not in message
    assert f'is in use by process {holder.pid} (python' in message
    assert str(tmp_path) in message and 'HOLDER' not in message
  finally:
    release(holder)
  assert not (tmp_path / locks.LOCK_NAME).exists()  # Released and removed.
  with locks.locked(str(tmp_path)):
    assert (tmp_path / locks.LOCK_NAME).read_text().startswith(f'process {os.getpid()} (')


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path, capsys):
  holder = hold(tmp_path)
  holder.send_signal(signal.SIGKILL)
  holder.wait(timeout=30)
  assert (tmp_path / locks.LOCK_NAME).exists()  # Left behind, but no longer held.
  with locks.locked(str(tmp_path)):
    pass
  err = capsys.readouterr().err
  assert err.count('\n') == 1
  assert f'was locked by process {holder.pid} (' in err and 'taking it over' in err


def planted_lock(folder, kind, target):
  """Puts at ``folder``'s lock path something no lock of ours is: a link, a FIFO, someone's file."""
  lock = folder / locks.LOCK_NAME
  if kind == 'a link':
    lock.symlink_to(target)
  elif kind == 'a hard link':
    os.link(target, lock)
  elif kind == 'a FIFO':
    os.mkfifo(lock)
  else:
    lock.write_text(target.read_text())


@pytest.mark.parametrize('kind', ['a link', 'a hard link', 'a FIFO', "someone's file"])
def test_a_lock_path_that_is_not_a_lock_is_refused_and_nothing_read_or_truncated(
    tmp_path, capsys, kind):
  target = tmp_path / 'thesis.md'
  target.write_text('my thesis\n')
  folder = tmp_path / 'videos'
  folder.mkdir()
  planted_lock(folder, kind, target)
  with pytest.raises(SummarizerError) as refused:
    with locks.locked(str(folder)):
      pass
  message = str(refused.value)
  assert '\n' not in message and message.startswith(f'{folder / locks.LOCK_NAME}: ')
  assert 'thesis' not in message and capsys.readouterr().err == ''  # Nothing of it shown.
  assert target.read_text() == 'my thesis\n'
  assert os.path.lexists(folder / locks.LOCK_NAME)  # Left as it was.
  # A training run there stops the same way, before anything else.
  assert train_command.main(['--output-dir', str(folder), *QUICK]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith(f'error: {folder / locks.LOCK_NAME}: ')
  assert target.read_text() == 'my thesis\n'
  assert sorted(os.listdir(folder)) == [locks.LOCK_NAME]


def test_directories_are_created_repeats_skipped_and_files_refused(tmp_path):
  new = tmp_path / 'a' / 'b'
  with locks.locked(str(new), None, str(new) + '/'):
    assert (new / locks.LOCK_NAME).exists()
  assert not (tmp_path / 'a').exists()  # Made for the lock and left empty: removed.
  with locks.locked(str(new)):
    (new / 'kept').write_text('x')
  assert (new / 'kept').exists()  # A folder something was written in stays.
  (tmp_path / 'empty').mkdir()
  with locks.locked(str(tmp_path / 'empty' / 'c')):
    pass
  assert os.listdir(tmp_path / 'empty') == []  # Only the folders the lock made go.
  (tmp_path / 'file').write_text('x')
  with pytest.raises(SummarizerError, match='exists and is not a directory'):
    with locks.locked(str(tmp_path / 'file')):
      pass


@pytest.mark.parametrize('flags', [[], ['--resume'], ['--overwrite-output-dir']])
def test_training_stops_at_once_in_a_directory_in_use(tmp_path, capsys, flags):
  out = tmp_path / 'run'
  (out).mkdir()
  (out / 'mine.txt').write_text('mine')
  holder = hold(out)
  try:
    status = train_command.main(['--output-dir', str(out), *QUICK, *flags])
  finally:
    release(holder)
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and f'in use by process {holder.pid}' in err
  assert sorted(os.listdir(out)) == ['mine.txt']  # Nothing written, nothing deleted.


def test_training_stops_at_once_when_its_export_directory_is_in_use(tmp_path, capsys):
  model = tmp_path / 'model'
  holder = hold(model)
  try:
    status = train_command.main(['--output-dir', str(tmp_path / 'run'), *QUICK,
                                 '--export-to', str(model)])
  finally:
    release(holder)
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and f'{model} is in use by process {holder.pid}' in err
  assert not (tmp_path / 'run' / 'config.json').exists()


@pytest.mark.slow
def test_two_training_processes(tmp_path):
  out = tmp_path / 'run'
  first = start_training(out, '--max-steps', '100000', '--save-steps', '100000',
                         '--eval-steps', '100000')
  try:
    wait_for(out / 'train.log', first)
    second = start_training(out, '--resume')
    _, err = second.communicate(timeout=120)
    assert second.returncode == 2, err
    assert err.count('\n') == 1
    assert f'error: {out} is in use by process {first.pid} (python -c ' in err
    assert first.poll() is None  # The first run goes on.
  finally:
    first.kill()
    first.communicate()
  third = start_training(out, '--overwrite-output-dir', '--max-steps', '1')
  stdout, err = third.communicate(timeout=180)
  assert third.returncode == 0, err
  assert f'was locked by process {first.pid}' in err and 'from step 0 to 1' in stdout
  assert not (out / locks.LOCK_NAME).exists()


def test_a_lock_file_a_full_disk_cannot_hold_is_removed_and_said(tmp_path, monkeypatch):
  folder = tmp_path / 'results'
  folder.mkdir()
  (folder / 'eval_results.json').write_text('{"earlier": 1}\n')
  real_write = os.write

  def full_disk(fd, data):
    if os.path.basename(os.readlink(f'/proc/self/fd/{fd}')) == locks.LOCK_NAME:
      raise OSError(28, 'No space left on device')
    return real_write(fd, data)

  monkeypatch.setattr(os, 'write', full_disk)
  with pytest.raises(SummarizerError) as raised:
    with locks.locked(str(folder)):
      pytest.fail('the lock was not written, so it is not held')
  assert str(raised.value) == (f'{folder}: cannot write its lock file {locks.LOCK_NAME} (No '
                               'space left on device); nothing in it was changed')
  assert sorted(p.name for p in folder.iterdir()) == ['eval_results.json']
  assert (folder / 'eval_results.json').read_text() == '{"earlier": 1}\n'
