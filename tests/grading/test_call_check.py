"""Every call of a cell's code goes through the worker's check: it changes nothing the code does.

The worker compiles the learner's cells with each call (decorators too) made
through a check (``watchers.ThroughCheck``, ``watchers.checked_code``): the check
sees what is called and hands it back. These tests run cells both ways in one
worker process and ask for the same results, and ask ``watchers.called`` what a
callee runs without running any of the learner's code.
"""

import json
import os
import subprocess
import sys

from summarizer.grading import sandbox

SCRIPT = '''
import json, os, sys
sys.path[:0] = [{grading!r}, {root!r}]
sys.argv[1:] = ['/nonexistent', {root!r}]
import watchers, worker
seen = []

def check(callee):
  seen.append(callee)
  return callee

def ran(cells, check):
  errors, names = [], {{'__name__': '__main__'}}
  for label, cell in enumerate(cells):
    worker.run_cell(cell, f'cell {{label}}', names, errors, check=check)
  return (repr(names.get('result')), errors), names

cells = {cells!r}
plain, _ = ran(cells, None)
checked, names = ran(cells, check)
calls = len(seen)
probed = eval({probed!r}, names)
print(json.dumps({{'plain': plain, 'checked': checked, 'calls': calls,
                  'called': [watchers.called(c, frozenset({{'numpy'}}))[::2] for c in probed]}}))
'''

# Code whose meaning rests on the frame it runs in, or on how a call is spelled.
CELLS = [
    'import functools, numpy as np\n'
    'class Base:\n'
    '  def value(self):\n'
    '    return 1\n'
    'class Child(Base):\n'
    '  def value(self):\n'
    '    return super().value() + 1\n'
    'def traced(f):\n'
    '  @functools.wraps(f)\n'
    '  def inner(*a, **k):\n'
    '    return f(*a, **k) * 10\n'
    '  return inner\n',
    '@traced\n'
    'def scaled(x, *, by=2):\n'
    '  here = locals()\n'
    '  return x * by + len(here)\n'
    'pairs = {k: [v * 2 for v in range(k)] for k in range(3)}\n'
    'squares = list(map(lambda x: x ** 2, (i for i in range(4))))\n'
    "result = (Child().value(), scaled(3, by=4), pairs, squares, f'{max(1, 2)}',\n"
    '          float(np.arange(6).reshape(2, 3).sum(axis=0).max()),\n'
    '          sorted([3, 1, 2], key=lambda v: -v), functools.partial(pow, 2)(5))\n',
]


def run(cells, probed='[]'):
  here = os.path.dirname(sandbox.HERE)
  script = SCRIPT.format(grading=sandbox.HERE,
                         root=os.path.dirname(here), cells=cells, probed=probed)
  done = subprocess.run([sys.executable, '-I', '-c', script], capture_output=True, text=True,
                        timeout=300, check=False, env={'PATH': '/usr/bin', 'JAX_PLATFORMS': 'cpu'})
  assert done.returncode == 0, done.stderr[-2000:]
  return json.loads(done.stdout.splitlines()[-1])


def test_checked_cells_compute_what_plain_cells_do_and_every_call_is_seen():
  out = run(CELLS)
  assert out['plain'][1] == [] and out['checked'] == out['plain'], out
  # super(), locals() and the zero-argument forms still read the cell's own frame.
  assert out['plain'][0].startswith('(2, 140, ')
  # Each call the cells spell (decorators included) went through the check, lambdas' too.
  assert out['calls'] >= 20


def test_what_a_call_runs_is_read_without_running_the_learners_code():
  probed = ('[np.sum, np.ones(2).sum, Child, Child().value, functools.partial(np.sum, axis=0),'
            ' Sly(), len]')
  cells = CELLS[:1] + [
      'class Sly:\n'
      '  def __getattr__(self, name):\n'
      "    raise SystemExit('read ' + name)\n"
      '  def __call__(self):\n'
      '    return 0\n'
      'result = 1\n']
  out = run(cells, probed)
  assert out['checked'][1] == [], out
  assert [module.partition('.')[0] for module, _ in out['called']] == [
      'numpy', 'numpy', '__main__', '__main__', 'numpy', '__main__', 'builtins'], out['called']
  names = [name for _, name in out['called']]
  assert names[2] == 'Child.__init__' and names[3] == 'Child.value' and names[5] == 'Sly.__call__'
