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
  - Trax's random numbers drawn as jax drew them when Trax 1.4.1 and the
    course were written (``jax_threefry_partitionable`` off, for Trax's own
    random functions only): a random initialisation with a given key draws
    the course's numbers (the course's test of ``next_symbol`` expects token
    23317 from ``TransformerLM()`` initialised with ``PRNGKey(1234)``; jax
    0.10's default gives 17592). jax's own setting is left as it is: a
    learner's ``jax.random`` draws what it draws without the package.
  - Trax's checkpoint readers (``init_from_file``, ``Loop``'s resume) read
    with ``safe_pickle``: only a checkpoint's types, never code.
  - ``training.init_host_and_devices`` (each ``Loop`` calls it) runs with
    jax's warning about its renamed ``host_count`` ignored: jax warns from
    its own module, so no filter by module can tell Trax's call from a
    learner's, and the learner's still warns.
  - ``tensorflow_text`` stood in for where it is not installed (Windows,
    where it has no wheel): ``trax.data.tf_inputs`` imports it at the top,
    for TF-text tokenizers the package never calls, and everything Trax's
    data pipeline and ``Loop`` need comes through that module. Reading a
    name of the stand-in raises ``ModuleNotFoundError`` saying why
    (``test_trax_data_still_imports_tensorflow_text_at_the_top``).
  - ``Serial`` and ``Parallel`` keep the outputs their init worked out, which
    the combinator above reads in place of tracing them again: a model's init
    traces each layer once, not once for each combinator above it (``_trax_init.py``).

What a training run adds to Trax's ``Loop`` (hooks, its log) is the run's:
``summarizer.runs.hooked_loop``; jax's compilation cache is the summarize
command's: ``summarizer.inference.disk_cache``.
"""

import ast
import collections.abc
import contextlib
import importlib
import importlib.util
import inspect
import io
import os
import re
import sys
import tempfile
import types
import unicodedata
import warnings

from summarizer import _trax_init, safe_pickle
from summarizer.errors import hold_closed_streams, stderr_moved

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

# The modules whose Python warnings are library noise: Trax's and TensorFlow's
# own, and jax's deprecations of the calls Trax makes (jax attributes those to
# its caller, a Trax module). Never jax, keras or __main__: a learner's own
# warnings, and those of the learner's own jax calls, still show.
_WARNING_MODULES = r'(trax|tensorflow|tensorflow_datasets)(\.|$)'


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
  if kept and sys.stderr is not None:
    sys.stderr.write('\n'.join(kept) + '\n')


@contextlib.contextmanager
def _filtered_stderr():
  """Captures standard error (Python's and file descriptor 2), keeps non-noise.

  C++ logging writes to the descriptor; Python code writes to ``sys.stderr``,
  which in Jupyter is not the descriptor at all, so both are captured. A
  process without standard error (``2>&-``) has no noise to filter: what is
  written there goes nowhere.
  """
  hold_closed_streams()  # A closed descriptor 2 would be taken by the captured file's twin.
  if sys.stderr is None:
    with contextlib.redirect_stderr(io.StringIO()):
      yield
    return
  sys.stderr.flush()
  saved_fd = os.dup(2)
  python_level = io.StringIO()
  with tempfile.TemporaryFile(mode='w+b') as captured:
    os.dup2(captured.fileno(), 2)
    try:
      with contextlib.redirect_stderr(python_level), stderr_moved(saved_fd):
        yield
    finally:
      os.dup2(saved_fd, 2)
      os.close(saved_fd)
      captured.seek(0)
      _write_kept(captured.read().decode('utf-8', 'replace'))
      _write_kept(python_level.getvalue())


def _silence_warnings():
  """Hides the warnings that Trax's and TensorFlow's modules raise, and no one else's."""
  for category in (DeprecationWarning, FutureWarning, PendingDeprecationWarning,
                   UserWarning):
    warnings.filterwarnings('ignore', category=category, module=_WARNING_MODULES)


def _pmap_with_resharding(fun, *args, axis_name=None, **kwargs):
  """``jax.pmap`` that first moves each per-device input to the mesh it needs.

  Since jax 0.10, pmap runs through ``jit`` with fixed input shardings and
  refuses an array committed to one device, which is what Trax's replicated
  weights and optimizer slots are. Placing such arrays on the pmap's mesh
  before the call is all the old pmap did implicitly.

  The devices are read at the first call, not here: Trax's training module
  decorates a function with pmap as it imports, and reading them would start
  jax's backend (and its threads) in every process that merely imports it,
  such as the grader's sandbox before it forks (see ``grading/worker.py``).
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
  _draw_as_the_course_did(trax.fastmath.jax.JAX_BACKEND)


# What jax says when Trax calls ``jax.host_count`` (``process_count`` now).
_RENAMED_HOST_COUNT = r'jax\.process_count has been renamed'


def _quiet_host_count(training):
  """Makes ``training.init_host_and_devices`` call jax without its rename warning (once).

  Every ``Loop`` calls it, and it calls ``jax.host_count``, which warns from
  jax's own module: a filter by module would hide a learner's own call too.
  So the warning is ignored for the duration of Trax's call only.
  """
  init = training.init_host_and_devices
  if getattr(init, 'quiet', False):
    return
  ORIGINAL['init_host_and_devices'] = init

  def init_host_and_devices(*args, **kwargs):
    with warnings.catch_warnings():
      warnings.filterwarnings('ignore', message=_RENAMED_HOST_COUNT, category=UserWarning)
      return init(*args, **kwargs)
  init_host_and_devices.quiet = True
  init_host_and_devices.__doc__ = init.__doc__
  training.init_host_and_devices = init_host_and_devices


# Trax's random functions (its backend's entries): every draw of Trax's goes
# through them (initialisers, dropout, a layer's keys), none of the user's.
_RANDOM_FUNCTIONS = ('random_split', 'random_fold_in', 'random_uniform', 'random_randint',
                     'random_normal', 'random_bernoulli')


def _draw_as_the_course_did(backend):
  """Makes Trax's random functions draw as jax did when Trax 1.4.1 and the course were written.

  jax 0.5 turned ``jax_threefry_partitionable`` on, which changes the numbers
  a key draws: the course's test of ``next_symbol`` expects token 23317 from
  ``TransformerLM()`` initialised with ``PRNGKey(1234)``, and jax 0.10's
  default gives 17592. Only Trax's own draws are turned back (each call runs
  under ``jax.threefry_partitionable(False)``); jax's setting stays as it
  is, so a learner's own ``jax.random`` in the same notebook draws what jax
  draws anywhere else.
  """
  import jax  # pylint: disable=g-import-not-at-top
  ORIGINAL['random'] = {name: backend[name] for name in _RANDOM_FUNCTIONS}

  def as_the_course_did(function):
    def draw(*args, **kwargs):
      with jax.threefry_partitionable(False):
        return function(*args, **kwargs)
    draw.__name__ = draw.__qualname__ = function.__name__
    draw.__doc__ = function.__doc__
    return draw

  for name in _RANDOM_FUNCTIONS:
    backend[name] = as_the_course_did(backend[name])


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
  """Quiets TensorFlow's Python logger and Trax's Loop once imported; puts them in place."""
  global _tensorflow_quiet
  if not _tensorflow_quiet and 'tensorflow' in sys.modules and not isinstance(
      sys.modules['tensorflow'], _StandIn):
    import absl.logging  # pylint: disable=g-import-not-at-top
    absl.logging.set_verbosity(absl.logging.ERROR)
    sys.modules['tensorflow'].get_logger().setLevel('ERROR')
    _tensorflow_quiet = True
  _put_real_modules_in_place()
  if 'trax.supervised.training' in sys.modules:
    _quiet_host_count(sys.modules['trax.supervised.training'])


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


# --------------------------------------------------------------------------
# tensorflow_text where it is not installed.

_TF_TEXT = 'tensorflow_text'


class _MissingModule(types.ModuleType):
  """A module that is not installed, imported only to be held: reading a name says so."""

  def __getattr__(self, name):
    if name.startswith('__'):
      raise AttributeError(name)
    raise ModuleNotFoundError(
        f'{self.__name__} is not installed (it has no wheel for this platform); '
        f'Trax needs it only for its TF-text tokenizers', name=self.__name__)


def _stand_in_for_tensorflow_text():
  """Puts a ``_MissingModule`` in ``sys.modules`` for ``tensorflow_text`` where it is missing.

  ``trax.data.tf_inputs`` imports it at the top and uses it only in
  ``SentencePieceTokenize``; the rest of the module (and with it Trax's data
  pipeline and ``Loop``) works without it.
  """
  if _TF_TEXT in sys.modules:
    return
  try:
    spec = importlib.util.find_spec(_TF_TEXT)
    # An empty folder is no library either (the grading sandbox shows it so: sandbox.py).
    missing = spec is None or spec.origin is None
  except ImportError:  # A finder that refuses it (as tests/test_platforms.py's does).
    missing = True
  if missing:
    sys.modules[_TF_TEXT] = _MissingModule(_TF_TEXT)


def _import_trax():
  """Imports Trax's layers fast and quietly, TensorFlow left out; returns ``trax``."""
  _stand_in_for_tensorflow_text()
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
  safe_pickle.guard_layer_readers(trax_package)
  _trax_init.keep_init_outputs(trax_package.layers.combinators, trax_package.layers.base)
  return trax_package


trax = _import_trax()

from trax import fastmath  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax import layers as tl  # pylint: disable=g-import-not-at-top,wrong-import-position
from trax.fastmath import numpy as jnp  # pylint: disable=g-import-not-at-top,wrong-import-position


def __getattr__(name):
  """``training`` (Trax's training loop, which imports TensorFlow), and ``tfds``."""
  if name == 'training':
    safe_pickle.guard_training_readers(trax)
    return trax.supervised.training
  if name == 'tfds':
    return _import_real('tensorflow_datasets')
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


__all__ = ['trax', 'tl', 'fastmath', 'jnp', 'training']
