"""The sandbox watches what runs: code that is not a cell's sends its function to a teacher.

Each cheat below runs the course's own answer to Exercise 1, handed in as a
string, by a road the static reading (``static_reading.py``) does not read:
``exec`` reached through ``operator.attrgetter``, an alias of ``getattr`` or
``os.sys.modules``; a file written to the sandbox's /tmp and imported after
``sys.path`` is changed under another name, ``site.addsitedir`` or
``os.sys.path.append``; ``timeit``'s setup; ``cProfile.runctx``; a string
annotation ``typing.get_type_hints`` evaluates. The audit hook the worker
adds before the first cell runs (``watchers.watch_what_runs``) sees each one as
it runs. One sandbox run grades them all (Exercise 1 only); the course's
answer in the same run is graded as before.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import learner_variants
from summarizer.grading import grader, sandbox, static_reading

from . import SEED

# Each test grades in the sandbox or starts the worker: the slow lane's.
pytestmark = pytest.mark.slow

ANSWER = learner_variants.COURSE_ANSWERS['DotProductAttention']
# What reaches the builtins and exec without naming them where a reader looks.
BUILTINS = "os.sys.modules['bui' + 'ltins']"
RUN = "'ex' + 'ec'"

CHEATS = {
    'exec through operator.attrgetter': f'''
        import operator, os
        operator.attrgetter({RUN})({BUILTINS})(_SOURCE, globals())
        ''',
    'exec through an alias of getattr': f'''
        import os
        _get = getattr
        _get({BUILTINS}, {RUN})(_SOURCE, globals())
        ''',
    "exec from os.sys.modules['builtins']": f'''
        import os
        {BUILTINS}.__dict__[{RUN}](_SOURCE, globals())
        ''',
    'a file in /tmp, imported after sys.path.insert under another name': '''
        import sys as _s
        with open('/tmp/mine_a.py', 'w') as f:
          f.write('import trax\\nimport jax.numpy as jnp\\n' + _SOURCE)
        _s.path.insert(0, '/tmp')
        from mine_a import DotProductAttention
        ''',
    'a file in /tmp, imported after site.addsitedir': '''
        import os, site
        os.makedirs('/tmp/lib_b', exist_ok=True)
        with open('/tmp/lib_b/mine_b.py', 'w') as f:
          f.write('import trax\\nimport jax.numpy as jnp\\n' + _SOURCE)
        site.addsitedir('/tmp/lib_b')
        from mine_b import DotProductAttention
        ''',
    'a file in /tmp, imported after os.sys.path.append': '''
        import os
        os.makedirs('/tmp/lib_c', exist_ok=True)
        with open('/tmp/lib_c/mine_c.py', 'w') as f:
          f.write('import trax\\nimport jax.numpy as jnp\\n' + _SOURCE)
        os.sys.path.append('/tmp/lib_c')
        from mine_c import DotProductAttention
        ''',
    "timeit's setup": '''
        import timeit
        timeit.timeit('pass', setup='global DotProductAttention\\n' + _SOURCE,
                      globals=globals(), number=1)
        ''',
    'cProfile.runctx': '''
        import cProfile
        cProfile.runctx(_SOURCE, globals(), globals())
        ''',
    'a string annotation typing.get_type_hints evaluates': '''
        import os, typing
        _RUN = os.sys.modules['bui' + 'ltins'].__dict__['ex' + 'ec']
        def _hint(x: "(_RUN(_SOURCE, globals()), int)[1]"):
          pass
        typing.get_type_hints(_hint, globals())
        ''',
}


def cheat_cell(source):
  """The cell: the answer as a string, then the cheat's road to run it."""
  return f'_SOURCE = {ANSWER!r}\n' + textwrap.dedent(source)


@pytest.fixture(scope='module')
def reports():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = [learner_variants.notebook_with({'DotProductAttention': ANSWER})]
  notebooks += [learner_variants.notebook_with({'DotProductAttention': cheat_cell(source)})
                for source in CHEATS.values()]
  graded = grader.grade_batch(notebooks, seed=SEED, functions=('DotProductAttention',),
                              whole=False)
  return dict(zip(['course', *CHEATS], graded))


def test_the_static_reading_finds_none_of_the_cheats():
  # Each road is one no reading of the cells sees: only the run shows it.
  for name, source in CHEATS.items():
    assert not static_reading.findings(cheat_cell(source)), name


def test_the_courses_answer_is_graded_as_before(reports):
  [verdict] = reports['course'].verdicts
  assert (verdict.points, verdict.manual, verdict.lines) == (verdict.max_points, '', [])


@pytest.mark.parametrize('name', list(CHEATS))
def test_each_cheat_goes_to_a_teacher_with_the_event_named(reports, name):
  [verdict] = reports[name].verdicts
  assert verdict.points == 0 and verdict.manual, grader.table(reports[name])
  assert "code run that is not a cell's (" in verdict.manual
  assert "cell 'DotProductAttention' line" in verdict.manual
  # The automatic check ran (the cheat computes the right thing): kept for the teacher.
  assert 'the automatic check, not counted: passed' in verdict.lines


WATCH = '''
import os, sys
sys.path[:0] = [{grading!r}, {root!r}]
sys.argv[1:] = ['/nonexistent', {root!r}]
import watchers, worker
read, write = os.pipe()
os.set_blocking(write, False)
watchers.watch_what_runs(write, watchers.trusted_roots('/nonexistent'))
errors, names = [], {{'__name__': '__main__'}}
for label, cell in enumerate({cells!r}):
  worker.run_cell(cell, f'cell {{label}}', names, errors)
print(names.get('ran'), errors)
try:
  os.set_blocking(read, False)
  print(os.read(read, 1 << 16).decode().strip())
except BlockingIOError:
  pass  # Nothing written.
except OSError as error:
  print('the channel:', error)
'''


def watched(*cells):
  """Runs cells under the hook, in a process as the worker's child; (stdout lines, stderr)."""
  here = os.path.dirname(sandbox.HERE)
  script = WATCH.format(grading=sandbox.HERE,
                        root=os.path.dirname(here), cells=list(cells))
  # Run from a folder of the libraries': the script's own frames are the worker's.
  done = subprocess.run([sys.executable, '-I', '-c', compile_as_worker(script)],
                        capture_output=True, text=True, timeout=600, check=False,
                        env={'PATH': '/usr/bin', 'JAX_PLATFORMS': 'cpu'})
  assert done.returncode == 0, done.stderr
  return done.stdout.splitlines()


def compile_as_worker(script):
  """The script run as the grader's own code (the hook trusts ``<grader setup>``)."""
  return f'exec(compile({script!r}, "<grader setup>", "exec"))'


def test_honest_cells_trip_nothing():
  # Imports of the libraries, their code generation, a namedtuple, numpy and jax.
  lines = watched('import collections, numpy as np, jax.numpy as jnp\n'
                  "Pair = collections.namedtuple('Pair', 'a b')\n"
                  'import trax.layers as tl\nlayer = tl.Serial(tl.Dense(2), tl.Relu())\n'
                  'ran = float(jnp.exp(np.ones(3)).sum()) > 0')
  assert lines == ['True []']


def test_a_silenced_channel_refuses_the_event_instead():
  # The learner closes every descriptor the hook could write to: exec is refused, never silent.
  lines = watched('import os\nos.closerange(3, 1 << 10)\n'
                  "ran = 0\nrun = getattr(os.sys.modules['bui' + 'ltins'], 'ex' + 'ec')",
                  "run('ran = 1')")
  assert lines[0].startswith('0 [') and 'refused: the grader cannot be told of it' in lines[0], lines


def test_a_cheat_is_written_as_it_runs_with_its_cell_and_line():
  lines = watched("import os\nrun = getattr(os.sys.modules['bui' + 'ltins'], 'ex' + 'ec')\n"
                  "run('ran = 2')")
  assert lines[0] == '2 []'
  assert "'event': 'compile'" in lines[1] and "'where': '<cell cell 0> line 3'" in lines[1]
  assert "'event': 'exec'" in lines[2]
