"""The grader's tests grade the same learner variants as the notebook's checks are tested on.

The class nbgrader autogrades (``graded_class.py``) is graded once a session, for
``test_nbgrader.py`` and ``test_class_report.py`` (one unit of work for CI's
workers: the root conftest's ``TIMED_GRADINGS``).
"""

import os
import sys

import pytest

# learner_variants.py lives beside the checks' tests, in tests/assignment.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'assignment'))


@pytest.fixture(scope='session')
def graded_class(tmp_path_factory):
  """(course directory, nbgrader autograde's log) of the class, autograded once a session."""
  from .graded_class import graded_class as build  # pylint: disable=g-import-not-at-top
  return build(str(tmp_path_factory.mktemp('course')))
