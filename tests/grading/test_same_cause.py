"""The grader says what the notebook says (issue 64): for one answer, on an idle machine, the
teacher's feedback and the notebook's check name the same failing exercise and the same why
(which, for an error under jax.jit, names the learner's line).

The mistakes are those written for the notebook's tests (``test_truthful_feedback.py``): an
array mistake, an `if` on a traced value, an evaluation on the training stream, a signature
default not the course's (which the grader reads too) and padding one zero short (its why: said
with the numbers of the first case both sides run).
"""

import shutil

import pytest

import learner_variants
from summarizer.grading import grader
from test_truthful_feedback import (BRANCH_ON_A_TRACED_VALUE, EVAL_MODE_BY_DEFAULT,
                                    EVALUATES_ON_THE_TRAINING_DATA, ONE_ZERO_SHORT, SHIFTED_MASK,
                                    changed_line, check)
from .test_where_line import SWAPPED_AXES, UNSCALED_SCORES

from . import SEED

MISTAKES = {'dot_product_self_attention': SHIFTED_MASK,
            'DotProductAttention': BRANCH_ON_A_TRACED_VALUE,
            'training_loop': EVALUATES_ON_THE_TRAINING_DATA,
            'TransformerLM': EVAL_MODE_BY_DEFAULT,
            'next_symbol': ONE_ZERO_SHORT}
# The why each side must print, the same on both (or how it starts and ends).
WHYS = {
    'dot_product_self_attention': (
        'why: the mask is tril with k=1, which shows each position the next one too: '
        'position i may see the positions 0 to i (k=0)'),
    # The learner's line, quoted (whole, or the part PEP 657's columns give), then what it did.
    'DotProductAttention': (
        f'why: line {changed_line(BRANCH_ON_A_TRACED_VALUE)} of DotProductAttention (`',
        '`) uses a traced array as a bool (if, while, and, or, not): under jax.jit its values '
        'are unknown; use jnp.where, or test a shape or `is None`'),
    'training_loop': (
        'why: the evaluation task reads train_gen, the data the model trains on: build the '
        'EvalTask on eval_gen, so that its loss says how the model does on data it has not '
        'trained on'),
    'TransformerLM': (
        "why: a call that leaves mode out gets mode='eval', where the course's gets "
        "mode='train': keep the course's default, which calls that leave it out rely on"),
    # The first case both sides run that shows it: 4 tokens (later ones, their own numbers, unsaid).
    'next_symbol': (
        'why: 4 tokens padded to 7 positions, one zero short of 8, the smallest power of two '
        'strictly greater than 4: pad with 4 zeros'),
}
# The where: lines each side must print alike (the learner's def, read by both; for a
# function of arrays, the learner's trace the sandbox sends beside the package's).
SAME_WHERE = {'TransformerLM', 'dot_product_self_attention'}
# Mistakes of the functions of arrays whose where: line both sides must print alike, at the
# line the mistake changed: function -> (its source, the function the line is in).
WHERE_MISTAKES = {'DotProductAttention': (UNSCALED_SCORES, 'DotProductAttention'),
                  'compute_attention_output_closure': (SWAPPED_AXES, 'compute_attention_output')}


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


def whys(text):
  return {line.strip() for line in text.splitlines() if line.strip().startswith('why: ')}


def wheres(text):
  return {line.strip() for line in text.splitlines() if line.strip().startswith('where: ')}


@pytest.mark.slow
@pytest.mark.parametrize('function', MISTAKES)
def test_the_grader_and_the_notebook_name_the_same_exercise_and_cause(graded, function):
  report = graded[function]
  lost = {verdict.grade_id for verdict in report.verdicts if verdict.points < verdict.max_points}
  assert lost == {f'test_{function}'}, grader.table(report)
  failed, printed = check(function, MISTAKES[function])  # Its cell's source kept, as Jupyter does.
  assert failed, printed
  told = grader.table(report)
  said = whys(printed)
  assert said == whys(told), (printed, told)
  [why] = said
  if isinstance(WHYS[function], tuple):
    start, end = WHYS[function]
    assert why.startswith(start) and why.endswith(end), why
  else:
    assert why == WHYS[function]
  if function in SAME_WHERE:
    assert wheres(printed) == wheres(told) != set(), (printed, told)


@pytest.fixture(scope='module')
def graded_wheres():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = [learner_variants.notebook_with(dict(learner_variants.COURSE_ANSWERS,
                                                   **{function: source.strip('\n') + '\n'}))
               for function, (source, _) in WHERE_MISTAKES.items()]
  reports = grader.grade_batch(notebooks, seed=SEED, functions=set(WHERE_MISTAKES), whole=False)
  return dict(zip(WHERE_MISTAKES, reports))


@pytest.mark.slow
@pytest.mark.parametrize('function', WHERE_MISTAKES)
def test_the_grader_and_the_notebook_print_the_same_where_line_at_the_changed_line(
    graded_wheres, function):
  source, inner = WHERE_MISTAKES[function]
  report = graded_wheres[function]
  lost = {verdict.grade_id for verdict in report.verdicts if verdict.points < verdict.max_points}
  assert lost == {f'test_{function}'}, grader.table(report)
  failed, printed = check(function, source)
  assert failed, printed
  told = grader.table(report)
  [where] = wheres(printed)
  assert wheres(told) == {where}, (printed, told)
  assert where.startswith(f'where: line {changed_line(source)} of {inner}, '), where
