"""A library's code where an exercise asks for the learner's own: seen as it runs, named.

The sandbox's worker watches each graded function's probe
(``watchers.call_check``): a call a cell makes into a module the handout's own
imports do not reach (another library, or a public part of jax the setup
never loads) is an event. Exercises 1 and 3 (attention itself) then go to
a teacher, the call named; any other exercise keeps its points, and the
teacher's page names the call. One sandbox run grades them all.
"""

import shutil

import pytest

import learner_variants
from summarizer.grading import grader

pytestmark = pytest.mark.slow  # Grades in the sandbox.

SEED = 17
ANSWERS = learner_variants.COURSE_ANSWERS
ROADS = {
    # Keras's attention, through an alias of its ops module.
    'keras ops, aliased': ('DotProductAttention', '''
from keras import ops as K
def DotProductAttention(query, key, value, mask):
  scores = K.dot_product_attention(query[:, :, None], key[:, :, None], value[:, :, None])
  return scores[:, :, 0]
'''),
    # Keras's attention layer, in Exercise 3.
    'a keras layer': ('dot_product_self_attention', '''
import keras
def dot_product_self_attention(q, k, v):
  layer = keras.layers.Attention(use_scale=False, score_mode='dot')
  return layer([q, v, k], use_causal_mask=True)
'''),
    # A kernel of a public jax module the handout's imports never load.
    'a pallas reference kernel': ('DotProductAttention', '''
from jax.experimental.pallas.ops.gpu import attention as kernels
def DotProductAttention(query, key, value, mask):
  out = kernels.mha_reference(query[:, :, None], key[:, :, None], value[:, :, None],
                              None, sm_scale=1.0)
  return out[:, :, 0]
'''),
    # A library's function bound to the graded name: nothing of a cell runs.
    'bound to the name': ('DotProductAttention', '''
import keras
DotProductAttention = keras.ops.dot_product_attention
'''),
    # Outside attention: named for the teacher, no points lost.
    'keras argmax in next_symbol': ('next_symbol', ANSWERS['next_symbol'].replace(
        'def next_symbol', 'from keras import ops as _ops\ndef next_symbol', 1)
        .replace('int(np.argmax(', 'int(_ops.argmax(', 1)),
    # The watch taken away: the audit hook sees it go.
    'profiler removed': ('DotProductAttention', ANSWERS['DotProductAttention'].replace(
        'def DotProductAttention(query, key, value, mask):\n',
        'import sys\ndef DotProductAttention(query, key, value, mask):\n  sys.setprofile(None)\n', 1)),
}


@pytest.fixture(scope='module')
def reports():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  assert 'int(_ops.argmax(' in ROADS['keras argmax in next_symbol'][1], 'the answer changed'
  assert 'sys.setprofile(None)' in ROADS['profiler removed'][1], 'the answer changed'
  names = ['course', *ROADS]
  notebooks = [learner_variants.notebook_with(ANSWERS)]
  notebooks += [learner_variants.notebook_with(dict(ANSWERS, **{function: source}))
                for function, source in ROADS.values()]
  functions = ('DotProductAttention', 'dot_product_self_attention', 'next_symbol')
  return dict(zip(names, grader.grade_batch(notebooks, seed=SEED, functions=functions,
                                            whole=False)))


def verdict(report, name):
  return next(v for v in report.verdicts if v.grade_id == f'test_{name}')


def test_the_courses_answers_call_nothing_beyond_the_handout(reports):
  for each in reports['course'].verdicts:
    assert (each.points, each.manual, each.notes) == (each.max_points, '', []), each


@pytest.mark.parametrize('road', ['keras ops, aliased', 'a keras layer',
                                  'a pallas reference kernel', 'bound to the name'])
def test_a_librarys_attention_goes_to_a_teacher_with_the_call_named(reports, road):
  function, _ = ROADS[road]
  graded = verdict(reports[road], function)
  assert graded.points == 0, grader.table(reports[road])
  assert graded.manual.startswith("a library's code where the exercise asks for the learner's own (")
  assert any(name in graded.manual for name in ('dot_product_attention', 'Attention.',
                                                 'mha_reference')), graded.manual
  others = [v for v in reports[road].verdicts if v.grade_id != f'test_{function}']
  assert all(v.points == v.max_points and not v.manual for v in others)


def test_a_library_call_elsewhere_is_named_and_costs_nothing(reports):
  graded = verdict(reports['keras argmax in next_symbol'], 'next_symbol')
  assert (graded.points, graded.manual) == (graded.max_points, '')
  [note] = [n for n in graded.notes if n.startswith("calls beyond the handout's imports")]
  assert 'argmax' in note and "cell 'next_symbol' line" in note


def test_a_profiler_taken_away_sends_the_function_to_a_teacher(reports):
  graded = verdict(reports['profiler removed'], 'DotProductAttention')
  assert graded.points == 0 and 'sys.setprofile called' in graded.manual, graded
