"""The search options that ``python -m summarizer`` and ``summarizer.evaluate`` share, and their defaults.

Kept light on purpose (no jax): ``--help`` answers without loading it, so the
defaults live here and ``beam`` and ``decoding`` take theirs from this module.
"""

from summarizer.errors import finite_float

# Hugging Face's default length penalty.
LENGTH_PENALTY = 1.0
# How `python -m summarizer`, ``summarize()`` and ``explain()`` search unless told:
# beam search as BART-large-CNN does on CNN/DailyMail (4 beams, length penalty 2,
# no trigram twice), the best of the searches measured on the validation stories
# (data/model/README.md, "Scores"). Greedy search, the course's way, is what
# `--method greedy` (the course's own decoder), sampling and streaming use, and
# what `evaluate` uses unless told, so its figures stay the course's.
BEST = {'num_beams': 4, 'length_penalty': 2.0, 'no_repeat_ngram_size': 3}
GREEDY = {'num_beams': 1, 'length_penalty': LENGTH_PENALTY, 'no_repeat_ngram_size': 0}
# Articles decoded side by side when the caller does not say.
BATCH_SIZE = 16
# The most beams and articles side by side: each beam keeps a key/value cache of
# the whole context, so 100,000 beams asked for 669 GB.
MAX_BEAMS = 64
MAX_BATCH_SIZE = 1024
# The least temperature that samples: below it every draw is the argmax all the same,
# and far below it (1e-320) the log-probabilities divided by it overflow to NaN.
MIN_TEMPERATURE = 1e-6


def temperature_problem(temperature):
  """What is wrong with a sampling temperature, in words; None when it is 0 or samples."""
  if not isinstance(temperature, (int, float)) or not 0 <= temperature < float('inf'):
    return ('must not be negative' if isinstance(temperature, (int, float)) and temperature < 0
            else f'must be a number, 0 or more, not {temperature}')
  if 0 < temperature < MIN_TEMPERATURE:
    return (f'{temperature} is too small to sample with (at least {MIN_TEMPERATURE:g}; '
            '0 decodes greedily)')
  return None


def add_search_arguments(p, batched='articles decoded side by side', best=False):
  """Adds ``--num-beams`` ... ``--min-length`` and ``--batch-size`` to parser ``p``.

  The first three default to None: ``chosen`` fills them in once the method
  is known (``BEST`` where ``best``, else ``GREEDY``).
  """
  first = BEST if best else GREEDY
  p.add_argument('--num-beams', type=int, default=None,
                 help=(f"beams (default: {first['num_beams']}"
                       + (', or 1 with --method greedy, --stream or --temperature' if best else '')
                       + "); 1: greedy search, the course's way"))
  p.add_argument('--length-penalty', type=finite_float, default=None,
                 help='beam search ranks summaries by log-probability / length ** this '
                      f"(default: {first['length_penalty']}; above 0 favours longer ones)")
  p.add_argument('--no-repeat-ngram-size', type=int, default=None, metavar='N',
                 help='never repeat an N-token sequence within a summary '
                      f"(default: {first['no_repeat_ngram_size']}; 0: allowed)")
  p.add_argument('--min-length', type=int, default=0,
                 help='summary tokens at least, before it may end (default: 0)')
  p.add_argument('--batch-size', type=int, default=BATCH_SIZE,
                 help=f'{batched} (default: %(default)s)')


def chosen(num_beams, length_penalty, no_repeat_ngram_size, greedy=False):
  """The search settings: each one not given (None) from ``GREEDY`` where ``greedy``, else ``BEST``.

  Asking for one beam is asking for greedy search: the other two then
  default to ``GREEDY``'s too (``num_beams=1`` gives the course's summary).

  Returns:
    (num_beams, length_penalty, no_repeat_ngram_size).
  """
  first = GREEDY if greedy or num_beams == 1 else BEST
  given = (num_beams, length_penalty, no_repeat_ngram_size)
  return tuple(first[name] if value is None else value
               for name, value in zip(('num_beams', 'length_penalty', 'no_repeat_ngram_size'),
                                      given))


def greedy_for(method, temperature=0.0, stream=False):
  """Whether a summary is searched greedily unless told: the course's decoder, sampling, streaming."""
  sampling = isinstance(temperature, (int, float)) and temperature > 0
  return method == 'greedy' or sampling or stream


def fill_search_arguments(args, greedy):
  """Fills in the search flags a command line left out (``chosen``)."""
  args.num_beams, args.length_penalty, args.no_repeat_ngram_size = chosen(
      args.num_beams, args.length_penalty, args.no_repeat_ngram_size, greedy)


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
