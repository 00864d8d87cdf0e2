"""Where a mistake is, what every answer keeps, and who is to blame (issue 53).

The ``where:`` line and the properties checked beside each exercise's cases
(``runner.py``: ``where``, ``kept_cases``), blame that names an earlier exercise
only when it fails its own check (``blame.py``), and Trax's errors in a cell
made short (``cell_errors.py``): each on a mistake written here, the
course's answers as the rest of the notebook (``learner_variants``).
"""

import re
import textwrap

import jax
import numpy as np

import learner_variants
from summarizer.assignment import blame, cell_errors, checks, runner
from summarizer.contract import judge, measures

PADS_IN_PLACE = '''
def next_symbol(cur_output_tokens, model):
  token_length = len(cur_output_tokens)
  padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
  cur_output_tokens += [0] * (padded_length - token_length)
  padded_with_batch = np.array(cur_output_tokens)[None, :]
  output, _ = model((padded_with_batch, padded_with_batch))
  return int(np.argmax(output[0, token_length, :]))
'''

ONE_TOKEN_TOO_MANY = '''
def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                  detokenize=detokenize, verbose=False, max_length=64):
  cur_output_tokens = tokenize(input_sentence) + [0]
  generated_output = []
  cur_output = 0
  while cur_output != 1 and len(generated_output) <= max_length:
    cur_output = next_symbol(cur_output_tokens, model)
    cur_output_tokens.append(cur_output)
    generated_output.append(cur_output)
  return detokenize(generated_output)
'''

NUMPY_ATTENTION = '''
def DotProductAttention(query, key, value, mask):
  q, k, v = np.array(query), np.array(key), np.array(value)
  dots = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
  if mask is not None:
    dots = np.where(mask, dots, -1e9)
  dots = np.exp(dots - dots.max(axis=-1, keepdims=True))
  dots = dots / dots.sum(axis=-1, keepdims=True)
  return jnp.asarray(np.matmul(dots, v))
'''

SPLIT_WITHOUT_D_HEAD = '''
def compute_attention_heads_closure(n_heads, d_head):
  def compute_attention_heads(x):
    batch_size, seqlen = x.shape[0], x.shape[1]
    x = jnp.reshape(x, (batch_size, n_heads, seqlen, -1))
    x = jnp.reshape(x, (-1, seqlen, d_head))
    return x
  return compute_attention_heads
'''

# The course's DecoderBlock with its feed-forward in a Serial, not a Residual (line 13).
BLOCK_WITHOUT_THE_FEED_FORWARD_RESIDUAL = learner_variants.COURSE_ANSWERS['DecoderBlock'].replace(
    'tl.Residual(feed_forward)', 'tl.Serial(feed_forward)')


def check(name, **answers):
  """(failed, printed) of the check of ``name`` in the course's notebook with ``answers``."""
  names = learner_variants.course_namespace(
      **{k: textwrap.dedent(v).lstrip('\n') for k, v in answers.items()})  # Line 1: its def.
  return learner_variants.run_check(checks, name, names)


def where_lines(printed):
  return [line.strip() for line in printed.splitlines() if line.strip().startswith('where: ')]


def test_next_symbol_padding_the_callers_list_in_place_fails_saying_so():
  failed, printed = check('next_symbol', next_symbol=PADS_IN_PLACE)
  assert failed == 1, printed
  assert "leaves the caller's 5 tokens as they were" in printed
  assert 'why: it changed the list it was given' in printed


def test_greedy_decode_writing_one_token_past_max_length_fails_with_the_line():
  failed, printed = check('greedy_decode', greedy_decode=ONE_TOKEN_TOO_MANY)
  assert failed == 1, printed
  assert 'max_length=3) when EOS never comes' in printed
  assert 'expected: 3' in printed and 'got:      4' in printed
  assert where_lines(printed) and where_lines(printed)[0].startswith('where: line ')


def test_numpy_inside_attention_fails_under_jit_naming_the_line_and_is_blamed_after():
  failed, printed = check('DotProductAttention', DotProductAttention=NUMPY_ATTENTION)
  assert failed == 2, printed  # Batches of 1 and 3 under jit; every case without it passes.
  assert ('why: line 2 of DotProductAttention hands a traced array to NumPy: under jax.jit '
          'it has no values yet; use jnp, not np' in printed)
  failed, printed = check('CausalAttention', DotProductAttention=NUMPY_ATTENTION)
  assert failed
  assert 'fix Exercise 1 (DotProductAttention) first' in printed


def test_a_wrong_reshape_in_split_heads_is_found_at_its_line():
  failed, printed = check('compute_attention_heads_closure',
                          compute_attention_heads_closure=SPLIT_WITHOUT_D_HEAD)
  assert failed
  assert where_lines(printed) == [
      # Line 4 reshapes the same numbers as the course's first reshape: the course's path
      # is left where its transpose is missing.
      'where: line 5 of compute_attention_heads, `x` has shape (4, 2, 3); '
      'the course has (2, 2, 2, 3) here']


# The weights normalised over the queries, through a local the course's function does not have.
NORMALISED_OVER_THE_QUERIES = '''
def DotProductAttention(query, key, value, mask):
  depth = query.shape[-1]
  dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(depth)
  if mask is not None:
    dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
  over_queries = trax.fastmath.logsumexp(dots, axis=-2, keepdims=True)
  dots = jnp.exp(dots - over_queries)
  return jnp.matmul(dots, value)
'''


def test_a_local_the_course_does_not_have_is_found_without_a_shape_of_the_courses():
  failed, printed = check('DotProductAttention', DotProductAttention=NORMALISED_OVER_THE_QUERIES)
  assert failed
  [line] = where_lines(printed)
  # Line 6 (the changed one) holds the only value the course's function never has. Before,
  # the line went on "the course has (2, 2) here": the shape of another value, not of a sum
  # over the queries.
  assert line.startswith('where: line 6 of DotProductAttention, `over_queries` has shape ('), line
  assert line.endswith("; no value of the course's function has its numbers"), line


def test_a_wrong_sublayer_is_named_with_the_line_that_built_it():
  failed, printed = check('DecoderBlock', DecoderBlock=BLOCK_WITHOUT_THE_FEED_FORWARD_RESIDUAL)
  assert failed
  assert where_lines(printed) == [
      'where: line 13 of DecoderBlock built `Serial`; the course has `Residual` here']


def test_the_courses_answers_keep_every_property():
  names = learner_variants.course_namespace()
  for name in ('DotProductAttention', 'compute_attention_heads_closure',
               'dot_product_self_attention', 'compute_attention_output_closure',
               'next_symbol', 'greedy_decode'):
    made = runner._properties(name, [{'name': 'a case', 'call': lambda f=names[name]: f,  # pylint: disable=protected-access
                                      'expected': {}}])
    for case, _ in made:
      recorded = runner.record(case)
      assert recorded['error'] is None and not runner.judged(case, recorded), (name, case['name'])


def test_a_function_that_is_not_the_learners_has_no_properties():
  assert runner._properties('next_symbol', [{'name': 'the package', 'call': print,  # pylint: disable=protected-access
                                             'expected': {}}]) == []


def test_the_where_line_never_breaks_a_check():
  def raises():
    raise RuntimeError('not even a function of the notebook')
  assert runner.where(raises, 'DotProductAttention') is None
  assert runner.where(lambda: None, 'not an exercise') is None


def test_an_earlier_exercise_that_passes_its_own_check_is_never_blamed():
  names = learner_variants.course_namespace()
  wrong = {'name': "a case that passes only with the package's functions",
           'call': judge.reading({measures.OUTPUT_SHAPE.name: lambda output: 'learner'},
                                 lambda: None),
           'expected': {measures.OUTPUT_SHAPE: 'package'}}
  own_checks = {'passes': lambda name, function: 0, 'fails': lambda name, function: 2}
  said = {}
  for verdict, own in own_checks.items():
    # Every case passes with the package's earlier functions in place.
    earlier = blame.Earlier('CausalAttention', names['CausalAttention'], {}, lambda case: True,
                            own)
    said[verdict] = earlier.fix(wrong)
  assert said['passes'] is None
  assert said['fails'] and 'fix Exercise' in said['fails']


def test_a_trax_error_in_a_cell_is_at_most_six_lines_ending_at_the_learners_line():
  names = learner_variants.course_namespace(DotProductAttention=NUMPY_ATTENTION.lstrip('\n'))
  model = names['TransformerLM'](vocab_size=40, d_model=8, d_ff=16, n_layers=1, n_heads=2)
  from summarizer._trax import trax  # pylint: disable=g-import-not-at-top
  try:
    model.init(trax.shapes.ShapeDtype((1, 8), np.int32))
    jax.jit(lambda w, s: model.pure_fn(np.ones((1, 8), np.int32), w, s,
                                       jax.random.PRNGKey(0)))(model.weights, model.state)
  except Exception as error:  # pylint: disable=broad-except
    shown = cell_errors.short(error)
  lines = shown.splitlines()
  assert len(lines) <= cell_errors.MOST_LINES
  assert re.fullmatch(r'your line: in DotProductAttention, line 2\b.*', lines[-1]), shown
  assert lines[0].startswith('LayerError') and 'TracerArrayConversionError' in lines[1]
