"""Build a subword vocabulary from a source's training split.

  python -m summarizer.vocab --data news --size 8192 --out data/news.subwords

Uses Trax's ``SubwordTextEncoder`` (the format of the course's
``summarize32k.subword.subwords``): ids 0 and 1 are ``<pad>`` and ``<EOS>``.
"""

import argparse
import collections
import itertools
import os
import sys

from summarizer._trax import trax
from summarizer.errors import OneLineParser, SummarizerError, run_command
from summarizer.progress import bar as progress_bar
from summarizer.sources import examples

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
    tmp = out + '.tmp'
    encoder.store_to_file(tmp)
    os.replace(tmp, out)
  return encoder


def main(argv=None):
  p = OneLineParser(prog='python -m summarizer.vocab', description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--data', default='news', help='a data source (default: news)')
  p.add_argument('--data-dir', default=None,
                 help='TFDS data directory (default: ~/tensorflow_datasets)')
  p.add_argument('--no-download', action='store_true',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--size', type=int, default=8192, help='target vocabulary size')
  p.add_argument('--out', required=True, help='the .subwords file to write')
  p.add_argument('--limit', type=int, default=None,
                 help='use at most N training examples')
  args = p.parse_args(argv)
  if os.path.isdir(args.out):
    p.error(f'argument --out: {args.out} is a directory; name the .subwords file to write')
  if args.limit is not None and args.limit < 1:
    p.error(f'argument --limit: must be at least 1, not {args.limit}')

  def command():
    encoder = build_vocab(args.data, args.size, args.out, args.data_dir,
                          args.limit, progress=True, download=not args.no_download)
    print(f'wrote {args.out}: {encoder.vocab_size} subwords')
    return 0
  return run_command(command, interrupted='stopped: nothing was written')


if __name__ == '__main__':
  sys.exit(main())
