"""The suite's lanes: the notebooks are slow tests, and CI's two xdist workers take whole files.

``pytest -m "not slow"`` is the contributors' quick lane (summarizer/README.md,
"Python versions and CI"); CI runs everything with ``-n 2 --dist loadfile``.
"""

import pytest

# The grader's tests, which run the sandbox: one work unit, so two never grade at once.
SANDBOX_TESTS = 'tests/grading/'


def pytest_collection_modifyitems(items):
  """Marks nbval's items slow: each is a notebook's cell, run in the notebook's kernel."""
  for item in items:
    if item.path.suffix == '.ipynb':
      item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
  """Under ``--dist loadfile``, a file's tests go to one worker, and tests/grading/ to one.

  A notebook's cells share one kernel and run in order, and a module's fixtures
  (a grading run, a model's explanation) are made once, not once per worker;
  the grader's files share one worker because each grading's limits are seconds
  of the wall clock, which a second grading beside it would eat into.
  """
  if config.getvalue('dist') != 'loadfile':
    return None
  from xdist.scheduler import LoadFileScheduling  # pylint: disable=import-outside-toplevel

  class SandboxTogether(LoadFileScheduling):
    """LoadFileScheduling, with every file of SANDBOX_TESTS one unit of work."""

    def _split_scope(self, nodeid):
      path = nodeid.split('::', 1)[0]
      return SANDBOX_TESTS if path.startswith(SANDBOX_TESTS) else path

  return SandboxTogether(config, log)
