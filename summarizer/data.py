"""Part 1 of the course: from text pairs to batches, through the joint sequence.

The course trains a language model on one sequence per story::

  joint   = article + [EOS, SEP] + summary + [EOS]
  weights =    0    +   0    0   +    1    +   1

so the loss counts only the summary, and summarising is continuing a text
after ``[EOS, SEP]``. Sequences are grouped by length into buckets, each with
its own batch size, to waste little on padding.

``batches_of(pairs)`` runs the course's pipeline over ``(article, summary)``
text pairs (``summarizer.text`` turns text into subword ids) and gives
``(inputs, targets, weights)`` numpy batches. Where the pairs come from, and
the lessons that reshape some of them for training, is
``summarizer.corpus`` (``corpus.streams.batches(source, split)``).
"""

import os

import numpy as np

from summarizer import text
from summarizer._trax import trax
from summarizer.config import BATCH_SIZES, BOUNDARIES, EOS, MAX_JOINT_LENGTH, SEP
from summarizer.errors import SummarizerError

# Examples the shuffle queue holds; bigger mixes better, costs memory.
SHUFFLE_QUEUE = 1024
# Over-long examples dropped one after another before a stream gives up.
MAX_DROPPED_IN_A_ROW = 1000
# Batches past the last bucket boundary are padded to a multiple of this length.
LAST_BUCKET_MULTIPLE = 128


def joint_sequence(article_ids, summary_ids, article_loss_weight=0.0):
  """Joins an article and its summary into one sequence with loss weights.

  Args:
    article_ids: Subword ids of the article, without EOS.
    summary_ids: Subword ids of the summary, without EOS.
    article_loss_weight: Weight of the article, EOS and SEP in the loss (the
      course uses 0: only the summary is learned).

  Returns:
    (joint, weights): int32 and float32 arrays of equal length,
    ``article + [EOS, SEP] + summary + [EOS]`` and its per-token weights.
  """
  article_ids, summary_ids = list(article_ids), list(summary_ids)
  joint = article_ids + [EOS, SEP] + summary_ids + [EOS]
  weights = ([article_loss_weight] * (len(article_ids) + 2)
             + [1.0] * (len(summary_ids) + 1))
  return np.array(joint, dtype=np.int32), np.array(weights, dtype=np.float32)


def PreprocessJoint(max_joint_length=MAX_JOINT_LENGTH, truncate=False,  # pylint: disable=invalid-name
                    article_loss_weight=0.0):
  """Returns a stream function: (article_ids, summary_ids) -> (joint, joint, weights).

  Tokenized fields arrive with no EOS (``trax.data.Tokenize`` adds none).
  Examples longer than ``max_joint_length`` are dropped, or, with
  ``truncate``, their article is cut so the whole summary still fits.
  """
  def preprocess(stream):
    dropped = 0  # In a row: a stream where every example is too long never ends.
    for article_ids, summary_ids in stream:
      overflow = len(article_ids) + len(summary_ids) + 3 - max_joint_length
      if overflow > 0:
        if not truncate or overflow >= len(article_ids):
          dropped += 1
          if dropped == MAX_DROPPED_IN_A_ROW:
            raise SummarizerError(
                f'{dropped} examples in a row are longer than {max_joint_length} '
                'tokens and were dropped: cut them to fit with --truncate, or '
                'use a preset with a longer max_joint_length')
          continue
        article_ids = article_ids[:len(article_ids) - overflow]
      dropped = 0
      joint, weights = joint_sequence(article_ids, summary_ids,
                                      article_loss_weight)
      yield joint, joint, weights
  return preprocess


def device_batch_sizes(batch_sizes, n_devices):
  """Rounds each batch size up to a multiple of ``n_devices``."""
  return [-(-size // n_devices) * n_devices for size in batch_sizes]


def PadLastBucket(last_boundary, longest=None,  # pylint: disable=invalid-name
                  multiple=LAST_BUCKET_MULTIPLE):
  """Returns a stream function padding batches longer than ``last_boundary``.

  ``trax.data.BucketByLength`` pads a batch of its last bucket (past the last
  boundary) only to its longest sequence, so each new length there was a new
  shape for XLA to compile: training with long articles compiled again and
  again, slowed, and crashed once the compiled code filled the process's
  memory maps (``LLVM compilation error: Cannot allocate memory``, then a
  segfault). Rounding those lengths up to a multiple of ``multiple`` leaves a
  few shapes, never past ``longest`` (the longest sequence kept, which the
  model's positions cover). The padding is zeros, as the buckets' own, with
  weight 0.
  """
  def pad(stream):
    for batch in stream:
      length = batch[0].shape[1]
      if length <= last_boundary or length % multiple == 0:
        yield batch
        continue
      extra = -length % multiple
      if longest is not None:
        extra = max(0, min(extra, longest - length))
      yield tuple(np.pad(x, [(0, 0), (0, extra)] + [(0, 0)] * (x.ndim - 2))  # (B, L + extra)
                  for x in batch)
  return pad


def OwnRandomState(step, seed):  # pylint: disable=invalid-name
  """A data step that draws from numpy's global RNG (``trax.data.Shuffle``), given its own.

  Each item is drawn with the stream's own ``RandomState`` (seeded by
  ``seed``) in numpy's place, the global one put back after it: the stream
  gives what it would alone, however its draws interleave with another's. A
  run draws two shuffled streams (repeat lessons and stories), and its plan
  samples the stories at a step the machine's speed decides; with one shared
  RNG that step changed every lesson after it, so a seed's run differed from
  one machine to the next.
  """
  def drawn(stream):
    state = np.random.RandomState(seed).get_state()
    items = step(stream)
    while True:
      outside = np.random.get_state()
      np.random.set_state(state)
      try:
        item = next(items)
      except StopIteration:
        return
      finally:
        state = np.random.get_state()
        np.random.set_state(outside)
      yield item
  return drawn


def batches_of(pairs, vocab_file=None, boundaries=BOUNDARIES, batch_sizes=BATCH_SIZES,
               max_joint_length=MAX_JOINT_LENGTH, truncate=False, article_loss_weight=0.0,
               shuffle=False, n_devices=None, seed=0, before=()):
  """Yields ``(inputs, targets, weights)`` batches of text pairs: the course's pipeline.

  Tokenize, join (``PreprocessJoint``), shuffle, bucket by length, and pad the
  last bucket's batches to a few lengths (``PadLastBucket``).

  Args:
    pairs: Iterable of ``(article, summary)`` text pairs.
    vocab_file: A ``.subwords`` file; default: the shipped vocabulary.
    boundaries: Bucket edges, in tokens.
    batch_sizes: Batch size of each bucket (one more than ``boundaries``).
    max_joint_length: Longest joint sequence kept.
    truncate: Cut long articles instead of dropping their examples.
    article_loss_weight: Weight of article tokens in the loss.
    shuffle: Shuffle the examples (a queue of ``SHUFFLE_QUEUE``).
    n_devices: Batch sizes are rounded up to a multiple of this (default:
      the number of local jax devices), so batches split evenly.
    seed: Seed of the shuffle.
    before: Steps of text pairs to run first (the training lessons).

  Yields:
    Tuples of numpy arrays: inputs and targets (B, L) int32, equal; weights
    (B, L) float32, zero on padding.
  """
  path = text.vocab_path(vocab_file)
  if n_devices is None:
    n_devices = trax.fastmath.local_device_count()
  if len(batch_sizes) != len(boundaries) + 1:
    raise SummarizerError('batch_sizes needs one entry more than boundaries')
  steps = list(before) + [
      trax.data.Tokenize(keys=[0, 1], vocab_type='subword',
                         vocab_dir=os.path.dirname(path),
                         vocab_file=os.path.basename(path)),
      PreprocessJoint(max_joint_length, truncate, article_loss_weight),
  ]
  if shuffle:
    steps.append(OwnRandomState(trax.data.Shuffle(SHUFFLE_QUEUE), seed))
  steps.append(trax.data.BucketByLength(
      list(boundaries), device_batch_sizes(batch_sizes, n_devices),
      length_keys=[0]))
  steps.append(PadLastBucket(boundaries[-1], max_joint_length))
  yield from trax.data.Serial(*steps)(pairs)
