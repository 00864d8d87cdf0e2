"""The bench's grading section: a class of submissions through ``nbgrader autograde``, timed.

As a teacher runs a course (notebooks/README.md): ``python -m
summarizer.exercises --nbgrader DIR``, ``nbgrader generate_assignment``,
then ``n`` students hand in the student version with every graded cell
filled in with the package's answers (each scores 20), and one ``nbgrader
autograde --create`` grades them all, in the sandbox. The class is graded
twice, in two courses, side by side in one bench run: one submission after
another (``--SandboxedGrades.graders=1``), then as the written config does,
several at once (one a core, ``grading/class_run.py``). Each wall time over
``n`` is the teacher's time per submission, the package's own results
(computed once a grading run) included.
"""

import csv
import os
import subprocess
import sys
import tempfile
import time

from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

GOAL_SECONDS = 20  # A submission's share of an autograde run, at most: 30 in 10 minutes.


def _nbgrader(course, *arguments):
  bin_dir = os.path.dirname(sys.executable)  # nbgrader runs `alembic` from the PATH.
  env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get('PATH', ''))
  done = subprocess.run([sys.executable, '-m', 'nbgrader', *arguments], cwd=course, env=env,
                        capture_output=True, text=True, check=False)
  if done.returncode:
    tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
    raise SummarizerError(f'nbgrader {arguments[0]} failed: ' + ' / '.join(tail))


def _submit(course, student, answers):
  import nbformat  # pylint: disable=g-import-not-at-top
  from summarizer.contract import handout  # pylint: disable=g-import-not-at-top
  name = handout.ASSIGNMENT + '.ipynb'
  notebook = nbformat.read(os.path.join(course, 'release', handout.ASSIGNMENT, name),
                           as_version=4)
  for cell in notebook.cells:
    grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
    if grade_id in answers:
      cell.source = answers[grade_id]
  directory = os.path.join(course, 'submitted', student, handout.ASSIGNMENT)
  os.makedirs(directory)
  nbformat.write(notebook, os.path.join(directory, name))


def _class_run(n_submissions, graders):
  """Autogrades ``n_submissions`` full-marks submissions in one nbgrader run: (seconds, scores)."""
  from summarizer.contract import handout  # pylint: disable=g-import-not-at-top
  from summarizer.grading import nbgrader_plugin  # pylint: disable=g-import-not-at-top
  with tempfile.TemporaryDirectory(prefix='bench-grading-') as course:
    handout.write_nbgrader_source(course)  # What python -m summarizer.exercises --nbgrader writes.
    with open(os.path.join(course, 'nbgrader_config.py'), 'w', encoding='utf-8') as f:
      f.write(nbgrader_plugin.config_source(sandbox='bwrap'))
    _nbgrader(course, 'generate_assignment', handout.ASSIGNMENT)
    answers = {name: handout.solution_source(name) for name in GRADED}
    for k in range(n_submissions):
      _submit(course, f'student{k:02d}', answers)
    started = time.monotonic()
    _nbgrader(course, 'autograde', handout.ASSIGNMENT, '--create',
              f'--SandboxedGrades.graders={graders}')
    seconds = time.monotonic() - started
    _nbgrader(course, 'export')
    with open(os.path.join(course, 'grades.csv'), encoding='utf-8') as f:
      return seconds, sorted(float(row['raw_score']) for row in csv.DictReader(f))


def bench_grading(n_submissions=10):
  """Autogrades a class one after another, then side by side; returns both times."""
  from summarizer.grading import class_run  # pylint: disable=g-import-not-at-top
  graders = class_run.graders_for(0)
  one, scores_one = _class_run(n_submissions, 1)
  many, scores = _class_run(n_submissions, graders)
  return {'submissions': n_submissions, 'graders': graders, 'seconds_one': round(one, 1),
          'seconds': round(many, 1), 'seconds_per_submission': round(many / n_submissions, 1),
          'goal_seconds': GOAL_SECONDS, 'scores': scores_one + scores, 'cpus': os.cpu_count()}


def rows(r):
  """The bench table's rows of the grading section: one after another, then side by side."""
  per, n = r['seconds_per_submission'], r['submissions']
  scores = f'scores {min(r["scores"]):g} to {max(r["scores"]):g}'
  return [(f'nbgrader autograde, {n} submissions, one at a time',
           f'{r["seconds_one"]} s ({scores})', '1.00', 'the baseline of the row below'),
          (f'the same, {r["graders"]} sandboxes at once (the written config)',
           f'{r["seconds"]} s: {per} s a submission', f'{r["seconds"] / r["seconds_one"]:.2f}',
           f'at most {r["goal_seconds"]} s a submission: '
           + ('met' if per <= r['goal_seconds'] else 'NOT MET'))]
