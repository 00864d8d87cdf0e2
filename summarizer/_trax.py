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

import ast
import collections.abc
import contextlib
import importlib
import importlib.util
import inspect
import io
import os
import pickle
import re
import sys
import tempfile
import types
import unicodedata
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

  The devices are read at the first call, not here: Trax's training module
  decorates a function with pmap as it imports, and reading them would start
  jax's backend (and its threads) in every process that merely imports it,
  such as the grader's sandbox before it forks (see ``assignment/worker.py``).
  """
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  mapped = jax.pmap(fun, *args, axis_name=axis_name, **kwargs)
  placed = {}

  def place(x):
    if 'sharding' not in placed:
      devices = jax.local_devices()
      mesh = jax.sharding.Mesh(np.array(devices), (axis_name or 'devices',))
      placed['sharding'] = jax.sharding.NamedSharding(
          mesh, jax.sharding.PartitionSpec(mesh.axis_names[0]))
    sharding = placed['sharding']
    if (isinstance(x, jax.Array) and x.ndim and x.shape[0] == len(sharding.device_set)
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


# --------------------------------------------------------------------------
# TensorFlow only when it is used.
#
# Importing TensorFlow takes about 5 s and 800 MB, and summarising never uses
# it. Trax reaches it three ways: ``trax/__init__`` (and ``trax.data``'s and
# ``trax.supervised``'s) imports every subpackage, the data pipeline and the
# training loop among them; a few modules the layers need import
# ``tensorflow`` or ``tensorflow_datasets`` at the top but only use them
# inside functions; and ``trax.fastmath`` imports ``trax.fastmath.tf``, the
# TensorFlow-NumPy backend, to list it beside jax's.
#
# So: those three packages are created without running their ``__init__``,
# which only imports (a test checks), and each name it would bind is
# imported when first read, from the statement that binds it; and while the
# layers import, stand-ins take the place of ``tensorflow``,
# ``tensorflow_datasets`` and ``trax.fastmath.tf`` in ``sys.modules``. A
# stand-in imports the real module the first time one of its names is read,
# and from then on the modules that hold it hold the real one. After the
# layers, the stand-ins leave ``sys.modules``: any later ``import
# tensorflow`` (Trax's data pipeline and ``Loop``, ``tfds:`` sources, the
# user's own) imports the real thing.
#
# Why it is sound: Trax's modules only store the stand-ins at import, and read
# from them inside functions; the first read imports the real module and
# answers from it. Two reads are answered without TensorFlow, while it has
# not been imported: ``tf.TensorShape`` and ``tf.DType``, which Trax reads to
# ask ``isinstance(x, tf.TensorShape)``. No object is an instance of a
# TensorFlow class while TensorFlow is not imported, so a class that nothing
# is an instance of gives the same answer. ``tests/test__trax.py`` fails if a
# Trax upgrade reads TensorFlow at import, adds a statement other than an
# import to a deferred ``__init__``, or checks other TensorFlow types.

# The stand-ins' modules, and the names they answer without importing them.
_STOOD_IN = ('tensorflow', 'tensorflow.compat', 'tensorflow.compat.v2',
             'tensorflow_datasets', 'trax.fastmath.tf', 'scipy.special')
_TYPES_BEFORE_IMPORT = ('TensorShape', 'DType')
# Packages whose ``__init__`` runs name by name, when each name is read.
_DEFERRED_PACKAGES = ('trax', 'trax.data', 'trax.supervised')
# The Trax modules the package imports at once: the layers (with fastmath and
# shapes) and the subword vocabulary's reader.
_EAGER_MODULES = ('trax.layers', 'trax.data.text_encoder')

_stand_ins = {}  # Module name -> its stand-in, until the real one is in place.


class _NotImported:
  """A class without instances, for a TensorFlow type before TensorFlow."""

  def __init__(self):
    raise TypeError('TensorFlow is not imported')


class _StandIn(types.ModuleType):
  """Takes a module's place until one of its names is read, then imports it."""

  def __getattr__(self, name):
    if name.startswith('__'):  # Introspection (help, pickling, doctest) waits.
      raise AttributeError(name)
    real = sys.modules.get(self.__name__)
    if name in _TYPES_BEFORE_IMPORT and (real is None or real is self):
      return _NotImported
    return getattr(_import_real(self.__name__), name)


class _BackendStandIn(collections.abc.Mapping):
  """``trax.fastmath.tf.TF_BACKEND``, a dict read only under the TF backend."""

  def _real(self):
    return _import_real('trax.fastmath.tf').TF_BACKEND

  def __getitem__(self, key):
    return self._real()[key]

  def __iter__(self):
    return iter(self._real())

  def __len__(self):
    return len(self._real())


def _function_stand_in(module, name):
  """A function that calls ``module.name``, imported at the first call."""
  real = []

  def call(*args, **kwargs):
    if not real:
      real.append(getattr(_import_real(module), name))
    return real[0](*args, **kwargs)
  call.__name__ = call.__qualname__ = name
  call.__doc__ = f'``{module}.{name}``, imported at the first call.'
  return call


def _stand_in(name):
  """The stand-in of module ``name``, with the names Trax takes from it at import.

  Those are ``trax.fastmath.tf.TF_BACKEND`` (read only under TensorFlow's
  backend) and ``scipy.special.logsumexp`` (which ``trax.fastmath.numpy``
  lists in NumPy's backend: importing ``scipy.special`` takes 0.3 s).
  """
  module = _StandIn(name)
  if name == 'trax.fastmath.tf':
    module.TF_BACKEND = _BackendStandIn()
  elif name == 'scipy.special':
    module.logsumexp = _function_stand_in(name, 'logsumexp')
  return module


@contextlib.contextmanager
def _standing_in():
  """Puts the stand-ins of modules not imported yet in ``sys.modules`` meanwhile."""
  names = tuple(n for n in _STOOD_IN if n not in sys.modules and not (
      n.startswith('tensorflow.') and 'tensorflow' in sys.modules))
  for name in names:
    _stand_ins.setdefault(name, _stand_in(name))
    sys.modules[name] = _stand_ins[name]
  for name in names:  # `import tensorflow.compat.v2 as tf` reads attributes.
    parent, _, child = name.rpartition('.')
    if parent in names:
      setattr(_stand_ins[parent], child, _stand_ins[name])
  try:
    yield
  finally:
    _end_stand_in(names)


def _end_stand_in(names=_STOOD_IN):
  for name in names:
    if sys.modules.get(name) is _stand_ins.get(name):
      del sys.modules[name]


def _put_real_modules_in_place():
  """Where a stand-in's module is now imported, Trax's modules get the real one."""
  arrived = {id(stand_in): sys.modules[name] for name, stand_in in _stand_ins.items()
             if sys.modules.get(name, stand_in) is not stand_in}
  if not arrived:
    return
  for module in list(sys.modules.values()):
    if getattr(module, '__name__', '').startswith('trax'):  # Who holds them.
      namespace = vars(module)
      for key, value in list(namespace.items()):
        if id(value) in arrived and isinstance(value, _StandIn):
          namespace[key] = arrived[id(value)]
  for name in [n for n, s in _stand_ins.items() if id(s) in arrived]:
    del _stand_ins[name]


_tensorflow_quiet = False


def _after_imports():
  """Quiets TensorFlow's Python logger once it is imported; puts it in place."""
  global _tensorflow_quiet
  if not _tensorflow_quiet and 'tensorflow' in sys.modules and not isinstance(
      sys.modules['tensorflow'], _StandIn):
    import absl.logging  # pylint: disable=g-import-not-at-top
    absl.logging.set_verbosity(absl.logging.ERROR)
    sys.modules['tensorflow'].get_logger().setLevel('ERROR')
    _tensorflow_quiet = True
  _put_real_modules_in_place()


@contextlib.contextmanager
def _quietly():
  """Imports in here print no library noise; TensorFlow, if it came, is in place."""
  _silence_warnings()
  with _filtered_stderr(), _cheap_introspection():
    yield
  _after_imports()


def _import_real(name):
  """Imports module ``name`` for real, quietly; returns it."""
  _end_stand_in()  # Should Trax read TensorFlow while its layers import.
  with _quietly():
    return importlib.import_module(name)


def _init_statements(spec):
  """What a package's ``__init__`` binds: name -> (module, name there).

  None unless the ``__init__`` is a docstring and ``from X import Y [as Z]``
  statements only, the case in which binding names one by one is the same
  as running it.
  """
  with open(spec.origin, encoding='utf-8') as f:
    body = ast.parse(f.read()).body
  if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
    body = body[1:]
  bound = {}
  for node in body:
    if (not isinstance(node, ast.ImportFrom) or node.level
        or any(alias.name == '*' for alias in node.names)):
      return None
    for alias in node.names:
      bound[alias.asname or alias.name] = (node.module, alias.name)
  return bound


def _defer_package(name):
  """Puts package ``name`` in ``sys.modules`` without running its ``__init__``.

  Each name the ``__init__`` binds is imported the first time it is read,
  and so is each submodule. Nothing is done if the package is imported
  already or its ``__init__`` does more than import.
  """
  if name in sys.modules:
    return
  spec = importlib.util.find_spec(name)
  bound = _init_statements(spec)
  if bound is None:
    return
  package = importlib.util.module_from_spec(spec)

  def read(attribute):
    if attribute.startswith('__'):
      raise AttributeError(f'module {name!r} has no attribute {attribute!r}')
    with _quietly():
      if attribute in bound and bound[attribute][0] != name:
        source, there = bound[attribute]
        module = importlib.import_module(source)
        try:
          value = getattr(module, there)
        except AttributeError:  # `from package import submodule`.
          value = importlib.import_module(f'{source}.{there}')
      else:
        there = bound.get(attribute, (name, attribute))[1]
        try:
          value = importlib.import_module(f'{name}.{there}')
        except ModuleNotFoundError as e:
          if e.name != f'{name}.{there}':
            raise
          raise AttributeError(f'module {name!r} has no attribute {attribute!r}') from None
    setattr(package, attribute, value)
    return value

  package.__getattr__ = read
  package.__dir__ = lambda: sorted(set(vars(package)) | set(bound))
  sys.modules[name] = package
  parent, _, child = name.rpartition('.')
  if parent:
    setattr(sys.modules[parent], child, package)


# --------------------------------------------------------------------------
# Trax's tokenizer without its table of letters and digits.
#
# ``trax.data.tokenizer`` (which the subword vocabulary's encoder calls)
# builds, at import, the set of every letter and digit in Unicode by asking
# ``unicodedata.category`` about all 1.1 million code points: half a second
# of every start, to tokenize a few thousand characters. The module is run
# here without that one statement, and the set is replaced by an object
# that asks ``unicodedata`` about the characters that are looked up, and
# answers ``c in`` exactly as the set would (a test compares the two on every
# code point). Trax only ever asks ``c in _ALPHANUMERIC_CHAR_SET``.

_TOKENIZER = 'trax.data.tokenizer'
_LETTERS_AND_DIGITS = '_ALPHANUMERIC_CHAR_SET'


class _LettersAndDigits:
  """``c in`` this: is ``c`` one letter or digit of Unicode (category L* or N*)."""

  def __contains__(self, char):
    # Trax's set stops before code point sys.maxunicode (a non-character).
    return (isinstance(char, str) and len(char) == 1 and ord(char) < sys.maxunicode
            and unicodedata.category(char)[0] in ('L', 'N'))


def _table_statement(tree):
  """The one top-level statement of ``tree`` that assigns the table, or None."""
  found = [node for node in tree.body if isinstance(node, ast.Assign)
           and [getattr(t, 'id', None) for t in node.targets] == [_LETTERS_AND_DIGITS]]
  return found[0] if len(found) == 1 else None


def _import_tokenizer_without_table():
  """Imports ``trax.data.tokenizer`` minus its table (normally if it has none)."""
  if _TOKENIZER in sys.modules:
    return
  spec = importlib.util.find_spec(_TOKENIZER)
  with open(spec.origin, encoding='utf-8') as f:
    tree = ast.parse(f.read(), spec.origin)
  statement = _table_statement(tree)
  if statement is None:
    importlib.import_module(_TOKENIZER)
    return
  tree.body.remove(statement)
  module = importlib.util.module_from_spec(spec)
  sys.modules[_TOKENIZER] = module
  try:
    exec(compile(tree, spec.origin, 'exec'), vars(module))  # pylint: disable=exec-used
  except BaseException:
    del sys.modules[_TOKENIZER]
    raise
  setattr(module, _LETTERS_AND_DIGITS, _LettersAndDigits())
  setattr(sys.modules['trax.data'], 'tokenizer', module)


def _import_trax():
  """Imports Trax's layers fast and quietly, TensorFlow left out; returns ``trax``."""
  _silence_warnings()
  with _filtered_stderr(), _cheap_introspection():
    for name in _DEFERRED_PACKAGES:
      _defer_package(name)
    with _standing_in():
      _import_tokenizer_without_table()
      for name in _EAGER_MODULES:
        importlib.import_module(name)
  _after_imports()
  trax_package = sys.modules['trax']
  _adjust_for_jax_0_10(trax_package)
  _read_layer_checkpoints_safely(trax_package)
  return trax_package
def _checkpoint_signature(trax, value):
  """Turns the ``safe_pickle.Signature``s in ``value`` back into Trax ``ShapeDtype``s."""
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  if isinstance(value, safe_pickle.Signature):
    return trax.shapes.ShapeDtype(value.shape, value.dtype)
  if isinstance(value, (tuple, list)):
    return type(value)(_checkpoint_signature(trax, v) for v in value)
  return value


def _read_layer_checkpoints_safely(trax):
  """Makes ``Layer.init_from_file`` read checkpoints with ``safe_pickle``.

  The course's way to load a model reads ``model.pkl.gz`` with
  ``pickle.load`` and the arrays beside it with ``np_from_file``; both now
  admit only a checkpoint's types, and a truncated array file raises instead
  of giving fewer arrays. The training loop's readers are made safe when it
  is first imported (``_read_training_checkpoints_safely``).
  """
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  base = sys.modules['trax.layers.base']

  def np_from_file(file_path, compresslevel):
    del compresslevel  # Only for writing.
    return safe_pickle.load_arrays(file_path)

  ORIGINAL['np_from_file'] = base.np_from_file
  ORIGINAL['base_pickle'] = base.pickle
  base.np_from_file = np_from_file
  trax.layers.np_from_file = np_from_file
  base.pickle = types.SimpleNamespace(load=_safe_pickle_load, dump=pickle.dump,
                                      HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)


def _safe_pickle_load(file):
  """``pickle.load`` for Trax's readers: only a checkpoint's types."""
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  saved = safe_pickle.CheckpointUnpickler(file, getattr(file, 'name', 'a pickle')).load()
  if isinstance(saved, dict) and 'input_signature' in saved:
    saved['input_signature'] = _checkpoint_signature(sys.modules['trax'], saved['input_signature'])
  return saved


def _read_training_checkpoints_safely(trax):
  """Makes Trax's training loop read checkpoints with ``safe_pickle``.

  ``Loop.load_checkpoint`` (a resumed run, the course's ``training_loop``)
  reads ``model.pkl.gz`` with ``training.unpickle_from_file``, and a ``Loop``
  reads ``data_counters0.pkl`` from its output directory with
  ``trax.data.inputs``' ``pickle``: both now admit only a checkpoint's
  types. Done the first time ``training`` is asked for (it imports
  TensorFlow, so not with the layers).
  """
  if 'unpickle_from_file' in ORIGINAL:
    return
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  training = trax.supervised.training

  def unpickle_from_file(file_path, gzip=False):
    saved = safe_pickle.load(file_path, compressed=gzip)
    if isinstance(saved, dict) and 'input_signature' in saved:
      saved['input_signature'] = _checkpoint_signature(trax, saved['input_signature'])
    return saved

  ORIGINAL['unpickle_from_file'] = training.unpickle_from_file
  training.unpickle_from_file = unpickle_from_file
  inputs = importlib.import_module('trax.data.inputs')
  ORIGINAL['inputs_pickle'] = inputs.pickle
  inputs.pickle = types.SimpleNamespace(load=_safe_pickle_load, dump=pickle.dump,
                                        HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)




trax = _import_trax()

from trax import fastmath  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax import layers as tl  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax.fastmath import numpy as jnp  # pylint: disable=g-import-not-at-top,wrong-import-position


def __getattr__(name):
  """``training`` and ``HookedLoop`` (which import TensorFlow), and ``tfds``."""
  if name == 'training':
    _read_training_checkpoints_safely(trax)
    return trax.supervised.training
  if name == 'HookedLoop':
    _read_training_checkpoints_safely(trax)
    loop = globals().get('_hooked_loop')
    if loop is None:
      loop = globals()['_hooked_loop'] = type(
          'HookedLoop', (_LoopHooks, trax.supervised.training.Loop),
          {'__module__': __name__, '__doc__': _LoopHooks.__doc__})
    return loop
  if name == 'tfds':
    return _import_real('tensorflow_datasets')
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


# --------------------------------------------------------------------------
# jax's persistent compilation cache, for the summarize command.
#
# A summarize command compiles the same few programs at every start (the
# article's prefill, the token loop), about a second of its time. With
# jax's compilation cache they are read from disk instead, after the first
# run of each shape. It holds ~100-200 KB per article length (in 64-token
# blocks) and model; it is trimmed to the most recently used files when it
# passes COMPILATION_CACHE_MAX_MB. Tracing and lowering (jax's Python work
# before the cache is asked) are not cached.

COMPILATION_CACHE_ENV = 'SUMMARIZER_COMPILATION_CACHE'
COMPILATION_CACHE_MAX_MB = 200


def compilation_cache_dir():
  """Where the summarize command keeps compiled programs; None when turned off.

  ``$SUMMARIZER_COMPILATION_CACHE`` names the folder, or turns the cache
  off when set to ``0`` or ``off``; unset, it is
  ``$XDG_CACHE_HOME/summarizer/jax`` (``~/.cache/summarizer/jax``).
  """
  setting = os.environ.get(COMPILATION_CACHE_ENV)
  if setting is not None and setting.strip().lower() in ('0', 'off', 'no', 'false', ''):
    return None
  if setting:
    return os.path.abspath(os.path.expanduser(setting))
  base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(base, 'summarizer', 'jax')


def _trim(directory, max_bytes):
  """Deletes the least recently used files of ``directory`` beyond ``max_bytes``."""
  entries = []
  with os.scandir(directory) as found:
    for entry in found:
      if entry.is_file(follow_symlinks=False):
        stat = entry.stat(follow_symlinks=False)
        entries.append((max(stat.st_atime, stat.st_mtime), stat.st_size, entry.path))
  total = sum(size for _, size, _ in entries)
  for _, size, path in sorted(entries):
    if total <= max_bytes:
      break
    with contextlib.suppress(OSError):  # Another process may have taken it.
      os.remove(path)
      total -= size


def use_compilation_cache():
  """Turns jax's persistent compilation cache on, unless the user said otherwise.

  Returns:
    The cache's folder, or None if it stays off: turned off by
    ``$SUMMARIZER_COMPILATION_CACHE``, already set through jax's own
    ``$JAX_COMPILATION_CACHE_DIR``, or the folder cannot be made.
  """
  import jax  # pylint: disable=g-import-not-at-top
  directory = compilation_cache_dir()
  if directory is None or jax.config.jax_compilation_cache_dir:
    return None
  try:
    os.makedirs(directory, exist_ok=True)
    _trim(directory, COMPILATION_CACHE_MAX_MB * 2**20)
  except OSError:
    return None
  jax.config.update('jax_compilation_cache_dir', directory)
  # Each of the command's programs compiles in well under jax's default 1 s.
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)
  return directory


@contextlib.contextmanager
def quiet_loop_log(log_path=None):
  """Sends Trax Loop's own progress prints to a log file instead of stdout.

  Args:
    log_path: The file to append them to (``train.log``); None drops them.

  Yields:
    The open log file, for lines of one's own.
  """
  training = trax.supervised.training  # (Which imports TensorFlow.)
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


class _LoopHooks:
  """Trax's ``Loop`` with a hook after each step and one around saving.

  ``HookedLoop``, read from this module, is this before ``Loop`` (which is
  only imported then, and TensorFlow with it).

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
