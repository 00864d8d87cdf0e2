"""Mistakes learners make, recognised in what a function gave: the ``why:`` lines.

A measure (``measures.py``) names a failure's cause with one of the whys at
the end, for the in-notebook checks and the grader alike, from the measures
and inputs of a case; each returns a line naming the mistake, or None when
none it knows is recognised.
"""

import jax
import numpy as np

from summarizer import attention as _attention
from summarizer._trax import fastmath, jnp
from summarizer.contract import probes, probes_layers, recording
from summarizer.contract.judge import allclose
from summarizer.contract.failure_text import Cause
from summarizer.config import EOS, SEP


def _course_softmax(scores, axis):
  return jnp.exp(scores - fastmath.logsumexp(scores, axis=axis, keepdims=True))


def standard_softmax(scores, axis):
  return jax.nn.softmax(scores, axis=axis)


def attention_with(query, key, value, mask, normalise, axis=-1, scale=True):
  """Dot-product attention normalised by ``normalise`` over ``axis``, scaled by sqrt(d) or not."""
  scores = jnp.matmul(query, jnp.swapaxes(key, -1, -2))
  if scale:
    scores = scores / jnp.sqrt(query.shape[-1])
  scores = scores.astype(jnp.float32)  # (..., L_q, L_k)
  if mask is not None:
    scores = jnp.where(mask, scores, jnp.full_like(scores, _attention.MASK_SCORE))
  return jnp.matmul(normalise(scores, axis), value)


def only_cause(fits):
  """The one cause that fits the learner's values, or None when none or several do.

  Each cause is checked on the learner's own inputs and output: where two
  known mistakes give the same numbers (a mask of two positions that is all
  ones whether it is missing or ``tril(k=1)``), the output shows neither, and
  none is named.

  Args:
    fits: (cause, whether the learner's values are what that mistake gives) pairs.
  """
  found = [cause for cause, fit in fits if fit]
  return found[0] if len(found) == 1 else None


def _either_fits(got, query, key, value, mask, **mistake):
  """Whether ``got`` is attention with ``mistake``, its softmax of either form (_either_softmax)."""
  return any(allclose(got, attention_with(query, key, value, mask, normalise, **mistake))
             for normalise in (_course_softmax, standard_softmax))


def attention_cause(got, query, key, value, mask):
  """Names a mistake a DotProductAttention output shows: the softmax's axis, scale or mask."""
  causes = [
      ('the weights were normalised over the queries (axis -2): each row of weights '
       'must sum to 1 over the keys, the last axis', dict(mask=mask, axis=-2)),
      ('the scores were not scaled: divide the dot products of the queries and keys '
       'by sqrt(d), d the size of their last axis, before the softmax', dict(mask=mask, scale=False)),
  ]
  if mask is not None:
    causes.append(('the mask was used the wrong way round: keep the scores where the mask is '
                   'True (non-zero) and put -1e9 where it is False (0)',
                   dict(mask=jnp.asarray(mask) == 0)))
  return only_cause([(cause, _either_fits(got, query, key, value, **mistake))
                          for cause, mistake in causes])


def mask_cause(got, q, k, v):
  """Names the causal mask a dot_product_self_attention output shows, if a known wrong one."""
  square = jnp.ones((1, q.shape[-2], q.shape[-2]), dtype=jnp.bool_)
  causes = [
      (jnp.triu(square), 'the mask is the upper triangle (triu): position 0 may see only '
       'itself, and position i the positions 0 to i, the lower triangle (tril)'),
      (None, 'no causal mask: every position sees the later ones too, where position 0 may '
       'see only itself'),
      (jnp.tril(square, k=-1), 'the mask is tril with k=-1, which hides each position from '
       'itself: position i may see the positions 0 to i, itself included (k=0)'),
      (jnp.tril(square, k=1), 'the mask is tril with k=1, which shows each position the '
       'next one too: position i may see the positions 0 to i (k=0)'),
      (jnp.triu(square, k=1), 'the mask is the wrong way round, non-zero above the diagonal: '
       'it is boolean, True where a position may attend (tril), not 0 and -1e9 to add to the '
       'scores'),
  ]
  return only_cause([(cause, _either_fits(got, q, k, v, mask))
                          for mask, cause in causes])


def split_heads_cause(got, x, expected):
  """Names heads split without their transpose: x (B, L, H * Dh), expected (B * H, L, Dh)."""
  batch, length = x.shape[:2]
  n_heads, d_head = np.shape(expected)[0] // batch, np.shape(expected)[2]
  if allclose(got, np.reshape(x, (batch * n_heads, length, d_head))):
    return ('the heads were split without the transpose: (B, L, H, Dh) reshaped straight to '
            '(B * H, L, Dh) mixes positions and heads; move the heads axis before the '
            'positions first, (B, H, L, Dh)')
  return None


def join_heads_cause(got, x, expected):
  """Names heads joined without their transpose: x (B * H, L, Dh), expected (B, L, H * Dh)."""
  batch, length = np.shape(expected)[:2]
  if allclose(got, np.reshape(x, (batch, length, -1))):
    return ('the heads were joined without the transpose: (B, H, L, Dh) reshaped straight '
            'to (B, L, H * Dh) mixes heads and positions; move the positions back before '
            'the heads first, (B, L, H, Dh)')
  return None


def repeated_blocks_cause(identities):
  """Names one block repeated, from the objects of a model's direct sublayers.

  ``identities`` numbers them (``probes_layers.sublayer_identities``). A block is
  two residuals, numbered one after the other where they first
  appear: only when the repeats come as such pairs is the repeat a block's.
  """
  if not isinstance(identities, list):
    return None
  repeats = [i for i, number in enumerate(identities) if number in identities[:i]]
  if not repeats:
    return None
  pairs = [(i, i + 1) for i in repeats[::2]]
  if repeats == [i for pair in pairs for i in pair] and all(
      identities[j] == identities[i] + 1 for i, j in pairs):
    return ('one block object repeated ([DecoderBlock(...)] * n_layers): the blocks share '
            "one block's weights; build each block anew (a loop or a comprehension)")
  return ("one layer object is used twice among the model's layers: both places share its "
          'weights; build each layer anew')


def _top_level_parts(tree):
  """The direct sublayers of a printed layer, each as its printed lines."""
  parts = []
  for line in tree.split('\n')[1:]:
    if line.startswith('  ') and not line.startswith('   ') and line.strip() != ']':
      parts.append([line])
    elif parts and line.startswith('   '):
      parts[-1].append(line)
  return parts


def _count_blocks(tree):
  """How many decoder blocks a printed model holds, or None when they are not all whole.

  A block is two residuals among the model's direct sublayers (Serial
  flattens each block's list): one around the attention (its Branch_out3),
  then one around the feed-forward.
  """
  residuals = ['Branch_out3' in ''.join(part) for part in _top_level_parts(tree)
               if any('Branch_out2' in line for line in part)]
  if residuals[0::2] != [True] * len(residuals[0::2]) or any(residuals[1::2]):
    return None
  if len(residuals) % 2:
    return None
  return len(residuals) // 2


def blocks_cause(tree, expected_tree):
  """Names a number of decoder blocks other than n_layers, from the printed models.

  Only when every block is whole: a block built wrong (a residual missing)
  is no block too few.
  """
  blocks, expected = _count_blocks(tree), _count_blocks(expected_tree)
  if blocks is not None and expected is not None and blocks != expected:
    return (f'{blocks} decoder block(s) where n_layers asks for {expected}: '
            'build n_layers blocks, no more, no fewer')
  return None


# Why ShiftRight and PositionalEncoding are told the mode.
PREDICT_MODE = ('ShiftRight and PositionalEncoding need mode: fed a token a call, '
                'ShiftRight passes it on and PositionalEncoding counts positions')


# The output layers of CausalAttention and TransformerLM, and what each is for.
LAST_DENSE = {'Dense': 'CausalAttention has no last tl.Dense(d_feature): after AttnOutput '
                        'joins the heads, this output layer mixes them'}


MODEL_OUTPUT = {
    'Dense': 'the model has no tl.Dense(vocab_size) after its LayerNorm: this output layer '
             'turns the d_model features of each position into a score for each id',
    'LogSoftmax': 'the model does not end with tl.LogSoftmax(): it turns the scores into '
                  'the log-probabilities that the loss and next_symbol read',
}


def _top_level(tree):
  """The direct sublayers of a printed layer, by name ('Dense_512', 'Branch_out3', ...)."""
  return [line.strip().rstrip('[') for line in tree.split('\n')
          if line.startswith('  ') and not line.startswith('   ') and line.strip() != ']']


def missing_layer_cause(tree, expected_tree, causes):
  """The cause of a direct sublayer of the expected tree that ``tree`` lacks.

  Only a kind of layer missing altogether: one of another size is there, and
  no cause is named for it.

  Args:
    tree, expected_tree: The layers, printed.
    causes: A kind of layer ('Dense', 'LogSoftmax') -> why it is needed.
  """
  have = _top_level(tree)
  kinds = {layer.split('_')[0] for layer in have}
  for layer in _top_level(expected_tree):
    kind = layer.split('_')[0]
    if kind in causes and layer not in have and kind not in kinds:
      return causes[kind]
  return None


def model_cause(got, ran):
  """Names a mistake a TransformerLM run beside the package's shows (its blocks, its output)."""
  del got
  return (repeated_blocks_cause(ran.repeated) or blocks_cause(ran.tree, ran.expected_tree)
          or missing_layer_cause(ran.tree, ran.expected_tree, MODEL_OUTPUT))


def predict_mode_cause(measures):
  """Names the layers of a predict-mode model that ignore its mode, if any.

  Args:
    measures: ``probes_layers.predict_mode_layers``' measures of the model (the
      judge hands one measure at a time: a missing one says nothing).
  """
  shifted, encodings, ignoring = measures.get(probes_layers.SHIFTED), measures.get(probes_layers.ENCODINGS), []
  if isinstance(shifted, int) and shifted != probes_layers.TOKEN:
    ignoring.append('ShiftRight')  # In predict mode it passes the token through.
  if isinstance(encodings, list) and any(mode != 'predict' for mode in encodings):
    ignoring.append(recording.POSITIONAL_ENCODING)
  if not ignoring:
    return None
  return f"{' and '.join(sorted(ignoring))} ignored mode='predict': {PREDICT_MODE}"


def read_cause(position, tokens, inputs):
  """Names the position next_symbol read, if a known wrong one (and only that one fits)."""
  length = np.shape(inputs[0])[-1] if inputs else None
  return only_cause([
      ('it read position len(cur_output_tokens) - 1, which predicts the last token '
       'you already have: read position len(cur_output_tokens)', position == len(tokens) - 1),
      ('it read the last position (-1), which is padding: the next token is '
       'predicted at position len(cur_output_tokens), the first after the tokens',
       position != len(tokens) and length is not None and position == length - 1),
  ])


def power_above(number):
  """The smallest power of two strictly greater than ``number``."""
  power = 1
  while power <= number:
    power *= 2
  return power


def padding_cause(tokens, inputs):
  """Names how the tokens were padded, from the positions the model was given for them.

  Said with the learner's own numbers, and only when one known mistake fits
  them (1 token padded to 1 position fits both below: neither is named).
  """
  if not inputs:
    return None
  length, count = np.shape(inputs[0])[-1], len(tokens)
  wanted = power_above(count)
  if length == wanted:
    return None
  numbers = (f'{count} token{"s" if count != 1 else ""} padded to {length} '
             f'position{"s" if length != 1 else ""}')
  return only_cause([
      (Cause(f'{numbers}, a power of two not above their number: pad to the smallest one '
             f'strictly greater ({wanted}), so that position len(cur_output_tokens) exists',
             'a power of two not above'),
       length <= count and length & (length - 1) == 0 and length * 2 > count),
      (Cause(f'{numbers}, one zero short of {wanted}, the smallest power of two strictly '
             f'greater than {count}: pad with {wanted - count} zeros', 'one zero short'),
       length == wanted - 1),
  ])


def decoding_cause(written, summary=None):
  """Names an off-by-one of a decoding loop, from the stand-in's calls and the summary.

  Each cause is said only when the calls show it: ``written`` holds what each
  call of next_symbol was given after the article's ids (ending with EOS).
  """
  first = written[0] if written else None
  if first == []:  # The article's ids, then nothing.
    return ('decoding started without the separator: start from tokenize(sentence) + [0], '
            "the article's ids (ending with EOS) then SEP")
  if first and first[-1:] == [SEP] and set(first[:-1]) == {EOS}:
    return (f'{len(first) - 1} EOS (1) too many before the separator: tokenize(sentence) '
            'already ends with EOS, so start from tokenize(sentence) + [0]')
  started = [tokens for tokens in written if tokens[:1] == [SEP]]
  if started and len(started) == len(written) and any(EOS in tokens[1:] for tokens in started):
    return ('it went on after EOS: stop as soon as next_symbol gives EOS (1), once it is '
            'appended')
  if (isinstance(summary, str) and first and first[:1] == [SEP]
      and summary == probes.stand_in_detokenize(written[-1][1:])):
    return ('it stopped before appending EOS: append every token next_symbol gives, EOS '
            "(1) too, then stop; the summary ends with '<EOS>'")
  return None


# --------------------------------------------------------------------------
# The why: of a measure (``measures.py``): each reads what failed, what was
# expected and the case (its inputs and measures by name, the run of a layer beside
# the package's among them), and names a mistake or returns None.

def attention_why(got, expected, case):
  del expected
  return attention_cause(got, case[recording.INPUT_Q], case[recording.INPUT_K], case[recording.INPUT_V],
                         case[recording.INPUT_MASK])


def mask_why(got, expected, case):
  del expected
  return mask_cause(got, case[recording.INPUT_Q], case[recording.INPUT_K], case[recording.INPUT_V])


def split_heads_why(got, expected, case):
  return split_heads_cause(got, case[recording.INPUT_X], expected)


def join_heads_why(got, expected, case):
  return join_heads_cause(got, case[recording.INPUT_X], expected)


def blocks_why(got, expected, case):
  del case
  return blocks_cause(got, expected)


def repeated_why(got, expected, case):
  del expected, case
  return repeated_blocks_cause(got)


def shifted_why(got, expected, case):
  del expected, case
  return predict_mode_cause({probes_layers.SHIFTED: got})


def encodings_why(got, expected, case):
  del expected, case
  return predict_mode_cause({probes_layers.ENCODINGS: got})


def calls_why(got, expected, case):
  """An off-by-one of decoding in the calls; the case's summary (the learner's, in the notebook)."""
  del expected
  return decoding_cause(got, case.get(recording.SUMMARY))


def summary_why(got, expected, case):
  del expected
  return decoding_cause(case[recording.CALLS], got)


def shipped_why(got, expected, case):
  del got, expected, case
  return ("your model's weights are not the shapes of the shipped model's, so its weights "
          "cannot be loaded: build it from notebook_data.model_size(), with the layers of "
          'Exercise 7')


def last_dense_why(got, expected, case):
  del case
  return missing_layer_cause(got, expected, LAST_DENSE)


def model_tree_why(got, expected, case):
  del case
  return missing_layer_cause(got, expected, MODEL_OUTPUT) or blocks_cause(got, expected)


# The notebook's runs of a layer beside the package's hand the run under this name beside
# the measures (``checks_layers._Ran``).
RAN = 'the run beside the package'


def ran_last_dense_why(got, expected, case):
  """A CausalAttention run beside the package's: its last Dense missing."""
  del got, expected
  ran = case[RAN]
  return missing_layer_cause(ran.tree, ran.expected_tree, LAST_DENSE)


def ran_model_why(got, expected, case):
  """A TransformerLM run beside the package's: its blocks, its output layers."""
  del expected
  return model_cause(got, case[RAN])


def decoded_model_why(got, expected, case):
  """A predict-mode TransformerLM decoded token by token: as a run, then its layers' mode."""
  del expected
  ran = case[RAN]
  return model_cause(got, ran) or predict_mode_cause(probes_layers.predict_mode_layers(ran.model))


# The tokens a next_symbol case gave it, kept beside its measures (the probe records them).
TOKENS = recording.INPUT_TOKENS


def read_why(got, expected, case):
  del expected
  return read_cause(got - probes.StandInModel.FIRST, case[TOKENS], case[recording.MODEL_INPUTS])


def padding_why(got, expected, case):
  del expected
  return padding_cause(case[TOKENS], got)


def evaluation_data_why(got, expected, case):
  """An EvalTask built on the stream the loop trains on (``got`` names the argument it reads)."""
  del case
  if got == 'train_gen' and expected == 'eval_gen':
    return ('the evaluation task reads train_gen, the data the model trains on: build the '
            'EvalTask on eval_gen, so that its loss says how the model does on data it has '
            'not trained on')
  return global_stream_cause('EvalTask', got, expected)


def training_data_why(got, expected, case):
  """A TrainTask built on another stream than train_gen (``got`` names the one it reads)."""
  del case
  if got == 'eval_gen' and expected == 'train_gen':
    return ('the training task reads eval_gen, the data the evaluation is for: build the '
            'TrainTask on train_gen, and keep eval_gen for the EvalTask')
  return global_stream_cause('TrainTask', got, expected)


def global_stream_cause(task, got, expected):
  """A task built on a notebook global (``probes.stream_read`` names it) in place of its argument."""
  start = probes.NOTEBOOK_GLOBAL
  if not (isinstance(got, str) and got.startswith(start) and expected in recording.STREAMS):
    return None
  return (f'the {task} reads {got[len(start):]}, a global of the notebook, not the argument '
          f'{expected}: build it on {expected}, the stream training_loop is handed (its caller '
          'chooses the data)')
