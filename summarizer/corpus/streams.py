"""The batches of a data source: its text pairs, the lessons, the course's pipeline.

``batches(source, split)`` reads the pairs of a source
(``summarizer.corpus.sources``), mixes in the training lessons
(``summarizer.corpus.lessons``) and runs the course's pipeline
(``summarizer.data.batches_of``).
"""

from summarizer import data
from summarizer import text
from summarizer.config import BATCH_SIZES, BOUNDARIES, MAX_JOINT_LENGTH
from summarizer.corpus.lessons import (MixCopyExamples, MixExtractExamples, MixLongExamples,
                                       MixShortExamples, RepeatLessons)
from summarizer.corpus.sources import examples
from summarizer.errors import SummarizerError


def _repeat(source, split, data_dir, download):
  """Yields the examples of a split over and over (for training)."""
  while True:
    count = 0
    for example in examples(source, split, data_dir, download):
      count += 1
      yield example
    if count == 0:
      raise SummarizerError(f'{source}: no usable examples in split {split!r}')


def batches(source='news', split='train', vocab_file=None, data_dir=None,
            boundaries=BOUNDARIES, batch_sizes=BATCH_SIZES,
            max_joint_length=MAX_JOINT_LENGTH, truncate=False,
            article_loss_weight=0.0, repeat=None, shuffle=None,
            n_devices=None, seed=0, copy_fraction=0.0, short_fraction=0.0,
            long_fraction=0.0, download=True, extract_fraction=0.0, repeat_lessons=False):
  """Yields ``(inputs, targets, weights)`` batches of one split of a source.

  Args:
    source: A data source string (see ``summarizer.corpus.sources``).
    split: 'train', 'validation' or 'test'.
    vocab_file: A ``.subwords`` file; default: the shipped vocabulary.
    data_dir: Where TFDS keeps its data (``tfds:`` sources only).
    boundaries: Bucket edges, in tokens.
    batch_sizes: Batch size of each bucket (one more than ``boundaries``).
    max_joint_length: Longest joint sequence kept.
    truncate: Cut long articles instead of dropping their examples.
    article_loss_weight: Weight of article tokens in the loss.
    repeat: Loop over the split forever (default: for 'train' only).
    shuffle: Shuffle examples (default: for 'train' only).
    n_devices: Batch sizes are rounded up to a multiple of this (default:
      the number of local jax devices), so batches split evenly.
    seed: Seed of the shuffle.
    copy_fraction: Share of examples turned into copy lessons (training
      only; see ``lessons.MixCopyExamples``).
    short_fraction: Share of articles cut down to their facts (training
      only; see ``lessons.MixShortExamples``).
    long_fraction: Share of examples joined with the next one or two into a
      longer article (training only; see ``lessons.MixLongExamples``).
    download: Whether a ``tfds:`` dataset missing from ``data_dir`` may be
      downloaded.
    extract_fraction: Share of examples whose summary becomes the article's
      sentences with the highlights' facts (training only; see
      ``lessons.MixExtractExamples``).
    repeat_lessons: Turn the examples into repeat lessons instead
      (``lessons.RepeatLessons``), the other lessons left out; the loss
      counts the second list only, whatever ``article_loss_weight``.

  Yields:
    Tuples of numpy arrays: inputs and targets (B, L) int32, equal; weights
    (B, L) float32, zero on padding.
  """
  text.vocab_path(vocab_file)  # A missing vocabulary is named before the source is read.
  training = split == 'train'
  repeat = training if repeat is None else repeat
  shuffle = training if shuffle is None else shuffle
  pairs = (_repeat(source, split, data_dir, download) if repeat
           else examples(source, split, data_dir, download))
  lessons = [
      MixLongExamples(long_fraction, seed=seed),
      MixCopyExamples(copy_fraction, seed),
      MixExtractExamples(extract_fraction, seed),
      MixShortExamples(short_fraction, seed=seed),
  ]
  if repeat_lessons:
    lessons = [RepeatLessons(seed)]
    article_loss_weight = 0.0  # The first list's order is drawn: nothing in it to learn.
  yield from data.batches_of(
      pairs, vocab_file, boundaries, batch_sizes, max_joint_length, truncate,
      article_loss_weight, shuffle, n_devices, seed, before=lessons)
