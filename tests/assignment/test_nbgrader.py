"""Autograding with nbgrader itself, as notebooks/README.md runs a course: the config that
``python -m summarizer.exercises --nbgrader`` writes grades in the sandbox.

One course directory for the module (nbgrader's database in it, under tmp):
the source version and ``nbgrader_config.py`` written by the command,
``nbgrader generate_assignment`` for the student version, four submissions
autograded in one run (the course's answers, a blank notebook, three wrong
functions one of which ends the process, and cheats with a folder handed in
beside the notebook), then feedback and export.
"""

import csv
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

import learner_variants
from summarizer import exercises
from summarizer.assignment import handout

ASSIGNMENT = handout.ASSIGNMENT
NOTEBOOK = ASSIGNMENT + '.ipynb'
pytestmark = pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')

CRASH = '''
def next_symbol(cur_output_tokens, model):
  os._exit(3)
'''


def variant(name):
  return next(v for v in learner_variants.VARIANTS if v.name == name)


def nbgrader(course, *arguments):
  """Runs nbgrader in the course directory; returns its output."""
  bin_dir = os.path.dirname(sys.executable)  # nbgrader runs `alembic` from the PATH.
  env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get('PATH', ''))
  done = subprocess.run([sys.executable, '-m', 'nbgrader', *arguments], cwd=course,
                        env=env, capture_output=True, text=True, timeout=1800, check=False)
  assert done.returncode == 0, done.stdout + done.stderr
  return done.stdout + done.stderr


def submit(course, student, answers, files=()):
  """The student version with answers in their cells, and files beside it."""
  directory = os.path.join(course, 'submitted', student, ASSIGNMENT)
  os.makedirs(directory)
  release = nbformat.read(os.path.join(course, 'release', ASSIGNMENT, NOTEBOOK), as_version=4)
  for cell in release.cells:
    grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
    if grade_id in answers:
      cell.source = answers[grade_id]
  nbformat.write(release, os.path.join(directory, NOTEBOOK))
  for path, content in files:
    full = os.path.join(directory, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w', encoding='utf-8') as f:
      f.write(content)


def cheats():
  """Several cheats in one notebook, and the summarizer/ folder handed in beside it."""
  chosen = [c for c in learner_variants.CHEATS if c.name in (
      'checks._run replaced', 'an IPython AST transformer swallowing every error',
      'a summarizer/ folder handed in beside the notebook, its checks pass all',
      'a def wrapper', 'a copy.deepcopy', 'exec(inspect.getsource(...))')]
  folder = next(c for c in chosen if c.files)
  return {c.function: c.source for c in chosen}, folder.files


@pytest.fixture(scope='module')
def course(tmp_path_factory):
  course = str(tmp_path_factory.mktemp('course'))
  assert exercises.main(['--nbgrader', course]) == 0
  nbgrader(course, 'generate_assignment', ASSIGNMENT)
  wrong = dict(learner_variants.COURSE_ANSWERS, next_symbol=CRASH,
               CausalAttention=variant('no last Dense').source,
               greedy_decode=variant('does not stop at EOS').source)
  submit(course, 'course', learner_variants.COURSE_ANSWERS)
  submit(course, 'blank', {})
  submit(course, 'three_wrong', wrong)
  cheat_answers, files = cheats()
  submit(course, 'cheater', cheat_answers, files)
  log = nbgrader(course, 'autograde', ASSIGNMENT, '--create')
  nbgrader(course, 'generate_feedback', ASSIGNMENT)
  nbgrader(course, 'export')
  return course, log


def scores(course, student):
  """grade_id -> (score, max score) of a student's graded cells."""
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  with Gradebook(f'sqlite:///{course}/gradebook.db') as gradebook:
    notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
    return {grade.name: (grade.score, grade.max_score) for grade in notebook.grades}


def total(course, student):
  return sum(score for score, _ in scores(course, student).values())


def test_the_written_config_replaces_execute_by_the_sandbox(course):
  course_dir, log = course
  with open(os.path.join(course_dir, 'nbgrader_config.py'), encoding='utf-8') as f:
    config = f.read()
  assert 'SandboxedGrades' in config and 'Execute,' not in config
  assert 'c.ExecutePreprocessor.timeout = 300' in config
  assert log.count('Sandboxed grades') == 4


def test_the_courses_answers_get_full_marks_and_a_blank_nothing(course):
  course_dir, _ = course
  graded = scores(course_dir, 'course')
  assert set(graded) == {f'test_{name}' for name in handout.POINTS}
  assert total(course_dir, 'course') == 20
  assert total(course_dir, 'blank') == 0


def test_three_wrong_functions_lose_theirs_and_the_whole_models_only(course):
  course_dir, _ = course
  lost = {name for name, (score, _) in scores(course_dir, 'three_wrong').items() if score == 0}
  assert lost == {'test_CausalAttention', 'test_next_symbol', 'test_greedy_decode',
                  'test_trained_model', 'test_summary'}
  assert total(course_dir, 'three_wrong') == 10


def test_the_cheats_gain_nothing(course):
  course_dir, _ = course
  assert total(course_dir, 'cheater') == 0


def test_feedback_names_each_check_and_says_why(course):
  course_dir, _ = course
  page = os.path.join(course_dir, 'feedback', 'three_wrong', ASSIGNMENT, ASSIGNMENT + '.html')
  with open(page, encoding='utf-8') as f:
    html = f.read()
  assert 'Score: 10.0 / 20.0' in html
  assert 'Exercise 5: CausalAttention: 0 / 2' in html
  assert 'Exercise 6: DecoderBlock: 2 / 2' in html
  assert 'crashed (exit status 3' in html
  assert 'why: these functions fail their own checks' in html


def test_the_export_lists_every_student(course):
  course_dir, _ = course
  with open(os.path.join(course_dir, 'grades.csv'), encoding='utf-8') as f:
    rows = {row['student_id']: float(row['score']) for row in csv.DictReader(f)}
  assert rows == {'course': 20.0, 'blank': 0.0, 'three_wrong': 10.0, 'cheater': 0.0}
