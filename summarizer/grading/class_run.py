"""A class graded side by side: each submission in a sandbox of its own, several at once.

nbgrader's ``autograde`` takes one submission after another, and one
submission's sandbox keeps about one core busy. So the first time
``SandboxedGrades`` (``nbgrader_plugin.py``) meets a notebook of an
assignment, it reads every submission of that notebook that this autograde
run will grade (``class_notebooks``: through the run's own sanitising
preprocessors, as nbgrader will hand each of them over), and grades them all,
``graders`` at a time (``grade_all``). Each submission is still graded alone,
in its own sandbox run, its items one after another, with the run's one seed:
running them at once changes no verdict. What comes back waits in
``AHEAD``, filed under the cells the grader read (``cells_key``); when nbgrader
reaches a submission, its verdict is taken from there, or, where its cells
read differently now (a submission repaired on the way), graded then.
"""

import concurrent.futures
import hashlib
import json
import os
import threading

import nbformat

from summarizer.grading import cpu_clock, grader, limits


def usable_cores():
  """The cores this process may run on (its CPU affinity), at least 1."""
  try:
    return max(1, len(os.sched_getaffinity(0)))
  except AttributeError:  # Not Linux.
    return max(1, os.cpu_count() or 1)


def graders_for(requested):
  """How many sandboxes run at once: ``requested``, or one a usable core when it is 0."""
  return requested if requested > 0 else usable_cores()


# Seconds between two progress lines of a class; below this share of the CPU its
# sandboxes were ready to use, the machine is said to starve them.
PROGRESS_SECONDS = 60
STARVED_SHARE = 0.5


def grade_all(notebooks, graders, seed=None, mode='bwrap', on_each=None, on_progress=None,
              **grading):
  """Grades each notebook alone, in its own sandbox run, ``graders`` runs at a time.

  Args:
    notebooks: Paths or NotebookNodes, each one student's.
    graders: How many sandbox runs at once (see ``graders_for``).
    seed, mode: As ``grader.grade``'s (one seed for the whole class).
    on_each: Called with the count done as each submission's grading ends.
    on_progress: Called with a line every ``PROGRESS_SECONDS`` (``Progress``):
      how many are done, and whether the machine starves the sandboxes.
    **grading: ``grader.grade``'s ``functions`` and ``whole`` (fewer for tests).

  Returns:
    list, in the notebooks' order: each one's ``grader.Report``, or the
    exception that stopped its grading. A submission a busy machine starved
    (``grader.starved_reasons``) is graded once more, alone, at the end.
  """
  grader.prepared(grader.session_seed(seed))  # The package's results: once, before the runs.
  done = [0]
  with Progress(len(notebooks), done, on_progress):
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, graders)) as pool:
      running = [pool.submit(grader.grade, notebook, seed, mode, **grading)
                 for notebook in notebooks]
      for done[0], _ in enumerate(concurrent.futures.as_completed(running), 1):
        if on_each:
          on_each(done[0])
      reports = [each.exception() or each.result() for each in running]
    for k, report in enumerate(reports):
      if starved(report):
        again = grader.grade(notebooks[k], seed, mode, **grading)
        reports[k] = report if starved(again) else again
  return reports


def starved(report):
  """Whether a report holds a verdict a busy machine starved (a teacher's, not the learner's)."""
  return isinstance(report, grader.Report) and any(
      verdict.manual and limits.STARVED in verdict.manual for verdict in report.verdicts)


class Progress:
  """A line every ``PROGRESS_SECONDS`` while a class is graded: its count, and a starved machine.

  The share is the sandboxes' (this process's children's) time on a CPU to
  the time they were ready to run (``cpu_clock.RunClock``): under
  ``STARVED_SHARE``, the machine is busy with other work and the line says so.
  """

  def __init__(self, total, done, on_progress):
    self.total, self.done, self.on_progress = total, done, on_progress
    self.stopped = threading.Event()
    self.thread = threading.Thread(target=self.run, daemon=True)

  def __enter__(self):
    if self.on_progress:
      self.thread.start()
    return self

  def __exit__(self, *exc):
    self.stopped.set()
    return False

  def run(self):
    clock = cpu_clock.RunClock(os.getpid())
    while not self.stopped.wait(PROGRESS_SECONDS):
      before = (clock.charged, clock.last)
      cpu, _, charged = clock.read()
      self.on_progress(progress_line(self.done[0], self.total, cpu,
                                     (charged - before[0]) / max(1e-9, clock.last - before[1])))


def progress_line(done, total, cpu, share):
  """'Graded 3 of 30 (...)': the count, the CPU used, and the machine's starving when it does."""
  line = f'Graded {done} of {total} ({cpu:.0f} s of CPU so far)'
  if share < STARVED_SHARE:
    line += (f'; starved: the sandboxes got {share:.0%} of the CPU they were ready to use in '
             f'the last {PROGRESS_SECONDS} s (the machine is busy with other work, or this '
             'grading runs at a low priority): grading is that much slower, and no '
             'submission loses a point for it')
  return line


def cells_key(notebook):
  """What the grader reads of a notebook (its learner cells, as run), as a digest."""
  cells = json.dumps(grader.learner_cells(notebook), sort_keys=True)
  return hashlib.sha256(cells.encode('utf-8')).hexdigest()


class Ahead:
  """Reports graded ahead of nbgrader, filed by the cells they graded."""

  def __init__(self):
    self.reports = {}   # cells_key -> [Report]: identical submissions each have their own.
    self.started = set()  # The (assignment, notebook) whose class was graded ahead.

  def take(self, notebook):
    """The report graded ahead for a notebook with these cells, or None."""
    waiting = self.reports.get(cells_key(notebook))
    return waiting.pop(0) if waiting else None

  def grade_class(self, notebook, others, graders, mode, log):
    """Grades ``notebook`` and the ``others`` (the class) side by side; files the reports."""
    everyone = [notebook, *others]
    log.info('Grading ahead: %d submissions, %d at a time', len(everyone), graders)
    reports = grade_all(everyone, graders, mode=mode,
                        on_each=lambda done: log.info('Graded ahead: %d of %d', done, len(everyone)),
                        on_progress=lambda line: log.info('Grading ahead: %s', line))
    for each, report in zip(everyone, reports):
      if isinstance(report, grader.Report):
        self.reports.setdefault(cells_key(each), []).append(report)
      else:  # Graded again when nbgrader reaches it; that run says what went wrong.
        log.warning('Graded ahead: not graded (%s); it is graded in its turn',
                    str(report)[:200])


AHEAD = Ahead()  # One autograde run is one process.


def class_notebooks(converter, resources):
  """The other submissions of this notebook that the autograde run will grade, sanitised.

  Read as nbgrader reads them: through the converter's sanitising
  preprocessors, in memory. One that cannot be read so, or whose autograded
  copy exists already (nbgrader skips it without ``--force``), is left out:
  nbgrader grades it in its turn, as before.
  """
  here = resources.get('nbgrader', {})
  paths = [path for folder in sorted(converter.assignments)
           for path in sorted(converter.assignments[folder])
           if os.path.splitext(os.path.basename(path))[0] == here.get('notebook')]
  found, autograding = [], converter._sanitizing  # pylint: disable=protected-access
  converter._sanitizing = True  # Paths are read as the submitted folder's (autograde.py).  # pylint: disable=protected-access
  try:
    for path in paths:
      try:
        own = converter.init_single_notebook_resources(path)
        student = own['nbgrader']['student']
        done = os.path.join(converter._format_dest(own['nbgrader']['assignment'], student),  # pylint: disable=protected-access
                            os.path.basename(path))
        if student != here.get('student') and (converter.force or not os.path.exists(done)):
          found.append(_sanitised(converter, path, own))
      except Exception:  # pylint: disable=broad-except  # Left to nbgrader's own turn.
        continue
  finally:
    converter._sanitizing = autograding  # pylint: disable=protected-access
  return found


def _sanitised(converter, path, resources):
  """The notebook at ``path`` after the converter's sanitising preprocessors."""
  notebook = nbformat.read(path, as_version=4)
  for preprocessor in converter.sanitize_preprocessors:
    notebook, resources = preprocessor(parent=converter.exporter)(notebook, resources)
  return notebook
