"""nbgrader grades with the sandboxed verdict: a preprocessor, and the course's config.

``SandboxedGrades`` takes the place of nbgrader's ``Execute`` in
``Autograde.autograde_preprocessors``: the submission's solution cells are
graded by ``grader.grade`` (in the sandbox), and each graded cell's outputs
become its verdict: what failed and why as text, and an error output when it
failed, which nbgrader's ``SaveAutoGrades`` reads as 0 points (all points
otherwise). The learner's code never runs in a kernel of the teacher's.
A cell graded by hand (code built at run time, see ``static_reading.py``) is left to
the teacher after ``SaveAutoGrades`` by ``RecordReason``: no automatic
score, nbgrader's "needs manual grade", and the reason as the comment of
the function's cell.

``config_source()`` is the ``nbgrader_config.py`` that ``python -m
summarizer.exercises --nbgrader DIR`` writes.
"""

import os
import shutil

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from summarizer.contract import handout
from summarizer.grading import class_run, grader
from summarizer.contract.recording import GRADED
from summarizer.grading.sandbox import require_linux

# Where a repaired submission says what was repaired, or why it cannot be graded.
REASON = 'summarizer_grading'
# Where SandboxedGrades tells RecordReason the graded cells a teacher grades (grade_id -> why).
BY_HAND = 'summarizer_by_hand'
# Where each graded cell of an autograded notebook keeps its verdict's cause (``causes.py``),
# for the class report; its outputs, the feedback, stay the prose a learner reads.
VERDICT = 'summarizer_verdict'
UNREADABLE = 'unreadable'

# The slowest cell of the notebook measured here (Part 3's ten training
# steps: 36 s here, niced, load 3 on 2 cores), with a margin of eight: `nbgrader validate` and any
# pipeline that runs the notebook in a kernel use it as each cell's limit.
CELL_TIMEOUT = 300


class SandboxedGrades(NbGraderPreprocessor):
  """Writes each graded cell's verdict, computed in the sandbox, as its output."""

  sandbox = Unicode('bwrap', help="The sandbox: 'bwrap', or 'process' (weaker: nothing "
                    'hidden, nothing read-only; only where bubblewrap cannot be '
                    'installed)').tag(config=True)
  graders = Integer(0, help='Submissions graded at once, each in its own sandbox (0: one '
                    'a core this process may use; 1: one after another)').tag(config=True)

  def preprocess(self, nb, resources):
    require_linux()
    said = nb.metadata.get(REASON) or {}
    if said.get('unreadable'):
      verdicts, seed = {}, None
      self.log.warning('Not graded: %s', said['unreadable'])
    else:
      report, ahead = self._report(nb, resources)
      self.log.info('Sandboxed grades (seed %s, %s s%s): %g / %g', report.seed, report.seconds,
                    ', graded ahead' if ahead else '', report.total, report.max_total)
      verdicts, seed = {verdict.grade_id: verdict for verdict in report.verdicts}, report.seed
    reason = said.get('unreadable') or said.get('repaired')
    for cell in nb.cells:
      grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
      if cell.cell_type == 'code' and grade_id in verdicts:
        verdict = verdicts[grade_id]
        if reason:
          verdict.notes.append(reason)
        cell.outputs = outputs(verdict, seed)
        cell.execution_count = None
        cell.metadata[VERDICT] = verdict_record(verdict)
      elif cell.cell_type == 'code' and said.get('unreadable') and _points(grade_id):
        name = grade_id[len('test_'):]
        title = grader.title(name) if name in GRADED else grade_id
        verdict = grader.Verdict(grade_id, title, 0, _points(grade_id), [said['unreadable']], [],
                                 cause={'status': UNREADABLE, 'why': said['unreadable']})
        cell.outputs = outputs(verdict, None)
        cell.metadata[VERDICT] = verdict_record(verdict)
    if reason:
      resources.setdefault('nbgrader', {})[REASON] = reason
    by_hand = {grade_id: verdict.manual for grade_id, verdict in verdicts.items() if verdict.manual}
    if by_hand:
      resources.setdefault('nbgrader', {})[BY_HAND] = by_hand
    return nb, resources

  def _report(self, nb, resources):
    """(report, whether graded ahead with its class, ``class_run.py``, or now)."""
    graders = class_run.graders_for(self.graders)
    converter = getattr(self.parent, 'parent', None)
    here = resources.get('nbgrader', {})
    started = (here.get('assignment'), here.get('notebook'))
    if graders > 1 and hasattr(converter, 'assignments') and started not in class_run.AHEAD.started:
      class_run.AHEAD.started.add(started)
      class_run.AHEAD.grade_class(nb, class_run.class_notebooks(converter, resources), graders,
                                  self.sandbox, self.log)
    report = class_run.AHEAD.take(nb)
    return (report, True) if report else (grader.grade(nb, mode=self.sandbox), False)


def verdict_record(verdict):
  """What a graded cell's metadata keeps of its verdict: its points and its cause, as JSON."""
  return {'title': verdict.title, 'points': verdict.points, 'max_points': verdict.max_points,
          'manual': verdict.manual, **(verdict.cause or {})}


def _points(grade_id):
  return handout.POINTS.get((grade_id or '')[len('test_'):]) if grade_id else None


class RepairMetadata(NbGraderPreprocessor):
  """Before nbgrader's own checks: metadata nbgrader would stop at, made gradable.

  A cell duplicated with its metadata (Jupyter's copy and paste): the last
  one keeps the grade id, as Jupyter shows it, the others become the
  learner's own cells (nbgrader's DeduplicateIds would leave them an empty
  metadata that its CheckCellMetadata reads as an old format, and stop).
  Old or broken metadata of a cell of the assignment is the teacher's again;
  of any other cell, it is dropped. A locked cell of the teacher's (a graded
  test, the setup) whose source, points or flags were edited is the
  released one again (``restore_teachers_cells``: nbgrader would stop the
  student at "Inconsistent checksums"). What was repaired is said on the
  feedback page.
  """

  def preprocess(self, nb, resources):
    repaired = self.repair_ids(nb) + restore_teachers_cells(nb, resources)
    if repaired:
      said = nb.metadata.setdefault(REASON, {})
      said['repaired'] = '; '.join(filter(None, [said.get('repaired'), *repaired]))
      self.log.warning('Repaired: %s', said['repaired'])
    return nb, resources

  @staticmethod
  def repair_ids(nb):
    """Duplicated grade ids and broken metadata; returns what was repaired."""
    validator, repaired = MetadataValidator(), []
    ids = [_grade_id(cell) for cell in nb.cells]
    for index, cell in enumerate(nb.cells):
      grade_id = ids[index]
      if grade_id and grade_id in ids[index + 1:]:
        del cell.metadata['nbgrader']
        repaired.append(f'cell {index + 1} duplicates {grade_id} (the last one is graded)')
      elif 'nbgrader' in cell.get('metadata', {}) and not _valid(validator, cell):
        teacher = _teachers_metadata(grade_id)
        if teacher:
          cell.metadata['nbgrader'] = teacher
        else:
          del cell.metadata['nbgrader']
        repaired.append(f'cell {index + 1} had broken nbgrader metadata')
    return repaired


def restore_teachers_cells(nb, resources):
  """The teacher's locked cells as the gradebook holds them (the release); what was restored.

  A learner's edit to a test cell (its points, its source emptied, flagged as
  a solution) never counts: the cell is graded as released, and the feedback
  says which cell was restored and what had changed.
  """
  info = resources.get('nbgrader') or {}
  if not info.get('db_url'):
    return []
  restored = []
  with Gradebook(info['db_url']) as gradebook:
    try:
      released = gradebook.find_notebook(info['notebook'], info['assignment'])
    except MissingEntry:
      return []
    locked = {cell.name: cell for cell in released.source_cells if cell.locked}
    points = {cell.name: float(cell.max_score) for cell in released.grade_cells}
    solutions = {cell.name for cell in released.solution_cells}
    for index, cell in enumerate(nb.cells):
      teacher = locked.get(_grade_id(cell))
      if teacher is None:
        continue
      flags = {'grade': teacher.name in points, 'solution': teacher.name in solutions,
               'locked': True, **({'points': points[teacher.name]} if teacher.name in points
                                  else {})}
      mine = cell.metadata['nbgrader']
      changed = [key for key, value in flags.items() if mine.get(key) != value]
      if _text(cell.get('source')) != teacher.source:
        changed.append('source')
      if changed:
        mine.update(flags, checksum=teacher.checksum)
        cell.source = teacher.source
        restored.append(f'cell {index + 1} ({teacher.name}) is the teacher\'s: its '
                        f'{", ".join(changed)} edited, graded as released')
  return restored


def _text(source):
  return ''.join(source) if isinstance(source, list) else str(source or '')


def _grade_id(cell):
  nbgrader = cell.get('metadata', {}).get('nbgrader')
  grade_id = nbgrader.get('grade_id') if isinstance(nbgrader, dict) else None
  return grade_id if isinstance(grade_id, str) and grade_id else None


def _valid(validator, cell):
  try:
    validator.validate_cell(cell)
    return True
  except Exception:  # pylint: disable=broad-except  # Too old, too new, not the schema.
    return False


def _teachers_metadata(grade_id):
  """The source version's metadata of a cell of the assignment, or None."""
  if grade_id in GRADED:
    return handout.nbgrader_metadata(grade_id, solution=True)
  if _points(grade_id):
    return handout.nbgrader_metadata(grade_id, points=_points(grade_id))
  return None


class RecordReason(NbGraderPreprocessor):
  """After SaveAutoGrades: what was repaired, why nothing was graded, what a teacher grades.

  What was repaired, or why nothing was graded, is written as the automatic
  comment of every answer cell (the gradebook's place for a line on a cell,
  shown on the feedback page). A graded cell a teacher grades by hand loses
  its automatic score and is marked as nbgrader marks an answer it cannot
  score (``needs_manual_grade``, no ``auto_score``: the formgrader lists it
  as "needs manual grade", the total counts it 0 until a teacher scores
  it); the reason is added to its function's comment.
  """

  def preprocess(self, nb, resources):
    info = resources.get('nbgrader', {})
    reason, by_hand = info.get(REASON), info.get(BY_HAND) or {}
    if not reason and not by_hand:
      return nb, resources
    where = (info['notebook'], info['assignment'], info['student'])
    with Gradebook(info['db_url']) as gradebook:
      for grade_id in by_hand:
        grade = gradebook.find_grade(grade_id, *where)
        grade.auto_score, grade.needs_manual_grade = None, True
      for cell in nb.cells:
        nbgrader = cell.metadata.get('nbgrader', {})
        if nbgrader.get('solution'):
          said = [reason, by_hand.get('test_' + nbgrader['grade_id'])]
          if any(said):
            comment = gradebook.find_comment(nbgrader['grade_id'], *where)
            comment.auto_comment = '; '.join(filter(None, said))
      gradebook.db.commit()
    return nb, resources


def repair_submission(assignment, student, notebooks):
  """nbgrader's pre-convert hook: a submission it could not read, made readable.

  A notebook handed in under another name (the only one in the folder) is
  graded as the assignment's. A notebook with bytes that are not UTF-8 is
  read with them replaced (the original is kept beside it, as
  ``NAME.ipynb.as-submitted``). One that is not a notebook at all becomes
  the student version, marked so that every graded cell gets 0 with the
  reason. ``notebooks`` (the folder's, nbgrader's list) is updated in place.
  """
  del assignment, student
  expected = handout.ASSIGNMENT + '.ipynb'
  for folder in sorted({os.path.dirname(path) for path in notebooks}):
    mine = [path for path in notebooks if os.path.dirname(path) == folder]
    path, reason = os.path.join(folder, expected), None
    if path not in mine and len(mine) == 1:
      shutil.copyfile(mine[0], path)
      reason = f'handed in as {os.path.basename(mine[0])}: graded as {expected}'
      notebooks[notebooks.index(mine[0])] = path
    if os.path.isfile(path):
      _make_readable(path, reason)


def _make_readable(path, renamed=None):
  """Rewrites the notebook at ``path`` so that nbgrader reads it, saying what was done."""
  with open(path, 'rb') as f:
    data = f.read()
  said = {}
  try:
    text = data.decode('utf-8')
  except UnicodeDecodeError as error:
    text = data.decode('utf-8', 'replace')
    said['repaired'] = (f'byte {error.start} is not UTF-8: read with the bad bytes replaced '
                        '(the file as handed in is kept beside it)')
  try:
    notebook = nbformat.reads(text, as_version=4)
    if not isinstance(notebook.get('cells'), list):
      raise ValueError('no cells')
  except Exception as error:  # pylint: disable=broad-except  # Whatever it is, not a notebook.
    notebook = _student_version(path)
    said = {'unreadable': f'the notebook cannot be read ({str(error)[:120]}): 0 points; '
                          'hand in the .ipynb file that Jupyter saves'}
  if renamed:
    said['repaired'] = '; '.join(filter(None, [renamed, said.get('repaired')]))
  if not said:
    return
  if not renamed:  # A renamed one is a copy: the original is still there.
    shutil.copyfile(path, path + '.as-submitted')
  notebook.metadata[REASON] = said
  with open(path, 'w', encoding='utf-8') as f:
    f.write(nbformat.writes(notebook))


def _student_version(path):
  """The released notebook of the course the submission at ``path`` belongs to."""
  folder = os.path.dirname(path)  # COURSE/submitted/STUDENT/ASSIGNMENT
  course = os.path.dirname(os.path.dirname(os.path.dirname(folder)))
  released = os.path.join(course, 'release', os.path.basename(folder), os.path.basename(path))
  if os.path.isfile(released):
    return nbformat.read(released, as_version=4)
  return handout.exercise_notebook()


def outputs(verdict, seed):
  """A verdict as a cell's outputs: the text, then an error when it failed."""
  text = grader.verdict_text(verdict) + (f'(inputs drawn with seed {seed})\n' if seed is not None else '')
  cell_outputs = [nbformat.v4.new_output('stream', name='stdout', text=text)]
  if verdict.manual:  # An error: 0 points, should RecordReason not run after SaveAutoGrades.
    cell_outputs.append(nbformat.v4.new_output(
        'error', ename='GradedByHand', evalue=verdict.manual,
        traceback=[f'Graded by hand: {verdict.title}', verdict.manual]))
  elif verdict.points < verdict.max_points:
    cell_outputs.append(nbformat.v4.new_output(
        'error', ename='Failed', evalue=f'{verdict.title}: {len(verdict.lines)} lines above',
        traceback=[f'Failed: {verdict.title}'] + verdict.lines))
  return cell_outputs


def config_source(course_id='summarizer', sandbox='bwrap'):
  """The course directory's nbgrader_config.py: the sandboxed autograde pipeline."""
  return f'''\
# Written by `python -m summarizer.exercises --nbgrader`. nbgrader reads it from the
# directory it runs in (the course directory).
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput,
                                    DeduplicateIds, IgnorePattern, LimitOutput,
                                    OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from summarizer.grading.nbgrader_plugin import (RecordReason, RepairMetadata,
                                                   SandboxedGrades, repair_submission)

c = get_config()
c.CourseDirectory.course_id = {course_id!r}

# A class grades to the end: a notebook handed in under another name, with bytes
# that are not UTF-8, or that is no notebook at all is made readable first (or
# gets 0 with the reason), and metadata nbgrader would stop at (a cell duplicated
# by copy and paste, an old or broken format) is repaired before nbgrader checks it.
c.Autograde.pre_convert_hook = repair_submission
c.Autograde.sanitize_preprocessors = [
    RepairMetadata, ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells,
    CheckCellMetadata]

# Autograde: the verdict comes from the sandbox (bubblewrap), not from running the
# submission in a kernel: SandboxedGrades takes the place of nbgrader's Execute;
# RecordReason writes what was repaired (or why nothing was graded) in the gradebook,
# and leaves the functions that code built at run time may reach to a teacher
# ("needs manual grade"; the reason on the feedback page).
c.Autograde.autograde_preprocessors = [
    SandboxedGrades, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
    SaveAutoGrades, RecordReason, AssignLatePenalties, CheckCellMetadata]
c.SandboxedGrades.sandbox = {sandbox!r}  # 'process' only where bubblewrap cannot be had
# Submissions graded at once, each in a sandbox of its own: 0 is one a core; 1 grades
# one after another (or on the command line: --SandboxedGrades.graders=1).
c.SandboxedGrades.graders = 0

# Each cell's time limit wherever the notebook runs in a kernel (nbgrader validate):
# the slowest cell, Part 3's training run, took 36 s here (load 3 on 2 cores).
c.ExecutePreprocessor.timeout = {CELL_TIMEOUT}
'''
