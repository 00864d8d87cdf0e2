"""The suite's lanes: the notebooks are slow tests, and CI's two xdist workers take whole files.

``pytest -m "not slow"`` is the contributors' quick lane (summarizer/README.md,
"Python versions and CI"); CI runs everything with ``-n 2 --dist loadfile``.
"""

import pytest

# The grader's tests whose limits are seconds of the wall clock, or that grade a class on every
# core: one work unit, so none of them shares the cores with another (and the class that
# nbgrader grades, a session fixture, is graded once for the two files that read it). The
# grader's other files are a unit each, like any test file.
TIMED_GRADINGS = ('tests/grading/test_limits.py', 'tests/grading/test_class_run.py',
                  'tests/grading/test_nbgrader.py', 'tests/grading/test_class_report.py')


def pytest_collection_modifyitems(items):
  """Marks nbval's items slow: each is a notebook's cell, run in the notebook's kernel."""
  for item in items:
    if item.path.suffix == '.ipynb':
      item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
  """Under ``--dist loadfile``, a file's tests go to one worker, and TIMED_GRADINGS to one.

  A notebook's cells share one kernel and run in order, and a module's fixtures
  (a grading run, a model's explanation) are made once, not once per worker.
  The timed gradings share one worker: their limits are seconds of the wall
  clock (or they grade on both cores), which a class graded beside them would
  eat into; they go first, the longest unit, so no worker is left with it at
  the end. The grader's other files grade one submission at a time, beside
  whatever the other worker runs (a training, a notebook), like any test file.
  """
  if config.getvalue('dist') != 'loadfile':
    return None
  from xdist.scheduler import LoadFileScheduling  # pylint: disable=import-outside-toplevel

  class TimedTogether(LoadFileScheduling):
    """LoadFileScheduling, with the files of TIMED_GRADINGS one unit of work."""

    def _split_scope(self, nodeid):
      path = nodeid.split('::', 1)[0]
      return TIMED_GRADINGS[0] if path in TIMED_GRADINGS else path

    def _assign_work_unit(self, node):
      if TIMED_GRADINGS[0] in self.workqueue:
        self.workqueue.move_to_end(TIMED_GRADINGS[0], last=False)
      super()._assign_work_unit(node)

  return TimedTogether(config, log)
