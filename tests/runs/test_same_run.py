"""A token budget's run is the same run on a slow clock and on one core or two: every decision
in it (evaluations, previews, the plan, the lessons' end, checkpoints, the last step) is taken
on its steps and tokens, and its arithmetic does not follow the cores."""

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from unittest import mock

import numpy as np
import pytest

from summarizer import train as train_command
from summarizer.runs import hooked_loop
from summarizer.runs import plan
from summarizer.runs import preview
from summarizer.runs import report

# A micro run of repeat lessons (ended on their loss) and stories, planned at its
# step 23 (PLAN_STEPS past the 3 that compile), evaluated at each tenth of its tokens, saved
# every 10 steps: about 50 steps.
FLAGS = ('--preset', 'micro', '--max-tokens', '18000', '--seed', '3', '--repeat-steps', '400',
         '--repeat-until-loss', '6.5', '--save-steps', '10', '--eval-batches', '1',
         '--verdict-stories', '0', '--calibration-articles', '0', '--no-progress',
         '--optimizer', 'muon')  # Its orthogonalised steps on one thread too.
PLAN_STEPS = 20
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _wrapped(owner, name, record):
  """Patches ``owner.name`` to call ``record(self, result, *args)`` after the original."""
  original = getattr(owner, name)

  def wrapper(self, *args, **kwargs):
    result = original(self, *args, **kwargs)
    record(self, result, *args)
    return result

  return mock.patch.object(owner, name, wrapper)


def _sped_up(speed):
  """The clocks of module ``time``, each running ``speed`` times as fast from now."""
  patches = []
  for name in ('monotonic', 'time', 'perf_counter'):
    clock = getattr(time, name)
    start = clock()
    patches.append(mock.patch.object(
        time, name, lambda clock=clock, start=start: start + (clock() - start) * speed))
  return patches


def _unclocked(line):
  """A note with what the clock measured (speed, durations) masked."""
  line = re.sub(r'this machine: [\d,]+ tokens/s', 'this machine: S tokens/s', line)
  return re.sub(r'\((\d+ min )?\d+ s\)', '(T)', line)


def recorded(output_dir, clock_speed=1.0):
  """Runs the train command with ``FLAGS``; returns each step's loss and what it decided when."""
  seen = {'losses': [], 'evaluations': [], 'saves': [], 'notes': [], 'previews': []}
  losses = seen['losses']
  patches = [
      _wrapped(report.Report, 'step', lambda self, _, step, loss: losses.append(
          [step, float(np.mean(loss))])),
      _wrapped(report.Report, 'note', lambda self, _, line, log: seen['notes'].append(
          [losses[-1][0], _unclocked(line)])),
      _wrapped(hooked_loop.HookedLoop, 'run_evals',
               lambda self, *_: seen['evaluations'].append(self.step)),
      _wrapped(hooked_loop.HookedLoop, 'save_checkpoint',
               lambda self, _, basename: seen['saves'].append([basename, self.step])),
      _wrapped(preview.Preview, 'summary',
               lambda self, text, _: seen['previews'].append([losses[-1][0], text])),
      mock.patch.object(plan, 'TOKEN_PLAN_STEPS', PLAN_STEPS),
      *_sped_up(clock_speed)]
  with contextlib.ExitStack() as stack:
    for patch in patches:
      stack.enter_context(patch)
    seen['status'] = train_command.main([*FLAGS, '--output-dir', str(output_dir)])
  return seen


def _same_run(first, second):
  """Asserts two records the same, step for step; the first differing step named."""
  for (step, loss), (other_step, other_loss) in zip(first['losses'], second['losses']):
    assert (step, loss) == (other_step, other_loss), f'the losses part at step {step}'
  assert first == second


def _a_whole_run(seen):
  """Asserts the record is of a run that made each decision the comparison compares."""
  steps = [step for step, _ in seen['losses']]
  assert seen['status'] == 0 and steps == list(range(1, len(steps) + 1))
  notes = dict((line.split(':')[0], step) for step, line in seen['notes'])
  assert notes['plan'] == 3 + PLAN_STEPS  # Planned on the steps, not on seconds.
  assert any(line.endswith('the model copies; on to the stories') for _, line in seen['notes'])
  assert len(seen['evaluations']) == 10 and seen['evaluations'][-1] == steps[-1]
  assert len(seen['previews']) == 10
  assert [basename for basename, _ in seen['saves']].count('model') >= 4


@pytest.mark.slow
def test_a_token_budgets_run_is_the_same_on_a_clock_ten_times_as_fast(tmp_path):
  # The evaluations came once a minute: on a slower machine, at other steps, and each draws
  # from the loop's random numbers. With the clock ten times as fast, every second is ten.
  normal = recorded(tmp_path / 'normal')
  _a_whole_run(normal)
  _same_run(normal, recorded(tmp_path / 'slowed', clock_speed=10.0))


RUNNER = '''
import json, os, sys
sys.path.insert(0, {tests!r})
cores = json.loads(sys.argv[2])
if cores:
  os.sched_setaffinity(0, cores)
from conftest import MICRO
from summarizer import config
config.PRESETS['micro'] = MICRO
from runs.test_same_run import recorded
with open(sys.argv[3], 'w') as f:
  json.dump(recorded(sys.argv[1]), f)
'''


def _recorded_on(cores, output_dir):
  """``recorded`` in a process of its own that may use only ``cores`` (None: all it is given)."""
  out = output_dir.with_suffix('.json')
  env = {name: value for name, value in os.environ.items() if name not in ('PJRT_NPROC', 'NPROC')}
  done = subprocess.run([sys.executable, '-c', RUNNER.format(tests=TESTS), str(output_dir),
                         json.dumps(cores), str(out)], cwd=os.path.dirname(TESTS), env=env,
                        capture_output=True, text=True, timeout=600, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, 'sched_setaffinity') or len(os.sched_getaffinity(0)) < 2,
                    reason='needs two cores and a way to give a process one of them')
def test_a_token_budgets_run_is_the_same_on_one_core_and_on_two(tmp_path):
  # XLA splits a step's sums among a thread a core: on one core and two, one seed's losses
  # parted at step 5. A run budgeted by tokens computes on one thread wherever it runs.
  two = sorted(os.sched_getaffinity(0))[:2]
  on_one = _recorded_on(two[:1], tmp_path / 'one')
  _a_whole_run(on_one)
  _same_run(on_one, _recorded_on(two, tmp_path / 'two'))
