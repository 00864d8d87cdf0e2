"""A model directory, read once: its config, vocabulary, weights, calibration and verdict.

A model directory we write holds ``config.json`` (the preset values, the data
it was trained on, its lineage, calibration and verdict), the vocabulary and
Trax ``Loop`` checkpoint files::

  model.pkl.gz            step, state, history, input signature
  model.weights.npy.gz    the weights
  model.opt_slots0.npy.gz Adam's moments (training only; not shipped)

The course's own model, as a learner saves it from the course's lab, is only
the two checkpoint files, with the vocabulary in ``../vocab_dir/``. Such a
directory is read here too: its architecture comes from the shapes of its
weights (``config_from_weights``), and everything downstream sees the same
``Config`` as for a directory with ``config.json``.

``read`` reads a directory whole into a ``ModelDirectory``; everything downstream
(the decoder, the warnings, the explorer, a run that starts from it) takes
that object. Writing a checkpoint that a kill cannot break is the train
command's job: ``summarizer.runs.saving``.
"""

import dataclasses
import functools
import glob
import gzip
import hashlib
import json
import os
import zlib

import numpy as np

from summarizer import safe_pickle
from summarizer import text
from summarizer.config import (CALIBRATION_KEY, COURSE_VOCAB_FILE, COURSE_VOCAB_NAME,
                               DEFAULT_MODEL_DIR, FINGERPRINT_KEY, PRESETS, VERDICT_KEY,
                               load_config)
from summarizer.errors import SummarizerError, say
from summarizer.inference import layout

BASENAME = 'model'              # Trax Loop's checkpoint name.
VOCAB_NAME = 'vocab.subwords'   # A model directory's copy of its vocabulary.
# The config.json values that change what the weights compute: the architecture
# (its widths, blocks, heads, positions, dropout) and the vocabulary that gives
# the ids their meaning. The shapes tell all but n_heads, dropout and the
# vocabulary; the fingerprint tells all of them. (The activation, ReLU as in the
# course, is the package's code, not a value of config.json.)
# What a training run's folder holds beside its checkpoint (runs.manifest.RUN_MANIFEST).
RUN_MANIFEST = '.summarizer-run.json'
BOUND_FIELDS = ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'n_heads', 'max_len', 'dropout',
                'vocab_file', 'vocab_fingerprint')


@dataclasses.dataclass(frozen=True, eq=False)
class ModelDirectory:
  """What a model directory holds, read once.

  Attributes:
    path: Where it was read from (what messages name).
    config: The model's ``Config``.
    vocab_file: The vocabulary it reads and writes (or the one asked for).
    weights: Its flat list of weight arrays (a checkpoint's order).
    values: Everything its ``config.json`` records ({} for the course's
      checkpoint, or a model held in memory).
    step: The training step of its checkpoint (None: not known).
  """
  path: str
  config: object
  vocab_file: str
  weights: tuple
  values: dict = dataclasses.field(default_factory=dict)
  step: int = None

  @property
  def shipped(self):
    """Whether this is the model the package ships."""
    return os.path.realpath(self.path) == os.path.realpath(DEFAULT_MODEL_DIR)

  @property
  def calibration(self):
    """Its article perplexities on its validation split (None: not calibrated)."""
    return self.values.get(CALIBRATION_KEY)

  @property
  def verdict(self):
    """How it scored against Lead-3 when its run ended (None: not judged)."""
    return self.values.get(VERDICT_KEY)

  @property
  def max_article_tokens(self):
    """The longest article it trained on (None: not recorded)."""
    return self.values.get('max_article_tokens') or None

  @property
  def trained_steps(self):
    """The training steps behind its weights, all runs of its lineage (None: not recorded)."""
    return trained_steps(self.values)

  def model(self, mode='eval'):
    """Returns its ``TransformerLM`` in ``mode``, with its weights."""
    return layout.built(self.config, self.weights, mode, self.path)


def trained_steps(values):
  """The training steps a config.json records for its weights (None: not recorded)."""
  steps = values.get('total_steps') or values.get('trained_steps')
  if not steps and values.get('lineage'):
    steps = sum(run.get('steps') or 0 for run in values['lineage'])
  return steps or None


def read(model_dir=None, vocab_file=None, n_heads=None, own_run=False):
  """Reads a model directory whole: config, vocabulary, weights, calibration, verdict.

  Args:
    model_dir: A model directory, ours (with ``config.json``) or the
      course's (checkpoint files only); default: the shipped model.
    vocab_file: A vocabulary to use instead of the model's own; it must have
      no more ids than the model.
    n_heads: Attention heads of a checkpoint without ``config.json``
      (default: the course's 8); a directory with one must agree.
    own_run: The directory is the output of the run that reads it, its
      config.json written from memory by that run: one without a
      fingerprint is not worth a warning.

  Returns:
    A ``ModelDirectory``. The weights are checked against the config's sizes here,
    and array by array when a model takes them.

  Raises:
    SummarizerError: naming what is missing or does not fit.
  """
  model_dir = model_dir or DEFAULT_MODEL_DIR
  if not os.path.isdir(model_dir):
    if os.path.exists(model_dir):  # --model DIR/config.json, say: the folder is meant.
      raise SummarizerError(f'{model_dir}: a file, not a folder; give the model directory '
                            f'that holds it ({os.path.dirname(model_dir) or "."})')
    raise SummarizerError(f'{model_dir}: model directory not found')
  pkl = os.path.join(model_dir, BASENAME + '.pkl.gz')
  if has_config(model_dir):
    config, values = load_config(model_dir)
    if n_heads is not None and n_heads != config.n_heads:
      raise SummarizerError(f'{model_dir}: its config.json says n_heads '
                            f'{config.n_heads}, not {n_heads}')
    asked_vocab, vocab_file = vocab_file, vocab_file or _own_vocab_file(model_dir, values)
    checkpoint = None
  elif os.path.exists(pkl):  # The course's layout: the architecture is in the shapes.
    checkpoint = read_checked(model_dir, pkl, read_checkpoint)
    config = config_from_weights(checkpoint[1], n_heads, model_dir)
    if vocab_file is None:
      vocab_file = course_vocab_file(model_dir)
      _check_course_layout(model_dir, config, vocab_file)
    values = {}
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
  if checkpoint is None:
    checkpoint = read_checked(model_dir, pkl, read_checkpoint)
    _check_sizes(checkpoint[1], config, model_dir)
    check_fingerprint(model_dir, values, checkpoint[1], warn=not own_run)
    _check_vocab_fingerprint(model_dir, values, vocab_file, asked_vocab)
  step, weights = checkpoint
  _check_numbers(weights, model_dir)
  return ModelDirectory(model_dir, config, vocab_file, tuple(weights), values, step)


def read_values(model_dir=None):
  """Returns what a model directory's config.json records ({} if it has none)."""
  model_dir = model_dir or DEFAULT_MODEL_DIR
  return load_config(model_dir)[1] if has_config(model_dir) else {}


@functools.lru_cache(maxsize=1)
def shipped_steps():
  """The training steps behind the shipped model, as its config.json records them."""
  return trained_steps(read_values(DEFAULT_MODEL_DIR))


def vocab_of(model_dir):
  """Returns the vocabulary file a model directory uses, ours or the course's."""
  if has_config(model_dir):
    return _own_vocab_file(model_dir, load_config(model_dir)[1])
  return course_vocab_file(model_dir)


def _own_vocab_file(model_dir, values):
  """Returns the vocabulary file a model directory names in its config."""
  name = values.get('vocab_file') or VOCAB_NAME
  path = name if os.path.isabs(name) else os.path.join(model_dir, name)
  if not os.path.exists(path):
    raise SummarizerError(f'{model_dir}: vocabulary {name} not found')
  return path  # Not read yet: text.vocab_path refuses a FIFO or a device.


def course_vocab_file(model_dir):
  """Returns the vocabulary of a course checkpoint without ``config.json``.

  The course's lab keeps it in ``vocab_dir/`` beside the model directory;
  otherwise the copy of the course's vocabulary in ``data/`` serves.
  """
  beside = os.path.join(os.path.dirname(os.path.abspath(model_dir)), 'vocab_dir',
                        COURSE_VOCAB_NAME)
  return beside if os.path.isfile(beside) else COURSE_VOCAB_FILE


def _check_course_layout(model_dir, config, vocab_file):
  """Refuses a directory without config.json whose weights are not the course's model.

  Read as the course's checkpoint, it takes the course's vocabulary; where
  that has more ids than the weights, the directory is one of ours that
  lost its config.json, and that is what is said (not the vocabulary).
  """
  n_ids = text.vocab_size(vocab_file)
  if n_ids <= config.vocab_size:
    return
  ours = (f'; it holds {VOCAB_NAME}, as a model directory of ours does, which needs its '
          'config.json' if os.path.exists(os.path.join(model_dir, VOCAB_NAME)) else '')
  raise SummarizerError(
      f'{model_dir}: no config.json, and its weights know {config.vocab_size} ids, not the '
      f"{n_ids} of the course's vocabulary, so it is not the course's checkpoint{ours}; "
      'restore its config.json, or export it again')


def _check_vocab_fingerprint(model_dir, values, vocab_file, asked=None):
  """Refuses a vocabulary other than the one the model's config.json records.

  Another vocabulary with no more ids than the model loads without a
  complaint, and gives garbage that the out-of-domain warning would blame
  on the article. Directories written before the fingerprint was recorded
  are not checked.
  """
  recorded = values.get('vocab_fingerprint')
  if recorded and text.vocab_fingerprint(vocab_file) != recorded:
    remedy = 'leave out --vocab' if asked else f'restore the model\'s own {VOCAB_NAME}'
    raise SummarizerError(f'{vocab_file}: not the vocabulary the model in {model_dir} was '
                          f'trained with (its config.json records another); {remedy}')


def _check_sizes(weights, config, model_dir):
  """Refuses weights whose sizes are not the config's, before any model is built."""
  try:
    found = config_from_weights(weights, config.n_heads, model_dir)
  except SummarizerError as e:
    raise SummarizerError(f'{model_dir}: cannot load the weights ({e})') from None
  for field in ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'max_len'):
    if getattr(found, field) != getattr(config, field):
      raise SummarizerError(
          f'{os.path.join(model_dir, "config.json")}: {field} is {getattr(config, field)}, but '
          f'the weights beside it have {field} {getattr(found, field)}; config.json no '
          'longer describes its weights')


def weights_digest(weights):
  """The sha256 of a flat list of weight arrays: each one's dtype, shape and bytes, in order."""
  digest = hashlib.sha256()
  for weight in weights:
    array = np.ascontiguousarray(weight)
    digest.update(f'{array.dtype.str}{array.shape};'.encode())
    digest.update(memoryview(array).cast('B'))
  return digest.hexdigest()


def fingerprint(values, weights):
  """The record that binds a config.json's ``BOUND_FIELDS`` to its weights.

  Args:
    values: What config.json records (its ``BOUND_FIELDS`` are read).
    weights: The model's flat list of weight arrays.

  Returns:
    {'fields': the bound fields' values, 'sha256': the sha256 of the
    canonical JSON (sorted keys, no spaces) of those fields and
    ``weights_digest(weights)``}.
  """
  fields = {name: values.get(name) for name in BOUND_FIELDS}
  return {'fields': fields, 'sha256': _bound_sha256(fields, weights_digest(weights))}


def _bound_sha256(fields, digest):
  canonical = json.dumps({'fields': fields, 'weights': digest}, sort_keys=True,
                         separators=(',', ':'), ensure_ascii=True)
  return hashlib.sha256(canonical.encode()).hexdigest()


def check_fingerprint(model_dir, values, weights, warn=True):
  """Refuses a config.json whose bound values are not those its weights were exported with.

  A directory exported before fingerprints has its sizes checked against
  the weights' shapes (``_check_sizes``) and loads; its n_heads, dropout
  and vocabulary cannot be checked, which one line on standard error says
  (not for a training run's own folder, whose record --resume checks).

  Raises:
    SummarizerError: naming config.json and the first field that differs
      from the fingerprint, or saying the fingerprint fits no longer the
      weights beside it (they were replaced, or it was edited).
  """
  path = os.path.join(model_dir, 'config.json')
  record = values.get(FINGERPRINT_KEY)
  if record is None:
    # A training run's own folder (its manifest beside it) is no export: its config.json is
    # the run's record, written from memory with each checkpoint, and --resume checks it.
    if warn and not os.path.exists(os.path.join(model_dir, RUN_MANIFEST)):
      say(f'warning: {path} has no {FINGERPRINT_KEY} (exported before fingerprints, or not by '
          f'this package): its sizes were checked against the weights, its n_heads '
          f'{values.get("n_heads")} and vocabulary could not be; export it again to bind them')
    return
  recorded = record.get('fields') or {}
  for name in BOUND_FIELDS:
    if name not in recorded:
      raise SummarizerError(f'{path}: its {FINGERPRINT_KEY} lacks "{name}": it was edited')
    if values.get(name) != recorded[name] or type(values.get(name)) is not type(recorded[name]):
      raise SummarizerError(
          f'{path}: {name} is {json.dumps(values.get(name))}, but its weights were exported '
          f'with {name} {json.dumps(recorded[name])} (its {FINGERPRINT_KEY} says so); '
          f'set it back to {json.dumps(recorded[name])}')
  if _bound_sha256(recorded, weights_digest(weights)) != record.get('sha256'):
    raise SummarizerError(f'{path}: its {FINGERPRINT_KEY} does not fit the weights beside it '
                          '(they were replaced, or the fingerprint was edited): config.json '
                          'cannot be trusted to describe them')


def _check_numbers(weights, model_dir):
  """Refuses weights that are not real floating-point numbers, all of them finite.

  A run whose loss went NaN, or a damaged file, leaves weights that decode
  to nothing; said here, not as an "undertrained" model's empty summary.
  """
  for number, weight in enumerate(weights):
    array = np.asarray(weight)
    if array.dtype.kind != 'f':
      raise SummarizerError(f'{model_dir}: cannot load the weights (array {number} holds '
                            f'{array.dtype} values, not real floating-point numbers)')
    if not np.isfinite(array).all():
      bad = int(array.size - np.count_nonzero(np.isfinite(array)))
      raise SummarizerError(
          f'{model_dir}: cannot load the weights (array {number}, of shape {array.shape}, '
          f'holds {bad} NaN or infinite values: its training diverged, or the file is damaged)')


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
  return config_from_shapes([tuple(np.shape(w)) for w in weights], n_heads, where)


def config_from_shapes(shapes, n_heads=None, where='the checkpoint'):
  """``config_from_weights`` of the weights' shapes alone (a tuple each)."""
  outside_blocks = layout.WEIGHTS_BEFORE_BLOCKS + layout.WEIGHTS_AFTER_BLOCKS
  n_blocks, extra = divmod(len(shapes) - outside_blocks, layout.WEIGHTS_PER_BLOCK)
  if (extra or n_blocks < 1 or len(shapes[layout.FLAT_EMBEDDING]) != 2
      or len(shapes[layout.FLAT_POSITIONS]) != 2 or len(shapes[layout.FIRST_FF_KERNEL]) != 2):
    raise SummarizerError(f'{where}: {len(shapes)} weight arrays of shapes that fit '
                          'no TransformerLM')
  vocab_size, d_model = shapes[layout.FLAT_EMBEDDING]
  course = PRESETS['course']
  n_heads = course.n_heads if n_heads is None else n_heads
  if n_heads < 1 or d_model % n_heads:
    raise SummarizerError(f'{where}: --n-heads {n_heads} does not divide the '
                          f'model width {d_model}')
  return dataclasses.replace(
      course, vocab_size=vocab_size, d_model=d_model,
      d_ff=shapes[layout.FIRST_FF_KERNEL][1], n_layers=n_blocks, n_heads=n_heads,
      max_len=shapes[layout.FLAT_POSITIONS][0])


# --------------------------------------------------------------------------
# The checkpoint files.

def checkpoint_files(directory, basename=BASENAME):
  """Returns the checkpoint files of ``basename``, the pickle last."""
  prefix = os.path.join(directory, basename)
  files = sorted(glob.glob(glob.escape(prefix) + '.opt_slots*.npy.gz'))
  files += [p for p in (prefix + '.weights.npy.gz', prefix + '.pkl.gz')
            if os.path.exists(p)]
  return files


def stamp(model_dir=None):
  """When the files a model directory is read from last changed, and their sizes.

  Equal stamps: the directory reads as it read before (a run, an export or
  ``update_config`` replaces a file, which changes its stamp).
  """
  found = []
  for name in ('config.json', BASENAME + '.pkl.gz', BASENAME + '.weights.npy.gz'):
    try:
      status = os.stat(os.path.join(model_dir or DEFAULT_MODEL_DIR, name))
    except OSError:
      found.append(None)
    else:
      found.append((status.st_mtime_ns, status.st_size, status.st_ino))
  return tuple(found)


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


def read_checked(model_dir, pkl, read_file=None):
  """``read_file(pkl)`` (default ``read_weights``), every way a file can be broken one error.

  Raises:
    SummarizerError: naming the directory and what is wrong with the file.
  """
  try:
    return (read_file or read_weights)(pkl)
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


def read_checkpoint(pkl, saved=None):
  """Returns (step, flat list of weight arrays) of a Loop checkpoint's pickle.

  ``saved``: the pickle as a caller has read it already (not read again).
  """
  saved = safe_pickle.load(pkl) if saved is None else saved
  flat = saved['flat_weights']
  if isinstance(flat, int):  # The arrays are beside the pickle (Trax >= 1.3.8).
    arrays = pkl[:-len('pkl.gz')] + 'weights.npy.gz'
    if not os.path.exists(arrays):
      raise FileNotFoundError(2, 'missing', os.path.basename(arrays))
    flat = safe_pickle.load_arrays(arrays)
  step = saved.get('step')
  return (int(step) if isinstance(step, (int, np.integer)) else None), list(flat)


def read_weights(pkl):
  """Returns the flat list of weight arrays of a Loop checkpoint's pickle."""
  return read_checkpoint(pkl)[1]
