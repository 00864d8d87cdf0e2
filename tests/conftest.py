"""Shared fixtures: small model directories made on the spot."""

import os
import shutil

import numpy as np
import pytest

from summarizer import checkpoint
from summarizer._trax import tl, trax
from summarizer.config import DEFAULT_VOCAB_FILE, Config, save_config
from summarizer.model import TransformerLM

COURSE_VOCAB = os.path.join(os.path.dirname(__file__), '..', '..', 'shared',
                            'course-vocab', 'summarize32k.subword.subwords')

# A model small enough to build in a second, over the shipped vocabulary.
SMALL_CONFIG = Config(preset='test', vocab_size=8192, d_model=32, d_ff=64,
                      n_layers=2, n_heads=4, dropout=0.0, max_len=512,
                      learning_rate=0.01, warmup_steps=10, max_joint_length=512,
                      boundaries=(128, 256), batch_sizes=(4, 2, 1))


def write_model_dir(directory, config=SMALL_CONFIG, seed=0):
  """Writes config, vocabulary and a randomly initialised Loop checkpoint."""
  os.makedirs(directory, exist_ok=True)
  shutil.copyfile(DEFAULT_VOCAB_FILE, os.path.join(directory, checkpoint.VOCAB_NAME))
  save_config(config, directory, vocab_file=checkpoint.VOCAB_NAME, data='news')
  x = np.ones((1, 8), np.int32)
  task = trax.supervised.training.TrainTask(
      labeled_data=iter(lambda: (x, x, np.ones_like(x, np.float32)), None),
      loss_layer=tl.CrossEntropyLoss(), optimizer=trax.optimizers.Adam(0.01))
  loop = trax.supervised.training.Loop(
      TransformerLM(**config.model_kwargs(), mode='train'), [task],
      output_dir=str(directory), random_seed=seed)
  loop.save_checkpoint(checkpoint.BASENAME)
  return str(directory)


@pytest.fixture(scope='session')
def random_model_dir(tmp_path_factory):
  """A model directory with random weights (decoding mechanics, errors)."""
  return write_model_dir(tmp_path_factory.mktemp('random_model'))
