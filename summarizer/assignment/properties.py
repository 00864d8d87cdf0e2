"""What every answer keeps, whatever its numbers: checked beside each exercise's cases.

- Its inputs are as they were after the call (``next_symbol`` padding the
  caller's token list in place lengthens ``greedy_decode``'s sequence).
- It runs under ``jax.jit`` where the package's function does, with the
  package's dtype (NumPy on a traced array fails only once a layer runs it).
- ``greedy_decode`` writes ``max_length`` tokens exactly when EOS never comes.

``cases(check, function)`` gives them as ``(name, call, [(measure, expected,
read)], traced)`` for the runner to make ``Case``s of (the runner imports this
module, never the reverse); ``traced``: whether a ``where:`` line helps (not
under jit, where the learner's values are tracers).
"""

import contextlib
import io
import operator

import jax
import numpy as np

from summarizer._trax import jnp
from summarizer.assignment import cell_errors, exercise_code, failure_text, probes
from summarizer.assignment.measures import Measure

INPUTS_AFTER = Measure('the tokens it was given, after the call', why=lambda got, expected, case: (
    'it changed the list it was given: pad a copy (tokens + [0] * n), never the '
    "caller's list, which greedy_decode goes on appending to"))
UNDER_JIT = Measure('runs under jax.jit', difference=lambda expected, got: [],
                    why=lambda got, expected, case: got[len('no: '):])
DTYPE = Measure('dtype of the output')
WRITTEN = Measure('tokens written when EOS never comes')

_TRACED_TO_NUMPY = ('TracerArrayConversionError', 'ConcretizationTypeError',
                    'TracerIntegerConversionError', 'TracerBoolConversionError')


def cases(check, function):
  """The properties of the learner's ``function`` of ``check``, as (name, call, expects)."""
  if check == probes.NEXT_SYMBOL:
    return [_inputs_unchanged(function)]
  if check == probes.GREEDY_DECODE and probes.accepts(function, 'max_length'):
    return [_writes_max_length(function, 3)]
  arrays = _ARRAY_CALLS.get(check)
  if arrays is None:
    return []
  return [_under_jit(check, function, *arrays(batch)) for batch in (1, 3)]


def _inputs_unchanged(next_symbol):
  tokens = [13, 483, 320, 1, 0]

  def call():
    given = list(tokens)
    try:
      next_symbol(given, probes.StandInModel())
    except probes.CAUGHT:  # pylint: disable=broad-except
      pass  # The exercise's own cases say how it fails; this says only whether the list changed.
    return given
  return (f"{probes.NEXT_SYMBOL} leaves the caller's {len(tokens)} tokens as they were", call,
          [(INPUTS_AFTER, list(tokens), list)], False)


def _writes_max_length(greedy_decode, most):
  """greedy_decode(..., max_length=most) with a next_symbol that never writes EOS."""
  def call():
    written = []

    def never_ends(cur_output_tokens, model=None, *args, **kwargs):
      del model, args, kwargs
      written.append(len(cur_output_tokens))
      return 20
    try:
      with contextlib.redirect_stdout(io.StringIO()):  # What it prints is feedback.
        greedy_decode('Nothing happened.', probes.ModelArgument(), next_symbol=never_ends,
                      tokenize=probes.stand_in_tokenize, detokenize=probes.stand_in_detokenize,
                      max_length=most)
    except probes.CAUGHT:  # pylint: disable=broad-except
      return most  # It fails its own cases: they say how.
    return len(written)
  return (f'{probes.GREEDY_DECODE}(..., max_length={most}) when EOS never comes', call,
          [(WRITTEN, most, lambda written: written)], True)


def _attention_arrays(batch):
  """The arguments by name, as the check calls DotProductAttention."""
  rng = np.random.default_rng(batch)
  q, k, v = (jnp.array(rng.normal(size=(batch, 4, 6)).astype(np.float32)) for _ in range(3))
  mask = jnp.array(np.tril(np.ones((1, 4, 4), bool)))
  return (lambda f: f, dict(query=q, key=k, value=v, mask=mask))


def _self_attention_arrays(batch):
  attention = _attention_arrays(batch)[1]
  return (lambda f: f, dict(q=attention['query'], k=attention['key'], v=attention['value']))


def _split_arrays(batch):
  x = jnp.array(np.random.default_rng(batch).normal(size=(batch, 4, 6)).astype(np.float32))
  return (lambda f: _positional(f(n_heads=2, d_head=3)), dict(x=x))


def _join_arrays(batch):
  x = jnp.array(np.random.default_rng(batch).normal(size=(2 * batch, 4, 3)).astype(np.float32))
  return (lambda f: _positional(f(n_heads=2, d_head=3)), dict(x=x))


def _positional(inner):
  """A closure's inner function called by keyword, as the check calls it positionally."""
  return lambda x: inner(x)


_ARRAY_CALLS = {probes.DOT_PRODUCT_ATTENTION: _attention_arrays,
                probes.SELF_ATTENTION: _self_attention_arrays,
                probes.HEADS_CLOSURE: _split_arrays, probes.OUTPUT_CLOSURE: _join_arrays}


def _under_jit(check, function, made, arrays):
  """The function under jax.jit on a batch: it runs, with the package's dtype, as the package's does."""
  package = made(exercise_code.graded_function(check))
  expected = jax.jit(package)(**arrays)

  def call():
    try:
      dtype = str(_dtype(made(function)(**arrays)))
    except probes.CAUGHT:  # pylint: disable=broad-except
      # It fails without jit too: the exercise's own cases say how; this says nothing more.
      return {UNDER_JIT.name: 'yes', DTYPE.name: str(expected.dtype)}
    return {UNDER_JIT.name: _jit_runs(made(function), arrays), DTYPE.name: dtype}
  batch = int(next(iter(arrays.values())).shape[0])
  name = f'{check} under jax.jit, a batch of {batch}'
  return (name, call, [(UNDER_JIT, 'yes', operator.itemgetter(UNDER_JIT.name)),
                       (DTYPE, str(expected.dtype), operator.itemgetter(DTYPE.name))], False)


def _dtype(output):
  return getattr(output, 'dtype', type(output).__name__)


def _jit_runs(function, arrays):
  """'yes', or what stops the function under jit, with its line."""
  try:
    jax.block_until_ready(jax.jit(function)(**arrays))
    return 'yes'
  except probes.CAUGHT as error:  # pylint: disable=broad-except
    if type(error).__name__ in _TRACED_TO_NUMPY:
      return f'no: {_learners_line(error)} turns a traced array into NumPy: use jnp, not np'
    return f'no: {failure_text.describe(error)}'


def _learners_line(error):
  """'line N of f (code)': the learner's last line in the error's traceback."""
  frame = cell_errors.learners_frame(error)
  if frame is None:
    return 'your code'
  code = (frame.line or '').strip()
  code = code if len(code) <= 60 else code[:60] + ' ...'
  return f'line {frame.lineno} of {frame.name}' + (f' ({code})' if code else '')
