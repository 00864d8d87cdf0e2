"""The suite's lanes: the notebooks are slow tests, and CI's two xdist workers take whole files.

``pytest -m "not slow"`` is the contributors' quick lane (summarizer/README.md,
"Python versions and CI"); CI runs everything with ``-n 2 --dist loadfile``.

The session's programs compiled by jax are kept in one persistent cache, a
temporary folder the session removes at its end: a train command, an
evaluation or a notebook's kernel started by a test compiles its small models'
programs once for the session, not once a process. A cache the caller chose
(``JAX_COMPILATION_CACHE_DIR``) is used as it is. The grader's sandbox never
sees this one: it starts with an empty environment and reads only the
grader's own (``grading/reference_results.py``).
"""

import atexit
import os
import shutil
import tempfile

import pytest

# Set before anything imports jax, in the first process (xdist's workers, the
# commands and the kernels the tests start inherit it).
if 'JAX_COMPILATION_CACHE_DIR' not in os.environ:
  _CACHE = tempfile.mkdtemp(prefix='summarizer-tests-jax-')
  atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
  os.environ.update(JAX_COMPILATION_CACHE_DIR=_CACHE,
                    JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS='0',
                    JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES='0')

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
