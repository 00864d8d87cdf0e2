"""Text: subword vocabularies, tokens and sentences.

The course's vocabularies are Trax/T2T ``.subwords`` files, in which ids 0
and 1 are ``<pad>`` and ``<EOS>``. ``tokenize`` ends every text with EOS, as
the course's does; ``detokenize`` turns ids back into text.

Sentences are split in two ways: ``sentences`` cuts at every white space
after . ! or ? (what the training lessons need), and ``split_sentences``
keeps only the cuts that a new sentence follows (what Lead-3 and the entity
rules need: no cut after "Mr." or "U.S.").
"""

import functools
import hashlib
import os
import re
import textwrap

import numpy as np

from summarizer._trax import trax
from summarizer.config import COURSE_VOCAB_FILE, DEFAULT_VOCAB_FILE, EOS
from summarizer.errors import SummarizerError

# Words ending in a full stop that does not end a sentence; also never names.
TITLES = frozenset('Mr Mrs Ms Dr Prof St Gen Col Capt Lt Sgt Gov Sen Rep Rev '
                   'Jr Sr Mt'.split())
# Capitalised words that are not names wherever they stand.
NOT_NAMES = TITLES | {'I'}

_OPENERS = '"\'\u201c\u2018(['  # Quotes and brackets a sentence may open with.
_INITIALS_AT_END = re.compile(r'(?:^|\s)(?:[A-Z]\.)+$')


def vocab_path(vocab_file=None):
  """Returns the vocabulary file to use: ``vocab_file`` or the shipped one."""
  path = os.path.abspath(os.path.expanduser(vocab_file or DEFAULT_VOCAB_FILE))
  if not os.path.isfile(path):
    raise SummarizerError(f'{vocab_file or path}: vocabulary file not found')
  return path


@functools.lru_cache(maxsize=8)
def _encoder(path):
  """Loads a Trax/T2T ``.subwords`` file once per process."""
  # Read with Python's open, not Trax's (tf.io.gfile would import TensorFlow);
  # newline='\n' splits lines where gfile does.
  encoder = trax.data.text_encoder.SubwordTextEncoder()
  encoder.filename = path
  try:
    with open(path, encoding='utf-8', newline='\n') as f:
      encoder._load_from_file_object(f)  # pylint: disable=protected-access
  except (OSError, UnicodeDecodeError, ValueError) as e:
    raise SummarizerError(f'{path}: not a subword vocabulary ({e})') from None
  if encoder.vocab_size < 3 or encoder.all_subtoken_strings[EOS].rstrip('_') != '<EOS>':
    raise SummarizerError(f'{path}: not a subword vocabulary '
                          '(expected <pad> and <EOS> as ids 0 and 1)')
  return encoder


def encoder(vocab_file=None):
  """Returns the ``SubwordTextEncoder`` of ``vocab_file`` (default: shipped)."""
  return _encoder(vocab_path(vocab_file))


def vocab_size(vocab_file=None):
  """Returns the number of ids in the vocabulary."""
  return encoder(vocab_file).vocab_size


def vocab_fingerprint(vocab_file=None):
  """Returns the md5 of the vocabulary file, to tell vocabularies apart."""
  with open(vocab_path(vocab_file), 'rb') as f:
    return hashlib.md5(f.read()).hexdigest()


def tokenize(text, vocab_file=None):
  """Turns text into subword ids ending in EOS.

  Args:
    text: A string.
    vocab_file: A ``.subwords`` file; default: the shipped vocabulary.

  Returns:
    A list of ints, the last one ``EOS`` (1).
  """
  return list(encoder(vocab_file).encode(text)) + [EOS]


def detokenize(ids, vocab_file=None):
  """Turns subword ids back into text (ids 0 and 1 show as <pad> and <EOS>).

  Args:
    ids: A sequence of ints (list or array).
    vocab_file: A ``.subwords`` file; default: the shipped vocabulary.

  Returns:
    A string.
  """
  return encoder(vocab_file).decode(np.asarray(ids, dtype=np.int64).tolist())


def course_tokenize(input_str, EOS=EOS):  # pylint: disable=invalid-name,redefined-outer-name
  """The course's ``tokenize``: ids of the course's vocabulary, then EOS.

  ``greedy_decode``'s default, as in the course's notebook, whose tests
  expect the course's ids (``summarize32k.subword.subwords``, shipped in
  ``data/``).
  """
  return list(encoder(COURSE_VOCAB_FILE).encode(input_str)) + [EOS]


def course_detokenize(integers):
  """The course's ``detokenize``: the course's vocabulary, wrapped at 70 columns."""
  return _COURSE_WRAPPER.fill(detokenize(integers, COURSE_VOCAB_FILE))


_COURSE_WRAPPER = textwrap.TextWrapper(width=70)

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
