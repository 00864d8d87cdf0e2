"""The one place the package imports Trax: quickly, and without library noise.

Every other module writes ``from summarizer._trax import tl, fastmath, jnp``.

Why this module exists:

* Speed. Importing ``trax`` runs about ninety ``@assert_shape`` decorators,
  each of which calls ``inspect.stack()``. That builds a ``FrameInfo`` for every
  frame on the stack, and each one reads source files and walks
  ``sys.modules``; it is where nearly all of the ~22 s of ``import trax`` goes.
  Trax only keeps the file name and line number of the caller, so while Trax
  imports we swap in versions of ``inspect.stack`` and ``inspect.getframeinfo``
  that give exactly those without touching the file system, then put the real
  functions back.
* Quiet. TensorFlow's C++ logging, gym's notice about NumPy 2 and a few jax
  deprecation warnings are printed on every import and mean nothing to a user.
  Standard error is captured while Trax imports and only lines that are not
  known noise are written back, so a real error still shows.
* Every adjustment to Trax is here, each with why it is needed; and
  ``tests/test_trax.py`` fails when a Trax or jax upgrade makes
  one wrong or unneeded:

  - ``jax.device_put_replicated`` put back: jax 0.10 removed it from its
    namespace; Trax replicates weights with it to train on several devices.
  - pmap with inputs moved to its mesh: jax 0.10's pmap refuses an array
    committed to one device, which is what Trax's replicated weights are.
  - ``fastmath.tree_unflatten``: Trax 1.4.1 tests ``tree in [None, ()]``,
    which compares a jax array with a tuple and raises, so ``Loop`` could
    not resume a checkpoint.
  - ``quiet_loop_log``: Trax's ``Loop`` prints its progress through
    ``training._log`` to standard output; a run sends it to its log file.
  - ``jax_threefry_partitionable`` set to False, jax's default when Trax
    1.4.1 and the course were written (jax 0.5 turned it on): a random
    initialisation with a given key draws the course's numbers (the course's
    test of ``next_symbol`` expects token 23317 from ``TransformerLM()``
    initialised with ``PRNGKey(1234)``; jax 0.10's default gives 17592).
  - ``HookedLoop``: Trax's ``Loop`` has no hook after a step (for a progress
    bar and a clean stop on Ctrl-C) or around saving (for checkpoints that
    a kill cannot leave half written).
"""

import contextlib
import inspect
import io
import os
import pickle
import re
import sys
import tempfile
import warnings

# Read by TensorFlow's C++ runtime when it loads: 3 keeps only fatal messages.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
os.environ.setdefault('TF_ENABLE_ONEDNN_OPTS', '0')

# Lines of standard error that imports print and that carry no information.
_NOISE = re.compile('|'.join([
    r'All log messages before absl::InitializeLog',
    r'oneDNN custom operations',
    r'cudart_stub|Could not find cuda drivers|Unable to register cu(DNN|FFT|BLAS)',
    r'TF-TRT Warning|computation placer already registered',
    r'This TensorFlow binary is optimized',
    r'rebuild TensorFlow with the appropriate compiler flags',
    r'Gym has been unmaintained|upgrade to Gymnasium|Users of this version of Gym'
    r'|migration guide at https://gymnasium',
    r'^\s*$',
]))

# Python warnings raised by Trax's old calls into jax, TF and gym.
_WARNING_MODULES = r'(trax|jax|tensorflow|tensorflow_datasets|gym|gin|keras)(\.|$)'


def _light_stack(context=1):
  """Return the caller's stack as ``inspect.stack`` does, minus source lines."""
  del context  # Source lines are what make the real one slow; Trax never reads them.
  frame = sys._getframe(1)  # pylint: disable=protected-access
  infos = []
  while frame is not None:
    infos.append(inspect.FrameInfo(frame, frame.f_code.co_filename,
                                   frame.f_lineno, frame.f_code.co_name,
                                   None, None))
    frame = frame.f_back
  return infos


def _light_getframeinfo(frame, context=1):
  """Return file, line and function of ``frame`` without reading the source."""
  del context
  if inspect.istraceback(frame):
    frame = frame.tb_frame
  return inspect.Traceback(frame.f_code.co_filename, frame.f_lineno,
                           frame.f_code.co_name, None, None)


@contextlib.contextmanager
def _cheap_introspection():
  """Make ``inspect.stack``/``getframeinfo`` cheap for the duration."""
  saved = inspect.stack, inspect.getframeinfo
  inspect.stack, inspect.getframeinfo = _light_stack, _light_getframeinfo
  try:
    yield
  finally:
    inspect.stack, inspect.getframeinfo = saved


def _write_kept(text):
  """Writes the lines of ``text`` that are not known noise to standard error."""
  kept = [line for line in text.splitlines() if not _NOISE.search(line)]
  if kept:
    sys.stderr.write('\n'.join(kept) + '\n')


@contextlib.contextmanager
def _filtered_stderr():
  """Captures standard error (Python's and file descriptor 2), keeps non-noise.

  C++ logging writes to the descriptor; Python code writes to ``sys.stderr``,
  which in Jupyter is not the descriptor at all, so both are captured.
  """
  sys.stderr.flush()
  saved_fd = os.dup(2)
  python_level = io.StringIO()
  with tempfile.TemporaryFile(mode='w+b') as captured:
    os.dup2(captured.fileno(), 2)
    try:
      with contextlib.redirect_stderr(python_level):
        yield
    finally:
      os.dup2(saved_fd, 2)
      os.close(saved_fd)
      captured.seek(0)
      _write_kept(captured.read().decode('utf-8', 'replace'))
      _write_kept(python_level.getvalue())


def _silence_warnings():
  """Hide deprecation chatter that comes from the libraries, not the user."""
  for category in (DeprecationWarning, FutureWarning, PendingDeprecationWarning,
                   UserWarning):
    warnings.filterwarnings('ignore', category=category, module=_WARNING_MODULES)
  warnings.filterwarnings('ignore', message=r'.*jax\.(tree|xla|interpreters).*')
  warnings.filterwarnings('ignore', message=r'jax\.\S+ has been renamed')


def _pmap_with_resharding(fun, *args, axis_name=None, **kwargs):
  """``jax.pmap`` that first moves each per-device input to the mesh it needs.

  Since jax 0.10, pmap runs through ``jit`` with fixed input shardings and
  refuses an array committed to one device, which is what Trax's replicated
  weights and optimizer slots are. Placing such arrays on the pmap's mesh
  before the call is all the old pmap did implicitly.
  """
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  mapped = jax.pmap(fun, *args, axis_name=axis_name, **kwargs)
  devices = jax.local_devices()
  mesh = jax.sharding.Mesh(np.array(devices), (axis_name or 'devices',))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(mesh.axis_names[0]))

  def place(x):
    if (isinstance(x, jax.Array) and x.ndim and x.shape[0] == len(devices)
        and len(x.sharding.device_set) == 1):
      return jax.device_put(x, sharding)
    return x

  def call(*call_args, **call_kwargs):
    call_args, call_kwargs = jax.tree_util.tree_map(place, (call_args, call_kwargs))
    return mapped(*call_args, **call_kwargs)
  return call


def _tree_unflatten(flat, tree, copy_from_tree=None):
  """Trax's ``fastmath.tree_unflatten`` with a membership test jax 0.10 allows.

  Trax 1.4.1 tests ``tree in [None, ()]`` while restoring optimizer slots;
  with current jax that compares an array with a tuple and raises, so Loop
  cannot resume any checkpoint. The markers are only ever None or (), so
  they are matched by identity and type here instead.
  """
  if copy_from_tree is not None and any(
      tree is marker or (type(tree) is tuple and type(marker) is tuple
                         and tree == marker) for marker in copy_from_tree):
    return tree, flat
  if isinstance(tree, (list, tuple)):
    new_tree, rest = [], flat
    for subtree in tree:
      new_subtree, rest = _tree_unflatten(rest, subtree, copy_from_tree)
      new_tree.append(new_subtree)
    return (tuple(new_tree) if isinstance(tree, tuple) else new_tree), rest
  if isinstance(tree, dict):
    new_tree, rest = {}, flat
    for key in tree:
      new_tree[key], rest = _tree_unflatten(rest, tree[key], copy_from_tree)
    return new_tree, rest
  return flat[0], flat[1:]


# What Trax had before it was adjusted, for the tests that check each
# adjustment is still needed.
ORIGINAL = {}


def _adjust_for_jax_0_10(trax):
  """Makes Trax 1.4.1 train, data-parallel, and resume on jax 0.10."""
  import jax  # pylint: disable=g-import-not-at-top
  from jax._src import api  # pylint: disable=g-import-not-at-top
  ORIGINAL['device_put_replicated'] = getattr(jax, 'device_put_replicated', None)
  if ORIGINAL['device_put_replicated'] is None:
    jax.device_put_replicated = api.device_put_replicated
  ORIGINAL['pmap'] = trax.fastmath.jax.JAX_BACKEND['pmap']
  trax.fastmath.jax.JAX_BACKEND['pmap'] = _pmap_with_resharding
  # Loop.load_checkpoint calls fastmath.tree_unflatten; fastmath.jax calls
  # it from the module trax.fastmath.numpy (which fastmath.numpy is not: that
  # name is the backend's numpy).
  fastmath_numpy = sys.modules['trax.fastmath.numpy']
  ORIGINAL['tree_unflatten'] = fastmath_numpy.tree_unflatten
  trax.fastmath.tree_unflatten = _tree_unflatten
  fastmath_numpy.tree_unflatten = _tree_unflatten
  ORIGINAL['jax_threefry_partitionable'] = jax.config.jax_threefry_partitionable
  jax.config.update('jax_threefry_partitionable', False)


def _checkpoint_signature(trax, value):
  """Turns the ``safe_pickle.Signature``s in ``value`` back into Trax ``ShapeDtype``s."""
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  if isinstance(value, safe_pickle.Signature):
    return trax.shapes.ShapeDtype(value.shape, value.dtype)
  if isinstance(value, (tuple, list)):
    return type(value)(_checkpoint_signature(trax, v) for v in value)
  return value


def _read_checkpoints_safely(trax):
  """Makes Trax read checkpoints with ``safe_pickle``: no code runs from one.

  ``Loop.load_checkpoint`` (a resumed run, the course's ``training_loop``)
  reads ``model.pkl.gz`` with ``training.unpickle_from_file`` and the arrays
  beside it with ``tl.np_from_file``; ``Layer.init_from_file`` (the course's
  way to load a model) with ``pickle.load`` and ``np_from_file``. All of
  them now admit only a checkpoint's types, and a truncated array file
  raises instead of giving fewer arrays. So does the ``data_counters0.pkl``
  a ``Loop`` reads from its output directory.
  """
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  training = trax.supervised.training
  base = sys.modules['trax.layers.base']

  def unpickle_from_file(file_path, gzip=False):
    saved = safe_pickle.load(file_path, compressed=gzip)
    if isinstance(saved, dict) and 'input_signature' in saved:
      saved['input_signature'] = _checkpoint_signature(trax, saved['input_signature'])
    return saved

  def np_from_file(file_path, compresslevel):
    del compresslevel  # Only for writing.
    return safe_pickle.load_arrays(file_path)

  def pickle_load(file):
    saved = safe_pickle.CheckpointUnpickler(file, getattr(file, 'name', 'a pickle')).load()
    if isinstance(saved, dict) and 'input_signature' in saved:
      saved['input_signature'] = _checkpoint_signature(trax, saved['input_signature'])
    return saved

  ORIGINAL['unpickle_from_file'] = training.unpickle_from_file
  ORIGINAL['np_from_file'] = base.np_from_file
  ORIGINAL['base_pickle'] = base.pickle
  training.unpickle_from_file = unpickle_from_file
  base.np_from_file = np_from_file
  trax.layers.np_from_file = np_from_file
  base.pickle = types.SimpleNamespace(load=pickle_load, dump=pickle.dump,
                                      HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)
  # Loop reads data_counters0.pkl from its output directory at start (resume).
  inputs = sys.modules['trax.data.inputs']
  ORIGINAL['inputs_pickle'] = inputs.pickle
  inputs.pickle = types.SimpleNamespace(load=pickle_load, dump=pickle.dump,
                                        HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)


def _import_trax():
  """Import Trax fast and quietly; return the module."""
  _silence_warnings()
  with _filtered_stderr(), _cheap_introspection():
    import trax  # pylint: disable=g-import-not-at-top
    import trax.layers  # pylint: disable=g-import-not-at-top,unused-import
  # TensorFlow's Python logger would otherwise warn on first use of tf.data.
  import absl.logging  # pylint: disable=g-import-not-at-top
  absl.logging.set_verbosity(absl.logging.ERROR)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.get_logger().setLevel('ERROR')
  _adjust_for_jax_0_10(trax)
  _read_checkpoints_safely(trax)
  return trax


trax = _import_trax()

from trax import fastmath  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax import layers as tl  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax.fastmath import numpy as jnp  # pylint: disable=g-import-not-at-top,wrong-import-position

training = trax.supervised.training


@contextlib.contextmanager
def quiet_loop_log(log_path=None):
  """Sends Trax Loop's own progress prints to a log file instead of stdout.

  Args:
    log_path: The file to append them to (``train.log``); None drops them.

  Yields:
    The open log file, for lines of one's own.
  """
  log = open(log_path or os.devnull, 'a', encoding='utf-8')  # pylint: disable=consider-using-with
  original = training._log  # pylint: disable=protected-access

  def to_file(message, stdout=True):
    del stdout
    log.write(f'{message}\n')
    log.flush()

  training._log = to_file  # pylint: disable=protected-access
  try:
    yield log
  finally:
    training._log = original  # pylint: disable=protected-access
    log.close()


class HookedLoop(training.Loop):
  """Trax's ``Loop`` with a hook after each step and one around saving.

  Args:
    *args: ``Loop``'s.
    on_step: Called as ``on_step(step, loss)`` after every training step; it
      may raise to stop the loop between two steps.
    save: Called as ``save(write, directory)`` to save the checkpoint named
      ``model``, where ``write(basename)`` is Loop's own save (e.g.
      ``checkpoint.save_atomically``).
    **kwargs: ``Loop``'s.
  """

  def __init__(self, *args, on_step=None, save=None, **kwargs):
    self._on_step = on_step
    self._save = save
    super().__init__(*args, **kwargs)

  def save_checkpoint(self, basename):
    if self._save is None or basename != 'model':
      return super().save_checkpoint(basename)
    return self._save(super().save_checkpoint, self._output_dir)

  def _run_one_step(self, task_index, task_changed):
    loss, metrics = super()._run_one_step(task_index, task_changed)
    if self._on_step is not None:
      self._on_step(self.step, loss)
    return loss, metrics


__all__ = ['trax', 'tl', 'fastmath', 'jnp', 'training', 'quiet_loop_log', 'HookedLoop']
