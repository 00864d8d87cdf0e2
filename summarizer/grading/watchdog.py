"""The sandbox seen from outside: its processes, their memory together, its seconds.

``Watch(pid)`` follows the processes started by ``pid`` (bubblewrap, or the
worker in ``--sandbox process`` mode) through ``/proc``, not through anything
the learner's code can reach. ``look()`` counts them and adds up their
proportional set sizes (a page shared by the forked runs counts once), and
says which limit of ``limits.py`` is passed, if any:

- more memory or more processes than the sandbox may hold: the running
  function's processes are killed (the worker, the sandbox's first process,
  is kept and goes on with the next function), or every process when the
  worker alone is over or the same run is stopped a third time;
- the submission's seconds spent: every process is killed. Its seconds are
  CPU seconds of all its processes together, and seconds of the wall clock
  charged to it (``cpu_clock.RunClock``: a busy machine's waits aside, a
  sleep counted in full); a run whose wall clock passes
  ``limits.STARVED_FACTOR`` times its limit, both under it, is stopped as
  starved: the machine's fault, for a teacher, never a zero.

Each stop is one line (``Stop``) that the grader shows on the feedback of the
function it stopped.
"""

import collections
import os
import signal
import time

from summarizer.grading import cpu_clock, limits

# The longest a stop goes on killing what the stopped run still forks.
KILL_SECONDS = 5

# ``starved``: stopped because the machine gave the run too little CPU, its own limits unmet.
Stop = collections.namedtuple('Stop', 'reason everything starved', defaults=(False,))


def descendants(pid):
  """Every live process started by ``pid``, its children's children included."""
  return cpu_clock.descendants(pid)


def memory_kb(pid):
  """A process's proportional set size in kB (its resident size where that is unreadable)."""
  for path, key in ((f'/proc/{pid}/smaps_rollup', b'Pss:'), (f'/proc/{pid}/status', b'VmRSS:')):
    try:
      with open(path, 'rb') as f:
        for line in f:
          if line.startswith(key):
            return int(line.split()[1])
    except (OSError, ValueError, IndexError):
      pass
  return 0


def _is_first(pid):
  """Whether the process is the first of its own pid namespace (the sandbox's worker)."""
  try:
    with open(f'/proc/{pid}/status', 'rb') as f:
      return any(line.startswith(b'NSpid:') and line.split()[-1] == b'1' for line in f)
  except OSError:
    return False


class Watch:
  """The limits of one sandbox run, checked from outside it.

  Args:
    pid: The process the sandbox runs under (bwrap's, or the worker's).
    seconds: CPU seconds of the whole run, and charged seconds (see above).
    memory_mb, processes: The sandbox's bounds, all its processes together
      (by default ``limits``'s).
  """

  def __init__(self, pid, seconds, memory_mb=None, processes=None):
    self.pid = pid
    self.memory_mb = memory_mb or limits.SANDBOX_MEMORY_MB
    self.processes = processes or limits.SANDBOX_PROCESSES
    self.seconds = seconds
    self.clock = cpu_clock.RunClock(pid)
    self.peak_mb, self.peak_processes = 0, 0

  def worker(self, inside):
    """The sandbox's first process, kept when a function's run is stopped."""
    return next((pid for pid in inside if _is_first(pid)), self.pid)  # Or the process mode's.

  def look(self, everything=False):
    """Checks the limits once; returns a Stop when one is passed (after acting on it), or None.

    With ``everything``, a limit passed stops every process (the caller saw the
    same run stopped twice already: a fork bomb that outran the kills).
    """
    table = cpu_clock.children_table()
    inside = cpu_clock.descendants(self.pid, table)
    if len(inside) > self.processes:
      self.peak_processes = max(self.peak_processes, len(inside))
      return self.stop(inside, f'stopped at {len(inside)} processes, over the '
                       f"sandbox's {self.processes}", everything)
    used = sum(memory_kb(pid) for pid in inside) >> 10
    self.peak_mb, self.peak_processes = max(self.peak_mb, used), max(self.peak_processes,
                                                                     len(inside))
    if used > self.memory_mb:
      return self.stop(inside, f'stopped at {used} MB of memory, over the sandbox\'s '
                       f'{self.memory_mb} MB (all its processes together)', everything)
    clock = self.clock.read(table)
    passed = cpu_clock.over(clock, self.seconds)
    if passed:
      return self.stop(inside, stopped_after(self.seconds, passed, clock) +
                       ('' if passed == 'starved' else ", the submission's limit"),
                       everything=True, starved=passed == 'starved')
    return None

  def stop(self, inside, reason, everything=False, starved=False):
    """Kills the running function's processes (every process with ``everything``)."""
    worker = self.worker(inside)
    everything = everything or memory_kb(worker) >> 10 > self.memory_mb  # The worker alone.
    keep = set() if everything else {self.pid, worker}
    # What forks while it is killed (or is still dying) is found on the next pass;
    # on a busy machine a burst of forks can take many passes to outrun.
    deadline = time.monotonic() + KILL_SECONDS
    while True:
      targets = [pid for pid in inside if pid not in keep]
      for pid in targets + ([self.pid] if everything else []):
        try:
          os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
          pass
      if not targets or time.monotonic() > deadline:
        break
      time.sleep(0.005)
      inside = descendants(self.pid)
    return Stop(reason, everything, starved)


# How a stop is said, and the words of a starved one (the worker says them too).
stopped_after, STARVED = cpu_clock.stopped_after, cpu_clock.STARVED
