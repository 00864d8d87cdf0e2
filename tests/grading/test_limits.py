"""The sandbox's limits limit: its /tmp, its memory and its processes together, its seconds.

The fast tests run a small script in the sandbox (bubblewrap's command line
of ``sandbox.py``, the worker replaced) under the watch; the last one grades
two functions of a submission whose cell sleeps forever.
"""

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

import learner_variants
from summarizer.grading import cpu_clock, grader, limits, sandbox
from summarizer.contract.recording import GRADED

from . import SEED

needs_bwrap = pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')
pytestmark = needs_bwrap


def in_sandbox(script, tmp_path):
  """The sandbox's command line with a script of ours in the worker's place."""
  job_dir = tmp_path / 'job'
  job_dir.mkdir()
  command = sandbox.bwrap_command(str(job_dir), [])
  command = command[:command.index('/grader/worker.py', command.index('-I'))]
  return command + ['-c', textwrap.dedent(script)]


def watched_run(script, tmp_path, seconds=60, plain=False, **bounds):
  """Runs a script in the sandbox (or a plain process) watched; returns (stdout, stops, seconds)."""
  command = ([sys.executable, '-c', textwrap.dedent(script)] if plain
             else in_sandbox(script, tmp_path))
  process = subprocess.Popen(command, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
  started = time.monotonic()
  out, _, stops = sandbox._pump(process, b'', limits.Watch(process.pid, seconds, **bounds))  # pylint: disable=protected-access
  return out.decode(), [stop for _, stop in stops], time.monotonic() - started


# The first process forks children that each hold some memory, waits for
# them, and says how each ended (it is kept: only the running function's
# processes are killed).
MANY = '''
    import os, signal, time
    children = []
    for _ in range({count}):
      pid = os.fork()
      if pid == 0:
        held = bytearray({mb} << 20)
        held[::4096] = b'x' * len(held[::4096])
        time.sleep(120)
        os._exit(0)
      children.append(pid)
    ends = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    print('ends', sorted(set(ends)))
    '''


def test_tmp_and_dev_shm_are_bounded_and_dev_is_read_only(tmp_path):
  script = f'''
      import os
      for folder in ('/tmp', '/dev/shm'):
        try:
          with open(folder + '/big', 'wb') as f:
            for _ in range({limits.TMP_MB // 8 + 2}):
              f.write(bytes(8 << 20))
        except OSError as error:
          print(folder, error.strerror, os.path.getsize(folder + '/big') >> 20)
        os.remove(folder + '/big')
      try:
        open('/dev/mine', 'w')
      except OSError as error:
        print('/dev', error.strerror)
      '''
  done = subprocess.run(in_sandbox(script, tmp_path), capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.returncode == 0, done.stderr
  lines = done.stdout.splitlines()
  assert lines[:2] == [f'/tmp No space left on device {limits.TMP_MB}',
                       f'/dev/shm No space left on device {limits.TMP_MB}']
  assert lines[2] == '/dev Read-only file system'


def test_memory_of_the_processes_together_stops_the_running_function(tmp_path):
  # Three processes of 300 MB: each under any one-process bound, over 600 MB together.
  out, stops, seconds = watched_run(MANY.format(count=3, mb=300), tmp_path, memory_mb=600)
  assert [stop.everything for stop in stops] == [False]
  assert 'MB of memory, over the sandbox\'s 600 MB (all its processes together)' in stops[0].reason
  assert out.split('\n')[0] == 'ends [-9]'  # The first process went on; its children did not.
  assert seconds < 60


def test_the_process_mode_is_watched_too_and_sweeps_nothing_of_the_machines(tmp_path, monkeypatch):
  out, stops, _ = watched_run(MANY.format(count=3, mb=300), tmp_path, plain=True, memory_mb=600)
  assert len(stops) == 1 and not stops[0].everything and out.split('\n')[0] == 'ends [-9]'
  # Outside bubblewrap /proc lists the machine's processes: the worker's sweep kills none.
  sys.path.insert(0, sandbox.HERE)
  import worker  # pylint: disable=import-error,import-outside-toplevel
  killed = []
  monkeypatch.setattr(os, 'kill', lambda pid, sig: killed.append(pid))
  worker.sweep()
  assert not killed


def test_too_many_processes_are_stopped(tmp_path):
  out, stops, seconds = watched_run(MANY.format(count=limits.SANDBOX_PROCESSES + 8, mb=1),
                                    tmp_path)
  assert stops and stops[0].reason.startswith('stopped at ')
  assert f"over the sandbox's {limits.SANDBOX_PROCESSES}" in stops[0].reason
  assert out.strip() == 'ends [-9]'
  assert seconds < 60


# Every process forks, seven times over (128 in all), then sleeps; the first one
# (the sandbox's init) waits for all of them, orphans included.
BURST = '''
    import os, time
    for _ in range(7):
      os.fork()
    if os.getpid() != 1:
      time.sleep(120)
      os._exit(0)
    ends = set()
    while True:
      try:
        ends.add(os.waitstatus_to_exitcode(os.wait()[1]))
      except ChildProcessError:
        break
    print('ends', sorted(ends))
    '''


def test_a_burst_of_forks_is_stopped(tmp_path):
  out, stops, seconds = watched_run(BURST, tmp_path)
  assert stops and all('processes, over the sandbox' in stop.reason for stop in stops)
  assert out in ('ends [-9]\n', '') and seconds < 60  # The first process kept, or all stopped.


def test_the_sandbox_is_stopped_at_its_seconds(tmp_path):
  out, stops, seconds = watched_run('import time\nwhile True: time.sleep(1)', tmp_path, 3)
  assert [(stop.reason, stop.everything) for stop in stops] == [
      ("stopped after 3 s (wall clock, the machine's load aside), the submission's limit", True)]
  assert out == '' and seconds < 10


def test_a_stop_is_put_on_the_item_it_stopped_and_the_items_never_run():
  first = b'{"id": "a", "status": {"exit": 0}, "size": 0}'
  frames = sandbox._frame(first)  # pylint: disable=protected-access
  assert sandbox.complete_frames(frames) == 1
  assert sandbox.complete_frames(frames + frames[:5]) == 1
  items = sandbox.read_frames(frames)
  sandbox._mark_stops(items, ['a', 'b', 'c'], [(1, limits.Stop('over', True))])  # pylint: disable=protected-access
  assert {k: v['status'].get('stopped') for k, v in items.items()} == {
      'a': None, 'b': 'over', 'c': 'not run: over'}


SLEEPS = '''
import time
while True:
  time.sleep(1)

def DotProductAttention(query, key, value, mask):
  return None
'''


@pytest.mark.slow
def test_a_sleeping_cell_costs_its_own_function_within_its_limit(monkeypatch):
  monkeypatch.setattr(limits, 'FUNCTION_SECONDS', 20)
  notebook = learner_variants.notebook_with(
      dict(learner_variants.COURSE_ANSWERS, DotProductAttention=SLEEPS))
  started = time.monotonic()
  report = grader.grade(notebook, seed=SEED, functions=('DotProductAttention',
                                                      'compute_attention_heads_closure'),
                        whole=False)
  took = time.monotonic() - started
  dpa, heads = report.verdicts
  assert dpa.points == 0 and heads.points == heads.max_points, (dpa, heads)
  assert len(dpa.lines) == 1 and dpa.lines[0].startswith('stopped after 20 s')
  assert "(wall clock, the machine's load aside), its limit: a sleep" in dpa.lines[0]
  assert took < 20 + 2 * limits.OTHER_CELLS_SECONDS + 120, took


HOGS = '''
def DotProductAttention(query, key, value, mask):
  import os, time
  for _ in range(3):
    if os.fork() == 0:
      held = bytearray(400 << 20)
      held[::4096] = b'x' * len(held[::4096])
      time.sleep(600)
  os.wait()
'''


@pytest.mark.slow
def test_processes_holding_too_much_together_cost_their_function_only(monkeypatch):
  # Three processes of 400 MB, each far under one process's bound (PROCESS_MEMORY_MB).
  monkeypatch.setattr(limits, 'SANDBOX_MEMORY_MB', 1536)
  notebook = learner_variants.notebook_with(
      dict(learner_variants.COURSE_ANSWERS, DotProductAttention=HOGS))
  report = grader.grade(notebook, seed=SEED, functions=('DotProductAttention',
                                                      'compute_attention_heads_closure'),
                        whole=False)
  dpa, heads = report.verdicts
  assert dpa.points == 0 and heads.points == heads.max_points, (dpa, heads)
  assert len(dpa.lines) == 1 and dpa.lines[0].startswith('stopped at '), dpa.lines
  assert dpa.lines[0].endswith("MB of memory, over the sandbox's 1536 MB (all its processes "
                               'together)')


def test_a_looping_function_parts_4_and_5_use_fits_in_the_submissions_seconds():
  rest = 60  # The other runs of the course's answers, and the sandbox's start (95 s in all here).
  # A loop in a function of the whole model costs its run and both parts'.
  in_the_body = limits.FUNCTION_SECONDS + sum(limits.WHOLE_SECONDS.values())
  # A loop at the top of a cell costs its function's run and a few seconds of every other.
  at_the_top = limits.FUNCTION_SECONDS + limits.OTHER_CELLS_SECONDS * (len(GRADED) + 1)
  assert max(in_the_body, at_the_top) + rest < limits.SUBMISSION_SECONDS <= 240 - 20


def test_a_stop_is_the_functions_one_line_and_no_note_run_follows_it():
  stopped = {'status': {'exit': -9, 'stopped': 'stopped at 9 processes, over the sandbox\'s 8'},
             'results': None}
  said = cpu_clock.stopped_after(30, 'cpu') + ', its limit' + cpu_clock.HINTS['cpu']
  timed_out = {'status': {'exit': -9, 'timed out': True, 'passed': 'cpu', 'limit': 30,
                          'seconds': 31.5, 'stopped': said}, 'results': None}
  assert grader.failure_lines('DecoderBlock', stopped, []) == [stopped['status']['stopped']]
  assert grader.failure_lines('DecoderBlock', timed_out, []) == [
      'stopped after 30 s of CPU time, its limit: a loop that never ends?']
  own = {name: grader.Verdict('test_' + name, name, 0, 1, ['wrong'] if name == 'TransformerLM'
                              else [], []) for name in GRADED}
  assert [item['probe'] for item in grader.with_yours_items(own)] == ['training_loop']
  assert grader.with_yours_items(own, stopped=['TransformerLM']) == []
  assert grader.was_stopped(stopped) and grader.was_stopped(timed_out)
