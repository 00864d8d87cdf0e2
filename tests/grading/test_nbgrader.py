"""Autograding with nbgrader itself, as notebooks/README.md runs a course: the config that
``python -m summarizer.exercises --nbgrader`` writes grades in the sandbox.

One course directory for the session (nbgrader's database in it, under tmp),
graded once for these tests and the class report's (``graded_class.py``, the
``graded_class`` fixture of ``conftest.py``): the source version and
``nbgrader_config.py`` written by the command, ``nbgrader generate_assignment``
for the student version, eleven submissions autograded in one run, then
feedback and export.
"""

import csv
import os
import shutil

import pytest

from summarizer.contract import handout

from .graded_class import ASSIGNMENT, NOTEBOOK

pytestmark = [pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap'),
              pytest.mark.slow]  # Each test grades with nbgrader.


@pytest.fixture(scope='module')
def course(graded_class):
  return graded_class


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
  assert log.count('Sandboxed grades') == 11  # All but the file that is no notebook.


def test_the_class_is_graded_ahead_side_by_side_and_each_verdict_used_once(course):
  course_dir, log = course
  with open(os.path.join(course_dir, 'nbgrader_config.py'), encoding='utf-8') as f:
    assert 'c.SandboxedGrades.graders = 0' in f.read()
  # Every submission readable under the assignment's name is graded ahead, the
  # first one's included; the renamed one (a name nbgrader's hook changes) in its turn.
  assert 'Grading ahead: 10 submissions, ' in log and 'Graded ahead: 10 of 10' in log
  assert log.count(', graded ahead)') == 10, [line for line in log.splitlines()
                                               if 'ahead' in line or 'Sandboxed' in line]


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
  report = {'r_ana': 15.0, 'r_ben': 14.0, 'r_cleo': 15.0, 'r_dan': 15.0}
  assert {student: score for student, score in rows.items() if student not in report} == {
      'course': 20.0, 'blank': 0.0, 'three_wrong': 10.0, 'cheater': 0.0, 'a_duplicated': 20.0,
      'b_renamed': 20.0, 'c_not_a_notebook': 0.0, 'd_edited_tests': 20.0}
  # The class report's students: listed, and no more than their mistakes leave them (on a
  # machine far busier than its cores, a run of theirs may also stop at its wall-clock limit).
  assert set(report) <= set(rows) and all(rows[s] <= most for s, most in report.items())


def comments(course, student):
  """grade_id -> the automatic comment of each answer cell, from the gradebook."""
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  with Gradebook(f'sqlite:///{course}/gradebook.db') as gradebook:
    notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
    return {comment.name: comment.auto_comment for comment in notebook.comments}


def feedback(course, student):
  page = os.path.join(course, 'feedback', student, ASSIGNMENT, ASSIGNMENT + '.html')
  with open(page, encoding='utf-8') as f:
    return f.read()


def test_a_cell_pasted_twice_and_an_old_format_are_graded_the_last_copy_counts(course):
  # nbgrader alone stops here for this student and every one after it ("an old
  # version of the nbgrader metadata format"); the first copy is wrong, the last right.
  course_dir, log = course
  assert 'old version of the nbgrader metadata format' not in log
  assert total(course_dir, 'a_duplicated') == 20
  said = comments(course_dir, 'a_duplicated')['DotProductAttention']
  assert 'duplicates DotProductAttention (the last one is graded)' in said
  assert 'had broken nbgrader metadata' in said
  assert 'duplicates DotProductAttention (the last one is graded)' in feedback(
      course_dir, 'a_duplicated')


def test_a_renamed_notebook_with_a_byte_not_utf_8_is_graded_and_says_so(course):
  course_dir, _ = course
  assert total(course_dir, 'b_renamed') == 20
  said = comments(course_dir, 'b_renamed')['greedy_decode']
  assert said.startswith('handed in as transformer_summarizer (1).ipynb: graded as '
                         f'{NOTEBOOK}; byte ')
  assert 'is not UTF-8: read with the bad bytes replaced' in said
  assert 'is not UTF-8' in feedback(course_dir, 'b_renamed')


def test_a_file_that_is_no_notebook_gets_0_and_the_reason(course):
  course_dir, _ = course
  graded = scores(course_dir, 'c_not_a_notebook')
  assert set(graded) == {f'test_{name}' for name in handout.POINTS}
  assert total(course_dir, 'c_not_a_notebook') == 0
  reason = comments(course_dir, 'c_not_a_notebook')['DotProductAttention']
  assert reason.startswith('the notebook cannot be read (') and '\n' not in reason
  assert 'the notebook cannot be read' in feedback(course_dir, 'c_not_a_notebook')


def test_edited_test_cells_are_graded_as_released_and_the_feedback_says_so(course):
  # nbgrader alone stops this student: "Inconsistent checksums for cell test_DecoderBlock".
  course_dir, log = course
  assert 'Inconsistent checksums' not in log
  assert scores(course_dir, 'd_edited_tests')['test_DotProductAttention'] == (1, 1)
  assert total(course_dir, 'd_edited_tests') == 20
  said = comments(course_dir, 'd_edited_tests')['DotProductAttention']
  for edit in ("(test_DotProductAttention) is the teacher's: its points edited",
               "(test_CausalAttention) is the teacher's: its source edited",
               "(test_DecoderBlock) is the teacher's: its solution, source edited"):
    assert edit in said, said
  assert 'graded as released' in feedback(course_dir, 'd_edited_tests')
