"""The bench's first-model section: a learner's own model, from random weights, against Lead-3.

It runs the learner's commands (README, steps 5 and 6) as a learner would, in fresh
processes: ``python -m summarizer.train --output-dir DIR --max-minutes N``
(the default recipe), then ``python -m summarizer.evaluate --model DIR
--limit 100``, and sets the model's scores beside Lead-3's with the bar the
recipe must clear: ROUGE-1, -2 and -L above Lead-3's, names-and-numbers
precision at least 0.8 and recall at least Lead-3's (``undertrained.bar``, the
bar a run's verdict holds its model to).

With ``shared_core`` the training run is pinned to one core beside a busy
loop pinned to the same core: the half of one core a slow laptop, a busy
machine or a free notebook service gives it (about a third of a 2-core
machine's speed). The evaluation runs as usual afterwards.
"""

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from summarizer.errors import SummarizerError
from summarizer.inference import undertrained

# What shares the core with a --shared-core run.
BUSY_LOOP = 'while True: pass  # the bench: a busy core'
# The run's plan line promises 'about N steps'; the bench holds it to the steps made.
PLAN_STEPS = re.compile(r'about ([\d,]+) steps')
# How far the plan's steps may be off the steps made (issue 54: within 25%).
PLAN_TOLERANCE = 0.25


def _run(argv, core=None):
  """Runs a command of the package (pinned to ``core``, if given); returns its standard output.

  Raises:
    SummarizerError: the command failed (its last line of standard error).
  """
  done = subprocess.run([sys.executable, '-m', *argv], capture_output=True, text=True,
                        check=False, preexec_fn=_pinned(core))
  if done.returncode:
    tail = done.stderr.strip().splitlines()[-1:] or ['(no message)']
    raise SummarizerError(f'{argv[0]} failed: {tail[0]}')
  return done.stdout


def _pinned(core):
  """A ``preexec_fn`` that pins the child to ``core`` (None: no pinning)."""
  if core is None:
    return None
  return lambda: os.sched_setaffinity(0, {core})


@contextlib.contextmanager
def busy_core():
  """Pins a busy loop to this process's first core while the block runs; yields the core."""
  if not hasattr(os, 'sched_setaffinity'):
    raise SummarizerError('--shared-core pins processes to a core, which needs Linux')
  core = min(os.sched_getaffinity(0))
  busy = subprocess.Popen([sys.executable, '-c', BUSY_LOOP],
                          preexec_fn=_pinned(core))
  try:
    yield core
  finally:
    busy.kill()
    busy.wait()


def _done_line(stdout):
  """The train command's closing 'done: k=v, ...' line, as a dict of strings."""
  line = next(line for line in stdout.splitlines() if line.startswith('done: '))
  return dict(re.findall(r'(\w+)=([^,]+)', line[len('done: '):]))


def bench_first_model(minutes=10.0, seed=0, limit=100, keep=None, shared_core=False):
  """Trains the default recipe for ``minutes`` and scores it beside Lead-3.

  Args:
    minutes: The run's ``--max-minutes``.
    seed: Its ``--seed``.
    limit: Test stories the evaluation reads.
    keep: A directory to train into (kept); default: a temporary one.
    shared_core: Train on one core that a busy loop shares.

  Returns:
    dict with the run's 'wall_s', 'steps', 'tokens_per_second', the
    'model' and 'lead3' scores and 'meets' (whether each part of the bar
    is met).
  """
  with tempfile.TemporaryDirectory(prefix='first-model-') as scratch:
    out = keep or os.path.join(scratch, 'run')
    train = ['summarizer.train', '--output-dir', out, '--max-minutes', f'{minutes:g}',
             '--seed', str(seed), '--no-progress']
    started = time.monotonic()
    with (busy_core() if shared_core else contextlib.nullcontext()) as core:
      output = _run(train, core)
    wall = time.monotonic() - started
    done = _done_line(output)
    # Its own --output-dir: evaluate's default (runs/eval) may hold a learner's earlier one.
    scores = json.loads(_run(['summarizer.evaluate', '--model', out, '--limit', str(limit),
                              '--json', '--output-dir', os.path.join(scratch, 'eval')]))
  model, lead3 = scores['model'], scores['lead3']
  meets = undertrained.bar(model, lead3)
  plan = next((line for line in output.splitlines() if line.startswith('plan: ')), None)
  return {'minutes': minutes, 'seed': seed, 'articles': scores['n'], 'shared_core': shared_core,
          'plan': plan, 'plan_steps': planned_steps(plan),
          'diagnosis': [line for line in output.splitlines() if line.startswith('diagnosis: ')],
          'wall_s': round(wall, 1), 'steps': int(done['step']),
          'split_batches': done.get('split_batches') == 'True',
          'tokens_per_second': int(done['tokens_per_second']),
          'model': model, 'lead3': lead3, 'meets': meets}


def planned_steps(plan):
  """The steps a plan line promises ('about 6,613 steps ...'), or None (no line, no estimate)."""
  found = PLAN_STEPS.search(plan or '')
  return int(found.group(1).replace(',', '')) if found else None


def _plan_row(r):
  """The row setting the plan's promised steps beside the steps made, or None without a plan."""
  if r.get('plan_steps') is None:
    return None
  ratio = r['plan_steps'] / max(r['steps'], 1)
  return ("... its plan's steps against the steps made",
          f"{r['plan_steps']} planned, {r['steps']} made", f'{ratio:.2f}',
          f'within {PLAN_TOLERANCE:.0%}' if abs(ratio - 1) <= PLAN_TOLERANCE
          else f'OFF by more than {PLAN_TOLERANCE:.0%}')


def rows(r):
  """The bench table's rows for a first-model result."""
  def scores(s):
    return (f'R1 {s["rouge1"]:.3f} R2 {s["rouge2"]:.3f} RL {s["rougeL"]:.3f}, entities P '
            f'{s["entity_precision"]:.2f} R {s["entity_recall"]:.2f}')
  met = all(r['meets'].values())
  missed = ', '.join(name for name, ok in r['meets'].items() if not ok)
  where = ', on one core a busy loop shares' if r.get('shared_core') else ''
  parts = ' of a quarter batch' if r.get('split_batches') else ''
  table = [
      (f'train --max-minutes {r["minutes"]:g} --seed {r["seed"]} (from random weights{where})',
       f'{r["wall_s"]} s, {r["steps"]} steps{parts}, {r["tokens_per_second"]} tokens/s', '',
       'within the budget' if r['wall_s'] <= 60 * r['minutes'] else 'OVER the budget'),
      (f'... its summaries of {r["articles"]} test stories vs Lead-3',
       f'{scores(r["model"])} vs {scores(r["lead3"])}', '',
       'meets the bar' if met else f'MISSES the bar ({missed})'),
  ]
  plan = _plan_row(r)
  return table + ([plan] if plan else [])
