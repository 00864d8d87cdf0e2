"""What every answer keeps is graded as the notebook checks it: one judge on both sides.

An answer that pads the caller's list in place, writes one token past
``max_length`` or turns a traced array into NumPy fails its check in the
notebook (``tests/assignment/test_where.py``); the grader runs the same calls
(``probes.property_cases``) in the sandbox and takes the function's points,
with the case named as the notebook names it. One sandbox run grades them all.
"""

import shutil

import pytest

import learner_variants
from summarizer.grading import grader
from test_where import NUMPY_ATTENTION, ONE_TOKEN_TOO_MANY, PADS_IN_PLACE

from . import SEED

pytestmark = pytest.mark.slow  # Grades in the sandbox.

BROKEN = {'next_symbol': (PADS_IN_PLACE, "leaves the caller's 5 tokens as they were"),
          'greedy_decode': (ONE_TOKEN_TOO_MANY, 'max_length=3) when EOS never comes'),
          'DotProductAttention': (NUMPY_ATTENTION, 'under jax.jit, a batch of 1')}


@pytest.fixture(scope='module')
def reports():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  answers = learner_variants.COURSE_ANSWERS
  notebooks = [learner_variants.notebook_with(answers)] + [
      learner_variants.notebook_with(dict(answers, **{name: source}))
      for name, (source, _) in BROKEN.items()]
  graded = grader.grade_batch(notebooks, seed=SEED, functions=tuple(BROKEN), whole=False)
  return dict(zip(['course', *BROKEN], graded))


def test_the_courses_answers_keep_every_property(reports):
  assert reports['course'].total == reports['course'].max_total, grader.table(reports['course'])


@pytest.mark.parametrize('name', list(BROKEN))
def test_an_answer_that_breaks_a_property_loses_its_own_points_named_as_in_the_notebook(
    reports, name):
  report = reports[name]
  [own] = [v for v in report.verdicts if v.grade_id == f'test_{name}']
  assert own.points == 0, grader.table(report)
  assert any(BROKEN[name][1] in line for line in own.lines), own.lines
  others = [v for v in report.verdicts if v.grade_id != f'test_{name}']
  assert all(v.points == v.max_points for v in others), grader.table(report)


def test_numpy_in_attention_is_told_by_its_line(reports):
  [own] = [v for v in reports['DotProductAttention'].verdicts
           if v.grade_id == 'test_DotProductAttention']
  # The why quotes the learner's own line and says what it does wrong.
  assert any('np.array(' in line and 'traced array to NumPy' in line for line in own.lines), \
      own.lines
