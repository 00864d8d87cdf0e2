"""A library's whole answer where an exercise asks for the learner's own: not there to call.

The sandbox shows Keras, flax, tensorflow_text and Pallas's reference kernels
as empty folders (``sandbox.HIDDEN_LIBRARIES``), so however a cell reaches for
one (an alias, a string, ``operator.methodcaller``, ``functools.reduce``, an
object whose ``__call__`` is the library's, the name bound to it, TensorFlow's
``tf.keras``, after silencing every descriptor it can find), the import fails
inside the sandbox and the function earns nothing, the teacher's page saying
why. The course's answers lose nothing. One sandbox run grades them all.
"""

import shutil

import pytest

import learner_variants
from summarizer.grading import grader, sandbox

pytestmark = pytest.mark.slow  # Grades in the sandbox.

SEED = 17
ANSWERS = learner_variants.COURSE_ANSWERS
KERAS_ATTENTION = '''
def DotProductAttention(query, key, value, mask):
  out = attend(query[:, :, None], key[:, :, None], value[:, :, None])
  return out[:, :, 0]
'''
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
import keras.ops
DotProductAttention = keras.ops.dot_product_attention
'''),
    # Routes no reading of the calls sees: methodcaller, reduce, a callable object.
    'operator.methodcaller': ('DotProductAttention', '''
import operator
from keras import ops
attend = lambda q, k, v: operator.methodcaller('dot_product_attention', q, k, v)(ops)
''' + KERAS_ATTENTION),
    'functools.reduce': ('DotProductAttention', '''
import functools
from keras.src.ops import nn
attend = lambda *qkv: functools.reduce(lambda f, _: f, [0], nn.dot_product_attention)(*qkv)
''' + KERAS_ATTENTION),
    'a callable object': ('DotProductAttention', '''
import keras
class Attend:
  __call__ = staticmethod(keras.ops.dot_product_attention)
attend = Attend()
''' + KERAS_ATTENTION),
    # TensorFlow's way to Keras.
    'tf.keras': ('DotProductAttention', '''
import tensorflow as tf
attend = lambda q, k, v: tf.keras.layers.Attention()([q, v, k])
''' + KERAS_ATTENTION),
    # Every descriptor the cell can find silenced first: nothing to silence decides it (the
    # grader's own channel goes too, so the run crashes).
    'descriptors silenced': ('DotProductAttention', '''
import os
_quiet = os.open(os.devnull, os.O_WRONLY)
for _fd in range(3, 64):
  if _fd != _quiet:
    try:
      os.dup2(_quiet, _fd)
    except OSError:
      pass
from keras import ops
attend = ops.dot_product_attention
''' + KERAS_ATTENTION),
    # Outside attention: Keras is not there for a helper either.
    'keras argmax in next_symbol': ('next_symbol', ANSWERS['next_symbol'].replace(
        'def next_symbol', 'from keras import ops as _ops\ndef next_symbol', 1)
        .replace('int(np.argmax(', 'int(_ops.argmax(', 1)),
    # The watch taken away: the audit hook sees it go.
    'profiler removed': ('DotProductAttention', ANSWERS['DotProductAttention'].replace(
        'def DotProductAttention(query, key, value, mask):\n',
        'import sys\ndef DotProductAttention(query, key, value, mask):\n  sys.setprofile(None)\n', 1)),
}
HIDDEN_ROADS = [road for road in ROADS if road not in ('profiler removed', 'descriptors silenced')]


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


def test_the_courses_answers_lose_nothing(reports):
  for each in reports['course'].verdicts:
    assert (each.points, each.manual, each.notes) == (each.max_points, '', []), each


@pytest.mark.parametrize('road', HIDDEN_ROADS)
def test_a_hidden_librarys_answer_earns_nothing_and_says_why(reports, road):
  function, _ = ROADS[road]
  graded = verdict(reports[road], function)
  table = grader.table(reports[road])
  assert graded.points == 0 and not graded.manual, table
  said = [note for note in graded.notes if sandbox.HIDDEN_LIBRARY_NOTE in note]
  assert said and said[0].split(' is ')[0] in ('keras', 'jax.experimental.pallas.ops'), table
  others = [v for v in reports[road].verdicts if v.grade_id != f'test_{function}']
  assert all(v.points == v.max_points and not v.manual for v in others), table
  assert not [n for v in others for n in v.notes if sandbox.HIDDEN_LIBRARY_NOTE in n], table


def test_silencing_every_descriptor_earns_nothing(reports):
  graded = verdict(reports['descriptors silenced'], 'DotProductAttention')
  assert graded.points == 0 and not graded.manual, graded


def test_a_profiler_taken_away_sends_the_function_to_a_teacher(reports):
  graded = verdict(reports['profiler removed'], 'DotProductAttention')
  assert graded.points == 0 and 'sys.setprofile called' in graded.manual, graded
