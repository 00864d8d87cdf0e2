"""Sentences, split in two ways.

``sentences`` cuts at every white space after . ! or ? (what the training
lessons need), and ``split_sentences`` keeps only the cuts that a new
sentence follows (what Lead-3 and the entity rules need: no cut after "Mr."
or "U.S.").
"""

import re


# Words ending in a full stop that does not end a sentence; also never names.
TITLES = frozenset('Mr Mrs Ms Dr Prof St Gen Col Capt Lt Sgt Gov Sen Rep Rev '
                   'Jr Sr Mt'.split())


# Capitalised words that are not names wherever they stand.
NOT_NAMES = TITLES | {'I'}


_OPENERS = '"\'\u201c\u2018(['  # Quotes and brackets a sentence may open with.


_INITIALS_AT_END = re.compile(r'(?:^|\s)(?:[A-Z]\.)+$')


# Where a sentence ends: white space after . ! or ?, maybe closing a quote.
_SENTENCE_END = re.compile(r'(?:(?<=[.!?])|(?<=[.!?]["\u201d\']))\s+')


def sentences(text):
  """Splits text into sentences at white space after . ! or ?."""
  return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _cut_is_sentence_end(before, after):
  """Tells whether a candidate cut between two pieces ends a sentence."""
  last_word = before.rsplit(None, 1)[-1]
  if last_word.endswith('.') and last_word[:-1] in TITLES:
    return False
  if _INITIALS_AT_END.search(before):
    return False
  first = after[0]
  return first.isupper() or first.isdigit() or first in _OPENERS


def split_sentences(text):
  """Splits text into sentences, each line on its own.

  ``sentences`` cuts at every white space after . ! or ?; of those cuts,
  only the ones followed by a likely sentence start are kept: the next
  piece starts with a capital, a digit or an opening quote or bracket, and
  the full stop does not end a title (Mr. Dr. St. ...) or initials (J. U.S.).

  Args:
    text: Any text; each line is split on its own.

  Returns:
    A list of sentences, stripped, in order.
  """
  found = []
  for line in text.splitlines():
    line_sentences = []
    for piece in sentences(line):
      if line_sentences and not _cut_is_sentence_end(line_sentences[-1], piece):
        line_sentences[-1] += ' ' + piece
      else:
        line_sentences.append(piece)
    found.extend(line_sentences)
  return found
