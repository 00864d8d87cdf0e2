"""Reading a checkpoint's pickle without running the code a pickle may name.

A pickle is a small program: each class or function it names is imported
and called while it loads, so a crafted ``model.pkl.gz`` runs whatever its
author wished (``os.system``, say) as the user who loads it. A Trax ``Loop``
checkpoint needs none of that: it holds the step, numbers, lists, dicts
(its history's ``defaultdict(list)``), numpy arrays and dtypes, jax arrays
(pickled as numpy arrays and rebuilt here as numpy arrays) and the input
signature (Trax's ``ShapeDtype``, rebuilt here as ``Signature``). The
unpickler below admits exactly those names and refuses any other with a
``SummarizerError`` that names the file and what it named.

Nothing here reads a file that is not a regular file (a FIFO would hang
the reader), nor more than the bounds of ``summarizer.config`` once
unpacked: a small gzip that unpacks to gigabytes is refused in one line
before the gigabytes are read.

This module imports neither Trax nor jax: reading a checkpoint needs
numpy only. It belongs to the base: ``_trax`` hands it Trax as Trax imports
(``guard_layer_readers``), and again when Trax's training loop is first
asked for (``guard_training_readers``), so that every checkpoint Trax reads
goes through it.
"""

import _compat_pickle
import collections
import gzip
import importlib
import io
import math
import os
import pickle
import sys
import types

import numpy as np

from summarizer.config import MAX_PICKLE_BYTES, MAX_WEIGHTS_BYTES
from summarizer.errors import SummarizerError
from summarizer.files import regular_file, too_large


class UnsafePickleError(SummarizerError):
  """A checkpoint's pickle names something a checkpoint never holds."""


class Signature:
  """Trax's ``ShapeDtype`` (an input signature) as a checkpoint records it.

  Attributes:
    shape: A tuple of ints.
    dtype: A numpy dtype.
  """
  __slots__ = ('shape', 'dtype')

  def __init__(self, shape=(), dtype=np.float32):
    self.shape = tuple(shape)
    self.dtype = np.dtype(dtype)

  def __repr__(self):
    return f'Signature(shape={self.shape}, dtype={self.dtype})'


def _rebuild_array(fun, args, array_state, aval_state):
  """Stands for ``jax._src.array._reconstruct_array``: the numpy array it wraps.

  A jax array pickles as numpy's own reconstruction (``fun(*args)`` then
  ``__setstate__``); the device placement and ``weak_type`` that jax adds
  are dropped, since a checkpoint's reader puts arrays on the device itself.
  """
  del aval_state
  if fun not in _NUMPY_RECONSTRUCT:
    raise pickle.UnpicklingError('a jax array that is not rebuilt from numpy')
  array = fun(*args)
  if not isinstance(array, np.ndarray):
    raise pickle.UnpicklingError('a jax array that is not rebuilt from numpy')
  array.__setstate__(array_state)
  return array


def _frombuffer(buf, dtype, shape, order, axis_order=None):
  """Stands for numpy's ``_core.numeric._frombuffer``: an array viewed from pickled bytes."""
  from numpy._core import numeric  # pylint: disable=g-import-not-at-top
  if np.dtype(dtype).hasobject:
    raise pickle.UnpicklingError('an array of Python objects')
  return numeric._frombuffer(buf, dtype, shape, order, axis_order)  # pylint: disable=protected-access


def _latin1_bytes(text, encoding):
  """Stands for ``_codecs.encode``: how protocols 0-2 write bytes (as latin-1 text)."""
  if encoding not in ('latin1', 'latin-1'):
    raise pickle.UnpicklingError(f'bytes in the encoding {encoding!r}')
  return text.encode('latin1')


def _numpy_core(name):
  """numpy's ``_core.multiarray.NAME``, under numpy 2's and numpy 1's module names."""
  from numpy._core import multiarray  # pylint: disable=g-import-not-at-top
  return getattr(multiarray, name)


_NUMPY_RECONSTRUCT = (_numpy_core('_reconstruct'),)

# Every name a checkpoint's pickle may use, and what it stands for here.
ALLOWED = {
    ('builtins', 'list'): list,
    ('builtins', 'dict'): dict,
    ('builtins', 'tuple'): tuple,
    ('builtins', 'set'): set,
    ('builtins', 'frozenset'): frozenset,
    ('builtins', 'int'): int,
    ('builtins', 'float'): float,
    ('builtins', 'complex'): complex,
    ('builtins', 'bool'): bool,
    ('builtins', 'str'): str,
    ('builtins', 'bytes'): bytes,
    ('builtins', 'bytearray'): bytearray,
    ('_codecs', 'encode'): _latin1_bytes,
    ('collections', 'defaultdict'): collections.defaultdict,
    ('collections', 'OrderedDict'): collections.OrderedDict,
    ('numpy', 'ndarray'): np.ndarray,
    ('numpy', 'dtype'): np.dtype,
    ('jax._src.array', '_reconstruct_array'): _rebuild_array,
    ('trax.shapes', 'ShapeDtype'): Signature,
}
for _module in ('numpy._core.multiarray', 'numpy.core.multiarray'):
  ALLOWED[(_module, '_reconstruct')] = _numpy_core('_reconstruct')
  ALLOWED[(_module, 'scalar')] = _numpy_core('scalar')
# numpy 2's arrays under pickle protocol 5 (Trax writes the highest): the
# bytes and how to view them; frombuffer refuses object arrays.
for _module in ('numpy._core.numeric', 'numpy.core.numeric'):
  ALLOWED[(_module, '_frombuffer')] = _frombuffer
# numpy's scalar types (np.int64, ...), which a ShapeDtype may hold as its dtype.
for _type in set(np.sctypeDict.values()):
  if _type not in (np.object_, np.void):
    ALLOWED[('numpy', _type.__name__)] = _type
# numpy's dtype classes (numpy.dtypes.Float32DType, ...): pickles of numpy 2
# may name them.
for _name in dir(np.dtypes):
  if _name.endswith('DType') and _name != 'StringDType':
    ALLOWED[('numpy.dtypes', _name)] = getattr(np.dtypes, _name)


class CheckpointUnpickler(pickle.Unpickler):
  """An unpickler that resolves only the names in ``ALLOWED``.

  Args:
    file: A binary file.
    where: The file's name, for the error.
  """

  def __init__(self, file, where):
    super().__init__(file)
    self._where = where

  def find_class(self, module, name):
    # Python 2's names (protocols 0-2), as pickle's own find_class maps them.
    if (module, name) in _compat_pickle.NAME_MAPPING:
      module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    try:
      return ALLOWED[(module, name)]
    except KeyError:
      raise UnsafePickleError(
          f'{self._where}: refused: it names {module}.{name}, which a checkpoint '
          'never holds (a model directory\'s pickle may hold only numbers, '
          'strings, containers and numpy arrays; see data/model/README.md, "What a model '
          'directory may contain")') from None

  def persistent_load(self, pid):
    raise UnsafePickleError(f'{self._where}: refused: it refers to an outside '
                            'object, which a checkpoint never does')


class _BoundedReader:
  """A binary file that the unpickler may read no more than ``limit`` bytes of.

  The unpickler asks for each object's bytes before it reads them (``read``
  of their number, or ``readinto`` a buffer of that size), so a pickle that
  holds a gigabyte-long bytes object is refused before its contents are read.

  Args:
    file: A binary file (a ``GzipFile``: what it unpacks is what counts).
    limit: The most bytes the pickle may have.
    where: The file's name, for the error.
  """

  def __init__(self, file, limit, where):
    self._file, self._limit, self._left, self._where = file, limit, limit, where

  def _take(self, size):
    if size > self._left:
      raise too_large(self._where, self._limit, "a checkpoint's pickle may hold unpacked")

  def read(self, size=-1):
    if size is None or size < 0:  # All there is: at most one byte past the bound.
      data = self._file.read(self._left + 1)
      self._take(len(data))
    else:
      self._take(size)
      data = self._file.read(size)
    self._left -= len(data)
    return data

  def readinto(self, buffer):
    self._take(memoryview(buffer).nbytes)
    count = self._file.readinto(buffer)
    self._left -= count or 0
    return count

  def readline(self, size=-1):
    line = self._file.readline(self._left + 1 if size is None or size < 0 else size)
    self._take(len(line))
    self._left -= len(line)
    return line


def pickle_limit(path):
  """The most bytes the pickle ``path`` may hold unpacked.

  A Loop checkpoint's pickle holds small things, its arrays in the weights
  file beside it (Trax >= 1.3.8): ``MAX_PICKLE_BYTES``. Without that file
  (Trax before 1.3.8 pickled the weights and Adam's moments), as much as
  the arrays may be: ``MAX_WEIGHTS_BYTES``.
  """
  path = os.fspath(path)
  if path.endswith('.pkl.gz') and not os.path.exists(path[:-len('pkl.gz')] + 'weights.npy.gz'):
    return MAX_WEIGHTS_BYTES
  return MAX_PICKLE_BYTES


def loads(data, where='the pickle'):
  """Unpickles ``data`` (bytes) admitting only a checkpoint's types."""
  return CheckpointUnpickler(io.BytesIO(data), where).load()


def load(path, compressed=True):
  """Reads a checkpoint's pickle, admitting only a checkpoint's types.

  Args:
    path: A ``.pkl.gz`` file (or a plain pickle with ``compressed=False``).
    compressed: Whether the file is gzip-compressed.

  Returns:
    What the pickle holds; a jax array comes back as a numpy array and Trax's
    ``ShapeDtype`` as ``Signature``.

  Raises:
    UnsafePickleError: the pickle names anything else (nothing it names has
      run).
    SummarizerError: it is not a regular file, or holds more than
      ``pickle_limit`` bytes unpacked (refused before they are read).
    OSError, EOFError, pickle.UnpicklingError, ...: the file is missing,
      truncated or not a pickle, as ``pickle.load`` raises them.
  """
  limit = pickle_limit(path)
  regular_file(path, limit, "a checkpoint's pickle may hold")
  opener = gzip.open if compressed else open
  with opener(path, 'rb') as f:
    return CheckpointUnpickler(_BoundedReader(f, limit, path), path).load()


def load_arrays(path):
  """Reads the arrays ``np.save``-d one after another into a gzip file, all or none.

  Trax's own ``np_from_file`` stops quietly at the first error, so a
  truncated file would give a model with its last layers missing (and a
  resumed run would draw them at random); here only a clean end of the
  file ends the list, and object arrays (pickles) are refused. Each
  array's size is read from its header before its data: arrays of more
  than ``MAX_WEIGHTS_BYTES`` in all are refused before they are unpacked.

  Raises:
    SummarizerError: the file is not a regular file, or its arrays hold
      too much.
    OSError, EOFError, ValueError, zlib.error: the file is missing,
      truncated or not such a file.
  """
  regular_file(path, MAX_WEIGHTS_BYTES, 'the arrays of a checkpoint file may hold')
  arrays, room = [], MAX_WEIGHTS_BYTES
  with gzip.open(path, 'rb') as f:
    while f.peek(1):
      arrays.append(_read_array(f, room, path))
      room -= arrays[-1].nbytes
  return arrays


# The .npy format versions whose header numpy reads in public (np.save writes 1.0, or
# 2.0 for a header over 64 KB).
_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}


def _read_array(file, room, where):
  """Reads one ``np.save``-d array of at most ``room`` bytes, its header first."""
  version = np.lib.format.read_magic(file)
  if version not in _HEADER_READERS:
    raise ValueError(f'an array in .npy format {version[0]}.{version[1]}')
  shape, fortran_order, dtype = _HEADER_READERS[version](file)
  if dtype.hasobject:
    raise ValueError('an array of Python objects (a pickle), which a checkpoint never holds')
  size = math.prod(shape) * dtype.itemsize
  if size > room:
    raise too_large(where, MAX_WEIGHTS_BYTES, 'the arrays of a checkpoint file may hold '
                    'unpacked')
  data = bytearray(size)
  view, done = memoryview(data), 0
  while done < size:
    count = file.readinto(view[done:])
    if not count:
      raise EOFError(f'the file ends inside an array of shape {shape}')
    done += count
  return np.frombuffer(data, dtype).reshape(shape, order='F' if fortran_order else 'C')


# --------------------------------------------------------------------------
# Trax's own checkpoint readers, guarded.

def _trax_signature(trax, value):
  """Turns the ``Signature``s in ``value`` back into Trax ``ShapeDtype``s."""
  if isinstance(value, Signature):
    return trax.shapes.ShapeDtype(value.shape, value.dtype)
  if isinstance(value, (tuple, list)):
    return type(value)(_trax_signature(trax, v) for v in value)
  return value


def _load_for_trax(file):
  """``pickle.load`` for Trax's readers: only a checkpoint's types, and bounded.

  Trax's ``GFile`` opens its file at the first read, so a FIFO is refused
  here before anything waits on it.
  """
  name = getattr(file, 'name', None)
  if isinstance(name, str) and name:
    limit = pickle_limit(name)
    regular_file(name, limit, "a checkpoint's pickle may hold")
  else:
    name, limit = 'a pickle', MAX_PICKLE_BYTES
  saved = CheckpointUnpickler(_BoundedReader(file, limit, name), name).load()
  if isinstance(saved, dict) and 'input_signature' in saved:
    saved['input_signature'] = _trax_signature(sys.modules['trax'], saved['input_signature'])
  return saved


# What Trax's modules see as ``pickle``: this module's loading, pickle's saving.
_PICKLE_FOR_TRAX = types.SimpleNamespace(load=_load_for_trax, dump=pickle.dump,
                                         HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)


def guard_layer_readers(trax):
  """Makes ``Layer.init_from_file`` read checkpoints with this module.

  The course's way to load a model reads ``model.pkl.gz`` with
  ``pickle.load`` and the arrays beside it with ``np_from_file``; both then
  admit only a checkpoint's types, and a truncated array file raises instead
  of giving fewer arrays.

  Args:
    trax: The ``trax`` package, its layers imported.
  """
  base = sys.modules['trax.layers.base']

  def np_from_file(file_path, compresslevel):
    del compresslevel  # Only for writing.
    return load_arrays(file_path)

  base.np_from_file = trax.layers.np_from_file = np_from_file
  base.pickle = _PICKLE_FOR_TRAX


def guard_training_readers(trax):
  """Makes Trax's training loop read checkpoints with this module (once).

  ``Loop.load_checkpoint`` (a resumed run, the course's ``training_loop``)
  reads ``model.pkl.gz`` with ``training.unpickle_from_file``, and a ``Loop``
  reads ``data_counters0.pkl`` from its output directory with
  ``trax.data.inputs``' ``pickle``: both then admit only a checkpoint's types.

  Args:
    trax: The ``trax`` package; its training loop (and TensorFlow) is
      imported here.
  """
  training = trax.supervised.training
  if getattr(training.unpickle_from_file, 'guarded', False):
    return

  def unpickle_from_file(file_path, gzip=False):  # pylint: disable=redefined-outer-name
    saved = load(file_path, compressed=gzip)
    if isinstance(saved, dict) and 'input_signature' in saved:
      saved['input_signature'] = _trax_signature(trax, saved['input_signature'])
    return saved

  unpickle_from_file.guarded = True
  training.unpickle_from_file = unpickle_from_file
  importlib.import_module('trax.data.inputs').pickle = _PICKLE_FOR_TRAX
