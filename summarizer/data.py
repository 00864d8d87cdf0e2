"""From text to batches: the subword vocabulary, the joint sequence, buckets.

The course trains a language model on one sequence per story::

  joint   = article + [EOS, SEP] + summary + [EOS]
  weights =    0    +   0    0   +    1    +   1

so the loss counts only the summary, and summarising is continuing a text
after ``[EOS, SEP]``. Sequences are grouped by length into buckets, each with
its own batch size, to waste little on padding.

``examples(source, split)`` (from ``summarizer.sources``) gives the text pairs;
``batches(source, split)`` gives ``(inputs, targets, weights)`` numpy batches.
"""

import functools
import hashlib
import itertools
import os
import random
import re

import numpy as np

from summarizer._trax import trax
from summarizer.config import (BATCH_SIZES, BOUNDARIES, DEFAULT_VOCAB_FILE,
                               EOS, MAX_JOINT_LENGTH, SEP)
from summarizer.errors import SummarizerError
from summarizer.sources import examples  # pylint: disable=unused-import

# Examples the shuffle queue holds; bigger mixes better, costs memory.
SHUFFLE_QUEUE = 1024
# Over-long examples dropped one after another before a stream gives up.
MAX_DROPPED_IN_A_ROW = 1000


def vocab_path(vocab_file=None):
  """Returns the vocabulary file to use: ``vocab_file`` or the shipped one."""
  path = os.path.abspath(os.path.expanduser(vocab_file or DEFAULT_VOCAB_FILE))
  if not os.path.isfile(path):
    raise SummarizerError(f'{vocab_file or path}: vocabulary file not found')
  return path


@functools.lru_cache(maxsize=8)
def _encoder(path):
  """Loads a Trax/T2T ``.subwords`` file once per process."""
  try:
    encoder = trax.data.text_encoder.SubwordTextEncoder(path)
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


# Where a sentence ends: white space after . ! or ?, maybe closing a quote.
_SENTENCE_END = re.compile(r'(?:(?<=[.!?])|(?<=[.!?]["\u201d\']))\s+')


def sentences(text):
  """Splits text into sentences at white space after . ! or ?."""
  return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def MixCopyExamples(fraction, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that turns some examples into copy lessons.

  With probability ``fraction`` an example's highlights are replaced by one
  or two sentences taken verbatim from its article. A small model learns
  the highlights' phrasing long before it learns to copy names and numbers
  from the article; these examples reward copying alone, which is the skill
  that gets a summary's facts right.
  """
  rng = random.Random(seed)

  def mix(stream):
    for article, highlights in stream:
      if fraction > 0 and rng.random() < fraction:
        spans = [s for s in sentences(article) if len(s) > 20]
        if spans:
          start = rng.randrange(len(spans))
          highlights = '\n'.join(spans[start:start + rng.randint(1, 2)])
      yield article, highlights
  return mix


def _key_words(highlights, article):
  """Names and numbers of ``highlights``: words with a digit, or capitalised
  words the article never writes in lower case (so 'The' is not one)."""
  lower = set(re.findall(r'[a-z]\w*', article))
  words = set(re.findall(r'[\w$%]*\d[\w,.$%]*\d|\d', highlights))
  words |= {w for w in re.findall(r'[A-Z]\w+', highlights) if w.lower() not in lower}
  return words


def MixShortExamples(fraction, keep_other=0.15, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that shortens some articles to their facts.

  With probability ``fraction`` an article keeps only the sentences that name
  something its highlights name (a name or a number) and, with probability
  ``keep_other`` each, some of the others; the highlights stay. Trained only
  on full-length stories, a model takes a short text for the start of an
  article and goes on writing one instead of a summary.
  """
  rng = random.Random(seed)

  def mix(stream):
    for article, highlights in stream:
      if fraction > 0 and rng.random() < fraction:
        keys = _key_words(highlights, article)
        spans = sentences(article)
        facts = [any(k in s for k in keys) for s in spans]
        if any(facts):
          article = ' '.join(s for s, fact in zip(spans, facts)
                             if fact or rng.random() < keep_other)
      yield article, highlights
  return mix


def join_stories(pairs):
  """Joins consecutive stories into one longer article, as a news round-up.

  The articles follow one another as paragraphs. The highlights cover every
  part: the first story's first two and the first of each later one, so a
  summary of a longer text still names what each part is about and stays
  short.

  Args:
    pairs: (article, highlights) pairs, two or more.

  Returns:
    (article, highlights) of the joined story.
  """
  articles = [article for article, _ in pairs]
  lines = [highlights.split('\n') for _, highlights in pairs]
  kept = lines[0][:2] + [part[0] for part in lines[1:]]
  return '\n\n'.join(articles), '\n'.join(kept)


def MixLongExamples(fraction, max_parts=3, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that joins some examples into long ones.

  With probability ``fraction`` an example is joined with the next one or
  two of the stream (``join_stories``). A model that has read only
  single stories of about 200 tokens writes word salad after that many
  tokens; these examples teach it articles two or three times as long.
  """
  rng = random.Random(seed + 2)  # Not the draws of the other lessons.

  def mix(stream):
    stream = iter(stream)
    for pair in stream:
      if fraction > 0 and rng.random() < fraction:
        parts = [pair] + list(itertools.islice(stream, rng.randint(1, max_parts - 1)))
        if len(parts) > 1:
          pair = join_stories(parts)
      yield pair
  return mix


def device_batch_sizes(batch_sizes, n_devices):
  """Rounds each batch size up to a multiple of ``n_devices``."""
  return [-(-size // n_devices) * n_devices for size in batch_sizes]


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
            long_fraction=0.0, download=True):
  """Yields ``(inputs, targets, weights)`` batches of one split of a source.

  Args:
    source: A data source string (see ``summarizer.sources``).
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
      only; see ``MixCopyExamples``).
    short_fraction: Share of articles cut down to their facts (training
      only; see ``MixShortExamples``).
    long_fraction: Share of examples joined with the next one or two into a
      longer article (training only; see ``MixLongExamples``).
    download: Whether a ``tfds:`` dataset missing from ``data_dir`` may be
      downloaded.

  Yields:
    Tuples of numpy arrays: inputs and targets (B, L) int32, equal; weights
    (B, L) float32, zero on padding.
  """
  path = vocab_path(vocab_file)
  training = split == 'train'
  repeat = training if repeat is None else repeat
  shuffle = training if shuffle is None else shuffle
  if n_devices is None:
    n_devices = trax.fastmath.local_device_count()
  if len(batch_sizes) != len(boundaries) + 1:
    raise SummarizerError('batch_sizes needs one entry more than boundaries')

  stream = (_repeat(source, split, data_dir, download) if repeat
            else examples(source, split, data_dir, download))
  steps = [
      MixLongExamples(long_fraction, seed=seed),
      MixCopyExamples(copy_fraction, seed),
      MixShortExamples(short_fraction, seed=seed),
      trax.data.Tokenize(keys=[0, 1], vocab_type='subword',
                         vocab_dir=os.path.dirname(path),
                         vocab_file=os.path.basename(path)),
      PreprocessJoint(max_joint_length, truncate, article_loss_weight),
  ]
  if shuffle:
    np.random.seed(seed)  # trax.data.Shuffle draws from numpy's global RNG.
    steps.append(trax.data.Shuffle(SHUFFLE_QUEUE))
  steps.append(trax.data.BucketByLength(
      list(boundaries), device_batch_sizes(batch_sizes, n_devices),
      length_keys=[0]))
  yield from trax.data.Serial(*steps)(stream)
