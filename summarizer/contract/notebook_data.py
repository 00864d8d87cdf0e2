"""The data of the assignment notebook: stories, the trained model's files, a sample.

The course's notebook reads CNN/DailyMail through ``trax.data.TFDS``, a
vocabulary in ``vocab_dir/`` and a trained model's ``model.pkl.gz``. The
assignment here reads the same kinds of things, offline: the embedded news
stories, and the shipped model (``data/model``) with its own vocabulary.
Nothing here does an exercise; the notebook's setup imports it as "the data".
"""

import os

from summarizer.config import DATA_DIR, DEFAULT_MODEL_DIR, load_config
from summarizer.corpus.sources import examples

# The shipped model's files, as the course's notebook names its own.
MODEL_DIR = DEFAULT_MODEL_DIR
MODEL_FILE = os.path.join(MODEL_DIR, 'model.pkl.gz')
VOCAB_DIR = MODEL_DIR
VOCAB_FILE = 'vocab.subwords'

# The course's bucketing of joint sequences by length, and its longest one.
BOUNDARIES = [128, 256, 512, 1024]
BATCH_SIZES = [16, 8, 4, 2, 1]
MAX_LENGTH = 2048

# The article that Part 5 summarises (read whole; it ends without a newline).
SAMPLE_FILE = os.path.join(DATA_DIR, 'samples', 'sport.txt')


def model_size():
  """The shipped model's ``TransformerLM`` arguments (its ``config.json``)."""
  return load_config(MODEL_DIR)[0].model_kwargs()


def sample_article():
  """The sample article of Part 5, stripped as the summarize command reads it."""
  with open(SAMPLE_FILE, encoding='utf-8') as f:
    return f.read().strip()


def stories(split='train'):
  """Yields (article, summary) text pairs of the embedded news, in order.

  The course's stream gives the same pairs from CNN/DailyMail.
  """
  return examples('news', split)
