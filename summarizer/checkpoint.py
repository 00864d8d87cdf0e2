"""Model directories: checkpoints that survive a kill, and loading them back.

A model directory holds ``config.json`` (the preset values and the data it
was trained on), the vocabulary and Trax ``Loop`` checkpoint files::

  model.pkl.gz            step, state, history, input signature
  model.weights.npy.gz    the weights
  model.opt_slots0.npy.gz Adam's moments (training only; not shipped)

Trax writes each file under a temporary name and renames it, but a kill
between two files can still pair new weights with an old pickle. So a
checkpoint is first written whole under another basename, then marked
complete, then renamed into place; ``recover`` finishes or discards a save
that a kill interrupted.
"""

import glob
import gzip
import os
import pickle
import shutil

import numpy as np

from summarizer import data
from summarizer._trax import fastmath, jnp, tl, trax
from summarizer.config import DEFAULT_MODEL_DIR, load_config, save_config
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM

BASENAME = 'model'              # Trax Loop's checkpoint name.
STAGED = 'model.staged'         # Where a checkpoint is written first.
COMPLETE = 'model.staged.done'  # Marker: the staged checkpoint is whole.
VOCAB_NAME = 'vocab.subwords'   # A model directory's copy of its vocabulary.


def checkpoint_files(directory, basename=BASENAME):
  """Returns the checkpoint files of ``basename``, the pickle last."""
  prefix = os.path.join(directory, basename)
  files = sorted(glob.glob(glob.escape(prefix) + '.opt_slots*.npy.gz'))
  files += [p for p in (prefix + '.weights.npy.gz', prefix + '.pkl.gz')
            if os.path.exists(p)]
  return files


def has_checkpoint(directory):
  """Tells whether ``directory`` holds a loadable Loop checkpoint."""
  return os.path.exists(os.path.join(directory, BASENAME + '.pkl.gz'))


def _publish(directory):
  """Renames a complete staged checkpoint into place, then drops the marker."""
  for staged in checkpoint_files(directory, STAGED):
    final = os.path.join(directory, BASENAME + os.path.basename(staged)[len(STAGED):])
    os.replace(staged, final)
  os.remove(os.path.join(directory, COMPLETE))


def recover(directory):
  """Finishes a save that was marked complete, or discards a partial one."""
  if os.path.exists(os.path.join(directory, COMPLETE)):
    _publish(directory)
    return
  for partial in checkpoint_files(directory, STAGED):
    os.remove(partial)
  for leftover in glob.glob(os.path.join(glob.escape(directory), '*._tmp_')):
    os.remove(leftover)


def save_atomically(write, directory):
  """Saves a checkpoint so that a kill at any moment leaves a loadable one.

  Args:
    write: A function of a basename that writes the checkpoint files (Trax's
      ``Loop.save_checkpoint``).
    directory: The model directory.
  """
  recover(directory)
  write(STAGED)
  marker = os.path.join(directory, COMPLETE)
  with open(marker, 'w', encoding='utf-8') as f:
    f.write('complete\n')
    f.flush()
    os.fsync(f.fileno())
  _publish(directory)


def export(run_dir, model_dir):
  """Copies what inference needs (config, vocabulary, weights) to ``model_dir``.

  Optimizer slots are left behind: they triple the size and serve only
  training.
  """
  if not has_checkpoint(run_dir):
    raise SummarizerError(f'{run_dir}: no checkpoint to export')
  os.makedirs(model_dir, exist_ok=True)
  for name in (VOCAB_NAME, BASENAME + '.pkl.gz', BASENAME + '.weights.npy.gz'):
    shutil.copyfile(os.path.join(run_dir, name), os.path.join(model_dir, name))
  config, values = load_config(run_dir)
  extra = {k: v for k, v in values.items() if k not in config.to_dict()}
  extra['trained_steps'] = saved_step(run_dir)
  save_config(config, model_dir, **extra)


def saved_step(directory):
  """Returns the training step of the checkpoint in ``directory``."""
  with gzip.open(os.path.join(directory, BASENAME + '.pkl.gz'), 'rb') as f:
    return int(pickle.load(f)['step'])


def model_vocab_file(model_dir, values):
  """Returns the vocabulary file a model directory names in its config."""
  name = values.get('vocab_file') or VOCAB_NAME
  path = name if os.path.isabs(name) else os.path.join(model_dir, name)
  if not os.path.isfile(path):
    raise SummarizerError(f'{model_dir}: vocabulary {name} not found')
  return path


def load_model(model_dir=None, mode='eval', vocab_file=None):
  """Builds the model a directory describes and loads its weights.

  Args:
    model_dir: A model directory; default: the shipped model.
    mode: 'eval' (whole sequences) or 'predict' (cached, batch of one).
    vocab_file: A vocabulary to use instead of the model's own; it must have
      no more ids than the model.

  Returns:
    (model, config, vocab_file).
  """
  model_dir = model_dir or DEFAULT_MODEL_DIR
  if not os.path.isdir(model_dir):
    raise SummarizerError(f'{model_dir}: model directory not found')
  config, values = load_config(model_dir)
  vocab_file = vocab_file or model_vocab_file(model_dir, values)
  n_ids = data.vocab_size(vocab_file)
  if n_ids > config.vocab_size:
    raise SummarizerError(
        f'{vocab_file}: vocabulary has {n_ids} ids but the model in '
        f'{model_dir} knows only {config.vocab_size}: they do not match')
  pkl = os.path.join(model_dir, BASENAME + '.pkl.gz')
  if not os.path.exists(pkl):
    raise SummarizerError(f'{model_dir}: no weights ({BASENAME}.pkl.gz missing)')
  model = TransformerLM(**config.model_kwargs(), mode=mode)
  try:
    set_weights(model, read_weights(pkl))
  except Exception as e:  # pylint: disable=broad-except
    # Truncated gzip, a pickle of something else, weights of another shape:
    # the file cannot serve this config, whatever the library's reason.
    raise SummarizerError(f'{model_dir}: cannot load the weights '
                          f'({type(e).__name__}: {str(e)[:120]})') from None
  return model, config, vocab_file


def read_weights(pkl):
  """Returns the flat list of weight arrays of a Loop checkpoint's pickle."""
  with gzip.open(pkl, 'rb') as f:
    saved = pickle.load(f)
  flat = saved['flat_weights']
  if isinstance(flat, int):  # The arrays are beside the pickle, at this gzip level.
    arrays = pkl[:-len('pkl.gz')] + 'weights.npy.gz'
    if not os.path.exists(arrays):
      raise FileNotFoundError(os.path.basename(arrays))
    flat = tl.np_from_file(arrays, compresslevel=flat)
  return flat


def set_weights(model, weights):
  """Gives ``model`` these weights and its initial state, without a random init.

  Trax's ``init`` (and ``init_from_file``, which calls it) draws every weight
  at random first, one compiled jax call per shape: 2.7 s of the summarize
  command's start, for numbers that are then thrown away. Here the structure
  comes from an abstract trace instead, and the state starts as zeros, which
  is what every layer of ``TransformerLM`` starts from (empty key/value
  caches and position counters in predict mode; nothing otherwise).

  Args:
    model: A ``TransformerLM`` that has not been initialised.
    weights: Its weights, as a flat list of arrays (a checkpoint's order) or
      as the tree of a model of the same architecture.

  Raises:
    ValueError: if the arrays are not as many, or not the shapes, the model
      needs.
  """
  signature = trax.shapes.ShapeDtype((1, 1), np.int32)  # Shapes do not depend on it.
  weights_signature, state_signature = fastmath.abstract_eval(model.init)(signature)
  _forget_rngs(model)
  flat, _ = tl.flatten_weights_and_state(weights, ())
  expected, _ = tl.flatten_weights_and_state(weights_signature, ())
  if len(flat) != len(expected):
    raise ValueError(f'{len(flat)} weight arrays where the model has {len(expected)}')
  for array, wanted in zip(flat, expected):
    if tuple(array.shape) != tuple(wanted.shape):
      raise ValueError(f'a weight of shape {tuple(array.shape)} where the model '
                       f'has {tuple(wanted.shape)}')
  # On the device once: numpy arrays would be copied there again at every call
  # (for the shipped model, 15 MB a token: a decoding step took 2.0 ms, not 1.3).
  flat = [jnp.asarray(array) for array in flat]
  model.weights, _ = tl.unflatten_weights_and_state(
      flat, (), (weights_signature, state_signature), weights_only=True)
  model.state = fastmath.nested_map(
      lambda s: np.zeros(s.shape, s.dtype), state_signature)


def _forget_rngs(layer):
  """Drops the random keys an abstract trace left in ``layer`` and its sublayers.

  Each layer then makes a fresh key from its seed when it first needs one.
  (Trax's ``weights_and_state_signature`` instead restores the keys by
  splitting them layer by layer: another 0.8 s of compiling at start.)
  """
  layer._rng = None  # pylint: disable=protected-access
  for sublayer in layer.sublayers:
    _forget_rngs(sublayer)
