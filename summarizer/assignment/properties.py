"""What every answer keeps, whatever its numbers: checked beside each exercise's cases.

- Its inputs are as they were after the call (``next_symbol`` padding the
  caller's token list in place lengthens ``greedy_decode``'s sequence).
- It runs under ``jax.jit`` where the package's function does, with the
  package's dtype (NumPy on a traced array fails only once a layer runs it).
- ``greedy_decode`` writes ``max_length`` tokens exactly when EOS never comes.
- ``TransformerLM``'s signature has the course's defaults (``mode='train'``, ...:
  ``contract/signature.py``, which the grader reads them with too).

``cases(check, function)`` gives them as ``(case, traced)``, each case in the
runner's form (``runner.py``: its name, its call, which returns its measures
by name, and their expected values; the runner imports this module, never
the reverse); ``traced``: whether a ``where:`` line helps (not under jit,
where the learner's values are tracers).
"""

import jax

from summarizer import model as package_model
from summarizer.contract import exercise_code, failure_text, probes, recording, signature
from summarizer.contract.judge import reading
from summarizer.contract.measures import DEFAULTS, DTYPE, INPUTS_AFTER, UNDER_JIT, WRITTEN


def cases(check, function):
  """The properties of the learner's ``function`` of ``check``, as (case, traced)."""
  if check == recording.NEXT_SYMBOL:
    return [({'name': probes.tokens_case(),
              'call': reading({INPUTS_AFTER.name: list}, lambda: probes.tokens_after(function)),
              'expected': {INPUTS_AFTER: list(probes.PROPERTY_TOKENS)}}, False)]
  if check == recording.TRANSFORMER_LM:
    return [({'name': recording.SIGNATURE_CASE,
              'call': lambda: {DEFAULTS.name: signature.defaults(function)},
              'expected': {DEFAULTS: signature.defaults(package_model.TransformerLM)}}, False)]
  if check == recording.GREEDY_DECODE and recording.accepts(function, 'max_length'):
    return [_writes_max_length(function)]
  if check not in (recording.DOT_PRODUCT_ATTENTION, recording.HEADS_CLOSURE, recording.SELF_ATTENTION,
                   recording.OUTPUT_CLOSURE):
    return []
  return [_under_jit(check, function, batch) for batch in probes.JIT_BATCHES]


def _writes_max_length(greedy_decode):
  """greedy_decode(..., max_length=probes.MAX_LENGTH) with a next_symbol that never writes EOS."""
  def call():
    try:
      return probes.written_without_eos(greedy_decode)
    except recording.CAUGHT:  # pylint: disable=broad-except
      return probes.MAX_LENGTH  # It fails its own cases: they say how.
  return ({'name': probes.max_length_case(),
           'call': reading({WRITTEN.name: lambda written: written}, call),
           'expected': {WRITTEN: probes.MAX_LENGTH}}, True)


def _under_jit(check, function, batch):
  """The function under jax.jit on a batch: it runs, with the package's dtype, as the package's does."""
  made, arrays = probes.jit_call(check, batch)
  expected = jax.jit(made(exercise_code.graded_function(check)))(**arrays)

  def call():
    try:
      dtype = str(_dtype(made(function)(**arrays)))
    except recording.CAUGHT:  # pylint: disable=broad-except
      # It fails without jit too: the exercise's own cases say how; this says nothing more.
      return {UNDER_JIT.name: 'yes', DTYPE.name: str(expected.dtype)}
    return {UNDER_JIT.name: _jit_runs(made(function), arrays), DTYPE.name: dtype}
  return ({'name': probes.jit_case(check, batch), 'call': call,
           'expected': {UNDER_JIT: 'yes', DTYPE: str(expected.dtype)}}, False)


def _dtype(output):
  return getattr(output, 'dtype', type(output).__name__)


def _jit_runs(function, arrays):
  """'yes', or what stops the function under jit, with its line (as the grader says it)."""
  try:
    jax.block_until_ready(jax.jit(function)(**arrays))
    return 'yes'
  except recording.CAUGHT as error:  # pylint: disable=broad-except
    return recording.jit_refusal(error, failure_text.learners_code)
