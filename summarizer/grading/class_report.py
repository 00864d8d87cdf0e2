"""The class report: what a class got wrong after ``nbgrader autograde``, grouped by cause.

``read_course(COURSE)`` reads the course's gradebook (``gradebook.db``,
opened read-only: nothing in it is changed) for each student's points, and
each autograded notebook for what the grader kept beside its feedback: every
graded cell's verdict record (``nbgrader_plugin.VERDICT``, its cause from
``causes.py``) and its feedback text. ``group`` puts the students whose
failure has the same cause (the same key) in one group, per exercise. What is
not a mistake is kept apart, as what it is: a student with no submission or
one not autograded, a notebook that could not be read, a run stopped at a
limit or never run, a grade a teacher gives by hand (given or not yet), a
notebook graded before its causes were kept. ``report_page.py`` writes the page
and the CSV.
"""

import dataclasses
import os
import sqlite3

import nbformat

from summarizer.contract import handout
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED
from summarizer.grading import causes, grader
from summarizer.grading.nbgrader_plugin import UNREADABLE, VERDICT

# What a student's exercise is when it is not a mistake (``causes`` names the grader's own).
NOT_SUBMITTED = 'no submission'
NOT_AUTOGRADED = 'submitted, not autograded yet'
NO_GRADE = 'no grade in the gradebook'
NO_FEEDBACK = 'its autograded notebook could not be read'
NO_RECORD = 'graded before causes were kept (autograde again to group it)'
BY_HAND_WAITING = 'by hand: no grade given yet'
BY_HAND_GIVEN = 'graded by hand'
NOTEBOOK_UNREADABLE = 'the notebook handed in could not be read'
# Statuses that cost the points automatically, counted as failed (the rest are waiting or absent).
LOST = (causes.FAILED, causes.STOPPED, causes.NOT_RUN, NOTEBOOK_UNREADABLE)
FEEDBACK_LINES = 30  # The most of a representative feedback text the page shows.


@dataclasses.dataclass
class Mark:
  """One student's result in one exercise.

  Attributes:
    student: The student's id.
    exercise: The graded name (the function's, or 'trained_model', 'summary').
    points, max_points: From the gradebook (points None where there is no grade).
    status: ``causes.PASSED``, ``causes.FAILED`` or what it is instead (above).
    key, label: The cause's key and its words (a failure only).
    line: The learner's line the feedback names, or ''.
    text: The feedback the student reads in that cell.
    code: The student's own cell of that function (its solution cell), or ''.
    reason: Why, for what is not a pass or a mistake (a limit, a teacher's grade).
    group: The group's text (``group``), '' where it is in none.
  """
  student: str
  exercise: str
  points: float
  max_points: float
  status: str
  key: str = ''
  label: str = ''
  line: str = ''
  text: str = ''
  code: str = ''
  reason: str = ''
  group: str = ''


@dataclasses.dataclass
class Group:
  """Students of one exercise whose failure has one cause."""
  exercise: str
  text: str
  marks: list

  @property
  def students(self):
    return [mark.student for mark in self.marks]


@dataclasses.dataclass
class ClassReport:
  """What ``read_course`` read, grouped.

  Attributes:
    course: The course directory.
    assignment: The assignment read.
    names: {student id: the name to show}.
    totals: {student id: the gradebook's total}, for each graded submission.
    max_total: The assignment's points.
    exercises: [(graded name, title, max points)] in the notebook's order.
    marks: Every ``Mark``, students in order of their ids, exercises in order.
    groups: {graded name: [Group]}, the largest first.
  """
  course: str
  assignment: str
  names: dict
  totals: dict
  max_total: float
  exercises: list
  marks: list
  groups: dict = dataclasses.field(default_factory=dict)

  def of(self, exercise):
    return [mark for mark in self.marks if mark.exercise == exercise]

  def failed(self, exercise):
    """How many students lost an exercise's points automatically."""
    return sum(mark.status in LOST for mark in self.of(exercise))


def database(course):
  """The course's gradebook file; a one-line error where there is none."""
  if not os.path.isdir(course):
    raise SummarizerError(f'{course}: no such course directory')
  path = os.path.join(course, 'gradebook.db')
  if not os.path.isfile(path):
    raise SummarizerError(f'{course}: no gradebook.db (run nbgrader autograde in it first)')
  return path


def _read_only(path):
  """The database's SQLAlchemy URL, read-only, and its course id (nbgrader writes one if absent)."""
  uri = f'file:{os.path.abspath(path)}?mode=ro'
  try:
    with sqlite3.connect(uri, uri=True) as connection:
      ids = [row[0] for row in connection.execute('SELECT id FROM course')]
  except sqlite3.Error as error:
    raise SummarizerError(f'{path}: not a gradebook nbgrader can read ({error})') from None
  return f'sqlite:///{uri}&uri=true', (ids[0] if ids else '')


def read_course(course, assignment=handout.ASSIGNMENT):
  """The class report of ``assignment`` in the course directory ``course``, grouped."""
  from nbgrader.api import Gradebook, MissingEntry  # pylint: disable=g-import-not-at-top
  url, course_id = _read_only(database(course))
  try:
    with Gradebook(url, course_id=course_id) as gradebook:
      try:
        released = gradebook.find_notebook(assignment, assignment)
      except MissingEntry:
        raise SummarizerError(f'{course}: the gradebook has no assignment {assignment} '
                              '(run nbgrader generate_assignment and autograde)') from None
      maxima = {cell.name[len('test_'):]: float(cell.max_score) for cell in released.grade_cells}
      students = sorted(gradebook.students, key=lambda student: student.id)
      names = {student.id: _name(student) for student in students}
      marks, totals, titles = [], {}, {}
      for student in students:
        graded = _student_marks(gradebook, course, assignment, student.id, maxima, titles)
        marks += graded[0]
        if graded[1] is not None:
          totals[student.id] = graded[1]
  except SummarizerError:
    raise
  except Exception as error:  # pylint: disable=broad-except  # SQLAlchemy's, nbgrader's: one line.
    raise SummarizerError(f'{course}: the gradebook cannot be read ({str(error)[:200]})') from None
  exercises = [(name, titles.get(name) or _title(name), maxima[name]) for name in handout.POINTS
               if name in maxima]
  report = ClassReport(course, assignment, names, totals, sum(maxima.values()), exercises,
                       marks)
  group(report)
  return report


def _name(student):
  full = ' '.join(filter(None, (student.first_name, student.last_name)))
  return f'{full} ({student.id})' if full else student.id


def _title(name):
  """An exercise's title where no feedback says it ('Exercise 1: DotProductAttention')."""
  if name in GRADED:
    return grader.title(name)
  return name.replace('_', ' ')


def _student_marks(gradebook, course, assignment, student, maxima, titles):
  """(the student's marks, their total or None where nothing is graded); ``titles`` filled."""
  from nbgrader.api import MissingEntry  # pylint: disable=g-import-not-at-top
  try:
    notebook = gradebook.find_submission_notebook(assignment, assignment, student)
  except MissingEntry:
    submitted = os.path.isdir(os.path.join(course, 'submitted', student, assignment))
    status = NOT_AUTOGRADED if submitted else NOT_SUBMITTED
    return [Mark(student, name, None, points, status) for name, points in maxima.items()], None
  grades = {grade.name[len('test_'):]: grade for grade in notebook.grades}
  records = read_records(os.path.join(course, 'autograded', student, assignment,
                                      assignment + '.ipynb'))
  for name, each in (records or {}).items():
    if (each.get('record') or {}).get('title'):
      titles.setdefault(name, each['record']['title'])
  marks = [_mark(student, name, points, grades.get(name), records) for name, points in
           maxima.items()]
  return marks, sum(mark.points or 0 for mark in marks)


def read_records(path):
  """{graded name: {'record', 'text', 'code'}} of an autograded notebook; None where unreadable.

  'record' is the verdict record its graded cell keeps (None if it keeps
  none), 'text' the feedback that cell shows, 'code' the student's own cell
  of the function.
  """
  try:
    notebook = nbformat.read(path, as_version=4)
  except Exception:  # pylint: disable=broad-except  # Missing, cut short, not JSON: said so.
    return None
  found = {}
  for cell in notebook.cells:
    nbgrader = cell.get('metadata', {}).get('nbgrader') or {}
    grade_id = nbgrader.get('grade_id') or ''
    if cell.get('cell_type') != 'code' or not grade_id:
      continue
    if nbgrader.get('solution'):
      found.setdefault(grade_id, {})['code'] = cell.get('source', '')
    elif grade_id.startswith('test_'):
      record = cell.metadata.get(VERDICT)
      found.setdefault(grade_id[len('test_'):], {}).update(
          record=record if isinstance(record, dict) else None,
          text=''.join(output.get('text', '') for output in cell.get('outputs', [])
                       if output.get('output_type') == 'stream'))
  return found


def _mark(student, name, max_points, grade, records):
  """One student's mark in one exercise, from its grade and its verdict record."""
  if grade is None:
    return Mark(student, name, None, max_points, NO_GRADE)
  mark = Mark(student, name, float(grade.score), max_points, causes.PASSED)
  if grade.manual_score is not None:
    return dataclasses.replace(mark, status=BY_HAND_GIVEN, reason=_said(records, name, 'manual'))
  if grade.needs_manual_grade and grade.auto_score is None:
    return dataclasses.replace(mark, points=None, status=BY_HAND_WAITING,
                               reason=_said(records, name, 'manual'))
  if records is None:
    return dataclasses.replace(mark, status=NO_FEEDBACK)
  found = records.get(name) or {}
  record, mark.text, mark.code = found.get('record'), found.get('text', ''), found.get('code', '')
  if mark.points >= max_points:
    return mark
  if record is None:
    return dataclasses.replace(mark, status=NO_RECORD)
  status = record.get('status')
  if status == UNREADABLE:
    return dataclasses.replace(mark, status=NOTEBOOK_UNREADABLE, reason=record.get('why', ''))
  if status in (causes.STOPPED, causes.NOT_RUN):
    return dataclasses.replace(mark, status=status, reason=record.get('why', ''))
  return dataclasses.replace(mark, status=causes.FAILED, key=record.get('key', ''),
                             label=record.get('label', ''), line=record.get('line', ''))


def _said(records, name, field):
  record = ((records or {}).get(name) or {}).get('record')
  return str((record or {}).get(field) or '')


def group(report):
  """Fills ``report.groups`` and each failed mark's ``group``: one group a cause, largest first.

  The groups' order and numbers depend only on who is in them (then the key),
  so reading the same grades again gives the same groups.
  """
  for name, title, _ in report.exercises:
    by_key = {}
    for mark in report.of(name):
      if mark.status == causes.FAILED:
        by_key.setdefault(mark.key, []).append(mark)
    ordered = sorted(by_key.items(), key=lambda item: (-len(item[1]), item[0]))
    groups = []
    for number, (_, marks) in enumerate(ordered, 1):
      text = f'{title}, cause {number}: {marks[0].label}'
      for mark in marks:
        mark.group = text
      groups.append(Group(name, text, marks))
    report.groups[name] = groups
  return report


def not_mistakes(report, exercise):
  """The marks of an exercise that are neither a pass nor a mistake, by what they are."""
  apart = {}
  for mark in report.of(exercise):
    if mark.status not in (causes.PASSED, causes.FAILED):
      apart.setdefault(mark.status, []).append(mark)
  return apart


def feedback_excerpt(text):
  """A representative feedback text, at most ``FEEDBACK_LINES`` lines."""
  lines = text.rstrip('\n').splitlines()
  if len(lines) <= FEEDBACK_LINES:
    return '\n'.join(lines)
  return '\n'.join(lines[:FEEDBACK_LINES] + [f'... ({len(lines) - FEEDBACK_LINES} more lines)'])

