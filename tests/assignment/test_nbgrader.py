"""Autograding with nbgrader itself: the teacher's source version, the student's
version, full marks for correct answers, lost points for wrong ones, feedback.

One course directory for the module (nbgrader's database in it, under tmp):
``python -m summarizer.exercises --nbgrader`` writes the source version,
``nbgrader generate_assignment`` the student version, and two submissions
are autograded in one run: one with the package's answers, one with three
wrong functions.
"""

import os
import subprocess
import sys

import nbformat
import pytest

import learner_variants
from summarizer.assignment import exercises

ASSIGNMENT = exercises.ASSIGNMENT
NOTEBOOK = ASSIGNMENT + '.ipynb'
# Three wrong functions, and the checks that fail with them: their own, and
# those built on them (test_summary runs greedy_decode).
WRONG = {
    'DotProductAttention': 'softmax with jax.nn.softmax (fully masked rows differ)',
    'training_loop': 'an eval-mode model',
    'greedy_decode': 'does not stop at EOS',
}
LOST = {'test_DotProductAttention', 'test_training_loop', 'test_greedy_decode',
        'test_summary'}


def nbgrader(course, *arguments):
  """Runs nbgrader in the course directory; returns its output."""
  bin_dir = os.path.dirname(sys.executable)  # nbgrader runs `alembic` from the PATH.
  env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get('PATH', ''))
  done = subprocess.run([sys.executable, '-m', 'nbgrader', *arguments], cwd=course,
                        env=env, capture_output=True, text=True, timeout=900, check=False)
  assert done.returncode == 0, done.stdout + done.stderr
  return done.stdout + done.stderr


def submit(course, student, notebook):
  directory = os.path.join(course, 'submitted', student, ASSIGNMENT)
  os.makedirs(directory)
  nbformat.write(notebook, os.path.join(directory, NOTEBOOK))


def answered(release, answers):
  """The student's notebook with each blank replaced by an answer (name -> function code)."""
  notebook = nbformat.read(release, as_version=4)
  for cell in notebook.cells:
    grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
    if grade_id in answers:
      cell.source = answers[grade_id]
  return notebook


@pytest.fixture(scope='module')
def course(tmp_path_factory):
  """A graded course: source, release, two autograded submissions, feedback."""
  course = str(tmp_path_factory.mktemp('course'))
  with open(os.path.join(course, 'nbgrader_config.py'), 'w', encoding='utf-8') as f:
    f.write('c = get_config()\n'
            "c.CourseDirectory.course_id = 'summarizer'\n"
            f"c.CourseDirectory.db_url = 'sqlite:///{course}/gradebook.db'\n"
            'c.ExecutePreprocessor.timeout = 600\n')
  assert exercises.main(['--nbgrader', course]) == 0
  nbgrader(course, 'generate_assignment', ASSIGNMENT)
  release = os.path.join(course, 'release', ASSIGNMENT, NOTEBOOK)
  correct = {name: exercises.solution_source(name) for name in exercises.GRADED}
  submit(course, 'correct', answered(release, correct))
  wrong = dict(correct)
  for variant in learner_variants.VARIANTS:
    if WRONG.get(variant.function) == variant.name:
      wrong[variant.function] = variant.source
  assert len([name for name in WRONG if wrong[name] != correct[name]]) == 3
  submit(course, 'three_wrong', answered(release, wrong))
  nbgrader(course, 'autograde', ASSIGNMENT, '--create')
  nbgrader(course, 'generate_feedback', ASSIGNMENT)
  return course


def scores(course, student):
  """grade_id -> (score, max score) of a student's graded cells."""
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  with Gradebook(f'sqlite:///{course}/gradebook.db') as gradebook:
    notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
    return {grade.name: (grade.score, grade.max_score) for grade in notebook.grades}


def test_the_source_holds_solutions_and_metadata(course):
  source = nbformat.read(os.path.join(course, 'source', ASSIGNMENT, NOTEBOOK), as_version=4)
  ids = [cell.metadata.nbgrader.grade_id for cell in source.cells]
  assert len(ids) == len(set(ids))
  solutions = [cell for cell in source.cells if cell.metadata.nbgrader.solution]
  assert [cell.metadata.nbgrader.grade_id for cell in solutions] == list(exercises.GRADED)
  assert all('### BEGIN SOLUTION' in cell.source and '### END SOLUTION' in cell.source
             for cell in solutions)
  graded = {cell.metadata.nbgrader.grade_id: cell.metadata.nbgrader.points
            for cell in source.cells if cell.metadata.nbgrader.grade}
  assert graded == {f'test_{name}': points for name, points in exercises.POINTS.items()}
  others = [cell for cell in source.cells if not cell.metadata.nbgrader.solution]
  assert all(cell.metadata.nbgrader.locked for cell in others)


def test_the_student_version_is_the_learners_notebook(course):
  release = nbformat.read(os.path.join(course, 'release', ASSIGNMENT, NOTEBOOK), as_version=4)
  learners = exercises.exercise_notebook()
  assert [cell.source for cell in release.cells] == [cell.source for cell in learners.cells]
  assert 'BEGIN SOLUTION' not in nbformat.writes(release)


def test_correct_answers_get_full_marks(course):
  graded = scores(course, 'correct')
  assert set(graded) == {f'test_{name}' for name in exercises.POINTS}
  assert all(score == points for score, points in graded.values())
  assert sum(score for score, _ in graded.values()) == sum(exercises.POINTS.values()) == 20


def test_the_correct_submission_ran_every_part(course):
  ran = nbformat.read(os.path.join(course, 'autograded', 'correct', ASSIGNMENT, NOTEBOOK),
                      as_version=4)
  printed = {cell.metadata.tags[0]: ''.join(output.get('text', '') for output in cell.outputs)
             for cell in ran.cells if cell.cell_type == 'code'}
  assert not any(output.output_type == 'error' for cell in ran.cells
                 if cell.cell_type == 'code' for output in cell.outputs)
  # Part 3: ten steps of the learner's loop, its loss at steps 1 and 10.
  assert printed['run:training'].count('train CrossEntropyLoss') == 2
  assert 'Step     10: train CrossEntropyLoss' in printed['run:training']
  # Part 5: the summary, token for token the package's.
  assert printed['check:summary'].startswith('Your summary:\n')
  assert printed['check:summary'].endswith('<EOS>\nAll tests passed\n')
  yours, packages = printed['check:summary'][len('Your summary:\n'):].split(
      "The package's summary:\n")
  assert packages == yours + 'All tests passed\n'


def test_three_wrong_functions_lose_their_checks_and_those_built_on_them(course):
  graded = scores(course, 'three_wrong')
  assert {name for name, (score, _) in graded.items() if score == 0} == LOST
  assert all(score == points for name, (score, points) in graded.items() if name not in LOST)


def test_feedback_pages_are_written(course):
  for student, total in (('correct', 20), ('three_wrong', 20 - 7)):
    page = os.path.join(course, 'feedback', student, ASSIGNMENT, ASSIGNMENT + '.html')
    with open(page, encoding='utf-8') as f:
      html = f.read()
    assert f'Score: {total:.1f} / 20.0' in html, student
