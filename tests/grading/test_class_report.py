"""The class report as a teacher meets it: after nbgrader autograde, one command, a page and a CSV.

The class is the one ``test_nbgrader.py`` grades (``graded_class.py``, graded
once a session): beside its students, two share a mistake in Exercise 1 (the
scores not scaled), two one in Exercise 3 (the mask above the diagonal), one
of them both, and one makes another mistake in Exercise 1. A copy of the
graded course, changed as a term changes it (a student who never handed in, one
not autograded yet, a grade given by hand, a notebook gone), shows the honest
edges.
"""

import csv
import hashlib
import io
import os
import shutil

import nbformat
import pytest

from summarizer import exercises
from summarizer.errors import SummarizerError
from summarizer.explorer import browser
from summarizer.grading import causes, class_report, report_page
from summarizer.grading.nbgrader_plugin import VERDICT

from .graded_class import ASSIGNMENT, REPORT_STUDENTS

try:
  browser.find()
  NO_CHROMIUM = None
except SummarizerError as e:
  NO_CHROMIUM = str(e)


def graded(test):
  """A test of the graded class: slow (nbgrader grades it, once a session), needs bubblewrap."""
  return pytest.mark.slow(pytest.mark.skipif(not shutil.which('bwrap'),
                                             reason='needs bubblewrap')(test))


HONEST = ('course', 'a_duplicated', 'b_renamed', 'd_edited_tests')
# The first screen's text as Chromium lays it out: each block of text whose top is above the fold.
FIRST_SCREEN = """
const blocks = document.querySelectorAll('h1, h2, p, li, summary, pre, div.apart');
return Array.from(blocks).filter(block => {
  const box = block.getBoundingClientRect();
  return box.height > 0 && box.top < window.innerHeight;
}).map(block => block.innerText.trim()).join('\\n');
"""


def digest(folder):
  """A digest of every file under ``folder``: what the report must leave as it was."""
  found = hashlib.sha256()
  for root, _, files in sorted(os.walk(folder)):
    for name in sorted(files):
      found.update(name.encode())
      with open(os.path.join(root, name), 'rb') as f:
        found.update(f.read())
  return found.hexdigest()


@pytest.fixture(scope='module')
def reported(graded_class, tmp_path_factory):
  """(course, the report read, its folder, the command's output, digests before and after)."""
  course, _ = graded_class
  out = str(tmp_path_factory.mktemp('report'))
  before = digest(course)
  said = io.StringIO()
  with pytest.MonkeyPatch.context() as patch:
    patch.setattr('sys.stdout', said)
    status = exercises.main(['--class-report', course, '--out', out])
  return course, class_report.read_course(course), out, (status, said.getvalue()), (
      before, digest(course))


def group_of(report, exercise, student):
  return next(group for group in report.groups[exercise] if student in group.students)


def status_of(report, exercise, student):
  return next(mark for mark in report.of(exercise) if mark.student == student).status


@graded
@pytest.mark.parametrize('exercise, variant', [('DotProductAttention', 'r_ana'),
                                               ('DotProductAttention', 'r_dan'),
                                               ('dot_product_self_attention', 'r_cleo')])
def test_the_groups_hold_exactly_the_students_with_that_mistake(reported, exercise, variant):
  _, report, _, _, _ = reported
  mistake = REPORT_STUDENTS[variant][exercise]
  sharing = {student for student, wrong in REPORT_STUDENTS.items() if wrong.get(exercise) == mistake}
  group = group_of(report, exercise, variant)
  assert set(group.students) == sharing
  assert group.marks[0].label.startswith('output; why: ')
  for student in HONEST:
    assert status_of(report, exercise, student) == causes.PASSED


@graded
def test_each_cause_is_its_own_group_and_what_is_no_mistake_is_apart(reported):
  _, report, _, _, _ = reported
  ex1 = report.groups['DotProductAttention']
  assert group_of(report, 'DotProductAttention', 'r_ana') is not group_of(
      report, 'DotProductAttention', 'r_dan')
  assert ex1[0].students == ['r_ana', 'r_ben']  # The largest first.
  assert 'not scaled' in ex1[0].marks[0].label and 'over the queries' in group_of(
      report, 'DotProductAttention', 'r_dan').marks[0].label
  assert 'NotImplementedError' in group_of(report, 'DotProductAttention', 'blank').marks[0].label
  assert group_of(report, 'next_symbol', 'three_wrong').marks[0].label.startswith('crashed')
  every_group = {student for groups in report.groups.values() for group in groups
                 for student in group.students}
  assert 'c_not_a_notebook' not in every_group
  assert {mark.status for mark in report.marks if mark.student == 'c_not_a_notebook'} == {
      class_report.NOTEBOOK_UNREADABLE}
  waiting = [mark for mark in report.marks if mark.status == class_report.BY_HAND_WAITING]
  assert waiting and {mark.student for mark in waiting} == {'cheater'}
  assert all(mark.reason and mark.points is None and not mark.group for mark in waiting)


@graded
def test_the_command_says_what_it_read_and_changes_no_grade_or_feedback(reported):
  course, report, out, (status, said), (before, after) = reported
  assert status == 0 and said.count('\n') == 1
  assert said.startswith(f'read {len(report.names)} students, 12 graded submissions and 12 '
                         'exercises of ')
  assert os.path.join(out, 'class_report.html') in said
  assert before == after  # The gradebook, the notebooks, the feedback: byte for byte.
  assert course


@graded
def test_the_csv_parses_a_row_a_student_and_exercise_one_text_a_group(reported):
  _, report, out, _, _ = reported
  with open(os.path.join(out, 'class_report.csv'), encoding='utf-8', newline='') as f:
    rows = list(csv.DictReader(f))
  assert {'student', 'exercise', 'points', 'max_points', 'group'} <= set(rows[0])
  assert len(rows) == len(report.names) * len(report.exercises)
  ana = {row['exercise']: row for row in rows if row['student'] == 'r_ana'}
  ben = {row['exercise']: row for row in rows if row['student'] == 'r_ben'}
  assert ana['DotProductAttention']['group'] == ben['DotProductAttention']['group'] != ''
  assert ana['DotProductAttention']['points'] == '0'
  assert ana['dot_product_self_attention']['group'] == '' and ana['CausalAttention'][
      'points'] == ana['CausalAttention']['max_points'] == '2'
  assert sum(float(row['points'] or 0) for row in rows if row['student'] == 'r_ben') == 14
  for row in rows:
    assert (row['group'] != '') == (row['status'] == causes.FAILED), row


@graded
def test_reporting_again_gives_the_same_groups(reported, tmp_path):
  course, _, out, _, _ = reported
  assert exercises.main(['--class-report', course, '--out', str(tmp_path)]) == 0
  for name in ('class_report.csv', 'class_report.html'):
    with open(os.path.join(out, name), 'rb') as f, open(tmp_path / name, 'rb') as g:
      assert f.read() == g.read(), name


@graded
@pytest.mark.skipif(NO_CHROMIUM is not None, reason=f'needs headless Chromium: {NO_CHROMIUM}')
def test_the_page_renders_offline_with_its_pictures(reported):
  _, report, out, _, _ = reported
  with browser.Chromium(width=1280, height=900, offline=True) as chrome:
    chrome.open(browser.file_url(os.path.join(out, 'class_report.html')),
                ready='document.readyState === "complete"')
    sizes = chrome.run("return Array.from(document.images).map("
                       "i => [i.id, i.complete, i.naturalWidth, i.naturalHeight]);")
    first = chrome.run(FIRST_SCREEN)
    order = chrome.run("return Array.from(document.querySelectorAll('h2[id]')).map(h => h.id);")
  assert [(each[0], each[1]) for each in sizes] == [('scores', True), ('pass-rates', True)]
  assert all(width > 300 and height > 200 for _, _, width, height in sizes)
  assert first.startswith(f'Class report: {ASSIGNMENT}') and 'Most failed' in first
  largest = first.split('The largest groups\n', 1)[1].splitlines()
  assert largest[0].startswith('Exercise 1: DotProductAttention: 2 (r_ana, r_ben): output; why: ')
  assert largest[1].startswith('Exercise 3: dot_product_self_attention: 2 (r_ben, r_cleo): ')
  failed = [report.failed(name) for name in order]
  assert failed == sorted(failed, reverse=True)  # The most failed first.
  print(first)


def changed_copy(course, folder):
  """The graded course copied, changed as a term changes it; returns the copy."""
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  copy = str(folder / 'course')
  shutil.copytree(course, copy)
  os.makedirs(os.path.join(copy, 'submitted', 'late', ASSIGNMENT))
  with Gradebook(f'sqlite:///{copy}/gradebook.db', course_id='summarizer') as gradebook:
    gradebook.add_student('absent', first_name='Ada', last_name='Absent')
    gradebook.add_student('late')
    grade = gradebook.find_grade('test_next_symbol', ASSIGNMENT, ASSIGNMENT, 'cheater')
    grade.manual_score = 1.0
    gradebook.db.commit()
  os.remove(os.path.join(copy, 'autograded', 'r_dan', ASSIGNMENT, ASSIGNMENT + '.ipynb'))
  path = os.path.join(copy, 'autograded', 'r_cleo', ASSIGNMENT, ASSIGNMENT + '.ipynb')
  notebook = nbformat.read(path, as_version=4)
  for cell in notebook.cells:
    record = cell.metadata.get(VERDICT)
    if record and record.get('status') == causes.FAILED:
      record.update(status=causes.STOPPED, why='stopped after 30 s (wall clock)', key='')
  nbformat.write(notebook, path)
  return copy


@graded
def test_what_is_no_mistake_is_shown_as_what_it_is(graded_class, tmp_path):
  course, _ = graded_class
  report = class_report.read_course(changed_copy(course, tmp_path))
  assert status_of(report, 'DotProductAttention', 'absent') == class_report.NOT_SUBMITTED
  assert report.names['absent'] == 'Ada Absent (absent)'
  assert status_of(report, 'DotProductAttention', 'late') == class_report.NOT_AUTOGRADED
  assert status_of(report, 'DotProductAttention', 'r_dan') == class_report.NO_FEEDBACK
  assert status_of(report, 'dot_product_self_attention', 'r_cleo') == causes.STOPPED
  assert status_of(report, 'next_symbol', 'cheater') == class_report.BY_HAND_GIVEN
  grouped = {student for groups in report.groups.values() for group in groups
             for student in group.students}
  assert not grouped & {'absent', 'late', 'r_dan', 'r_cleo'}
  assert group_of(report, 'dot_product_self_attention', 'r_ben').students == ['r_ben']
  page = report_page.page_html(report)
  for said in (class_report.NOT_SUBMITTED, class_report.NOT_AUTOGRADED, causes.STOPPED,
               class_report.NO_FEEDBACK, class_report.BY_HAND_GIVEN, 'Ada Absent'):
    assert said in page, said


@graded
def test_a_course_with_no_graded_submission_is_one_line_exit_2(graded_class, tmp_path, capsys):
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  course, _ = graded_class
  copy = str(tmp_path / 'course')
  shutil.copytree(course, copy)
  with Gradebook(f'sqlite:///{copy}/gradebook.db', course_id='summarizer') as gradebook:
    for student in gradebook.students:
      gradebook.remove_submission(ASSIGNMENT, student.id)
  assert exercises.main(['--class-report', copy, '--out', str(tmp_path / 'out')]) == 2
  said = capsys.readouterr()
  assert said.err.count('\n') == 1 and 'no graded submission' in said.err
  assert not os.path.exists(tmp_path / 'out' / 'class_report.html')


@pytest.mark.parametrize('course', ['missing', 'empty'])
def test_a_bad_course_path_is_one_line_exit_2(course, tmp_path, capsys):
  (tmp_path / 'empty').mkdir()
  assert exercises.main(['--class-report', str(tmp_path / course),
                         '--out', str(tmp_path / 'out')]) == 2
  said = capsys.readouterr()
  assert said.err.count('\n') == 1 and said.err.startswith('error: ') and not said.out
  assert not os.path.exists(tmp_path / 'out')


def test_without_out_it_says_what_is_missing(tmp_path, capsys):
  assert exercises.main(['--class-report', str(tmp_path)]) == 2
  assert '--out DIR' in capsys.readouterr().err
