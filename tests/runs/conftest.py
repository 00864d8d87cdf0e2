"""The runs' tests share a micro preset and a training run in a process of its own."""

import os
import subprocess
import sys
import textwrap
import time

import pytest


RUNNER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    from conftest import SMALL_CONFIG
    import dataclasses
    from summarizer import config
    from summarizer import train as train_command
    config.PRESETS['micro'] = dataclasses.replace(
        SMALL_CONFIG, preset='micro', max_len=256, max_joint_length=256,
        truncate=True, boundaries=(256,), batch_sizes=(2, 1))
    sys.exit(train_command.main(sys.argv[1:]))
''')


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
  deadline = time.time() + timeout
  while not os.path.exists(path):
    assert process.poll() is None, process.communicate()
    assert time.time() < deadline, 'timed out'
    time.sleep(0.05)
