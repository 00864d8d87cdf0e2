"""Model directories: reading one back, ours or the course's.

A model directory we write holds ``config.json`` (the preset values and the
data it was trained on), the vocabulary and Trax ``Loop`` checkpoint files::

  model.pkl.gz            step, state, history, input signature
  model.weights.npy.gz    the weights
  model.opt_slots0.npy.gz Adam's moments (training only; not shipped)

The course's own model, as a learner saves it from the course's lab, is
only the two checkpoint files, with the vocabulary in ``../vocab_dir/``.
Such a directory is read here too: its architecture comes from the shapes
of its weights (``config_from_weights``), and everything downstream sees
the same ``Config`` as for a directory with ``config.json``.

Writing a checkpoint so that a kill cannot break it is the train command's
job: ``summarizer.runs.saving``.
"""

import dataclasses
import glob
import gzip
import os
import zlib

from jax import numpy as jnp
import numpy as np

from summarizer import model as model_layout
from summarizer import text
from summarizer._trax import fastmath, tl, trax
from summarizer.config import (COURSE_VOCAB_FILE, COURSE_VOCAB_NAME, DEFAULT_MODEL_DIR,
                               PRESETS, load_config)
from summarizer.errors import SummarizerError
from summarizer import safe_pickle
from summarizer.model import TransformerLM

BASENAME = 'model'              # Trax Loop's checkpoint name.
VOCAB_NAME = 'vocab.subwords'   # A model directory's copy of its vocabulary.


def checkpoint_files(directory, basename=BASENAME):
  """Returns the checkpoint files of ``basename``, the pickle last."""
  prefix = os.path.join(directory, basename)
  files = sorted(glob.glob(glob.escape(prefix) + '.opt_slots*.npy.gz'))
  files += [p for p in (prefix + '.weights.npy.gz', prefix + '.pkl.gz')
            if os.path.exists(p)]
  return files


def has_config(directory):
  """Tells whether ``directory`` describes itself in a config.json (the course's does not)."""
  return os.path.exists(os.path.join(directory, 'config.json'))


def has_checkpoint(directory):
  """Tells whether ``directory`` holds a loadable Loop checkpoint."""
  return os.path.exists(os.path.join(directory, BASENAME + '.pkl.gz'))


def saved_step(directory):
  """Returns the training step of the checkpoint in ``directory``."""
  pkl = os.path.join(directory, BASENAME + '.pkl.gz')
  return int(read_checked(directory, pkl, lambda path: safe_pickle.load(path)['step']))


def model_vocab_file(model_dir, values):
  """Returns the vocabulary file a model directory names in its config."""
  name = values.get('vocab_file') or VOCAB_NAME
  path = name if os.path.isabs(name) else os.path.join(model_dir, name)
  if not os.path.isfile(path):
    raise SummarizerError(f'{model_dir}: vocabulary {name} not found')
  return path


def load_model(model_dir=None, mode='eval', vocab_file=None, n_heads=None):
  """Builds the model a directory describes and loads its weights.

  Returns ``read_model_dir``'s (model, config, vocab_file); the arguments
  are its.
  """
  return read_model_dir(model_dir, mode, vocab_file, n_heads)[:3]


def read_model_dir(model_dir=None, mode='eval', vocab_file=None, n_heads=None):
  """Builds the model a directory describes and loads its weights, reading it once.

  Args:
    model_dir: A model directory, ours (with ``config.json``) or the
      course's (checkpoint files only); default: the shipped model.
    mode: 'eval' (whole sequences) or 'predict' (cached, batch of one).
    vocab_file: A vocabulary to use instead of the model's own; it must have
      no more ids than the model.
    n_heads: Attention heads of a checkpoint without ``config.json``
      (default: the course's 8); a directory with one must agree.

  Returns:
    (model, config, vocab_file, values): ``values`` is what its config.json
    records ({} for the course's directory).

  Raises:
    SummarizerError: naming what is missing or does not fit.
  """
  weights, config, vocab_file, values = read_model_weights(model_dir, vocab_file, n_heads)
  model = TransformerLM(**config.model_kwargs(), mode=mode)
  give_weights(model, weights, model_dir or DEFAULT_MODEL_DIR)
  return model, config, vocab_file, values


def read_model_weights(model_dir=None, vocab_file=None, n_heads=None):
  """Reads what a model directory holds, without building a model.

  The arguments are ``read_model_dir``'s. The weights are checked against
  the config's sizes here, and array by array when a model takes them
  (``give_weights``).

  Returns:
    (weights, config, vocab_file, values): the flat list of weight arrays
    (a checkpoint's order), the ``Config``, the vocabulary file, and what
    config.json records ({} for the course's directory).

  Raises:
    SummarizerError: naming what is missing or does not fit.
  """
  model_dir = model_dir or DEFAULT_MODEL_DIR
  if not os.path.isdir(model_dir):
    raise SummarizerError(f'{model_dir}: model directory not found')
  pkl = os.path.join(model_dir, BASENAME + '.pkl.gz')
  weights, values = None, {}
  if has_config(model_dir):
    config, values = load_config(model_dir)
    if n_heads is not None and n_heads != config.n_heads:
      raise SummarizerError(f'{model_dir}: its config.json says n_heads '
                            f'{config.n_heads}, not {n_heads}')
    vocab_file = vocab_file or model_vocab_file(model_dir, values)
    check_vocab_fingerprint(model_dir, values, vocab_file)
  elif os.path.exists(pkl):  # The course's layout: the architecture is in the shapes.
    weights = read_checked(model_dir, pkl)
    config = config_from_weights(weights, n_heads, model_dir)
    vocab_file = vocab_file or course_vocab_file(model_dir)
  else:
    raise SummarizerError(f'{model_dir}: not a model directory (no config.json '
                          f'and no {BASENAME}.pkl.gz)')
  n_ids = text.vocab_size(vocab_file)
  if n_ids > config.vocab_size:
    raise SummarizerError(
        f'{vocab_file}: vocabulary has {n_ids} ids but the model in '
        f'{model_dir} knows only {config.vocab_size}: they do not match')
  if not os.path.exists(pkl):
    raise SummarizerError(f'{model_dir}: no weights ({BASENAME}.pkl.gz missing)')
  if weights is None:
    weights = read_checked(model_dir, pkl)
    _check_sizes(weights, config, model_dir)
  return list(weights), config, vocab_file, values


def _check_sizes(weights, config, model_dir):
  """Refuses weights whose sizes are not the config's, before any model is built."""
  try:
    found = config_from_weights(weights, config.n_heads, model_dir)
  except SummarizerError as e:
    raise SummarizerError(f'{model_dir}: cannot load the weights ({e})') from None
  for field in ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'max_len'):
    if getattr(found, field) != getattr(config, field):
      raise SummarizerError(
          f'{model_dir}: cannot load the weights (they have {field} '
          f'{getattr(found, field)}, its config.json says {getattr(config, field)})')


def give_weights(model, weights, model_dir):
  """``set_weights``, with weights that do not fit the model named in one line."""
  try:
    set_weights(model, weights)
  except ValueError as e:
    raise SummarizerError(f'{model_dir}: cannot load the weights ({e})') from None


def check_vocab_fingerprint(model_dir, values, vocab_file):
  """Refuses a vocabulary other than the one the model's config.json records.

  Another vocabulary with no more ids than the model loads without a
  complaint, and gives garbage that the out-of-domain warning would blame
  on the article. Directories written before the fingerprint was recorded
  are not checked.
  """
  recorded = values.get('vocab_fingerprint')
  if recorded and text.vocab_fingerprint(vocab_file) != recorded:
    raise SummarizerError(f'{vocab_file}: not the vocabulary the model in {model_dir} was '
                          'trained with (its config.json records another); leave out '
                          '--vocab, or restore its own')


def model_values(model_dir=None):
  """Returns what a model directory's config.json records ({} if it has none)."""
  model_dir = model_dir or DEFAULT_MODEL_DIR
  return load_config(model_dir)[1] if has_config(model_dir) else {}


def model_vocab(model_dir):
  """Returns the vocabulary file a model directory uses, ours or the course's."""
  if has_config(model_dir):
    return model_vocab_file(model_dir, load_config(model_dir)[1])
  return course_vocab_file(model_dir)


def course_vocab_file(model_dir):
  """Returns the vocabulary of a course checkpoint without ``config.json``.

  The course's lab keeps it in ``vocab_dir/`` beside the model directory;
  otherwise the copy of the course's vocabulary in ``data/`` serves.
  """
  beside = os.path.join(os.path.dirname(os.path.abspath(model_dir)), 'vocab_dir',
                        COURSE_VOCAB_NAME)
  return beside if os.path.isfile(beside) else COURSE_VOCAB_FILE


def config_from_weights(weights, n_heads=None, where='the checkpoint'):
  """Reads a ``TransformerLM``'s architecture off its flat weights.

  Args:
    weights: The flat list of weight arrays of a Loop checkpoint.
    n_heads: Attention heads (the shapes do not tell); default: the
      course's 8.
    where: What to name in errors.

  Returns:
    The ``course`` preset with the vocabulary size, widths, number of
    blocks and ``max_len`` of the weights.

  Raises:
    SummarizerError: if the shapes fit no ``TransformerLM`` or ``n_heads``
      does not divide the width.
  """
  shapes = [tuple(np.shape(w)) for w in weights]
  outside_blocks = model_layout.WEIGHTS_BEFORE_BLOCKS + model_layout.WEIGHTS_AFTER_BLOCKS
  n_blocks, extra = divmod(len(shapes) - outside_blocks, model_layout.WEIGHTS_PER_BLOCK)
  if (extra or n_blocks < 1 or len(shapes[0]) != 2 or len(shapes[1]) != 2
      or len(shapes[model_layout.FIRST_FF_KERNEL]) != 2):
    raise SummarizerError(f'{where}: {len(shapes)} weight arrays of shapes that fit '
                          'no TransformerLM')
  vocab_size, d_model = shapes[0]
  course = PRESETS['course']
  n_heads = course.n_heads if n_heads is None else n_heads
  if n_heads < 1 or d_model % n_heads:
    raise SummarizerError(f'{where}: --n-heads {n_heads} does not divide the '
                          f'model width {d_model}')
  return dataclasses.replace(
      course, vocab_size=vocab_size, d_model=d_model,
      d_ff=shapes[model_layout.FIRST_FF_KERNEL][1], n_layers=n_blocks, n_heads=n_heads,
      max_len=shapes[1][0])


def read_checked(model_dir, pkl, read=None):
  """``read(pkl)`` (default ``read_weights``) with every way a file can be broken as
  one SummarizerError."""
  try:
    return (read or read_weights)(pkl)
  except SummarizerError:  # A pickle that names code: refused as it stands.
    raise
  except FileNotFoundError as e:
    raise SummarizerError(f'{model_dir}: cannot load the weights ({e.filename or e} '
                          'missing)') from None
  except (EOFError, gzip.BadGzipFile, zlib.error) as e:
    raise SummarizerError(f'{model_dir}: cannot load the weights (a file is truncated '
                          f'or not gzip: {e})') from None
  except Exception as e:  # pylint: disable=broad-except
    # A truncated gzip, a pickle of something else: the file cannot serve,
    # whatever the library's reason.
    raise SummarizerError(f'{model_dir}: cannot load the weights '
                          f'({type(e).__name__}: {str(e)[:120]})') from None


def read_weights(pkl):
  """Returns the flat list of weight arrays of a Loop checkpoint's pickle."""
  saved = safe_pickle.load(pkl)
  flat = saved['flat_weights']
  if isinstance(flat, int):  # The arrays are beside the pickle (Trax >= 1.3.8).
    arrays = pkl[:-len('pkl.gz')] + 'weights.npy.gz'
    if not os.path.exists(arrays):
      raise FileNotFoundError(2, 'missing', os.path.basename(arrays))
    flat = safe_pickle.load_arrays(arrays)
  return flat


def weight_shapes(config):
  """Returns the shapes of a ``TransformerLM``'s flat weights for ``config``, without drawing them."""
  model = TransformerLM(**config.model_kwargs(), mode='eval')
  signature = trax.shapes.ShapeDtype((1, 1), np.int32)
  weights_signature, _ = fastmath.abstract_eval(model.init)(signature)
  flat, _ = tl.flatten_weights_and_state(weights_signature, ())
  return [tuple(w.shape) for w in flat]


def check_shapes(weights, expected):
  """Raises ValueError unless the flat ``weights`` have exactly the ``expected`` shapes."""
  if len(weights) != len(expected):
    raise ValueError(f'{len(weights)} weight arrays where the model has {len(expected)}')
  for array, wanted in zip(weights, expected):
    if tuple(np.shape(array)) != tuple(wanted):
      raise ValueError(f'a weight of shape {tuple(np.shape(array))} where the model '
                       f'has {tuple(wanted)}')


def set_weights(model, weights):
  """Gives ``model`` these weights and its initial state, without a random init.

  Trax's ``init`` (and ``init_from_file``, which calls it) draws every weight
  at random first, one compiled jax call per shape: 2.7 s of the summarize
  command's start, for numbers that are then thrown away. Here the structure
  comes from an abstract trace instead, and the state is what Trax's init
  gives (``initial_state``).

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
  check_shapes(flat, [w.shape for w in expected])
  # On the device once: numpy arrays would be copied there again at every call
  # (for the shipped model, 15 MB a token: a decoding step took 2.0 ms, not 1.3).
  flat = [jnp.asarray(array) for array in flat]
  model.weights, _ = tl.unflatten_weights_and_state(
      flat, (), (weights_signature, state_signature), weights_only=True)
  model.state = initial_state(model, state_signature)


def initial_state(layer, state_signature):
  """Returns the state Trax's init gives ``layer``, without drawing weights.

  In ``TransformerLM`` that is zeros (empty key/value caches and position
  counters in predict mode), but for Dropout, whose state is its rate: zeros
  there would switch dropout off in training.

  Args:
    layer: A layer of the model (the model itself at the top).
    state_signature: Its state's shapes and dtypes, from an abstract init.
  """
  if isinstance(layer, tl.Dropout):
    layer.init_weights_and_state(None)  # Sets the rate; reads no input.
    return layer.state
  if layer.sublayers:  # A combinator's state is its sublayers', in order.
    return tuple(initial_state(sublayer, signature)
                 for sublayer, signature in zip(layer.sublayers, state_signature))
  return fastmath.nested_map(lambda s: np.zeros(s.shape, s.dtype), state_signature)


def _forget_rngs(layer):
  """Drops the random keys an abstract trace left in ``layer`` and its sublayers.

  Each layer then makes a fresh key from its seed when it first needs one.
  (Trax's ``weights_and_state_signature`` instead restores the keys by
  splitting them layer by layer: another 0.8 s of compiling at start.)
  """
  layer._rng = None  # pylint: disable=protected-access
  for sublayer in layer.sublayers:
    _forget_rngs(sublayer)
