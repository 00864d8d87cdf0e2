"""Runs a learner's cells inside the sandbox and writes what they output; judges nothing.

Started by ``sandbox.py`` as ``python -I worker.py JOB_DIR PACKAGE_PARENT`` inside
bubblewrap, next to ``watchers.py``; it imports the contract's probes
(``summarizer.contract.probes``), which the sandbox shows of the package
with ``_trax`` and ``config``. ``JOB_DIR/job.json`` names the items to run, in the course's order,
and holds the notebook's setup (trusted) and the learner's cells;
``JOB_DIR/given.npz`` holds the arrays the grader hands in (weights, ids),
read without pickle. The package's solutions of an item's earlier exercises
come on stdin, one frame an item, read just before the item runs.

Each item runs in a child process of its own (forked after the imports, the
setup's included, so Trax and TensorFlow load once: see ``preload``) with its
own memory and time limits: a crash, a hang or an out-of-memory costs that
item only. A child sends its results (a JSON
document and an .npz of arrays) through a pipe of its own; this process
writes, on its standard output (the grader's only channel, which no child
holds), one frame an item: a header (the item, its exit status, whether it
ran out of time, seconds) and the bytes the child sent. After each item every
other process of the sandbox is killed, so nothing an item leaves behind can
reach a later one. This process is not dumpable: no child opens its stdout
through /proc.

Before anything imports Trax, ``hide_answers`` puts the stubs of Trax's own
answers (``sandbox.HIDDEN``, written by the grader into ``JOB_DIR/hidden``, named
in the job's ``'hidden'``) in the place of their modules: every object that
holds one (``tl.CausalAttention``, gin's wrappers and registry, a module
imported later such as ``trax.models``) holds the stub, which raises.

What runs besides the learner's cells is watched from inside each child by
``watchers.py`` (bound beside this file). Libraries that hold whole answers
(Keras, flax, Pallas's kernels) are not in the sandbox's view at all
(``sandbox.HIDDEN_LIBRARIES``), so no call, however spelled, reaches them.
"""

import ast
import contextlib
import ctypes
import importlib.abc
import importlib.util
import io
import json
import linecache
import os
import resource
import select
import signal
import sys
import time
import types

import numpy as np

# python -I leaves this file's folder off the path: watchers.py is beside it. The
# package is imported from the folder the grader found it in (argv[2]: a
# checkout on PYTHONPATH, which -I and the empty environment would lose).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = sys.argv[2:3]


class Stubs(importlib.abc.MetaPathFinder):
  """Imports each module named in ``stubs`` (name -> file) from its stub file."""

  def __init__(self, stubs):
    self.stubs = stubs

  def find_spec(self, fullname, path=None, target=None):
    del path, target
    stub = self.stubs.get(fullname)
    return stub and importlib.util.spec_from_file_location(fullname, stub)


def hide_answers(job_dir):
  """Makes the job's stubs of Trax's answers the modules any later import finds."""
  with open(os.path.join(job_dir, 'job.json'), encoding='utf-8') as f:
    stubs = json.load(f).get('hidden', {})
  early = sorted(set(stubs) & set(sys.modules))
  if early:  # Never: nothing before this imports them. Grade nothing rather than expose them.
    sys.exit(f'imported before they could be hidden: {", ".join(early)}')
  sys.meta_path.insert(0, Stubs({name: os.path.join(job_dir, path)
                                 for name, path in stubs.items()}))


if __name__ == '__main__':
  hide_answers(sys.argv[1])
import cpu_clock  # pylint: disable=import-error,wrong-import-position
import watchers  # pylint: disable=import-error,wrong-import-position
# pylint: disable-next=wrong-import-position
from summarizer.contract import check_inputs, probes, recording



def load_job(job_dir):
  with open(os.path.join(job_dir, 'job.json'), encoding='utf-8') as f:
    job = json.load(f)
  with np.load(os.path.join(job_dir, 'given.npz'), allow_pickle=False) as arrays:
    given = {key: arrays[key] for key in arrays.files}
  given.update(job.get('given', {}))
  return job, given


class TookTooLong(BaseException):
  """A statement of another cell than the graded one ran past its seconds (see run_cell)."""


class StatementClock:
  """A statement's seconds: CPU time (``ITIMER_PROF``) and wall clock charged to it.

  The wall-clock alarm comes after ``seconds``; when the statement's charged
  seconds (``cpu_clock``: a busy machine's waits aside) are still under them,
  it is set again for what is left: a sleep is stopped, a starved statement
  is not (the worker's clock of the whole run decides that).
  """

  def __init__(self, seconds):
    self.seconds = seconds
    self.clock = cpu_clock.RunClock(os.getpid())

  def __enter__(self):
    signal.signal(signal.SIGPROF, _too_long)
    signal.signal(signal.SIGALRM, self.alarm)
    signal.setitimer(signal.ITIMER_PROF, self.seconds)
    signal.setitimer(signal.ITIMER_REAL, self.seconds)
    return self

  def alarm(self, signum, frame):
    del signum, frame
    _, _, charged = self.clock.read()
    if charged >= self.seconds:
      raise TookTooLong()
    signal.setitimer(signal.ITIMER_REAL, max(0.5, self.seconds - charged))

  def __exit__(self, *exc):
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    return False


def _too_long(signum, frame):
  del signum, frame
  raise TookTooLong()


def run_cell(source, label, names, errors, seconds=None):
  """Runs a cell statement by statement, as far as each goes; errors are recorded.

  With ``seconds``, each statement is stopped after that many seconds of CPU
  time or of wall clock charged to it (``StatementClock``: a scratch cell's
  loop costs the other functions a few seconds, not their whole limit).
  """
  filename = f'<cell {label}>'
  linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
  try:
    tree = ast.parse(source, filename)
  except SyntaxError as error:
    errors.append(f'{label}: SyntaxError: {error.msg} (line {error.lineno})')
    return
  for statement in tree.body:
    try:
      with StatementClock(seconds) if seconds else contextlib.nullcontext():
        exec(compile(ast.Module([statement], []), filename, 'exec'), names)  # pylint: disable=exec-used
    except TookTooLong:
      errors.append(f'{label}: line {statement.lineno} ran past {seconds} s and was stopped '
                    '(while grading another function)')
    except (Exception, SystemExit) as error:  # pylint: disable=broad-except
      errors.append(f'{label}: {recording.describe(error)}')


def namespace(job, item, solutions, errors):
  """The names an item's function sees, as a kernel running the notebook would have them.

  The trusted setup, the stand-ins of Part 1's helpers, then the learner's
  code cells in the notebook's order (solution cells, scratch cells, imports,
  helpers), up to the last cell of the item's function (all of them for the
  whole model); then the package's answers to the earlier exercises take the
  place of the learner's, so one mistake costs its own function only.
  """
  names = {'__name__': '__main__'}
  exec(compile(job['setup'], watchers.GRADER_FILES[0], 'exec'), names)  # pylint: disable=exec-used
  names.update(tokenize=probes.stand_in_tokenize, detokenize=probes.stand_in_detokenize)
  # The package's earlier answers first too: a cell whose default argument names an
  # earlier exercise the learner's cells fail to define still defines its function.
  _run_package(item['package'], solutions, names)
  cells = job['submissions'][item['submission']]
  own = item.get('upto')
  ids = [cell['grade_id'] for cell in cells]
  last = len(cells) - 1 - ids[::-1].index(own) if own and own in ids else len(cells) - 1
  for cell in cells[:last + 1]:
    run_cell(cell['source'], cell['label'], names, errors,
             None if own and cell['grade_id'] == own else job['other cells seconds'])
  learners = {name: names.get(name) for name in item['package']}
  _run_package(item['package'], solutions, names)
  rebind_defaults(names.get(item.get('function')), learners, names)
  return names


def _run_package(package, solutions, names):
  for name in package:
    exec(compile(solutions[name], watchers.GRADER_FILES[1], 'exec'), names)  # pylint: disable=exec-used


def rebind_defaults(function, learners, names):
  """Points a function's default arguments that hold the learner's earlier answers at the package's.

  The course's ``CausalAttention(..., compute_attention_heads_closure=
  compute_attention_heads_closure, ...)`` and ``greedy_decode(...,
  next_symbol=next_symbol)`` bind the earlier functions when their cell runs:
  without this, a mistake in an earlier exercise would cost this one too.
  """
  swap = {id(own): names[name] for name, own in learners.items()
          if own is not None and own is not names.get(name)}
  if not swap or not isinstance(function, types.FunctionType):
    return
  if function.__defaults__:
    function.__defaults__ = tuple(swap.get(id(value), value) for value in function.__defaults__)
  if function.__kwdefaults__:
    function.__kwdefaults__ = {key: swap.get(id(value), value)
                               for key, value in function.__kwdefaults__.items()}


# The whole-model items: Part 4 and Part 5 apart, so that a crash in Part 5
# (next_symbol, greedy_decode) leaves Part 4's result.
PARTS_OF_ITEM = {'whole': (4, 5), 'part 4': (4,), 'part 5': (5,)}


# Of an item's seconds, the part after which the learner's function is no longer followed
# for the where: line (``check_inputs.learners_traces``): the help never costs the item its time.
FOLLOWED_PART = 1 / 2


def run_item(job, item, solutions, given):
  """In the child: builds the namespace, probes; returns the results.

  A function of arrays (``check_inputs.TRACED``), graded with the package's
  earlier functions, is followed too on the notebook's check's inputs: its
  trace ('traces') gives the where: line.
  """
  started, errors = time.monotonic(), []
  names = namespace(job, item, solutions, errors)
  if item['probe'] in PARTS_OF_ITEM:
    cases = probes.probe_whole(names, given, job['model_size'], job['model_file'],
                               PARTS_OF_ITEM[item['probe']])
  elif item['function'] not in names or not callable(names[item['function']]):
    cases = []
    errors.append(f"{item['function']} is not defined by its cell")
  else:
    cases = probes.graded_cases(item['probe'], names[item['function']], job['seed'], given,
                                names)
    if item['probe'] in check_inputs.TRACED and not str(item.get('id')).endswith(' with yours'):
      return {'cases': cases, 'cell errors': errors, 'traces': check_inputs.learners_traces(
          item['probe'], names[item['function']], started + item['seconds'] * FOLLOWED_PART)}
  return {'cases': cases, 'cell errors': errors}



def encode_results(results):
  """The results as bytes: a JSON document, then an .npz of the arrays it names."""
  arrays = {}

  def encode(value):
    if isinstance(value, np.ndarray):
      key = f'a{len(arrays)}'
      arrays[key] = value
      return {'__array__': key}
    if isinstance(value, dict):
      return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
      return [encode(v) for v in value]
    return value
  document = json.dumps(encode(results), default=repr).encode('utf-8')
  packed = io.BytesIO()
  np.savez(packed, **arrays)
  return frame(document) + frame(packed.getvalue())


def read_exactly(fd, size):
  """Exactly ``size`` bytes of a file descriptor, unbuffered: nothing read ahead."""
  chunks = []
  while size:
    chunk = os.read(fd, size)
    if not chunk:
      raise EOFError('the grader closed the job early')
    chunks.append(chunk)
    size -= len(chunk)
  return b''.join(chunks)


def read_frame(fd):
  """One frame from the grader (unbuffered, so later frames stay in the pipe)."""
  return read_exactly(fd, int.from_bytes(read_exactly(fd, 8), 'big'))


def frame(data):
  return len(data).to_bytes(8, 'big') + data


def limit(memory_mb, seconds, file_mb):
  """The child's own limits: its address space, its CPU time, the size of a file it writes.

  Its wall-clock seconds are this process's to count (``fork_item``); the
  sandbox's memory and processes together are watched from outside it.
  """
  memory = memory_mb << 20
  resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
  resource.setrlimit(resource.RLIMIT_CPU, (seconds * 4, seconds * 4))  # 2 cores, threads.
  resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
  resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def child(job, item, solutions, given, write_end, events):
  """The child: no way back to the grader but its pipes; limits; the watch; the learner's code."""
  code = 0
  try:
    os.setpgid(0, 0)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)  # Later items' solutions wait on stdin: not the child's.
    os.dup2(quiet, 1)  # The grader's channel is the parent's stdout: not the child's.
    limit(item['memory_mb'], item['seconds'], job['file mb'])
    read_compiled(job.get('jax cache'))
    os.set_blocking(events, False)  # A full pipe refuses the event (the hook raises), never hangs.
    watchers.watch_what_runs(events, watchers.trusted_roots(sys.argv[1]))
    data = encode_results(run_item(job, item, solutions, given))
    with os.fdopen(write_end, 'wb') as pipe:
      pipe.write(data)
  except BaseException:  # pylint: disable=broad-except
    code = 3
  finally:
    os._exit(code)  # pylint: disable=protected-access


def read_compiled(folder):
  """jax reads the programs the grader compiled for the package's results (never writes)."""
  if folder:
    import jax  # pylint: disable=g-import-not-at-top
    jax.config.update('jax_compilation_cache_dir', folder)
    jax.config.update('jax_persistent_cache_min_compile_time_secs', 1e9)


def fork_item(job, item, solutions, given):
  """Runs one item in a child; returns (status, the bytes it sent)."""
  sys.stdout.flush()
  sys.stderr.flush()
  read_end, write_end = os.pipe()
  events_read, events_write = os.pipe()
  clock = cpu_clock.RunClock(os.getpid(), own=False)  # The child's processes, not this one.
  pid = os.fork()
  if pid == 0:
    os.close(read_end)
    os.close(events_read)
    child(job, item, solutions, given, write_end, events_write)
  os.close(write_end)
  os.close(events_write)
  data, passed = read_until(read_end, clock, item['seconds'], job['item bytes'])
  os.close(read_end)
  status = reap(pid, time.monotonic() + (0 if passed else 5))
  read = [round(seconds, 2) for seconds in clock.read()]  # CPU, wall, charged.
  sweep()
  said = passed and (cpu_clock.stopped_after(item['seconds'], passed, read)
                     + (', its limit' + cpu_clock.HINTS[passed] if passed in cpu_clock.HINTS else ''))
  return {'exit': os.waitstatus_to_exitcode(status), 'timed out': bool(passed), 'passed': passed,
          'seconds': read[1], 'clock': read, 'events': read_events(events_read),
          **({'stopped': said} if said else {})}, data


def read_events(fd, cap=1 << 20, keep=8):
  """The audit events a child wrote (its processes all gone): the first ``keep``, then a count.

  A line that is not the hook's (a learner's code may write to the pipe) is
  an event too: nothing the learner writes there can make an event vanish.
  """
  os.set_blocking(fd, False)
  chunks, size = [], 0
  while size < cap:
    try:
      chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
      break
    if not chunk:
      break
    chunks.append(chunk)
    size += len(chunk)
  os.close(fd)
  events = []
  for line in b''.join(chunks).decode('utf-8', 'replace').splitlines():
    try:
      event = ast.literal_eval(line)
      event = {key: str(event[key])[:400] for key in ('event', 'what', 'where')}
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
      event = {'event': 'unreadable', 'what': 'a line on the audit channel that is not the '
               'hook\'s: ' + line[:100], 'where': 'unknown'}
    events.append(event)
  return events[:keep] + ([{'event': 'more', 'what': f'{len(events) - keep} more events',
                            'where': ''}] if len(events) > keep else [])


def reap(pid, deadline):
  """The child's wait status: it may exit until the deadline, then it is killed."""
  while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
      with_group(pid, signal.SIGKILL)  # What it started in its group.
      return status
    time.sleep(0.02)
  with_group(pid, signal.SIGKILL)
  return os.waitpid(pid, 0)[1]


def read_until(fd, clock, seconds, cap, every=0.25):
  """Reads a pipe to its end, or until the run passes a bound of its clock, or the cap.

  Returns:
    (the bytes read, the bound passed: 'cpu', 'charged', 'starved' (``cpu_clock.over``), or None).
  """
  chunks, size = [], 0
  while True:
    passed = cpu_clock.over(clock.read(), seconds)
    if passed:
      return b''.join(chunks), passed
    ready, _, _ = select.select([fd], [], [], every)
    if not ready:
      continue
    chunk = os.read(fd, 1 << 20)
    if not chunk:
      return b''.join(chunks), None
    size += len(chunk)
    if size > cap:
      return b'', None
    chunks.append(chunk)


def with_group(pid, sig):
  for target in (lambda: os.killpg(pid, sig), lambda: os.kill(pid, sig)):
    try:
      target()
    except (ProcessLookupError, PermissionError):
      pass


def sweep():
  """Kills every other process of the sandbox (what an item left behind).

  Only as the sandbox's first process: with ``--sandbox process`` /proc shows
  the machine's processes, and the child's group is all ``reap`` kills.
  """
  if os.getpid() != 1:
    return
  keep = {os.getpid(), os.getppid(), 1}
  for entry in os.listdir('/proc'):
    if entry.isdigit() and int(entry) not in keep:
      try:
        os.kill(int(entry), signal.SIGKILL)
      except (ProcessLookupError, PermissionError):
        pass
  while True:  # This process is the sandbox's init: it reaps what was left.
    try:
      if os.waitpid(-1, os.WNOHANG)[0] == 0:
        break
    except ChildProcessError:
      break


def preload(setup):
  """Runs the notebook's setup (trusted) once here, before the forks, for its imports.

  Every child runs the setup again, in a namespace of its own, and finds its
  modules imported: TensorFlow, which Trax's training loop imports, took each
  item seconds. The imports start no thread and no jax backend (a test checks):
  each child starts its own backend, as before, since a process forked from
  one with threads could deadlock. What the setup prints goes nowhere (this
  process's stdout is the grader's channel); an error is left to the
  children, which meet it as before.
  """
  sys.stdout.flush()
  channel, quiet = os.dup(1), os.open(os.devnull, os.O_WRONLY)
  os.dup2(quiet, 1)
  names = {'__name__': '__main__'}
  try:
    exec(setup, names)  # pylint: disable=exec-used
  except (Exception, SystemExit):  # pylint: disable=broad-except
    pass
  finally:
    sys.stdout.flush()
    os.dup2(channel, 1)
    os.close(channel)
    os.close(quiet)


def not_dumpable():
  """No other process of the sandbox may open this one's files (its stdout) through /proc."""
  ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


def main(job_dir):
  not_dumpable()
  # What a child leaves behind stays this process's (as the sandbox's first it is anyway): a
  # run's clock counts its orphans' CPU time with --sandbox process too.
  ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
  job, given = load_job(job_dir)
  preload(job['setup'])
  channel, solutions = sys.stdout.buffer, {}
  for item in job['items']:
    # Each item's solutions come on stdin just before it runs (items are in the
    # course's order): no process here ever holds the package's answer to an
    # item's own function, or to a later one.
    solutions.update(json.loads(read_frame(0)))
    status, data = fork_item(job, item, {n: solutions[n] for n in item['package']}, given)
    header = json.dumps({'id': item['id'], 'status': status, 'size': len(data)}).encode()
    channel.write(frame(header) + data)
    channel.flush()
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv[1]))
