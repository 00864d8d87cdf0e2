"""nbgrader grades with the sandboxed verdict: a preprocessor, and the course's config.

``SandboxedGrades`` takes the place of nbgrader's ``Execute`` in
``Autograde.autograde_preprocessors``: the submission's solution cells are
graded by ``grader.grade`` (in the sandbox), and each graded cell's outputs
become its verdict: what failed and why as text, and an error output when it
failed, which nbgrader's ``SaveAutoGrades`` reads as 0 points (all points
otherwise). The learner's code never runs in a kernel of the teacher's.

``config_source()`` is the ``nbgrader_config.py`` that ``python -m
summarizer.exercises --nbgrader DIR`` writes.
"""

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from summarizer.assignment import grader

# The slowest cell of the notebook measured here (Part 3's ten training
# steps: 36 s here, niced, load 3 on 2 cores), with a margin of eight: `nbgrader validate` and any
# pipeline that runs the notebook in a kernel use it as each cell's limit.
CELL_TIMEOUT = 300


class SandboxedGrades(NbGraderPreprocessor):
  """Writes each graded cell's verdict, computed in the sandbox, as its output."""

  sandbox = Unicode('bwrap', help="The sandbox: 'bwrap', or 'process' (weaker: nothing "
                    'hidden, nothing read-only; only where bubblewrap cannot be '
                    'installed)').tag(config=True)

  def preprocess(self, nb, resources):
    report = grader.grade(nb, mode=self.sandbox)
    self.log.info('Sandboxed grades (seed %s, %s s): %g / %g', report.seed, report.seconds,
                  report.total, report.max_total)
    verdicts = {verdict.grade_id: verdict for verdict in report.verdicts}
    for cell in nb.cells:
      grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
      if cell.cell_type == 'code' and grade_id in verdicts:
        cell.outputs = outputs(verdicts[grade_id], report.seed)
        cell.execution_count = None
    return nb, resources


def outputs(verdict, seed):
  """A verdict as a cell's outputs: the text, then an error when it failed."""
  text = grader.verdict_text(verdict) + f'(inputs drawn with seed {seed})\n'
  cell_outputs = [nbformat.v4.new_output('stream', name='stdout', text=text)]
  if verdict.points < verdict.max_points:
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
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,
                                    LimitOutput, SaveAutoGrades)

from summarizer.assignment.nbgrader_plugin import SandboxedGrades

c = get_config()
c.CourseDirectory.course_id = {course_id!r}

# Autograde: the verdict comes from the sandbox (bubblewrap), not from running the
# submission in a kernel: SandboxedGrades takes the place of nbgrader's Execute.
c.Autograde.autograde_preprocessors = [
    SandboxedGrades, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
    SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.SandboxedGrades.sandbox = {sandbox!r}  # 'process' only where bubblewrap cannot be had

# Each cell's time limit wherever the notebook runs in a kernel (nbgrader validate):
# the slowest cell, Part 3's training run, took 36 s here (load 3 on 2 cores).
c.ExecutePreprocessor.timeout = {CELL_TIMEOUT}
'''
