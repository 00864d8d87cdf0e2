"""Build a subword vocabulary from a source's training split.

  python -m summarizer.vocab --data news --size 2048 --out runs/news.subwords

Uses Trax's ``SubwordTextEncoder`` (the format of the course's
``summarize32k.subword.subwords``): ids 0 and 1 are ``<pad>`` and ``<EOS>``.
An existing ``--out`` file is replaced only with ``--force``.
"""

import argparse
import os
import sys

from summarizer.corpus.subwords import build_vocab  # The builder; this is its command.
from summarizer.errors import OneLineParser, SummarizerError, run_command, user_path
from summarizer.files import check_writable, exists_message


def main(argv=None):
  p = OneLineParser(prog='python -m summarizer.vocab', description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--data', type=user_path, default='news',
                 help='a data source (default: news)')
  p.add_argument('--data-dir', type=user_path, default=None,
                 help='TFDS data directory (default: ~/tensorflow_datasets)')
  p.add_argument('--no-download', action='store_true',
                 help='never download a tfds: dataset; one not prepared in '
                      '--data-dir is an error')
  p.add_argument('--size', type=int, default=8192, help='target vocabulary size')
  p.add_argument('--out', type=user_path, required=True, help='the .subwords file to write')
  p.add_argument('--force', action='store_true', help='overwrite --out if it exists')
  p.add_argument('--limit', type=int, default=None,
                 help='use at most N training examples')
  args = p.parse_args(argv)
  if os.path.isdir(args.out):
    p.error(f'argument --out: {args.out} is a directory; name the .subwords file to write')
  if args.limit is not None and args.limit < 1:
    p.error(f'argument --limit: must be at least 1, not {args.limit}')

  def command():
    if os.path.lexists(args.out) and not args.force:  # Asked before the data is read.
      raise SummarizerError(exists_message(args.out))
    check_writable(args.out)  # Before the build, not after it.
    encoder = build_vocab(args.data, args.size, args.out, args.data_dir,
                          args.limit, progress=True, download=not args.no_download)
    print(f'wrote {args.out}: {encoder.vocab_size} subwords')
    return 0
  return run_command(command, interrupted='stopped: nothing was written')


if __name__ == '__main__':
  sys.exit(main())
