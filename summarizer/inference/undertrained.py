"""Whether a summary shows an undertrained model: nothing, or one token over and over.

A model trained for a few dozen steps has learned little more than which
tokens are common, so it ends the summary at once (EOS is one of them) or
writes the commonest one ('.', 'the') again and again until the summary's
length runs out. Such a summary gets a one-line
warning, with the steps the model was trained for where its ``config.json``
records them, beside those of the shipped model.
"""

import collections

from summarizer.inference import checkpoint
from summarizer.config import DEFAULT_MODEL_DIR
from summarizer.text import detokenize

# A summary at least this long, one token of which makes up at least this
# share of it: no summary of a trained model looks like that.
MIN_TOKENS = 8
REPEATED_SHARE = 0.5


def repeated_token(ids):
  """Returns (token, count) if one token makes up most of a summary, else None.

  Args:
    ids: The summary's token ids (EOS excluded).

  Returns:
    The commonest token and how often it occurs, when the summary has at
    least ``MIN_TOKENS`` tokens and that one is at least ``REPEATED_SHARE``
    of them; otherwise None.
  """
  if len(ids) < MIN_TOKENS:
    return None
  token, count = collections.Counter(ids).most_common(1)[0]
  return (token, count) if count >= REPEATED_SHARE * len(ids) else None


def trained_steps(model_dir=None):
  """Returns the training steps behind a model directory's weights (None: not recorded).

  All runs of its lineage count (``total_steps`` in ``config.json``); the
  course's checkpoint has no ``config.json`` and so no count.
  """
  values = checkpoint.model_values(model_dir)
  steps = values.get('total_steps') or values.get('trained_steps')
  if not steps and values.get('lineage'):
    steps = sum(run.get('steps') or 0 for run in values['lineage'])
  return steps or None


def undertrained_warning(ids, model_dir=None, vocab_file=None):
  """Returns a one-line warning if the summary is empty or mostly one token, else None.

  A model that has trained a few steps either ends at once (EOS is among the
  first tokens it learns) or repeats its commonest token.

  Args:
    ids: The summary's token ids.
    model_dir: The model directory that wrote it (default: the shipped model).
    vocab_file: Its vocabulary (default: the model's own).
  """
  if not ids:
    seen = 'the summary is empty'
  else:
    repeated = repeated_token(ids)
    if repeated is None:
      return None
    token, count = repeated
    shown = detokenize([token],
                       vocab_file or checkpoint.model_vocab(model_dir or DEFAULT_MODEL_DIR))
    seen = f'the summary is mostly one token repeated ({shown!r}, {count} of {len(ids)} tokens)'
  steps = trained_steps(model_dir)
  shipped = trained_steps(DEFAULT_MODEL_DIR)
  if steps is None:
    trained = ''
  elif model_dir is None:
    trained = f' (trained {steps:,} steps)'
  else:
    trained = f' (trained {steps:,} steps; the shipped model: {shipped:,})'
  return (f'{seen}: the model is likely undertrained{trained}; train it longer '
          '(--resume with a higher --max-steps)')
