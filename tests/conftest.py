"""Shared fixtures: small model directories made on the spot, and special files (FIFOs, links
to devices, sparse files) for the tests of what a command refuses to read."""

import contextlib
import dataclasses
import gzip
import os
import pickle
import shutil
import signal

import numpy as np
import pytest

from summarizer import config as config_module
from summarizer import text
from summarizer._trax import tl, trax
from summarizer.config import COURSE_VOCAB_FILE, DEFAULT_VOCAB_FILE, Config, load_config, save_config
from summarizer.inference import model_directory
from summarizer.model import TransformerLM
from summarizer.runs import args as run_args
from summarizer.runs import budget as run_budget
from summarizer.runs import export
from summarizer.runs import loop as run_loop
from summarizer.runs import prepare as run_prepare

COURSE_VOCAB = COURSE_VOCAB_FILE  # Shipped in data/, so course tests always run.

# A model small enough to build in a second, over the shipped vocabulary.
SMALL_CONFIG = Config(preset='test', vocab_size=8192, d_model=32, d_ff=64,
                      n_layers=2, n_heads=4, dropout=0.0, max_len=512,
                      learning_rate=0.01, warmup_steps=10, max_joint_length=512,
                      boundaries=(128, 256), batch_sizes=(4, 2, 1))


def write_model_dir(directory, config=SMALL_CONFIG, seed=0):
  """Writes config, vocabulary and a randomly initialised Loop checkpoint."""
  os.makedirs(directory, exist_ok=True)
  shutil.copyfile(DEFAULT_VOCAB_FILE, os.path.join(directory, model_directory.VOCAB_NAME))
  save_config(config, directory, vocab_file=model_directory.VOCAB_NAME, data='news')
  x = np.ones((1, 8), np.int32)
  task = trax.supervised.training.TrainTask(
      labeled_data=iter(lambda: (x, x, np.ones_like(x, np.float32)), None),
      loss_layer=tl.CrossEntropyLoss(), optimizer=trax.optimizers.Adam(0.01))
  loop = trax.supervised.training.Loop(
      TransformerLM(**config.model_kwargs(), mode='train'), [task],
      output_dir=str(directory), random_seed=seed)
  loop.save_checkpoint(model_directory.BASENAME)
  # As an export writes it: config.json bound to its vocabulary and weights.
  save_config(config, directory, vocab_file=model_directory.VOCAB_NAME, data='news',
              vocab_fingerprint=text.vocab_fingerprint(DEFAULT_VOCAB_FILE))
  values = load_config(str(directory))[1]
  save_config(config, directory, **{k: v for k, v in values.items() if k not in config.to_dict()},
              weights_fingerprint=export.bound_to_weights(str(directory), values))
  return str(directory)


@pytest.fixture(autouse=True)
def thread_variables_kept():
  """Each test ends with the CPU thread variables it began with.

  The train command, run in the tests' process with a token budget, sets
  ``PJRT_NPROC=1`` for the process (``budget.one_thread_for_tokens``): left
  there, a later test would print "1 CPU thread(s)" and any jax started after
  would compute on one thread.
  """
  began = {name: os.environ.get(name) for name in run_budget.THREAD_VARIABLES}
  yield
  for name, value in began.items():
    if value is None:
      os.environ.pop(name, None)
    else:
      os.environ[name] = value


@pytest.fixture(scope='session')
def random_model_dir(tmp_path_factory):
  """A model directory with random weights (decoding mechanics, errors)."""
  return write_model_dir(tmp_path_factory.mktemp('random_model'))


# A small model of the course's structure and vocabulary size (its weights
# decide everything but the heads, which default to the course's 8).
COURSE_SHAPED = dict(vocab_size=33300, d_model=32, d_ff=64, n_layers=2, n_heads=8,
                     max_len=512)


def write_course_dir(directory, seed=1):
  """Writes ``directory/model`` as the course's lab leaves it: only
  ``model.pkl.gz`` and ``model.weights.npy.gz`` of a Loop checkpoint, with
  the course checkpoint's step, timestamp and (8, 32) int64 signature."""
  model_dir = os.path.join(str(directory), 'model')
  os.makedirs(model_dir, exist_ok=True)
  x = np.ones((8, 32), np.int64)
  task = trax.supervised.training.TrainTask(
      labeled_data=iter(lambda: (x, x, np.ones_like(x, np.float32)), None),
      loss_layer=tl.CrossEntropyLoss(), optimizer=trax.optimizers.Adam(0.01))
  loop = trax.supervised.training.Loop(
      TransformerLM(**COURSE_SHAPED, mode='train'), [task], output_dir=model_dir,
      random_seed=seed)
  loop.save_checkpoint(model_directory.BASENAME)
  for name in os.listdir(model_dir):  # The lab keeps the weights only.
    if name not in ('model.pkl.gz', 'model.weights.npy.gz'):
      path = os.path.join(model_dir, name)
      shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
  pkl = os.path.join(model_dir, 'model.pkl.gz')
  with gzip.open(pkl, 'rb') as f:
    saved = pickle.load(f)
  saved.update(step=500000, version_timestamp='Mar-10-2021',
               input_signature=(trax.shapes.ShapeDtype((8, 32), np.int64),))
  with gzip.open(pkl, 'wb') as f:
    pickle.dump(saved, f)
  return model_dir


@pytest.fixture(scope='session')
def course_model_dir(tmp_path_factory):
  """The course's checkpoint layout: ``model/`` with two files, no config.json."""
  return write_course_dir(tmp_path_factory.mktemp('course'))


ARTICLES = [
    'Heavy rain closed the coast road on Monday, officials said.',
    'The council voted 7 to 2 to build a new bridge over the river. ' * 6,
    'Scientists said the comet would pass close to Earth in March.',
]


MICRO = dataclasses.replace(SMALL_CONFIG, preset='micro', max_len=256,
                            max_joint_length=256, truncate=True, boundaries=(256,),
                            batch_sizes=(2, 1))


@pytest.fixture
def micro_preset(monkeypatch):
  """Registers MICRO as a preset (the runs' tests use it throughout)."""
  monkeypatch.setitem(config_module.PRESETS, 'micro', MICRO)


def micro_args(output_dir, **changes):
  base = run_args.TrainArgs(preset='micro', max_steps=4, eval_steps=2, save_steps=2,
                            eval_batches=1, output_dir=str(output_dir), progress=False,
                            calibration_articles=3)
  return dataclasses.replace(base, **changes)


def train_run(args, started=None, judge=None):
  """Trains what ``args`` asks as the train command does: prepared once (locked), then trained."""
  with run_prepare.prepared(args, started=started, judge=judge) as run:
    return run_loop.train(run)


# ------------------------------------------------------------- special files

@contextlib.contextmanager
def no_hang(seconds=10):
  """Fails the test if the block still runs after ``seconds`` (as a FIFO's open waits).

  ``pytest.fail`` raises no ``OSError`` (as ``TimeoutError`` is), which the
  code under test might catch and word as a file it cannot read.
  """
  def hung(*_):
    pytest.fail(f'still waiting after {seconds} s (on a FIFO?)')

  before = signal.signal(signal.SIGALRM, hung)
  signal.alarm(seconds)
  try:
    yield
  finally:
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


def make_special(path, kind):
  """Makes ``path`` a FIFO ('fifo') or a link to /dev/zero ('zero'); returns the kind's name."""
  if kind == 'fifo':
    os.mkfifo(path)
    return 'a FIFO'
  path.symlink_to('/dev/zero')
  return 'a link to /dev/zero, a character device'


def sparse_file(path, size):
  """A file of ``size`` bytes that takes no disk (its bytes read as zeros)."""
  with open(path, 'wb') as f:
    f.truncate(size)
  return path
