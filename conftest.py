"""The suite's lanes: the notebooks are slow tests, and each file runs on one xdist worker.

``pytest -m "not slow"`` is the contributors' quick lane (summarizer/README.md,
"Python versions and CI"); CI runs everything with ``-n 2 --dist loadgroup``.
"""

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
  """Marks nbval's cells slow, and groups each test by its file unless it names a group.

  A notebook's cells share one kernel and run in order, so they must stay on one
  worker; a test file's module fixtures (a grading run, a model's explanation)
  are then made once, not once per worker. Files that run the grader's sandbox
  name one group, ``sandbox``, so that two of them never run at once.
  """
  del config
  for item in items:
    if item.path.suffix == '.ipynb':  # nbval's items: a notebook's cells, run in its kernel.
      item.add_marker(pytest.mark.slow)
    if not item.get_closest_marker('xdist_group'):
      item.add_marker(pytest.mark.xdist_group(os.path.relpath(item.path, item.config.rootpath)))
