"""The grader says what the notebook says (issue 64): for one answer, on an idle machine, the
teacher's feedback and the notebook's check name the same failing exercise and the same cause.

The mistakes are those written for the notebook's tests (``test_truthful_feedback.py``).
"""

import re
import shutil

import pytest

import learner_variants
from summarizer.assignment import checks
from summarizer.grading import grader
from test_truthful_feedback import BRANCH_ON_A_TRACED_VALUE, SHIFTED_MASK, changed_line

SEED = 11
MISTAKES = {'dot_product_self_attention': SHIFTED_MASK,
            'DotProductAttention': BRANCH_ON_A_TRACED_VALUE}


def source(function):
  return MISTAKES[function].strip('\n') + '\n'


@pytest.fixture(scope='module')
def graded():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = [learner_variants.notebook_with(dict(learner_variants.COURSE_ANSWERS,
                                                   **{function: source(function)}))
               for function in MISTAKES]
  reports = grader.grade_batch(notebooks, seed=SEED, functions=set(MISTAKES), whole=False)
  return dict(zip(MISTAKES, reports))


def notebook(function):
  names = learner_variants.course_namespace(**{function: source(function)})
  return learner_variants.run_check(checks, function, names)


def whys(text):
  return {line.strip() for line in text.splitlines() if line.strip().startswith('why: ')}


@pytest.mark.slow
@pytest.mark.parametrize('function', MISTAKES)
def test_the_grader_and_the_notebook_name_the_same_exercise_and_cause(graded, function):
  report = graded[function]
  lost = {verdict.grade_id for verdict in report.verdicts if verdict.points < verdict.max_points}
  assert lost == {f'test_{function}'}
  failed, printed = notebook(function)
  assert failed
  told = grader.table(report)
  if function == 'dot_product_self_attention':
    assert whys(printed) == whys(told) == {
        'why: the mask is tril with k=1, which shows each position the next one too: '
        'position i may see the positions 0 to i (k=0)'}
  else:
    line = changed_line(BRANCH_ON_A_TRACED_VALUE)
    sentence = 'uses a traced array as a bool (if, while, and, or, not)'
    assert re.search(rf'why: line {line} of DotProductAttention .*{re.escape(sentence)}', printed)
    assert re.search(rf'why: the line \(cell \d+, line {line}: .*\) {re.escape(sentence)}',
                     told), told
