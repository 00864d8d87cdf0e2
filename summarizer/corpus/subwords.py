"""Building a subword vocabulary from a source's training split.

The command is ``python -m summarizer.vocab``. Uses Trax's ``SubwordTextEncoder`` (the format of the course's
``summarize32k.subword.subwords``): ids 0 and 1 are ``<pad>`` and ``<EOS>``.
"""

import collections
import itertools
import os
import sys

from summarizer import files
from summarizer._trax import trax
from summarizer.corpus.sources import examples
from summarizer.errors import SummarizerError, library_io_error
from summarizer.progress import bar as progress_bar

text_encoder = trax.data.text_encoder
word_tokenizer = trax.data.tokenizer

# Subwords longer than this are not considered: without a bound the build
# is quadratic in the longest word (URLs, long numbers).
MAX_SUBTOKEN_LENGTH = 16


def count_words(texts, progress=False, total=None):
  """Counts the words (Trax's tokenizer's tokens) of an iterable of texts."""
  counts = collections.Counter()
  texts = progress_bar(texts, total=total, unit='text', desc='counting words',
                       disable=not progress)
  for text in texts:
    counts.update(word_tokenizer.encode(text))
  return counts


def build_vocab(source='news', size=8192, out=None, data_dir=None,
                limit=None, progress=False, download=True):
  """Builds a subword vocabulary of about ``size`` ids from a training split.

  Args:
    source: A data source string.
    size: Target number of ids (the result is close, not exact).
    out: Where to write the ``.subwords`` file (None: do not write).
    data_dir: TFDS data directory.
    limit: Use at most this many training examples.
    progress: Show progress bars.
    download: Whether a ``tfds:`` dataset missing from ``data_dir`` may be
      downloaded.

  Returns:
    The ``SubwordTextEncoder``.
  """
  if size < 300:
    raise SummarizerError(f'--size {size} is too small (at least 300)')
  pairs = itertools.islice(examples(source, 'train', data_dir, download), limit)
  texts = (text for pair in pairs for text in pair)
  total = 2 * limit if limit else None
  counts = count_words(texts, progress=progress, total=total)
  if not counts:
    raise SummarizerError(f'{source}: no text in the training split')
  if progress:
    print(f'{len(counts)} distinct words; searching for {size} subwords...',
          file=sys.stderr)
  encoder = text_encoder.SubwordTextEncoder.build_to_target_size(
      size, counts, 1, 1e3, max_subtoken_length=MAX_SUBTOKEN_LENGTH)
  if out:
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    try:
      with files.replacing(out) as temporary:  # Whole, and never through a link.
        encoder.store_to_file(temporary)
    except Exception as e:  # pylint: disable=broad-except
      # TensorFlow's file writer: a full disk is its ResourceExhaustedError, not an OSError.
      reason = library_io_error(e) or (isinstance(e, OSError) and (e.strerror or str(e)))
      if not reason:
        raise
      kept = 'the earlier one is kept' if os.path.exists(out) else 'nothing was written'
      # TensorFlow says "TEMPORARY-FILE; reason": the temporary file is gone, the reason stays.
      raise SummarizerError(f'{out}: cannot write the vocabulary '
                            f'({reason.rsplit("; ", 1)[-1]}); {kept}') from None
  return encoder

