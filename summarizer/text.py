"""Part 1 of the course: text to subword ids and back, and the vocabularies.

The course's vocabularies are Trax/T2T ``.subwords`` files, in which ids 0
and 1 are ``<pad>`` and ``<EOS>``. ``tokenize`` ends every text with EOS, as
the course's does; ``detokenize`` turns ids back into text.
"""

import functools
import hashlib
import io
import os
import textwrap

import numpy as np

from summarizer._trax import trax
from summarizer.config import COURSE_VOCAB_FILE, DEFAULT_VOCAB_FILE, EOS, MAX_VOCAB_BYTES
from summarizer.errors import SummarizerError
from summarizer.files import read_file, regular_file

# What MAX_VOCAB_BYTES bounds, for the error that names it.
_BOUND = 'a vocabulary may be'


def vocab_path(vocab_file=None):
  """Returns the vocabulary file to use: ``vocab_file`` or the shipped one."""
  path = os.path.abspath(os.path.expanduser(vocab_file or DEFAULT_VOCAB_FILE))
  if not os.path.exists(path):
    raise SummarizerError(f'{vocab_file or path}: vocabulary file not found')
  regular_file(path, MAX_VOCAB_BYTES, _BOUND)  # Not a FIFO, nor a link to /dev/zero.
  return path


@functools.lru_cache(maxsize=8)
def _encoder(path):
  """Loads a Trax/T2T ``.subwords`` file once per process."""
  # Read by Python, not Trax (tf.io.gfile would import TensorFlow), and at
  # most MAX_VOCAB_BYTES.
  encoder = trax.data.text_encoder.SubwordTextEncoder()
  encoder.filename = path
  try:
    # newline='\n' splits lines where gfile does; a byte-order mark is dropped.
    lines = io.StringIO(read_file(path, MAX_VOCAB_BYTES, _BOUND).decode('utf-8-sig'),
                        newline='\n')
    encoder._load_from_file_object(lines)  # pylint: disable=protected-access
  except (OSError, UnicodeDecodeError, ValueError, AssertionError, IndexError) as e:
    # Trax asserts that each line is a quoted subword: a cut file fails so.
    reason = str(e) or 'a line is not a quoted subword: the file may be cut short'
    raise SummarizerError(f'{path}: not a subword vocabulary ({reason})') from None
  if encoder.vocab_size < 3 or encoder.all_subtoken_strings[EOS].rstrip('_') != '<EOS>':
    raise SummarizerError(f'{path}: not a subword vocabulary '
                          '(expected <pad> and <EOS> as ids 0 and 1)')
  _check_whole(encoder, path)
  return encoder


def _check_whole(encoder, path):
  """Refuses a vocabulary cut short: one that cannot spell every character it uses.

  A whole vocabulary ends with a subword for each character of its alphabet
  (so that any word can be spelled); a file cut short lacks them, and Trax
  would fail with an AssertionError on the first word it cannot spell.
  """
  lacking = sorted(c for c in encoder._alphabet  # pylint: disable=protected-access
                   if c not in encoder._subtoken_string_to_id)  # pylint: disable=protected-access
  if lacking:
    raise SummarizerError(f'{path}: an incomplete subword vocabulary ({len(lacking)} of its '
                          f'characters have no subword of their own, e.g. {lacking[0]!r}): '
                          'is the file cut short?')


def encoder(vocab_file=None):
  """Returns the ``SubwordTextEncoder`` of ``vocab_file`` (default: shipped)."""
  return _encoder(vocab_path(vocab_file))


def vocab_size(vocab_file=None):
  """Returns the number of ids in the vocabulary."""
  return encoder(vocab_file).vocab_size


def vocab_fingerprint(vocab_file=None):
  """Returns the md5 of the vocabulary file, to tell vocabularies apart."""
  return hashlib.md5(read_file(vocab_path(vocab_file), MAX_VOCAB_BYTES, _BOUND)).hexdigest()


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

