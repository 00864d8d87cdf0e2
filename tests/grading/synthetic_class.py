"""A class of N made from a graded one, to time the class report on (notebooks/README.md).

  .venv/bin/python tests/grading/synthetic_class.py GRADED_COURSE 30 NEW_COURSE

Grading 30 students through nbgrader takes many minutes and changes nothing
the report reads: its gradebook rows and autograded notebooks. So the new
course is the graded one's directory with N students ``s01``, ``s02``, ...,
each a copy of one graded student in turn (their autograded notebook, their
grades and comments in the gradebook), as ``nbgrader autograde`` would have
left them.
"""

import os
import shutil
import sys
import warnings

from nbgrader.api import Gradebook

from summarizer.contract.handout import ASSIGNMENT


def synthesise(graded, size, course):
  """Writes the course of ``size`` students at ``course`` from the graded course ``graded``."""
  shutil.copytree(graded, course, ignore=shutil.ignore_patterns('autograded', 'submitted',
                                                               'feedback', 'grades.csv'))
  with Gradebook(f'sqlite:///{course}/gradebook.db', course_id='summarizer') as gradebook:
    sources = sorted(s.id for s in gradebook.students if _graded(gradebook, s.id))
    for student in list(gradebook.students):
      gradebook.remove_student(student.id)
    for k in range(size):
      source, student = sources[k % len(sources)], f's{k + 1:02d}'
      gradebook.add_student(student)
      _copy_submission(gradebook, graded, source, student)
      shutil.copytree(os.path.join(graded, 'autograded', source),
                      os.path.join(course, 'autograded', student))
    gradebook.db.commit()


def _graded(gradebook, student):
  try:
    gradebook.find_submission(ASSIGNMENT, student)
    return True
  except Exception:  # pylint: disable=broad-except  # MissingEntry: not graded.
    return False


def _copy_submission(gradebook, graded, source, student):
  """The student's gradebook rows: the source student's grades and comments."""
  with Gradebook(f'sqlite:///{graded}/gradebook.db', course_id='summarizer') as theirs:
    notebook = theirs.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, source)
    grades = {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade)
              for g in notebook.grades}
    comments = {c.name: c.auto_comment for c in notebook.comments}
  gradebook.add_submission(ASSIGNMENT, student)
  mine = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
  for grade in mine.grades:
    grade.auto_score, grade.manual_score, grade.needs_manual_grade = grades[grade.name]
  for comment in mine.comments:
    comment.auto_comment = comments.get(comment.name)


if __name__ == '__main__':
  warnings.simplefilter('ignore')  # SQLAlchemy's on nbgrader's own add_submission.
  synthesise(sys.argv[1], int(sys.argv[2]), sys.argv[3])
