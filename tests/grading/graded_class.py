"""The class that nbgrader autogrades for the grading tests, built once a session.

The source version and ``nbgrader_config.py`` written by ``python -m
summarizer.exercises --nbgrader``, ``nbgrader generate_assignment`` for the
student version, then eleven submissions autograded in one run: the course's
answers, a blank notebook, three wrong functions one of which ends the
process, cheats with a folder handed in beside the notebook, three that
nbgrader alone cannot grade (a cell pasted twice with its metadata and
another's metadata in an old format, a renamed notebook with a byte that is
not UTF-8, a file that is no notebook), one with edited test cells, and the
class report's four (``REPORT_STUDENTS``: the same mistake in Exercise 1 twice,
one in Exercise 3 twice, one student with both, another mistake in Exercise 1);
then feedback and export. ``test_nbgrader.py`` and ``test_class_report.py``
read it (``conftest.py``'s ``graded_class`` fixture).
"""

import copy
import os
import subprocess
import sys

import nbformat

import learner_variants
from summarizer import exercises
from summarizer.contract import handout

ASSIGNMENT = handout.ASSIGNMENT
NOTEBOOK = ASSIGNMENT + '.ipynb'
UNSCALED = 'scores not scaled by sqrt(depth)'
UPPER_MASK = 'the mask above the diagonal (triu)'
OVER_QUERIES = 'weights normalised over the queries (axis -2)'
# The class report's students: name -> {graded function: the variant it is written as}.
REPORT_STUDENTS = {
    'r_ana': {'DotProductAttention': UNSCALED},
    'r_ben': {'DotProductAttention': UNSCALED, 'dot_product_self_attention': UPPER_MASK},
    'r_cleo': {'dot_product_self_attention': UPPER_MASK},
    'r_dan': {'DotProductAttention': OVER_QUERIES},
}


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


def submit_broken(course):
  """Three submissions nbgrader alone stops at or cannot read; sorted before the others."""
  release = os.path.join(course, 'release', ASSIGNMENT, NOTEBOOK)
  directory = os.path.join(course, 'submitted', 'a_duplicated', ASSIGNMENT)
  submit(course, 'a_duplicated', learner_variants.COURSE_ANSWERS)
  path = os.path.join(directory, NOTEBOOK)
  notebook = nbformat.read(path, as_version=4)
  [index] = [i for i, cell in enumerate(notebook.cells)
             if cell.metadata.get('nbgrader', {}).get('grade_id') == 'DotProductAttention']
  pasted = copy.deepcopy(notebook.cells[index])  # Jupyter's copy and paste, metadata too.
  pasted.source = variant('scores not scaled by sqrt(depth)').source
  del pasted['id']
  notebook.cells.insert(index, pasted)  # An earlier, wrong attempt above the answer.
  for cell in notebook.cells:
    if cell.metadata.get('nbgrader', {}).get('grade_id') == 'DecoderBlock':
      cell.metadata['nbgrader']['schema_version'] = 1  # An old format.
  nbformat.write(notebook, path)
  submit(course, 'b_renamed', dict(learner_variants.COURSE_ANSWERS, DotProductAttention=(
      '# caf\u00e9 \n' + learner_variants.COURSE_ANSWERS['DotProductAttention'])))
  directory = os.path.join(course, 'submitted', 'b_renamed', ASSIGNMENT)
  with open(os.path.join(directory, NOTEBOOK), encoding='utf-8') as f:
    data = f.read().encode('utf-8').replace('caf\u00e9'.encode('utf-8'), b'caf\xe9')
  os.remove(os.path.join(directory, NOTEBOOK))
  with open(os.path.join(directory, 'transformer_summarizer (1).ipynb'), 'wb') as f:
    f.write(data)  # Renamed, and one byte of Latin-1.
  directory = os.path.join(course, 'submitted', 'c_not_a_notebook', ASSIGNMENT)
  os.makedirs(directory)
  with open(os.path.join(directory, NOTEBOOK), 'w', encoding='utf-8') as f:
    f.write('{"cells": [')  # Cut short.
  assert os.path.isfile(release)
  submit_edited_tests(course)


def submit_edited_tests(course):
  """The course's answers with three test cells edited: points, source emptied, a solution."""
  submit(course, 'd_edited_tests', learner_variants.COURSE_ANSWERS)
  path = os.path.join(course, 'submitted', 'd_edited_tests', ASSIGNMENT, NOTEBOOK)
  notebook = nbformat.read(path, as_version=4)
  for cell in notebook.cells:
    nbgrader_metadata = cell.metadata.get('nbgrader', {})
    if nbgrader_metadata.get('grade_id') == 'test_DotProductAttention':
      nbgrader_metadata['points'] = 20
    elif nbgrader_metadata.get('grade_id') == 'test_CausalAttention':
      cell.source = ''
    elif nbgrader_metadata.get('grade_id') == 'test_DecoderBlock':
      nbgrader_metadata['solution'] = True
      cell.source = 'print("my own test")'
  nbformat.write(notebook, path)


def graded_class(course):
  """The class autograded in ``course`` (a new directory), feedback and export; nbgrader's log."""
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
  submit_broken(course)
  submit_report_students(course)
  log = nbgrader(course, 'autograde', ASSIGNMENT, '--create')
  nbgrader(course, 'generate_feedback', ASSIGNMENT)
  nbgrader(course, 'export')
  return course, log


def submit_report_students(course):
  """The class report's students: the course's answers but for their variants."""
  for student, wrong in REPORT_STUDENTS.items():
    submit(course, student, dict(learner_variants.COURSE_ANSWERS,
                                 **{name: variant(each).source for name, each in wrong.items()}))
