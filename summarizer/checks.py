"""Checks for the ten graded functions of the assignment, runnable offline.

The course grades its week-2 assignment (UNQ_C1 to UNQ_C10) with a unit-test
file; these checks ask the same questions, with the same names and call
forms, and need neither the course's files nor a network. Hand a check your
function; it runs the course's cases, prints each one that fails (what was
expected, what came) and ends with ``All tests passed`` or
``N Tests passed, M Tests failed``::

  from summarizer import checks
  checks.test_DotProductAttention(DotProductAttention)
  checks.test_training_loop(training_loop, TransformerLM)
  checks.test_greedy_decode(greedy_decode)

Each check returns the number of failed cases. A function that raises (an
exercise not filled in yet, a wrong shape) fails its cases with the
exception's message; the check itself never raises.

``next_symbol`` and ``greedy_decode`` are checked with stand-ins for the
trained model, the tokenizer and ``next_symbol``, so they run in a second:
what is checked is how they pad, read and loop, not what a model says.
"""

import contextlib
import dataclasses
import functools
import inspect
import io
import operator
import os
import tempfile
from typing import Any, Callable

import jax
import numpy as np

from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import EOS, SEP
from summarizer.model import TransformerLM as _package_transformer_lm

# Exceptions a learner's function may raise that count as a failed case.
# (KeyboardInterrupt is left alone, so a check can still be stopped.)
_CAUGHT = (Exception, SystemExit)


# --------------------------------------------------------------------------
# The runner shared by every check.

@dataclasses.dataclass
class _Expect:
  """One comparison within a case.

  Attributes:
    what: What is compared, as printed ('output', 'shape', 'str(layer)').
    expected: The expected value (printed as is when the case fails).
    measure: Reads the value to compare from what the case's call returned.
    agree: Tells whether the measured value and the expected one agree.
  """
  what: str
  expected: Any
  measure: Callable[[Any], Any] = lambda output: output
  agree: Callable[[Any, Any], bool] = operator.eq


@dataclasses.dataclass
class _Case:
  """One call of the learner's function and what its result must satisfy."""
  name: str
  call: Callable[[], Any]
  expects: list


def _run(cases):
  """Runs the cases, prints each failure and the tally; returns the failures.

  A case counts one test per expectation. If its call raises, all of them
  fail and the exception is printed once.
  """
  passed = failed = 0
  for case in cases:
    try:
      output = case.call()
    except _CAUGHT as error:  # pylint: disable=broad-except
      failed += len(case.expects)
      print(f'Failed: {case.name}: it raised {_describe(error)}')
      continue
    for expect in case.expects:
      try:
        got = expect.measure(output)
      except _CAUGHT as error:  # pylint: disable=broad-except
        failed += 1
        print(f'Failed: {case.name}: {expect.what}: could not be read from '
              f'what it returned ({_describe(error)})')
        continue
      try:
        agreed = bool(expect.agree(got, expect.expected))
      except _CAUGHT:  # pylint: disable=broad-except
        agreed = False  # Not even comparable (a type or shape far off).
      if agreed:
        passed += 1
      else:
        failed += 1
        _print_failure(case.name, expect, got)
  if failed:
    print(f'{passed} Tests passed, {failed} Tests failed')
  else:
    print('All tests passed')
  return failed


def _describe(error):
  """Formats an exception as 'Type: message', the message cut short."""
  try:
    message = str(error).strip()
  except _CAUGHT:  # pylint: disable=broad-except
    message = '(a message that cannot be printed)'
  lines = message.splitlines()
  if len(lines) > 6:
    message = '\n'.join(lines[:6] + ['...'])
  if len(message) > 500:
    message = message[:500] + ' ...'
  name = type(error).__name__
  return f'{name}: {message}' if message else name


def _print_failure(name, expect, got):
  """Prints what was expected and what came (for layer trees, one line)."""
  print(f'Failed: {name}: {expect.what}')
  if (isinstance(got, str) and isinstance(expect.expected, str)
      and '\n' in expect.expected):
    line, wanted, came = _first_difference(expect.expected, got)
    print(f'    first difference, line {line}:')
    print(f'    expected: {wanted!r}')
    print(f'    got:      {came!r}')
  else:
    print(f'    expected: {_show(expect.expected)}')
    print(f'    got:      {_show(got)}')


def _first_difference(expected, got):
  """Returns (line number, expected line, line got) where two texts differ.

  Spaces are ignored, as the comparison of layer trees ignores them; a
  missing line shows as None.
  """
  expected_lines, got_lines = expected.split('\n'), got.split('\n')
  for number in range(max(len(expected_lines), len(got_lines))):
    wanted = expected_lines[number] if number < len(expected_lines) else None
    came = got_lines[number] if number < len(got_lines) else None
    if (wanted is None or came is None
        or wanted.replace(' ', '') != came.replace(' ', '')):
      return number + 1, wanted, came
  return 1, expected_lines[0], got_lines[0]


def _show(value, limit=600):
  """Formats a value for a failure message: short, arrays as nested lists."""
  try:
    if isinstance(value, type):
      module = '' if value.__module__ == 'builtins' else value.__module__ + '.'
      text = module + value.__name__.rsplit('.', 1)[-1]  # jax.Array's is dotted.
    elif isinstance(value, (np.ndarray, jax.Array)):
      text = repr(_rounded(np.asarray(value).tolist()))
    else:
      text = repr(_rounded(value))
  except _CAUGHT:  # pylint: disable=broad-except
    text = f'<a {type(value).__name__} that cannot be printed>'
  if len(text) > limit:
    text = text[:limit] + ' ...'
  return text


def _rounded(value):
  """Numbers in nested lists to 6 significant digits, whole ones as ints."""
  if isinstance(value, (list, tuple)):
    return type(value)(_rounded(item) for item in value)
  if isinstance(value, dict):
    return {key: _rounded(item) for key, item in value.items()}
  if isinstance(value, float) and np.isfinite(value):
    value = float(f'{value:.6g}')
    return int(value) if value.is_integer() else value
  return value


# --------------------------------------------------------------------------
# Comparisons and measures.

def _as_array(output):
  """Returns the output as a float64 numpy array."""
  if output is None:
    raise TypeError('it returned None')
  return np.asarray(output, dtype=np.float64)


def _shape_of(output):
  if output is None:
    raise TypeError('it returned None')
  return tuple(np.shape(output))


def _allclose(got, expected):
  """Same shape and the same numbers to float32 precision."""
  got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
  return got.shape == expected.shape and np.allclose(got, expected, rtol=1e-5,
                                                     atol=1e-6)


def _same_tree(got, expected):
  """Two printed layer trees agree, spaces aside."""
  return got.replace(' ', '') == expected.replace(' ', '')


def _sublayer_names(layer):
  return [type(sublayer).__name__ for sublayer in layer.sublayers]


def _count_weights(weights):
  """The number of numbers in a tree of weights (arrays or their shapes)."""
  return sum(int(np.prod(leaf.shape))
             for leaf in jax.tree_util.tree_leaves(weights))


def _output(expected):
  """Expects the output to be this array (shape and numbers)."""
  return _Expect('output', np.array(expected, np.float32), _as_array, _allclose)


def _shape(expected):
  return _Expect('shape', tuple(expected), _shape_of)


def _kind(expected_class, measure=lambda output: output, what='type'):
  """Expects what ``measure`` reads to be an instance of ``expected_class``."""
  return _Expect(what, expected_class, lambda output: type(measure(output)),
                 issubclass)


def _accepts(function, name):
  """Whether ``function`` takes a parameter ``name`` (True when unsure)."""
  try:
    parameters = inspect.signature(function).parameters.values()
  except (TypeError, ValueError):
    return True
  return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD
             for p in parameters)


# --------------------------------------------------------------------------
# UNQ_C1: DotProductAttention.

# The course's masks are 0 (may not attend) and -1e9 (may attend: any
# non-zero is True), so a row of zeros masks every position. Normalised as
# exp(x - logsumexp(x)) in float32, such a row weighs every value 1, which
# is why the first rows below are sums of the values.
_ATTENTION_QUERY = [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
_ATTENTION_KEY = [[9, 8, 7, 6], [6, 5, 4, 3], [3, 2, 1, 0]]
_ATTENTION_VALUE = [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 1]]

# (name, query, key, value, mask, expected output)
_DOT_PRODUCT_CASES = [
    ('example 1 (first row fully masked)',
     [[1, 0, 0], [0, 1, 0]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]],
     [[0, 0], [-1e9, 0]],
     [[1, 1, 1], [0, 1, 0]]),
    ('example 2 (first row fully masked)',
     [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 1], [0, 0, 1]],
     [[0, 0], [-1e9, 0]],
     [[0, 1, 2], [0, 1, 1]]),
    ('example 3 (first row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[0, 0, 0], [-1e9, 0, 0], [-1e9, -1e9, 0]],
     [[1, 1, 1, 1], [0, 0, 1, 0], [0.04742587, 0, 0.95257413, 0]]),
    ('example 4 (no row fully masked)',
     _ATTENTION_QUERY, _ATTENTION_KEY, _ATTENTION_VALUE,
     [[-1e9, -1e9, -1e9], [0, -1e9, -1e9], [0, 0, -1e9]],
     [[0.04731418, 0.00235563, 0.9503307, 0.00235563],
      [0.8175744, 0.1824255, 0, 0.1824255],
      [0, 1, 0, 1]]),
]


def test_DotProductAttention(DotProductAttention):  # pylint: disable=invalid-name
  """Checks ``DotProductAttention(query, key, value, mask)`` (UNQ_C1).

  Four small examples, three with a fully masked row: the output's numbers
  (which need the course's ``exp(x - logsumexp(x))`` normalisation) and
  that it is a ``jax.Array``.

  Args:
    DotProductAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for name, query, key, value, mask, expected in _DOT_PRODUCT_CASES:
    inputs = dict(query=jnp.array(query), key=jnp.array(key),
                  value=jnp.array(value), mask=jnp.array(mask))
    cases.append(_Case(f'DotProductAttention, {name}',
                       functools.partial(DotProductAttention, **inputs),
                       [_output(expected), _kind(jax.Array)]))
  return _run(cases)


# --------------------------------------------------------------------------
# UNQ_C2 and UNQ_C4: the heads folded into the batch axis, and back.

# Two positions whose features are one-hot, so a wrong reshape shows.
_POSITIONS = [[1, 0, 0], [0, 1, 0]]
_TWO_HEADS = [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0]]  # Both heads see _POSITIONS.


def test_compute_attention_heads_closure(compute_attention_heads_closure):
  """Checks ``compute_attention_heads_closure(n_heads, d_head)`` (UNQ_C2).

  With 2 heads of 3 features, batches of 2 and 3 sequences (B, 2, 6) must
  become (2B, 2, 3), each head's features with their own sequence.

  Args:
    compute_attention_heads_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for batch in (2, 3):
    x = jnp.array([_TWO_HEADS] * batch)  # (B, L, H * Dh)
    cases.append(_Case(
        f'compute_attention_heads_closure(n_heads=2, d_head=3) on a batch of {batch}',
        lambda x=x: compute_attention_heads_closure(n_heads=2, d_head=3)(x),
        [_shape((2 * batch, 2, 3)), _output([_POSITIONS] * (2 * batch))]))
  return _run(cases)


def test_compute_attention_output_closure(compute_attention_output_closure):
  """Checks ``compute_attention_output_closure(n_heads, d_head)`` (UNQ_C4).

  Six (2, 3) head outputs are joined back as 3 sequences of 2 heads of 3
  features; then the same 36 numbers, read as heads of 2 features, as 3
  sequences of 3 heads (the reshapes must use ``n_heads`` and ``d_head``,
  not the input's last axis).

  Args:
    compute_attention_output_closure: The function to check.

  Returns:
    int: the number of failed cases.
  """
  heads = jnp.array([_POSITIONS] * 6)  # (B * H, L, Dh)
  joined = {
      (2, 3): [_TWO_HEADS] * 3,
      (3, 2): [[[1, 0, 1, 0, 0, 0], [0, 0, 1, 0, 1, 0]]] * 3,
  }
  cases = []
  for (n_heads, d_head), expected in joined.items():
    cases.append(_Case(
        f'compute_attention_output_closure(n_heads={n_heads}, d_head={d_head})',
        lambda n_heads=n_heads, d_head=d_head: compute_attention_output_closure(
            n_heads=n_heads, d_head=d_head)(heads),
        [_shape((3, 2, 6)), _output(expected)]))
  return _run(cases)


# --------------------------------------------------------------------------
# UNQ_C3: dot_product_self_attention.

def test_dot_product_self_attention(dot_product_self_attention):
  """Checks ``dot_product_self_attention(q, k, v)`` (UNQ_C3).

  One batch of two positions, with 3 and 6 features: the first position may
  only attend to itself, so its output is its own value.

  Args:
    dot_product_self_attention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  qkv = (_POSITIONS, [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]])
  doubled = tuple([row + row for row in rows] for rows in qkv)  # Features twice.
  examples = [
      ('3 features', qkv, [[[0, 1, 0], [0.8496746, 0.15032543, 0.8496746]]]),
      ('6 features', doubled,
       [[[0, 1, 0, 0, 1, 0],
         [0.9205239, 0.07947586, 0.9205239, 0.9205239, 0.07947586, 0.9205239]]]),
  ]
  cases = []
  for name, (q, k, v), expected in examples:
    inputs = dict(q=jnp.array([q]), k=jnp.array([k]), v=jnp.array([v]))
    cases.append(_Case(f'dot_product_self_attention, {name}',
                       functools.partial(dot_product_self_attention, **inputs),
                       [_shape(np.shape(expected)), _output(expected)]))
  return _run(cases)


# --------------------------------------------------------------------------
# UNQ_C5 to UNQ_C7: the layers, by the trees Trax prints for them.

def _tree(name, *children):
  """Formats a layer with sublayers as Trax prints it: 'Name[', children, ']'."""
  lines = [f'{name}[']
  for child in children:
    lines += ['  ' + line for line in child.split('\n')]
  return '\n'.join(lines + [']'])


def _attention_tree(d_feature):
  return _tree('Serial',
               _tree('Branch_out3', *[f'[Dense_{d_feature}, AttnHeads]'] * 3),
               'DotProductAttn_in3', 'AttnOutput', f'Dense_{d_feature}')


def _residual_tree(body):
  return _tree('Serial', _tree('Branch_out2', 'None', body), 'Add_in2')


def _block_trees(d_model, d_ff):
  """The two residual layers of a decoder block, as printed."""
  attention = _residual_tree(
      _tree('Serial', 'LayerNorm', _attention_tree(d_model), 'Dropout'))
  feed_forward = _residual_tree(
      _tree('Serial', 'LayerNorm', f'Dense_{d_ff}', _tree('Serial', 'Relu'),
            'Dropout', f'Dense_{d_model}', 'Dropout'))
  return [attention, feed_forward]


def test_CausalAttention(CausalAttention):  # pylint: disable=invalid-name
  """Checks ``CausalAttention(d_feature, n_heads)`` (UNQ_C5).

  For 512 features in 8 heads and 16 in 4: the printed layer, that it is a
  ``tl.Serial``, and its four sublayers' types.

  Args:
    CausalAttention: The function to check.

  Returns:
    int: the number of failed cases.
  """
  cases = []
  for d_feature, n_heads in ((512, 8), (16, 4)):
    cases.append(_Case(
        f'CausalAttention(d_feature={d_feature}, n_heads={n_heads})',
        functools.partial(CausalAttention, d_feature=d_feature, n_heads=n_heads),
        [_Expect('str(layer)', _attention_tree(d_feature), str, _same_tree),
         _kind(tl.Serial),
         _Expect('types of its sublayers',
                 ['Serial', 'PureLayer', 'PureLayer', 'Dense'], _sublayer_names),
         _Expect('number of sublayers', 4, lambda layer: len(layer.sublayers))]))
  return _run(cases)


def test_DecoderBlock(DecoderBlock):  # pylint: disable=invalid-name
  """Checks ``DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)`` (UNQ_C6).

  Two sizes: the printed list of layers, that it holds two ``tl.Serial``
  (the attention and feed-forward residuals) and what each is made of.

  Args:
    DecoderBlock: The function to check.

  Returns:
    int: the number of failed cases.
  """
  residual_parts = [['Serial', 'PureLayer']] * 2  # Branch (a Serial), Add.
  cases = []
  for d_model, d_ff, n_heads, dropout in ((512, 2048, 8, 0.1), (16, 32, 4, 0.05)):
    cases.append(_Case(
        f'DecoderBlock(d_model={d_model}, d_ff={d_ff}, n_heads={n_heads}, '
        f'dropout={dropout})',
        functools.partial(DecoderBlock, d_model=d_model, d_ff=d_ff,
                          n_heads=n_heads, dropout=dropout, mode='train',
                          ff_activation=tl.Relu),
        [_Expect('str(layers)', '[' + ', '.join(_block_trees(d_model, d_ff)) + ']',
                 str, _same_tree),
         _Expect('number of layers', 2, len),
         _Expect('types of the layers', ['Serial', 'Serial'],
                 lambda block: [type(layer).__name__ for layer in block]),
         _Expect('types of their sublayers', residual_parts,
                 lambda block: [_sublayer_names(layer) for layer in block]),
         _Expect('numbers of their sublayers', [2, 2],
                 lambda block: [len(layer.sublayers) for layer in block])]))
  return _run(cases)


# The exercise's model: the one training_loop trains.
_EXERCISE_MODEL = dict(vocab_size=33300, d_model=4, d_ff=16, n_layers=1, n_heads=2)
_EXERCISE_WEIGHTS = 316_336


def _exercise_model_signatures(TransformerLM):  # pylint: disable=invalid-name
  """Builds the exercise's model and traces it on ids (2, 8), abstractly.

  Only shapes are computed (no random weights, no arithmetic), which takes
  a fraction of a second where a real initialisation takes several.

  Returns:
    (the weights' shapes, the output's shape).
  """
  model = TransformerLM(**_EXERCISE_MODEL, mode='eval')
  ids = trax.shapes.ShapeDtype((2, 8), np.int32)
  weights, state = fastmath.abstract_eval(model.init)(ids)
  rng = fastmath.random.get_prng(0)
  output, _ = fastmath.abstract_eval(
      lambda ids, weights, state: model.pure_fn(ids, weights, state, rng))(
          ids, weights, state)
  return weights, tuple(output.shape)


def test_TransformerLM(TransformerLM):  # pylint: disable=invalid-name
  """Checks ``TransformerLM(vocab_size, d_model, d_ff, n_layers, n_heads, ...)`` (UNQ_C7).

  Two one-block models: the printed layer, that it is a ``tl.Serial`` and
  its nine sublayers' types. Then the exercise's model (d_model=4, d_ff=16,
  one block, two heads) is traced: it has 316,336 weights and returns a
  score for each of the 33,300 ids at each position.

  Args:
    TransformerLM: The function to check.

  Returns:
    int: the number of failed cases.
  """
  sublayers = ['Serial', 'Embedding', 'Dropout', 'PositionalEncoding',
               'Serial', 'Serial', 'LayerNorm', 'Dense', 'PureLayer']
  cases = []
  for vocab_size, d_model, d_ff, n_heads, dropout, max_len in (
      (33300, 512, 2048, 8, 0.1, 4096), (100, 16, 32, 4, 0.05, 256)):
    expected = _tree('Serial', _tree('Serial', 'ShiftRight(1)'),
                     f'Embedding_{vocab_size}_{d_model}', 'Dropout',
                     'PositionalEncoding', *_block_trees(d_model, d_ff),
                     'LayerNorm', f'Dense_{vocab_size}', 'LogSoftmax')
    cases.append(_Case(
        f'TransformerLM(vocab_size={vocab_size}, d_model={d_model}, d_ff={d_ff}, '
        f'n_layers=1, n_heads={n_heads})',
        functools.partial(TransformerLM, n_layers=1, vocab_size=vocab_size,
                          d_model=d_model, d_ff=d_ff, n_heads=n_heads,
                          dropout=dropout, max_len=max_len, ff_activation=tl.Relu),
        [_Expect('str(model)', expected, str, _same_tree),
         _kind(tl.Serial),
         _Expect('types of its sublayers', sublayers, _sublayer_names),
         _Expect('number of sublayers', 9, lambda model: len(model.sublayers))]))
  cases.append(_Case(
      'TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2) on ids (2, 8)',
      functools.partial(_exercise_model_signatures, TransformerLM),
      [_Expect('number of weights', _EXERCISE_WEIGHTS,
               lambda traced: _count_weights(traced[0])),
       _Expect('output shape', (2, 8, 33300), lambda traced: traced[1])]))
  return _run(cases)


# --------------------------------------------------------------------------
# UNQ_C8: training_loop.

# The course's learning-rate schedule, read at steps of the warmup and of
# the decay.
_SCHEDULE_STEPS = (1, 500, 1000, 1001, 4000)
_COURSE_SCHEDULE = trax.lr.warmup_and_rsqrt_decay(1000, 0.01)

# Adam as the course builds it: Adam(0.01), the rest Trax's defaults.
_ADAM_PARAMETERS = {'learning_rate': 0.01, 'weight_decay_rate': 1e-5,
                    'b1': 0.9, 'b2': 0.999, 'eps': 1e-5}


def _batches(seed, length=16):
  """Yields (inputs, targets, weights) batches of one short joint sequence.

  As in the course's data, the loss weights are 0 over the article (the
  first half here) and 1 over the summary.
  """
  rng = np.random.default_rng(seed)
  weights = np.zeros((1, length), np.float32)
  weights[:, length // 2:] = 1
  while True:
    ids = rng.integers(2, 33300, size=(1, length)).astype(np.int32)
    yield ids, ids, weights


@contextlib.contextmanager
def _home(directory):
  """Points '~' at ``directory``: a loop that writes to '~/model' writes there."""
  saved = os.environ.get('HOME')
  os.environ['HOME'] = directory
  try:
    yield
  finally:
    if saved is None:
      del os.environ['HOME']
    else:
      os.environ['HOME'] = saved


def _same_directory(got, expected):
  return os.path.realpath(os.path.expanduser(got)) == os.path.realpath(expected)


def _train_task(loop):
  return loop.tasks[0]


def _adam_parameters_agree(got, expected):
  return got.keys() == expected.keys() and all(
      np.isclose(got[name], expected[name], rtol=1e-6) for name in expected)


def test_training_loop(training_loop, TransformerLM=None):  # pylint: disable=invalid-name
  """Checks ``training_loop(TransformerLM, train_gen, eval_gen, output_dir)`` (UNQ_C8).

  The loop is built (no step is run) over small random batches, with
  ``output_dir`` in a temporary directory, and checked for the course's
  setup: ``CrossEntropyLoss``, ``Adam(0.01)``, the learning-rate schedule
  ``warmup_and_rsqrt_decay(1000, 0.01)``, a checkpoint every 10 steps,
  ``[CrossEntropyLoss, Accuracy]`` on evaluation, the exercise's model of
  316,336 weights, and that it writes where it is told.

  Args:
    training_loop: The function to check.
    TransformerLM: The model function to hand it (the course passes the
      learner's); by default, the package's.

  Returns:
    int: the number of failed cases.
  """
  TransformerLM = TransformerLM or _package_transformer_lm
  expected_rates = [float(_COURSE_SCHEDULE(step)) for step in _SCHEDULE_STEPS]
  with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
    output_dir = os.path.join(home, 'output')  # Not '~/model', which is here too.

    def build_loop():
      options = {'output_dir': output_dir} if _accepts(training_loop, 'output_dir') else {}
      with _home(home):  # Even a loop that ignores output_dir stays in here.
        return training_loop(TransformerLM, _batches(0), _batches(1), **options)

    expects = [
        _Expect('loss layer', 'CrossEntropyLoss_in3',
                lambda loop: str(_train_task(loop).loss_layer)),
        _kind(trax.optimizers.adam.Adam,
              lambda loop: _train_task(loop).optimizer, 'optimizer'),
        _Expect('optimizer parameters', _ADAM_PARAMETERS,
                lambda loop: {name: float(value) for name, value
                              in _train_task(loop).optimizer.opt_params.items()},
                _adam_parameters_agree),
        _Expect(f'learning rates at steps {", ".join(map(str, _SCHEDULE_STEPS))}',
                expected_rates,
                lambda loop: [float(_train_task(loop).learning_rate(step))
                              for step in _SCHEDULE_STEPS],
                _allclose),
        _Expect('steps between checkpoints', 10,
                lambda loop: _train_task(loop).n_steps_per_checkpoint),
        _Expect('evaluation metrics', ['CrossEntropyLoss', 'Accuracy'],
                lambda loop: [str(name) for name in loop.eval_tasks[0].metric_names]),
        _Expect('weights of the model it trains', _EXERCISE_WEIGHTS,
                lambda loop: _count_weights(loop.model.weights)),
        _Expect('output directory', output_dir, lambda loop: loop.output_dir,
                _same_directory),
    ]
    return _run([_Case(
        'training_loop(TransformerLM, train_gen, eval_gen, output_dir)',
        build_loop, expects)])


# --------------------------------------------------------------------------
# UNQ_C9: next_symbol.

class _StandInModel:
  """Stands in for an eval-mode TransformerLM: shows which position is read.

  Called as the course calls the model, on ``(inputs, targets)``, it returns
  ``(log_probs, targets)``; the most likely token at position p is 40 + p,
  so the token a caller picks tells which position it read. Every input is
  recorded.
  """
  VOCAB = 100
  FIRST = 40

  def __init__(self):
    self.inputs = []

  def __call__(self, batch, *args, **kwargs):
    del args, kwargs
    pair = isinstance(batch, (tuple, list))
    inputs = np.asarray(batch[0] if pair else batch)
    self.inputs.append(inputs)
    log_probs = np.full(inputs.shape + (self.VOCAB,), -10.0, np.float32)
    for position in range(min(inputs.shape[-1], self.VOCAB - self.FIRST)):
      log_probs[..., position, self.FIRST + position] = -0.1
    return (log_probs, batch[1] if len(batch) > 1 else inputs) if pair else log_probs


def _padded_length(length):
  """The smallest power of two strictly greater than ``length``."""
  padded = 1
  while padded <= length:
    padded *= 2
  return padded


def test_next_symbol(next_symbol, model=None):
  """Checks ``next_symbol(cur_output_tokens, model)`` (UNQ_C9).

  With a stand-in model, for token lists of 1, 4, 7 and 10 ids (the last
  is the course's): the model sees the tokens padded with zeros to the next
  power of two strictly greater than their number, as a batch of one; the
  answer is read at position ``len(cur_output_tokens)``; it is a Python int.

  Args:
    next_symbol: The function to check.
    model: Accepted for the course's call forms (a model or TransformerLM);
      not used: a stand-in model takes its place.

  Returns:
    int: the number of failed cases.
  """
  del model
  token_lists = [[5], [13, 483, 320, 1], [7, 7, 9, 31, 2, 1, 0],
                 [13, 483, 320, 4219, 132, 213, 2775, 10, 1, 0]]
  cases = []
  for tokens in token_lists:
    padded = tokens + [0] * (_padded_length(len(tokens)) - len(tokens))

    def read_next(tokens=tokens):
      stand_in = _StandInModel()
      return next_symbol(list(tokens), stand_in), stand_in.inputs

    expects = [
        _Expect('next token (read at position len(tokens))',
                _StandInModel.FIRST + len(tokens), lambda out: out[0]),
        _Expect('type of the next token', int, lambda out: type(out[0]), issubclass),
        _Expect("the model's input(s)", [[padded]],
                lambda out: [np.asarray(inputs).tolist() for inputs in out[1]]),
    ]
    plural = 's' if len(tokens) > 1 else ''
    cases.append(_Case(f'next_symbol on {len(tokens)} token{plural}', read_next,
                       expects))
  return _run(cases)


# --------------------------------------------------------------------------
# UNQ_C10: greedy_decode.

# The stand-in vocabulary of summaries: detokenize joins these pieces.
_SUMMARY_PIECES = {20: 'I ', 21: 'found ', 22: 'roses, ', 23: 'not ',
                   24: 'tulips.', 25: ' And more.', EOS: '<EOS>'}


def _stand_in_tokenize(text, *args, **kwargs):
  """One id a word (100 + its length), then EOS, as the course's tokenize ends."""
  del args, kwargs
  return [100 + len(word) for word in text.split()] + [EOS]


def _stand_in_detokenize(ids, *args, **kwargs):
  del args, kwargs
  return ''.join(_SUMMARY_PIECES.get(int(i), f'<{int(i)}>') for i in ids)


class _StandInModelArgument:
  """The model handed to greedy_decode: only ever passed on to next_symbol."""

  def __repr__(self):
    return "greedy_decode's model"


class _ScriptedNextSymbol:
  """Stands in for next_symbol: writes a script, one token a call.

  It answers the next token of ``script`` only when called with the article's
  ids, the separator and the tokens written so far, and EOS otherwise. It
  records every call, and gives up (raises) when called far more often than
  the script is long: a decoder that does not stop at EOS.
  """

  def __init__(self, prefix, script):
    self.prefix, self.script = list(prefix), list(script)
    self.calls, self.models = [], []

  def __call__(self, cur_output_tokens, model=None, *args, **kwargs):
    del args, kwargs
    tokens = [int(token) for token in cur_output_tokens]
    self.calls.append(tokens)
    self.models.append(model)
    if len(self.calls) > 2 * len(self.script) + 10:
      raise RuntimeError(f'next_symbol was called {len(self.calls)} times: '
                         f'the decoding does not stop at EOS ({EOS})')
    written = tokens[len(self.prefix):]
    if (tokens[:len(self.prefix)] == self.prefix
        and written == self.script[:len(written)] and len(written) < len(self.script)):
      return self.script[len(written)]
    return EOS


def _after(article_ids, tokens):
  """The tokens after the article's ids (all of them if they do not start so)."""
  if tokens[:len(article_ids)] == article_ids:
    return tokens[len(article_ids):]
  return tokens


def test_greedy_decode(greedy_decode, model=None):
  """Checks ``greedy_decode(input_sentence, model, next_symbol, tokenize, detokenize)`` (UNQ_C10).

  With a stand-in ``next_symbol``, ``tokenize`` and ``detokenize``: decoding
  starts from ``tokenize(sentence) + [0]``, appends each token it gets,
  passes its model to ``next_symbol``, stops at EOS (1) even when more would
  come, prints the summary as it grows, and returns the detokenised summary
  with its '<EOS>'.

  Args:
    greedy_decode: The function to check; called with ``verbose=True`` when
      it takes that argument (the course's version always prints).
    model: Accepted for the course's call forms; not used: stand-ins take the
      place of the model and of ``next_symbol``.

  Returns:
    int: the number of failed cases.
  """
  del model
  # (sentence, what next_symbol would write: after EOS, what must not come)
  examples = [
      ('It was a sunny day when I went to the market to buy some flowers.',
       [20, 21, 22, 23, 24, EOS, 25]),
      ('Nothing happened.', [EOS, 25]),
  ]
  options = {'verbose': True} if _accepts(greedy_decode, 'verbose') else {}
  cases = []
  for sentence, script in examples:
    summary = script[:script.index(EOS) + 1]
    article_ids = _stand_in_tokenize(sentence)
    prefix = article_ids + [SEP]

    def decode(sentence=sentence, prefix=prefix, script=script):
      stand_in = _ScriptedNextSymbol(prefix, script)
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        output = greedy_decode(sentence, _StandInModelArgument(),
                               next_symbol=stand_in, tokenize=_stand_in_tokenize,
                               detokenize=_stand_in_detokenize, **options)
      return output, stand_in, printed.getvalue()

    growing = [_stand_in_detokenize(summary[:n + 1]) for n in range(len(summary))]
    cases.append(_Case(
        f'greedy_decode of a {len(summary)}-token summary', decode, [
            _Expect('the summary it returns', growing[-1], lambda out: out[0]),
            _Expect('the tokens next_symbol is given after tokenize(sentence), '
                    'call by call',
                    [[SEP] + summary[:n] for n in range(len(summary))],
                    lambda out, ids=article_ids: [_after(ids, call) for call in out[1].calls]),
            _Expect('the model next_symbol is given', ["greedy_decode's model"],
                    lambda out: sorted({repr(m) for m in out[1].models})),
            _Expect('what it prints, line by line', growing,
                    lambda out: out[2].splitlines()),
        ]))
  return _run(cases)
