"""Grades from the grader's own clocks and tools: a busy machine, a rebound jit, a look-alike, a long cell.

The clocks (``cpu_clock.py``) are tried on real processes: one that sleeps,
one that computes, one starved by busy loops pinned to its core. The slow
tests grade in the sandbox: an honest notebook beside busy loops on every
core, and answers that rebind ``jax.jit`` or return a class that takes jax's
array type's name.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import time

import nbformat
import pytest

import learner_variants
from summarizer.contract.recording import GRADED
from summarizer.grading import class_run, cpu_clock, grader, limits, static_reading

needs_bwrap = pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')
SEED = 7  # One seed for the file: the package's results are computed once.


@contextlib.contextmanager
def running(code, count=1, cpu=None):
  """``count`` Python processes running ``code`` (pinned to one CPU with ``cpu``), ended after."""
  processes = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(count)]
  try:
    if cpu is not None:
      for process in processes:
        os.sched_setaffinity(process.pid, {cpu})
    yield processes
  finally:
    for process in processes:
      process.kill()
      process.wait()


def clock_of(process, seconds):
  """The process's clock read after ``seconds``: (CPU, wall, charged)."""
  clock = cpu_clock.RunClock(process.pid)
  for _ in range(int(seconds / 0.1)):
    time.sleep(0.1)
    read = clock.read()
  return read


BUSY = 'while True: pass'


def test_a_sleep_is_charged_in_full_and_uses_no_cpu():
  with running('import time; time.sleep(60)') as (sleeper,):
    cpu, wall, charged = clock_of(sleeper, 1.0)
  assert cpu < 0.2 and charged > 0.8 * wall
  assert cpu_clock.over((cpu, 1.2, 1.2), 1.0) == 'charged'


@pytest.mark.slow  # Busy loops for a few seconds.
def test_a_run_starved_by_busy_loops_on_its_core_is_charged_its_share_and_said_starved():
  cpu = sorted(os.sched_getaffinity(0))[0]
  with running(BUSY, count=3, cpu=cpu), running(BUSY, cpu=cpu) as (starved,):
    used, wall, charged = clock_of(starved, 2.0)
  # Four loops on one core: this one gets about a quarter of it, and is charged that.
  assert used < 0.6 * wall and charged < 0.6 * wall, (used, wall, charged)
  assert cpu_clock.over((used, wall, charged), 1.0, starved=1.5) == 'starved'
  line = cpu_clock.stopped_after(1.0, 'starved', (used, wall, charged))
  assert line.startswith('not graded: the grading machine was too busy (the run got ')


def test_a_loop_is_stopped_by_its_cpu_seconds():
  assert cpu_clock.over((5.1, 6.0, 6.0), 5) == 'cpu'
  assert cpu_clock.over((4.9, 70.0, 4.9), 5, starved=15) is None  # Slow beside others.
  assert cpu_clock.over((4.9, 80.0, 4.9), 5, starved=15) == 'starved'


def test_a_starved_run_goes_to_a_teacher_never_to_zero():
  said = cpu_clock.stopped_after(30, 'starved', (4, 460, 4))
  ran = {'DotProductAttention': {'status': {'passed': 'starved', 'timed out': True,
                                            'stopped': said}, 'results': None},
         'part 5': {'status': {'passed': 'starved', 'stopped': 'not run: ' + said},
                    'results': None}}
  reasons = static_reading.starved_reasons(ran)
  assert reasons['DotProductAttention'] == said + ': a teacher grades this function by hand, ' \
                                                  'or grades it again'
  assert reasons[static_reading.WHOLE_KEY].startswith('not graded: the grading machine')
  verdict = grader.by_hand(grader.function_verdict('DotProductAttention', ran[
      'DotProductAttention'], []), reasons['DotProductAttention'])
  assert verdict.manual and class_run.starved(grader.Report(1, 'bwrap', [verdict], 1.0))


def test_a_class_on_a_starved_machine_says_so():
  assert class_run.progress_line(3, 30, 120, 0.9) == 'Graded 3 of 30 (120 s of CPU so far)'
  line = class_run.progress_line(3, 30, 120, 0.12)
  assert line.startswith('Graded 3 of 30 (120 s of CPU so far); starved: the sandboxes got 12%')


def test_later_parts_blame_only_functions_that_failed_their_own_checks():
  stopped = {'status': {'timed out': True, 'passed': 'cpu', 'stopped': 'stopped after 30 s'},
             'results': None}
  failed = {'status': {'exit': 0}, 'results': {'cases': [], 'cell errors': []}}
  ran = {name: stopped for name in GRADED} | {'next_symbol': failed}
  own = {name: grader.Verdict('test_' + name, name, 0, 1, ['it failed'], []) for name in GRADED}
  part_4, part_5 = grader.whole_verdicts(ran, [{'name': 'x'}, {'name': 'y'}], own)
  for verdict in (part_4, part_5):
    blame = [line for line in verdict.lines if 'fail their own checks' in line]
    assert blame == ['    why: these functions fail their own checks: next_symbol'], verdict.lines


def long_cell_notebook(characters=240_000):
  notebook = learner_variants.notebook_with(learner_variants.COURSE_ANSWERS)
  first = next(k for k, cell in enumerate(notebook.cells)
               if cell.metadata.get('nbgrader', {}).get('grade_id') == GRADED[2])
  helpers = ''.join(f'def helper_{k}(x):\n  return x + {k}\n\n'
                    for k in range(characters // 30))
  notebook.cells.insert(first, nbformat.v4.new_code_cell(helpers))
  return notebook, len(helpers)


def test_a_long_cell_is_one_line_for_a_teacher_and_costs_the_teachers_process_little():
  notebook, size = long_cell_notebook()
  started = time.monotonic()
  cells = grader.learner_cells(notebook)
  reasons = static_reading.manual_reasons(cells)
  flags = grader.near_copies(grader.cell_sources(cells))
  took = time.monotonic() - started
  # The functions before it are read as before; it and what runs after it go to a teacher.
  assert set(reasons) == set(GRADED[2:]) | {static_reading.WHOLE_KEY}, reasons
  line = reasons[GRADED[2]]
  assert '\n' not in line and f'holds {size:,} characters' in line
  assert line.endswith('a teacher grades this function by hand')
  assert not any('not compared' in flag for flag in flags.values())
  assert took < limits.READING_SECONDS, took


# A helper cell of an honest learner: a dataclass, a cache, logging.
HONEST_HELPERS = '''
import dataclasses, functools, logging
logging.basicConfig(level=logging.WARNING)
log = logging.getLogger('my helpers')

@dataclasses.dataclass(frozen=True)
class Heads:
  n_heads: int
  d_head: int

@functools.lru_cache(maxsize=None)
def width(n_heads, d_head):
  log.info('width of %d heads', n_heads)
  return Heads(n_heads, d_head).n_heads * d_head
'''


def with_cell_before(notebook, source, grade_id=GRADED[0]):
  """The notebook with a learner's cell of their own before ``grade_id``'s solution cell."""
  at = next(k for k, cell in enumerate(notebook.cells)
            if cell.metadata.get('nbgrader', {}).get('grade_id') == grade_id)
  notebook.cells.insert(at, nbformat.v4.new_code_cell(source))
  return notebook


# An honest answer: jax.jit as a decorator, einsum, names in other scripts.
JITTED_EINSUM = '''
import jax

@jax.jit
def DotProductAttention(query, key, value, mask):
  größe = query.shape[-1]
  очки = jnp.einsum('...qd,...kd->...qk', query, key) / jnp.sqrt(größe)
  if mask is not None:
    очки = jnp.where(mask, очки, jnp.full_like(очки, -1e9))
  重み = jnp.exp(очки - fastmath.logsumexp(очки, axis=-1, keepdims=True))
  return jnp.einsum('...qk,...kd->...qd', 重み, value)
'''


def honest_notebook(path):
  """The course's answers as an honest learner hands them in, written to ``path``.

  A helper cell of their own (``HONEST_HELPERS``), ``JITTED_EINSUM``, a
  scratch cell that printed 30 MB, a Colab notebook's metadata and another
  kernelspec's name, saved as nbformat 4.4 (no cell ids).
  """
  answers = dict(learner_variants.COURSE_ANSWERS, DotProductAttention=JITTED_EINSUM)
  notebook = with_cell_before(learner_variants.notebook_with(answers), HONEST_HELPERS)
  scratch = nbformat.v4.new_code_cell("print('x' * 30_000_000)")
  scratch.outputs = [nbformat.v4.new_output('stream', name='stdout', text='x' * 30_000_000)]
  notebook.cells.append(scratch)
  notebook.metadata = {'colab': {'provenance': [], 'name': 'C4W2_Assignment.ipynb'},
                       'kernelspec': {'name': 'conda-env-course-py', 'display_name': 'Python 3',
                                      'language': 'python'},
                       'language_info': {'name': 'python'}}
  notebook.nbformat_minor = 4
  for cell in notebook.cells:
    cell.pop('id', None)
  with open(path, 'w', encoding='utf-8') as f:
    nbformat.write(notebook, f, version=4)
  return path


@pytest.mark.slow
@needs_bwrap
def test_an_honest_notebook_beside_busy_loops_on_every_core_keeps_every_point(monkeypatch,
                                                                                tmp_path):
  # Limits a busy machine's wall clock passes: only CPU seconds count against them.
  monkeypatch.setattr(limits, 'FUNCTION_SECONDS', 8)
  path = honest_notebook(str(tmp_path / 'C4W2_Assignment.ipynb'))
  assert os.path.getsize(path) > 30_000_000 and '"id"' not in open(path, encoding='utf-8').read(
      5_000_000)
  grader.prepared(SEED)  # The package's results first: this process is no sandbox.
  with running(BUSY, count=2 * len(os.sched_getaffinity(0))):
    report = grader.grade(path, seed=SEED, functions=GRADED[:2], whole=False)
  assert report.total == report.max_total and not report.by_hand, grader.table(report)
  assert not [note for verdict in report.verdicts for note in verdict.notes], grader.table(report)


JIT_REBOUND = '''
import jax
jax.jit = lambda function, *args, **kwargs: function
'''

# NumPy's answer in a class that takes jax's array type's name, says float32 and
# agrees with everything; under jit (traced) it hands back the query, which runs.
LOOK_ALIKE = '''
import jax

class ArrayImpl:
  __module__ = 'jaxlib._jax'
  dtype = 'float32'

  def __init__(self, values):
    self.values = values

  def __array__(self, dtype=None, copy=None):
    return self.values if dtype is None else self.values.astype(dtype)

  def __eq__(self, other):
    return True

def DotProductAttention(query, key, value, mask):
  if isinstance(query, jax.core.Tracer):
    return query
  q, k, v = (np.asarray(x, np.float64) for x in (query, key, value))
  dots = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
  dots = np.where(np.asarray(mask), dots, -1e9)
  dots = np.exp(dots - dots.max(axis=-1, keepdims=True))
  return ArrayImpl((dots / dots.sum(axis=-1, keepdims=True)) @ v)
'''


@pytest.mark.slow
@needs_bwrap
def test_properties_are_measured_with_the_graders_tools_not_the_learners():
  from test_where import NUMPY_ATTENTION  # pylint: disable=import-outside-toplevel
  answers = learner_variants.COURSE_ANSWERS
  rebound = with_cell_before(learner_variants.notebook_with(
      dict(answers, DotProductAttention=NUMPY_ATTENTION)), JIT_REBOUND)
  look_alike = learner_variants.notebook_with(dict(answers, DotProductAttention=LOOK_ALIKE))
  course, rebound, look_alike = grader.grade_batch(
      [learner_variants.notebook_with(answers), rebound, look_alike], seed=SEED,
      functions=GRADED[:1], whole=False)
  assert course.total == course.max_total, grader.table(course)
  [jit] = rebound.verdicts
  assert jit.points == 0 and any('under jax.jit' in line for line in jit.lines), jit.lines
  [alike] = look_alike.verdicts
  text = '\n'.join(alike.lines)
  assert alike.points == 0 and 'a class of its own under that name' in text, text
