"""The search options that ``python -m summarizer`` and ``summarizer.evaluate`` share.

Kept light on purpose (no jax): ``--help`` answers without loading it, so the
defaults live here and ``beam`` and ``decoding`` take theirs from this module.
"""

from summarizer.errors import finite_float

# Hugging Face's default length penalty.
LENGTH_PENALTY = 1.0
# Articles decoded side by side when the caller does not say.
BATCH_SIZE = 16
# The most beams and articles side by side: each beam keeps a key/value cache of
# the whole context, so 100,000 beams asked for 669 GB.
MAX_BEAMS = 64
MAX_BATCH_SIZE = 1024


def add_search_arguments(p, batched='articles decoded side by side'):
  """Adds ``--num-beams`` ... ``--min-length`` and ``--batch-size`` to parser ``p``."""
  p.add_argument('--num-beams', type=int, default=1,
                 help="1 (default): greedy search, the course's way; more: beam search")
  p.add_argument('--length-penalty', type=finite_float, default=LENGTH_PENALTY,
                 help='beam search ranks summaries by log-probability / '
                      'length ** this (default: %(default)s; above 0 favours longer ones)')
  p.add_argument('--no-repeat-ngram-size', type=int, default=0, metavar='N',
                 help='never repeat an N-token sequence within a summary '
                      '(default: 0, allowed)')
  p.add_argument('--min-length', type=int, default=0,
                 help='summary tokens at least, before it may end (default: 0)')
  p.add_argument('--batch-size', type=int, default=BATCH_SIZE,
                 help=f'{batched} (default: %(default)s)')


def check_search_arguments(p, args):
  """Ends with ``p.error`` (one line, exit 2) on search options that cannot be used."""
  for name, most in (('num_beams', MAX_BEAMS), ('batch_size', MAX_BATCH_SIZE)):
    if not 1 <= getattr(args, name) <= most:
      p.error(f'argument --{name.replace("_", "-")}: must be between 1 and {most}, '
              f'not {getattr(args, name)}')
  for name in ('no_repeat_ngram_size', 'min_length'):
    if getattr(args, name) < 0:
      p.error(f'argument --{name.replace("_", "-")}: must not be negative')
  if args.min_length > args.max_length:
    p.error(f'argument --min-length: {args.min_length} is more than --max-length '
            f'{args.max_length}')
  if args.method == 'greedy' and (args.num_beams > 1 or args.no_repeat_ngram_size
                                  or args.min_length):
    p.error('--num-beams, --no-repeat-ngram-size and --min-length need --method fast')
