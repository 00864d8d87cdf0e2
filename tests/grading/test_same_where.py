"""The grader prints the notebook's where: line for layers, and says an error once (issue 64).

Mistakes written here for these tests, each a whole answer with its changed
line marked: three layers built with another layer where the course has one
(the notebook walks the two layers side by side and names the line that
built the first that differs), heads of a float width (a number the course
holds as an int), a misspelt name (every case raises the same error) and an
array mistake (its where: line quotes a notebook's example's shapes). The
grader must print the notebook's where: and why: lines, name the notebook's
case the where: line was found on when its own first failure is another, and
say one error once.
"""

import shutil

import pytest

import learner_variants
from summarizer.contract import check_inputs, failure_text, measures
from summarizer.grading import grader, where_line
from test_truthful_feedback import changed_line, check
from .test_where_line import grader_where, in_a_sandbox_cell, sent_and_read

from . import SEED

# The values' branch of the attention ends in a Relu where the course splits them into heads.
VALUES_NOT_SPLIT = '''
def CausalAttention(d_feature, n_heads,
                    compute_attention_heads_closure=compute_attention_heads_closure,
                    dot_product_self_attention=dot_product_self_attention,
                    compute_attention_output_closure=compute_attention_output_closure,
                    mode='train'):
  assert d_feature % n_heads == 0
  d_head = d_feature // n_heads
  heads = compute_attention_heads_closure(n_heads, d_head)
  queries = [tl.Dense(d_feature), tl.Fn('AttnHeads', heads, n_out=1)]
  keys = [tl.Dense(d_feature), tl.Fn('AttnHeads', heads, n_out=1)]
  values = [tl.Dense(d_feature), tl.Relu()]  # changed
  return tl.Serial(
      tl.Branch(queries, keys, values),
      tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
      tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head), n_out=1),
      tl.Dense(d_feature),
  )
'''

# A head's width divided as a float: the layers print alike, the runs fail.
FLOAT_HEAD_WIDTH = '''
def CausalAttention(d_feature, n_heads,
                    compute_attention_heads_closure=compute_attention_heads_closure,
                    dot_product_self_attention=dot_product_self_attention,
                    compute_attention_output_closure=compute_attention_output_closure,
                    mode='train'):
  assert d_feature % n_heads == 0
  d_head = d_feature / n_heads  # changed
  split = tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head), n_out=1)
  return tl.Serial(
      tl.Branch([tl.Dense(d_feature), split], [tl.Dense(d_feature), split],
                [tl.Dense(d_feature), split]),
      tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
      tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head), n_out=1),
      tl.Dense(d_feature),
  )
'''

# A batch norm where the attention's residual starts with a layer norm.
BATCH_NORM_BEFORE_ATTENTION = '''
def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation):
  attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
  attention_residual = tl.Residual(
      tl.BatchNorm(),  # changed
      attention,
      tl.Dropout(rate=dropout, mode=mode))
  feed_forward = tl.Residual(
      tl.LayerNorm(), tl.Dense(d_ff), ff_activation(), tl.Dropout(rate=dropout, mode=mode),
      tl.Dense(d_model), tl.Dropout(rate=dropout, mode=mode))
  return [attention_residual, feed_forward]
'''

# Scores over d_model classes, not over the vocabulary.
SCORES_OVER_THE_FEATURES = '''
def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                  dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
  blocks = [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
            for _ in range(n_layers)]
  return tl.Serial(
      tl.ShiftRight(mode=mode),
      tl.Embedding(vocab_size, d_model),
      tl.Dropout(rate=dropout, mode=mode),
      tl.PositionalEncoding(max_len=max_len, mode=mode),
      blocks,
      tl.LayerNorm(),
      tl.Dense(d_model),  # changed
      tl.LogSoftmax(),
  )
'''

# A misspelt name: every case raises the same NameError.
MISSPELT_MODE = '''
def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation):
  attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
  feed_forward = [tl.LayerNorm(), tl.Dense(d_ff), ff_activation(),
                  tl.Dropout(rate=dropout, mode=mode), tl.Dense(d_model),
                  tl.Dropout(rate=dropout, mode=mdoe)]  # changed
  return [tl.Residual(tl.LayerNorm(), attention, tl.Dropout(rate=dropout, mode=mode)),
          tl.Residual(feed_forward)]
'''

# The scores divided by the width itself, not its square root.
SCALED_BY_THE_WIDTH = '''
def DotProductAttention(query, key, value, mask):
  width = query.shape[-1]
  scores = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / width  # changed
  if mask is not None:
    scores = jnp.where(mask, scores, jnp.full_like(scores, -1e9))
  weights = jnp.exp(scores - trax.fastmath.logsumexp(scores, axis=-1, keepdims=True))
  return jnp.matmul(weights, value)
'''

# Each mistake: (its function, its source, the function its where: line names).
LAYER_MISTAKES = {
    'values not split': ('CausalAttention', VALUES_NOT_SPLIT, 'CausalAttention'),
    'float head width': ('CausalAttention', FLOAT_HEAD_WIDTH, 'CausalAttention'),
    'batch norm': ('DecoderBlock', BATCH_NORM_BEFORE_ATTENTION, 'DecoderBlock'),
    'scores over the features': ('TransformerLM', SCORES_OVER_THE_FEATURES, 'TransformerLM'),
}
GRADED = {**LAYER_MISTAKES, 'misspelt mode': ('DecoderBlock', MISSPELT_MODE, None),
          'scaled by the width': ('DotProductAttention', SCALED_BY_THE_WIDTH,
                                  'DotProductAttention')}


def lines_of(text, start):
  return [line.strip() for line in text.splitlines() if line.strip().startswith(start)]


def case_above(text, line):
  """The header of the failure ``line`` is printed under."""
  above = text.split(line)[0].splitlines()
  return next(row.strip() for row in reversed(above) if row.strip().startswith('Failed: '))


@pytest.mark.slow
@pytest.mark.parametrize('mistake', LAYER_MISTAKES)
def test_a_layers_where_line_is_the_notebooks_at_the_changed_line(mistake):
  function, source, inner = LAYER_MISTAKES[mistake]
  said = grader_where(function, source)
  assert said is not None and said.startswith(f'where: line {changed_line(source)} of {inner}')
  _, printed = check(function, source)
  assert lines_of(printed, 'where: ') == [said]
  # The grader names the case it was found on: the notebook's, which prints it under that case.
  case, line = where_line.where_line(function, sent_and_read(check_inputs.learners_traces(
      function, in_a_sandbox_cell(function, source))))
  assert line == said and case in check_inputs.case_names(function)
  assert case_above(printed, said).startswith(f'Failed: {case}: ')


def test_an_error_said_in_the_report_is_said_once_as_the_notebook_says_it():
  error = "NameError: name 'mdoe' is not defined (in DecoderBlock, line 5: mode=mdoe)"
  expected = [{'name': f'case {n}', 'measures': {'output': 0}} for n in range(3)]
  got = [{'name': f'case {n}', 'measures': {}, 'error': error} for n in range(3)]
  assert measures.judge_cases('DecoderBlock', got, expected) == [
      f'Failed: case 0: it raised {error}',
      'Failed: case 1: it raised NameError' + failure_text.SAME_AS_ABOVE,
      'Failed: case 2: it raised NameError' + failure_text.SAME_AS_ABOVE]


def test_the_graders_failures_stay_within_the_notebooks_budget():
  expected = [{'name': f'case {n}', 'measures': {'output': list(range(20))}} for n in range(30)]
  got = [{'name': f'case {n}', 'measures': {'output': [n] * 20}, 'error': None}
         for n in range(30)]
  lines = measures.judge_cases('DecoderBlock', got, expected)
  shown = [line for line in lines if line.startswith('Failed: case ')]
  assert 1 < len(shown) < 30 and len('\n'.join(lines[:-1])) < failure_text.TEXT_BUDGET
  assert lines[-1].startswith('Failed: ') and lines[-1].endswith(
      'not shown (fix the failures above first)')


@pytest.fixture(scope='module')
def graded():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = [learner_variants.notebook_with(dict(learner_variants.COURSE_ANSWERS,
                                                   **{function: source.strip('\n') + '\n'}))
               for function, source, _ in GRADED.values()]
  reports = grader.grade_batch(notebooks, seed=SEED, functions={f for f, _, _ in GRADED.values()},
                               whole=False)
  return dict(zip(GRADED, reports))


@pytest.mark.slow
@pytest.mark.parametrize('mistake', GRADED)
def test_the_grader_prints_the_notebooks_where_and_why_in_a_text_as_short(graded, mistake):
  function, source, inner = GRADED[mistake]
  report = graded[mistake]
  [verdict] = [v for v in report.verdicts if v.points < v.max_points]
  assert verdict.grade_id == f'test_{function}', grader.table(report)
  _, printed = check(function, source)
  told = '\n'.join(verdict.lines)
  assert len(told) <= 1600, told
  assert set(lines_of(told, 'why: ')) == set(lines_of(printed, 'why: ')), (printed, told)
  wheres = lines_of(printed, 'where: ')
  assert lines_of(told, 'where: ') == wheres, (printed, told)
  if inner is None:
    assert not wheres
    return
  [where] = wheres
  assert where.startswith(f'where: line {changed_line(source)} of {inner}'), where
  # Under the grader's own case, the notebook's case it was found on is named.
  case = case_above(printed, where)[len('Failed: '):].split(': ')[0]
  shown = case_above(told, where)[len('Failed: '):]
  if not shown.startswith(f'{case}: '):
    assert f"in the notebook's check, on its case {case}:" in told, told


@pytest.mark.slow
def test_the_grader_says_an_error_that_every_case_raises_once(graded):
  [verdict] = [v for v in graded['misspelt mode'].verdicts if v.grade_id == 'test_DecoderBlock']
  told = '\n'.join(verdict.lines)
  _, printed = check('DecoderBlock', MISSPELT_MODE)
  for text in (told, printed):
    assert text.count("name 'mdoe' is not defined") == 1, text
    assert len(lines_of(text, 'Failed: ')) > 2
    assert all(line.endswith(': it raised NameError' + failure_text.SAME_AS_ABOVE)
               for line in lines_of(text, 'Failed: ')[1:] if ': it raised ' in line), text
