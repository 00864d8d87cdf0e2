"""The runs' tests share the micro preset (tests/conftest.py) and a training run in a process of its own."""

import os
import subprocess
import sys
import textwrap
import time

import pytest


RUNNER = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, {tests!r})
    from conftest import MICRO
    from summarizer import config
    from summarizer import train as train_command
    from summarizer.runs import saving
    config.PRESETS['micro'] = MICRO
    pause = os.environ.get(PAUSE_MID_SAVE)
    if pause:  # The second save stops between its files and its mark of completion.
      whole = saving.save_atomically
      def save_atomically(write, directory):
        def write_then_pause(basename):
          write(basename)
          if os.path.exists(os.path.join(directory, 'model.pkl.gz')):
            open(pause, 'w').close()
            time.sleep(600)
        whole(write_then_pause, directory)
      saving.save_atomically = save_atomically
    sys.exit(train_command.main(sys.argv[1:]))
''').replace('PAUSE_MID_SAVE', repr('SUMMARIZER_TEST_PAUSE_MID_SAVE'))


@pytest.fixture(autouse=True)
def micro(micro_preset):
  """Every test of a run may train the MICRO preset."""
  del micro_preset


def start_training(out, *extra, env=None):
  code = RUNNER.format(tests=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  argv = [sys.executable, '-c', code, '--preset', 'micro', '--output-dir',
          str(out), '--eval-batches', '1', '--no-progress',
          '--calibration-articles', '3', '--verdict-stories', '3', *extra]
  return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env)


def wait_for(path, process, timeout=120):
  """Waits until ``path`` exists (the training process still running)."""
  deadline = time.time() + timeout
  while not os.path.exists(path):
    assert process.poll() is None, process.communicate()
    assert time.time() < deadline, 'timed out'
    time.sleep(0.05)


def wait_for_line(process, start, timeout=120):
  """Reads the process's standard output until a line starts with ``start``; returns the lines."""
  lines, deadline = [], time.time() + timeout
  while time.time() < deadline:
    line = process.stdout.readline()
    assert line, ('the process ended', process.communicate())
    lines.append(line)
    if line.startswith(start):
      return lines
  raise AssertionError(f'no line starting {start!r} in {timeout} s')
