"""Whether a summary comes from a model not yet good enough to trust.

Two signs, each worth a one-line warning:

* The summary itself: a model trained for a few dozen steps has learned
  little more than which tokens are common, so it ends the summary at once
  (EOS is one of them) or writes the commonest one ('.', 'the') again and
  again until the summary's length runs out. The warning gives the steps
  the model was trained for where its ``config.json`` records them, beside
  those of the shipped model.
* The model's verdict (``summarizer.evaluation.verdict``): how it scored
  against Lead-3 on validation stories when its run ended. A model that
  did not beat Lead-3 on rouge1, rouge2 and rougeL, or whose names and
  numbers are not mostly the article's, writes summaries that read well
  and are wrong; every one of them gets the warning, whatever it says.
"""

import collections

from summarizer.inference import model_directory

# A summary at least this long, one token of which makes up at least this
# share of it: no summary of a trained model looks like that.
MIN_TOKENS = 8
REPEATED_SHARE = 0.5
# The verdict's bar: beat Lead-3 on each of these, and get at least this
# share of the names and numbers written from the article.
ROUGE_TO_BEAT = ('rouge1', 'rouge2', 'rougeL')
MIN_ENTITY_PRECISION = 0.8


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


def undertrained_warning(ids, loaded):
  """Returns a one-line warning if the summary is empty or mostly one token, else None.

  A model that has trained a few steps either ends at once (EOS is among the
  first tokens it learns) or repeats its commonest token.

  Otherwise, the model's verdict's warning (``verdict_warning``), if any.

  Args:
    ids: The summary's token ids.
    loaded: The ``LoadedModel`` that wrote it.
  """
  if not ids:
    seen = 'the summary is empty'
  else:
    repeated = repeated_token(ids)
    if repeated is None:
      return verdict_warning(loaded.source.verdict)
    token, count = repeated
    seen = (f'the summary is mostly one token repeated ({loaded.detokenize([token])!r}, '
            f'{count} of {len(ids)} tokens)')
  steps = loaded.source.trained_steps
  if steps is None:
    trained = ''
  elif loaded.source.shipped:
    trained = f' (trained {steps:,} steps)'
  else:
    trained = f' (trained {steps:,} steps; the shipped model: {model_directory.shipped_steps():,})'
  return (f'{seen}: the model is likely undertrained{trained}; train it longer '
          '(--resume with a higher --max-steps)')


def verdict_warning(verdict):
  """Returns a one-line warning if a model's verdict is below Lead-3's, else None.

  Args:
    verdict: The ``verdict`` record of the model's config.json (None: the
      model has none, e.g. the course's checkpoint or an interrupted run).
  """
  if not verdict:
    return None
  model, lead3 = verdict['model'], verdict['lead3']
  behind = [f'{name} {model[name] or 0:.3f} against {lead3[name]:.3f}'
            for name in ROUGE_TO_BEAT if (model[name] or 0) <= lead3[name]]
  precision = model.get('entity_precision') or 0
  if precision < MIN_ENTITY_PRECISION:
    behind.append(f'{precision:.0%} of the names and numbers it writes are in the article')
  if not behind:
    return None
  return (f'this model does not yet beat Lead-3 (the first three sentences) on '
          f'{verdict["n"]} validation stories ({"; ".join(behind)}; step '
          f'{verdict.get("step") or "?"}): its summaries read well before they are right, '
          'so do not trust this one; train it longer (--resume --max-minutes N)')
