"""Whether a summary comes from a model not yet good enough to trust.

Two signs, each worth a one-line warning:

* The summary itself: a model trained for a few dozen steps has learned
  little more than which tokens are common, so it ends the summary at once
  (EOS is one of them), writes the commonest one ('.', 'the') or a short
  run of them ('2, 2, 2') again and again until the summary's length runs
  out, or writes a word or two and stops ('Rasis.'): no sentence. The
  warning gives the steps the model was trained for where its
  ``config.json`` records them, beside those of the shipped model.
* The model's verdict (``summarizer.evaluation.verdict``): how it scored
  against Lead-3 on validation stories when its run ended. A model that
  did not beat Lead-3 on rouge1, rouge2 and rougeL, whose names and
  numbers are not mostly the article's, or that finds fewer of the
  reference's names and numbers than Lead-3 does, is not to be trusted; every one of
  its summaries gets the warning, whatever it says. The warning says what
  the verdict saw: summaries that are mostly not sentences, or sentences
  that read well and get the facts wrong.
"""

import collections

from summarizer.inference import model_directory

# A summary at least this long, one token of which makes up at least this
# share of it: no summary of a trained model looks like that.
MIN_TOKENS = 8
REPEATED_SHARE = 0.5
# The longest run of tokens that, repeated, is flagged as one ('2, 2, 2': '2' and ', ').
MAX_REPEATED_RUN = 3
# Words (with a letter or a digit) a finished sentence has at least.
MIN_SENTENCE_WORDS = 2
# A verdict whose summaries are sentences less often than this says they are not.
MIN_SENTENCE_SHARE = 0.5
# The bar (``bar``): beat Lead-3 on each of these, get at least this share
# of the names and numbers written from the article, and find at least as
# many of the reference's names and numbers as Lead-3 does.
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


def repeated_run(ids):
  """Returns the short run of tokens a summary is mostly made of, repeated, or None.

  Args:
    ids: The summary's token ids (EOS excluded).

  Returns:
    The run (a tuple of 2 to ``MAX_REPEATED_RUN`` ids) whose back-to-back
    repeats cover at least ``REPEATED_SHARE`` of a summary of at least
    ``MIN_TOKENS`` tokens; otherwise None.
  """
  if len(ids) < MIN_TOKENS:
    return None
  for size in range(2, MAX_REPEATED_RUN + 1):
    # Positions that repeat the token `size` before them: a run repeated back to back.
    repeats = sum(ids[i] == ids[i - size] for i in range(size, len(ids)))
    if repeats + size >= REPEATED_SHARE * len(ids) and len(set(ids)) > 1:
      counts = collections.Counter(tuple(ids[i:i + size]) for i in range(len(ids) - size + 1))
      return counts.most_common(1)[0][0]
  return None


def not_a_sentence(text):
  """Whether a summary ends a sentence before ``MIN_SENTENCE_WORDS`` words ('Rasis.').

  A summary cut short by a length limit ends without a full stop: it is not
  judged.
  """
  words = [word for word in text.split() if any(c.isalnum() for c in word)]
  return text.rstrip().endswith(('.', '!', '?')) and len(words) < MIN_SENTENCE_WORDS


def unreadable(ids, text, detokenize):
  """What makes a summary no summary at all, in words, or None.

  Args:
    ids: The summary's token ids (EOS excluded).
    text: The summary.
    detokenize: Token ids to text (to show the repeated token).
  """
  if not ids:
    return 'the summary is empty'
  repeated = repeated_token(ids)
  if repeated is not None:
    token, count = repeated
    return (f'the summary is mostly one token repeated ({detokenize([token])!r}, '
            f'{count} of {len(ids)} tokens)')
  run = repeated_run(ids)
  if run is not None:
    return f'the summary is mostly a few tokens repeated ({detokenize(list(run))!r} again and again)'
  if not_a_sentence(text):
    return f'the summary is not a sentence ({text.strip()!r})'
  return None


def undertrained_warning(ids, loaded, search=None):
  """Returns a one-line warning if the summary is no summary at all, else None.

  A model that has trained a few steps ends at once (EOS is among the first
  tokens it learns), repeats its commonest token or a few of them, or
  writes a word and stops (``unreadable``).

  Otherwise, the model's verdict's warning (``verdict_warning``), if any.

  Args:
    ids: The summary's token ids.
    loaded: The ``LoadedModel`` that wrote it.
    search: The ``beam.Search`` that found it: a negative length penalty,
      which ranks the shortest summaries first, is named, not the training.
  """
  seen = unreadable(ids, loaded.detokenize(ids) if ids else '', loaded.detokenize)
  if seen is not None and search is not None and search.num_beams > 1 and (
      search.length_penalty < 0):
    penalty = f'{search.length_penalty:f}'.rstrip('0').rstrip('.')
    return (f'{seen} with a length penalty of {penalty} (--length-penalty, '
            'length_penalty): below 0, beam search ranks the shortest summaries first, down '
            'to none; leave it out, or give 0 or more')
  verdict = verdict_warning(loaded.source.verdict)
  if seen is None or verdict is not None:  # The verdict's warning says more.
    return verdict
  steps = loaded.source.trained_steps
  if steps is None:
    trained = ''
  elif loaded.source.shipped:
    trained = f' (trained {steps:,} steps)'
  else:
    trained = f' (trained {steps:,} steps; the shipped model: {model_directory.shipped_steps():,})'
  return (f'{seen}: the model is likely undertrained{trained}; train it longer '
          '(--resume with a higher --max-steps)')


def bar(model, lead3):
  """Each part of the bar, met or not, for a model's scores beside Lead-3's.

  Args:
    model, lead3: Scores on the same stories (rouge1, rouge2, rougeL,
      entity_precision, entity_recall; None where undefined).

  Returns:
    {part: bool} for each ROUGE score, ``entity_precision`` and, where
    Lead-3's is known (verdicts before it was recorded lack it),
    ``entity_recall``.
  """
  meets = {name: (model.get(name) or 0) > lead3[name] for name in ROUGE_TO_BEAT}
  meets['entity_precision'] = (model.get('entity_precision') or 0) >= MIN_ENTITY_PRECISION
  if lead3.get('entity_recall') is not None:
    meets['entity_recall'] = (model.get('entity_recall') or 0) >= lead3['entity_recall']
  return meets


def shortfalls(verdict):
  """Where a verdict's model falls short of the bar, in words (an empty list: none)."""
  model, lead3 = verdict['model'], verdict['lead3']
  meets = bar(model, lead3)
  behind = [f'{name} {model[name] or 0:.3f} against {lead3[name]:.3f}'
            for name in ROUGE_TO_BEAT if not meets[name]]
  if not meets['entity_precision']:
    behind.append(f'{model.get("entity_precision") or 0:.0%} of the names and numbers it '
                  'writes are in the article')
  if not meets.get('entity_recall', True):
    behind.append(f'it writes {model.get("entity_recall") or 0:.0%} of the reference\'s names '
                  f'and numbers, Lead-3 {lead3["entity_recall"]:.0%}')
  return behind


def verdict_warning(verdict):
  """Returns a one-line warning if a model's verdict is below Lead-3's, else None.

  Args:
    verdict: The ``verdict`` record of the model's config.json (None: the
      model has none, e.g. the course's checkpoint or an interrupted run).
  """
  if not verdict:
    return None
  behind = shortfalls(verdict)
  if not behind:
    return None
  sentences = verdict.get('sentences')  # Older verdicts do not count them.
  if sentences is not None and sentences < MIN_SENTENCE_SHARE:
    seen = (f'only {sentences:.0%} of its summaries there are sentences (the others repeat '
            'a token or stop after a word or two)')
  else:
    seen = 'its summaries read well before they are right'
  return (f'this model does not yet beat Lead-3 (the first three sentences) on '
          f'{verdict["n"]} validation stories ({"; ".join(behind)}; step '
          f'{verdict.get("step") or "?"}): {seen}, so do not trust this one; train it '
          'longer (--resume --max-minutes N)')
