"""The sandbox's limits, in one place, and the watch that holds the sandbox to them.

notebooks/README.md says what happens at each limit.

Seconds are CPU seconds, not the wall clock's: a busy machine costs no one a
point. A run's seconds are the CPU time of all its processes and threads
(``cpu_clock.py``, read from /proc outside the learner's process), and a
cell that sleeps is stopped by the same number of seconds of its wall clock
*charged* to it: the time its threads waited for a CPU that the machine gave
to others is left out, a sleep is counted in full. A run whose wall clock
passes ``STARVED_FACTOR`` times its limit while both stay under it was
starved by the machine: stopped, and its functions go to a teacher with that
reason, never a zero. Each function's run is stopped from outside the
learner's process (the sandbox's first process reads the clocks and kills
the run's processes); the whole sandbox is watched from outside it
(``Watch``, below): its memory and its processes, all of them together,
and the submission's seconds.

The watch: ``Watch(pid)`` follows the processes started by ``pid``
(bubblewrap, or the worker in ``--sandbox process`` mode) through ``/proc``,
not through anything the learner's code can reach. ``look()`` counts them and adds up their
proportional set sizes (a page shared by the forked runs counts once), and
says which limit is passed, if any:

- more memory or more processes than the sandbox may hold: the running
  function's processes are killed (the worker, the sandbox's first process,
  is kept and goes on with the next function), or every process when the
  worker alone is over or the same run is stopped a third time;
- the submission's seconds spent: every process is killed. Its seconds are
  CPU seconds of all its processes together, and seconds of the wall clock
  charged to it (``cpu_clock.RunClock``: a busy machine's waits aside, a
  sleep counted in full); a run whose wall clock passes
  ``STARVED_FACTOR`` times its limit, both under it, is stopped as
  starved: the machine's fault, for a teacher, never a zero.

Each stop is one line (``Stop``) that the grader shows on the feedback of the
function it stopped.
"""

import collections
import os
import signal
import time

from summarizer.grading import cpu_clock

# The course's answers, graded here on the 2 cores at load 9: 5.2 CPU s at most for a function's run
# (16 s of wall clock), 7.7 CPU s for Part 5's (21 s); 838 MB
# and 2 processes in the sandbox at most. A function that loops in Parts 4 and 5 costs
# FUNCTION_SECONDS + both WHOLE_SECONDS, well within SUBMISSION_SECONDS.

# CPU seconds (and charged seconds) of one graded function's run (its cells and its checks).
FUNCTION_SECONDS = 30
# Parts 4 and 5 build the learner's whole model and load the shipped weights.
WHOLE_SECONDS = {'part 4': 45, 'part 5': 45}
# CPU seconds (and charged seconds) of each statement of a cell other than the function's own.
OTHER_CELLS_SECONDS = 5
# CPU seconds (and charged seconds) of one submission in the sandbox, every run together.
SUBMISSION_SECONDS = 210
# Address space (MB) of one function's run, each process (RLIMIT_AS; JAX reserves a lot).
PROCESS_MEMORY_MB = 6144
# Memory (MB) of the sandbox's processes together (proportional set size, from /proc).
SANDBOX_MEMORY_MB = 3072
# Processes in the sandbox at once (its first process included).
SANDBOX_PROCESSES = 16
# Size (MB) of the sandbox's /tmp and /dev/shm (each a tmpfs in memory); one file at most FILE_MB.
TMP_MB = 256
FILE_MB = 64
# The teacher's own process reads, parses and compares a submission's cells outside the
# sandbox: characters of one learner cell it reads (the course's longest solution cell
# holds about 2,000), and of all of them together; a cell past either goes to a teacher
# unread (it still runs in the sandbox, whose outcome the teacher sees). Seconds of the
# comparison with the package's code (near-copies): past them, the rest is left unread.
CELL_CHARS = 100_000
NOTEBOOK_CHARS = 400_000
READING_SECONDS = 30
# How often (seconds) the watch outside the sandbox looks at it.
WATCH_SECONDS = 0.1
# How often (seconds) the worker reads a function's run's clocks.
ITEM_WATCH_SECONDS = 0.25
# A run whose wall clock passes this many times its limit, its CPU and charged
# seconds under it, was starved by a busy machine: stopped, for a teacher (the
# worker reads it inside the sandbox, where this module is not: it is cpu_clock's).
STARVED_FACTOR = cpu_clock.STARVED_FACTOR


def function_seconds(probe):
  """The seconds (CPU, and charged) of a run: a function's, or a whole-model part's."""
  return WHOLE_SECONDS.get(probe, FUNCTION_SECONDS)


# --------------------------------------------------------------------------
# The watch.

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
      (by default the constants above).
  """

  def __init__(self, pid, seconds, memory_mb=None, processes=None):
    self.pid = pid
    self.memory_mb = memory_mb or SANDBOX_MEMORY_MB
    self.processes = processes or SANDBOX_PROCESSES
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
