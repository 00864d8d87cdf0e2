"""The clocks of a run: its processes' CPU time, and its wall clock less the time a busy machine took.

A grading limit counts what the submission did, not how busy the machine
was: ``RunClock`` reads, through ``/proc``, the CPU time of every process of
a run (user and system time of each live process, its threads', and of the
children it reaped), and the run's wall clock *charged* to it: each interval
counts in the proportion of the time its threads spent on a CPU to the time
they were ready to run (on a CPU or waiting for one, ``/proc/TID/schedstat``).
On an idle machine the charge is the wall clock; a cell that sleeps is
charged in full (it waits for no CPU); a run that gets a sixth of a core is
charged a sixth. A run whose wall clock passes ``starved`` times its limit
with its CPU time and its charge under it was starved by the machine, not
slow: nothing of it is the learner's.

Imported outside the sandbox (``limits.py``, ``class_run.py``) and inside it
by the worker (bound beside it): it imports nothing of the package.
"""

import os
import time

TICKS = os.sysconf('SC_CLK_TCK')
# A run whose wall clock passes this many times its limit, its CPU and charged seconds
# under it, was starved by a busy machine (at load 27 on 2 cores a run gets about a
# fourteenth of a core): stopped, for a teacher (``limits.STARVED_FACTOR``).
STARVED_FACTOR = 15
STARVED = 'the grading machine was too busy'  # A starved run's words (class_run finds them).
# What a run stopped at each bound may have done, after 'stopped after N s ..., its limit'.
HINTS = {'cpu': ': a loop that never ends?', 'charged': ': a sleep, or a wait that never ends?'}
# An interval whose threads were ready to run for less than this share of it slept:
# charged in full (a sleeping cell on a busy machine wakes, briefly waits, sleeps).
SLEEPING = 0.05


def children_table():
  """pid -> (parent pid, whether it has ended), for every process /proc shows."""
  table = {}
  for entry in os.listdir('/proc'):
    if entry.isdigit():
      try:
        with open(f'/proc/{entry}/stat', 'rb') as f:
          state, parent = f.read().rsplit(b')', 1)[1].split()[:2]
        table[int(entry)] = (int(parent), state in (b'Z', b'X'))
      except (OSError, IndexError, ValueError):
        pass  # Gone while listed.
  return table


def descendants(pid, table=None, ended=False):
  """Every process started by ``pid``, its children's children included (``ended``: zombies too)."""
  table = children_table() if table is None else table
  found, frontier = [], [pid]
  while frontier:
    parent = frontier.pop()
    children = [child for child, (up, gone) in table.items()
                if up == parent and (ended or not gone)]
    found += children
    frontier += children
  return found


def cpu_ticks(pid, own=True):
  """A process's CPU time in clock ticks: its own (``own``) and that of the children it reaped."""
  try:
    with open(f'/proc/{pid}/stat', 'rb') as f:
      fields = f.read().rsplit(b')', 1)[1].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
  except (OSError, IndexError, ValueError):
    return 0
  return cutime + cstime + (utime + stime if own else 0)


def scheduled(pids):
  """tid -> (ns on a CPU, ns waiting for one) of every thread of the processes."""
  found = {}
  for pid in pids:
    try:
      threads = os.listdir(f'/proc/{pid}/task')
    except OSError:
      continue
    for tid in threads:
      try:
        with open(f'/proc/{pid}/task/{tid}/schedstat', 'rb') as f:
          running, waiting = f.read().split()[:2]
        found[int(tid)] = (int(running), int(waiting))
      except (OSError, ValueError):
        pass
  return found


class RunClock:
  """The clocks of one run: its processes' CPU seconds, its wall and charged seconds.

  Args:
    root: The run's first process.
    own: Whether the root's own CPU time is the run's (the sandbox's first
      process), or only what its children used after now (the worker's: it
      waits while its child runs the learner's code).
  """

  def __init__(self, root, own=True):
    self.root, self.own = root, own
    self.started = self.last = time.monotonic()
    self.base = 0 if own else cpu_ticks(root, own=False)
    self.threads, self.cpu, self.charged = {}, 0.0, 0.0

  def read(self, table=None):
    """Looks once; returns (CPU seconds, wall seconds, charged seconds) so far."""
    now = time.monotonic()
    inside = descendants(self.root, table, ended=True)  # A zombie's time is not yet reaped.
    ticks = cpu_ticks(self.root, self.own) - self.base + sum(cpu_ticks(pid) for pid in inside)
    self.cpu = max(self.cpu, ticks / TICKS)  # A child reaped between two reads counts once.
    threads = scheduled(inside + ([self.root] if self.own else []))
    running = waiting = 0
    for tid, (run, wait) in threads.items():
      before = self.threads.get(tid, (0, 0))
      running, waiting = running + max(0, run - before[0]), waiting + max(0, wait - before[1])
    self.threads = threads
    interval = now - self.last
    ready = (running + waiting) / 1e9
    self.charged += interval * (running / 1e9 / ready if ready > SLEEPING * interval else 1.0)
    self.last = now
    return self.cpu, now - self.started, self.charged

  def share(self):
    """The share of the wall clock charged to the run so far (1 on an idle machine)."""
    wall = time.monotonic() - self.started
    return min(1.0, self.charged / wall) if wall > 0 else 1.0


def over(clock_read, seconds, starved=STARVED_FACTOR):
  """Which bound a run passed: 'cpu', 'charged' (a sleep), 'starved' (the machine), or None.

  Args:
    clock_read: ``RunClock.read()``'s (CPU, wall, charged) seconds.
    seconds: The run's limit, in CPU seconds and in charged seconds.
    starved: How many times its limit the wall clock may run while the run
      is under both (then the machine, not the run, is at fault).
  """
  cpu, wall, charged = clock_read
  if cpu > seconds:
    return 'cpu'
  if charged > seconds:
    return 'charged'
  if wall > seconds * starved:
    return 'starved'
  return None


def stopped_after(seconds, passed='cpu', clock=(0, 0, 0)):
  """How a run stopped at a bound is said (the worker's and the watch's lines, on the feedback).

  Args:
    seconds: The run's limit.
    passed: The bound it passed (``over``'s).
    clock: Its (CPU, wall, charged) seconds, for 'starved'.
  """
  if passed == 'cpu':
    return f'stopped after {seconds:.0f} s of CPU time'
  if passed == 'charged':
    return f"stopped after {seconds:.0f} s (wall clock, the machine's load aside)"
  cpu, wall, _ = clock
  return (f'not graded: {STARVED} (the run got {cpu:.0f} s of CPU in {wall:.0f} s, under its '
          f'limit of {seconds:.0f} s)')
