"""Feedback that is never wrong (issue 64): a why: only where the learner's values show it,
a where: only on the learner's own line.

Each mistake below is written here for these tests, in the course's notebook (the
course's answers for the rest, ``learner_variants``); its where: line is asserted
to be the line the mistake changed, and its why: to hold of the learner's values.
"""

import linecache
import textwrap

import jax
import numpy as np
import pytest

import learner_variants
from summarizer.assignment import checks, runner
from summarizer.contract import failure_text, mistakes, signature
from summarizer._trax import jnp, tl, trax
from summarizer import model as package_model

# Each mistake: its function, its source (the changed line marked `# changed`).
SHIFTED_MASK = '''
def dot_product_self_attention(q, k, v):
  size = q.shape[-2]
  allowed = jnp.tril(jnp.ones((1, size, size), dtype=jnp.bool_), k=1)  # changed
  return DotProductAttention(q, k, v, allowed)
'''

ONE_ZERO_SHORT = '''
def next_symbol(cur_output_tokens, model):
  n = len(cur_output_tokens)
  target = 2 ** int(np.ceil(np.log2(n + 1)))
  batch = np.array([cur_output_tokens + [0] * (target - n - 1)])  # changed
  log_probs, _ = model((batch, batch))
  return int(np.argmax(log_probs[0, n]))
'''

BRANCH_ON_A_TRACED_VALUE = '''
def DotProductAttention(query, key, value, mask):
  scores = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(query.shape[-1])
  if jnp.all(mask):  # changed
    weights = jnp.exp(scores - trax.fastmath.logsumexp(scores, axis=-1, keepdims=True))
  else:
    scores = jnp.where(mask, scores, jnp.full_like(scores, -1e9))
    weights = jnp.exp(scores - trax.fastmath.logsumexp(scores, axis=-1, keepdims=True))
  return jnp.matmul(weights, value)
'''

FLOAT_HEAD_WIDTH = '''
def CausalAttention(d_feature, n_heads, mode='train'):
  assert d_feature % n_heads == 0
  d_head = d_feature / n_heads  # changed
  split = tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head), n_out=1)
  return tl.Serial(
      tl.Branch([tl.Dense(d_feature), split], [tl.Dense(d_feature), split],
                [tl.Dense(d_feature), split]),
      tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
      tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head), n_out=1),
      tl.Dense(d_feature))
'''

RETURNS_A_LIST = '''
def compute_attention_output_closure(n_heads, d_head):
  def compute_attention_output(x):
    length = x.shape[1]
    joined = jnp.transpose(jnp.reshape(x, (-1, n_heads, length, d_head)), (0, 2, 1, 3))
    return jnp.reshape(joined, (-1, length, n_heads * d_head)).tolist()  # changed
  return compute_attention_output
'''

EVAL_MODE_BY_DEFAULT = '''
def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                  dropout=0.1, max_len=4096, mode='eval', ff_activation=tl.Relu):  # changed
  return tl.Serial(
      tl.ShiftRight(mode=mode),
      tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
      tl.PositionalEncoding(max_len=max_len, mode=mode),
      [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
       for _ in range(n_layers)],
      tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
'''

EVALUATES_ON_THE_TRAINING_DATA = '''
def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
  train_task = training.TrainTask(
      labeled_data=train_gen, loss_layer=tl.CrossEntropyLoss(),
      optimizer=trax.optimizers.Adam(0.01),
      lr_schedule=trax.lr.warmup_and_rsqrt_decay(1000, 0.01), n_steps_per_checkpoint=10)
  eval_task = training.EvalTask(labeled_data=train_gen,  # changed
                                metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
  model = TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train')
  return training.Loop(model, train_task, eval_tasks=[eval_task],
                       output_dir=os.path.expanduser(output_dir))
'''


def changed_line(source):
  """The number of the line marked `# changed` (line 1: the def)."""
  lines = source.strip('\n').splitlines()
  return next(number for number, line in enumerate(lines, 1) if line.endswith('# changed'))


def check(name, source):
  """(failed, printed) of the check of ``name``, the notebook's ``name`` being ``source``.

  Its source is kept where tracebacks find it, as Jupyter keeps a cell's.
  """
  source = source.strip('\n') + '\n'
  filename = f'<course {name}>'
  linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
  try:
    names = learner_variants.course_namespace(**{name: source})
    return learner_variants.run_check(checks, name, names)
  finally:
    linecache.cache.pop(filename, None)


def lines_starting(printed, start):
  return [line.strip() for line in printed.splitlines() if line.strip().startswith(start)]


@pytest.mark.slow
def test_a_mask_shifted_by_one_is_named_so_never_a_missing_mask():
  failed, printed = check('dot_product_self_attention', SHIFTED_MASK)
  assert failed
  assert 'no causal mask' not in printed
  assert lines_starting(printed, 'why: ') == [
      'why: the mask is tril with k=1, which shows each position the next one too: '
      'position i may see the positions 0 to i (k=0)']
  assert lines_starting(printed, 'where: ')[0].startswith(
      f'where: line {changed_line(SHIFTED_MASK)} of dot_product_self_attention, `allowed`')


def test_a_cause_two_mistakes_share_on_these_values_is_not_named():
  # Two positions: tril(k=1) is all ones, the same as no mask: the output shows neither.
  q = k = jnp.array([[[1.0, 0.0], [0.0, 1.0]]])
  v = jnp.array([[[1.0, 2.0], [3.0, 4.0]]])
  shifted = jnp.tril(jnp.ones((1, 2, 2), dtype=jnp.bool_), k=1)
  got = mistakes.attention_with(q, k, v, shifted, mistakes.standard_softmax)
  assert mistakes.mask_cause(got, q, k, v) is None
  # Four positions tell them apart: the cause named is the one whose output it is.
  q4 = jnp.array(np.random.default_rng(0).normal(size=(1, 4, 3)), jnp.float32)
  got = mistakes.attention_with(q4, q4, q4, jnp.tril(jnp.ones((1, 4, 4), jnp.bool_), k=1),
                                mistakes.standard_softmax)
  assert mistakes.mask_cause(got, q4, q4, q4).startswith('the mask is tril with k=1')
  # 1 token padded to 1 position is both a power of two not above and one zero short.
  assert mistakes.padding_cause([5], [[[5]]]) is None


def test_a_padding_why_says_the_learners_own_numbers():
  said = mistakes.padding_cause([13, 483, 320, 1], [[[13, 483, 320, 1, 0, 0, 0]]])
  assert said.startswith('4 tokens padded to 7 positions, one zero short of 8')
  said = mistakes.padding_cause([13, 483, 320, 1], [[[13, 483, 320, 1]]])
  assert said.startswith('4 tokens padded to 4 positions, a power of two not above')
  assert mistakes.padding_cause([13, 483, 320, 1], [[[13, 483, 320, 1, 0, 0, 0, 0]]]) is None


@pytest.mark.slow
def test_padding_one_zero_short_is_said_with_the_positions_the_model_was_given():
  failed, printed = check('next_symbol', ONE_ZERO_SHORT)
  assert failed
  whys = lines_starting(printed, 'why: ')
  assert whys == ['why: 4 tokens padded to 7 positions, one zero short of 8, the smallest '
                  'power of two strictly greater than 4: pad with 4 zeros']
  # True of what the model was given: the got: line above it shows 4 tokens and 3 zeros.
  assert 'got:      [[[13, 483, 320, 1, 0, 0, 0]]]' in printed
  assert '4 to 4' not in printed
  assert lines_starting(printed, 'where: ')[0].startswith(
      f'where: line {changed_line(ONE_ZERO_SHORT)} of next_symbol')


@pytest.mark.slow
def test_an_if_on_a_traced_value_is_said_as_such_never_numpy():
  failed, printed = check('DotProductAttention', BRANCH_ON_A_TRACED_VALUE)
  assert failed
  assert 'NumPy' not in printed and 'np' not in BRANCH_ON_A_TRACED_VALUE.replace('jnp', '')
  line = changed_line(BRANCH_ON_A_TRACED_VALUE)
  assert (f'why: line {line} of DotProductAttention (`if jnp.all(mask):  # changed`) uses a '
          'traced array as a bool') in printed or (
              f'why: line {line} of DotProductAttention (`jnp.all(mask)`) uses a traced '
              'array as a bool') in printed


def test_each_tracer_error_gets_its_own_sentence():
  def under_jit(function):
    return runner._jit_runs(function, {'x': jnp.ones((2, 3))})  # pylint: disable=protected-access
  said = {
      'bool': under_jit(lambda x: x if x.sum() > 0 else -x),
      'numpy': under_jit(lambda x: np.asarray(x) + 1),
      'int': under_jit(lambda x: x[:, :int(x[0, 0])]),
      'shape': under_jit(lambda x: jnp.zeros(x[0, 0].astype(int))),
  }
  assert 'as a bool' in said['bool'] and 'NumPy' not in said['bool']
  assert 'hands a traced array to NumPy' in said['numpy']
  assert 'NumPy' not in said['int'] and 'NumPy' not in said['shape']
  assert len(set(said.values())) == 4, said
  for text in said.values():
    assert text.startswith('no: ')


@pytest.mark.slow
def test_a_float_head_width_is_located_at_its_line():
  failed, printed = check('CausalAttention', FLOAT_HEAD_WIDTH)
  assert failed
  assert lines_starting(printed, 'where: ') == [
      f'where: line {changed_line(FLOAT_HEAD_WIDTH)} of CausalAttention, `d_head` is 3.0, a '
      'float; the course has the int 3 here']
  # The error is said where it rose in the learner's code, never in jax's.
  assert '(in compute_attention_heads, line ' in printed
  assert 'canonicalize_shape' not in printed


@pytest.mark.slow
def test_a_list_returned_is_said_at_the_learners_line_only():
  failed, printed = check('compute_attention_output_closure', RETURNS_A_LIST)
  assert failed
  line = changed_line(RETURNS_A_LIST)
  assert f'why: line {line} of compute_attention_output (' in printed
  for said in lines_starting(printed, 'where: '):
    assert said.startswith(f'where: line {line} of compute_attention_output'), said
  assert '__init__' not in printed


def test_generated_code_and_libraries_are_never_the_learners():
  assert not failure_text.learners_code('<string>')  # A dataclass's __init__, a namedtuple's.
  assert not failure_text.learners_code(np.__file__)
  assert not failure_text.learners_code(jax.__file__)
  assert not failure_text.learners_code(tl.__file__)
  assert failure_text.learners_code('<course next_symbol>')


def test_an_error_trax_wraps_is_said_at_the_learners_line_with_its_columns():
  # Float ids: Trax's Embedding raises inside jax, wrapped in a LayerError.
  source = textwrap.dedent('''
      def embed(ids, layer):
        ids = np.asarray(ids, np.float64)
        return layer(ids) + 0
      ''').lstrip('\n')
  filename = '<course embed>'
  linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
  names = {'np': np}
  exec(compile(source, filename, 'exec'), names)  # pylint: disable=exec-used
  layer = tl.Embedding(10, 4)
  layer.init(trax.shapes.ShapeDtype((1, 3), np.int32))
  try:
    names['embed']([[1, 2, 3]], layer)
  except Exception as error:  # pylint: disable=broad-except
    said = failure_text.describe(error)
  finally:
    linecache.cache.pop(filename, None)
  assert said.startswith('ValueError') or 'integer' in said
  assert said.endswith('(in embed, line 3: return layer(ids) + 0, at `layer(ids)`)'), said


@pytest.mark.slow
def test_an_eval_default_in_the_signature_fails_at_its_line():
  failed, printed = check('TransformerLM', EVAL_MODE_BY_DEFAULT)
  assert failed == 1, printed
  assert "the course's signature has mode='train', yours mode='eval'" in printed
  assert lines_starting(printed, 'where: ') == [
      f"where: line {changed_line(EVAL_MODE_BY_DEFAULT)} of TransformerLM writes mode='eval', "
      "where the course writes mode='train'"]
  # True of its signature: TransformerLM() builds a model in eval mode.
  assert lines_starting(printed, 'why: ') == [
      "why: a call that leaves mode out gets mode='eval', where the course's gets mode='train': "
      "keep the course's default, which calls that leave it out rely on"]


def test_the_courses_signature_defaults_are_its_own():
  said = signature.defaults(package_model.TransformerLM)
  by_name = {parameter: default for parameter, default, _ in said}
  assert by_name['mode'] == "'train'" and by_name['ff_activation'] == 'Relu'
  assert signature.agree(said, said)


def test_a_default_left_to_kwargs_is_the_courses_and_one_left_out_is_none():
  def passes_on(vocab_size=33300, **options):
    return vocab_size, options

  def without_mode(vocab_size=33300, mode_name='train'):
    return vocab_size, mode_name

  def course(vocab_size=33300, mode='train'):
    return vocab_size, mode
  expected = signature.defaults(course)
  assert signature.agree(signature.defaults(passes_on), expected)
  got = signature.defaults(without_mode)
  assert not signature.agree(got, expected)
  assert signature.difference(expected, got)[0] == (
      "the course's signature has mode='train', yours mode=(no default)")
  assert signature.why(got, expected, {}).startswith('your signature gives mode no default')


@pytest.mark.slow
def test_an_evaluation_on_the_training_stream_fails_saying_so():
  failed, printed = check('training_loop', EVALUATES_ON_THE_TRAINING_DATA)
  assert failed == 1, printed
  assert "expected: 'eval_gen'\n    got:      'train_gen'" in printed
  assert 'why: the evaluation task reads train_gen' in printed
