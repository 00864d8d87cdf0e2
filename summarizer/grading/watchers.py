"""Inside the sandbox: what a learner's code runs besides its cells, told to the grader.

Used by ``worker.py`` (bound beside it in the sandbox), in each child before
any learner code runs.

Before the first learner cell runs, each child adds an audit hook (PEP 578;
``watch_what_runs``, which no Python code can remove) that tells the grader
what runs besides the learner's cells: code compiled or run from a string or
a code object (``exec``, ``eval``, ``compile``, ``timeit``'s setup,
``cProfile.runctx``, a string annotation ``typing.get_type_hints`` reads, a
``.pth`` line ``site.addsitedir`` runs), code objects made or swapped
(``code.__new__``, a function's ``__code__`` set), a module imported from a
file outside the installed libraries (one the submission wrote), ``ctypes``,
``marshal`` and unpickling, and a program started (``subprocess``, ``os.system``,
``os.exec*``): each is code no reading of the cells sees.

Whose event it is, decided by the stack when it fires, innermost frame first:

* a frame is the learner's when its file is not the installed libraries'
  (the standard library, site-packages, the package, this folder, the stubs:
  ``TRUSTED``) nor the grader's own code run from a string (the setup, the
  package's solutions: ``GRADER_FILES``): a cell (``<cell NAME>``), or code
  that came from elsewhere (``<string>``, a file under /tmp);
* an event raised by the import machinery (the innermost frames are
  ``<frozen importlib...>``) belongs to the module being loaded: the
  learner's when that module's file is outside ``TRUSTED``, whoever imports
  it (a library's import of a planted module included), else nobody's;
* any other event is the learner's when a learner's frame comes before any
  library module's body (``<module>`` of a ``TRUSTED`` file): a library's code
  generation as it is imported (dataclasses, namedtuple, typing, jax, Trax),
  even from a cell's ``import``, trips nothing, while a library the learner
  calls with a string (``timeit``, ``cProfile``, ``typing``) does;
  ``namedtuple`` and ``dataclass`` called by the learner build code from
  identifiers only and trip nothing either (``GENERATORS``);
* the cells' own compile is the worker's (no learner frame on the stack).

A learner's event is written at once, one JSON line, to a pipe the worker
opened before any learner code ran (``fork_item`` reads it beside the
results and puts the events in the item's header). Learner code can close or
replace that descriptor, but the hook checks it is still the same pipe before
every write and, when it is not or the write fails, raises instead: the
operation does not happen. A line the worker cannot read is itself an event.
The grader sends a function whose run had any event to a teacher, named.
"""

import ast
import builtins
import functools
import importlib.machinery
import os
import sys
import threading
import types
from typing import NamedTuple


# The audit events the hook reads (``ctypes.*`` too); see the module's docstring.
WATCHED = frozenset({'exec', 'compile', 'code.__new__', 'object.__setattr__', 'marshal.load',
                     'marshal.loads', 'pickle.find_class', 'open', 'subprocess.Popen',
                     'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn',
                     'gc.get_objects', 'gc.get_referrers', 'gc.get_referents',
                     'sys.setprofile', 'sys.settrace'})
# The grader's own code run from a string in the learner's namespace: trusted.
GRADER_FILES = ('<grader setup>', '<package solution>')
# Library functions a learner may call that build code from identifiers alone.
GENERATORS = ('collections/__init__.py', 'dataclasses.py')
# Locals of the import machinery's frames that name the file being loaded.
IMPORT_PATHS = ('path', 'bytecode_path', 'source_path', 'filename', 'fullpath')


# The worker's files, bound into the sandbox's /grader/ (``sandbox.py``): the worker, these
# watchers, and the clocks of a run, which the watch outside reads too.
WORKER_FILES = ('worker.py', 'watchers.py', 'cpu_clock.py')


def added_libraries():
  """Libraries' folders on the path that a .pth file added (a virtual environment reading another's)."""
  return [entry for entry in sys.path
          if os.path.basename(entry) in ('site-packages', 'dist-packages') and os.path.isdir(entry)]


def trusted_roots(job_dir):
  """The libraries' folders and the grader's own files, (folders, files): none the learner's to write."""
  import sysconfig  # pylint: disable=g-import-not-at-top
  folders = set(sysconfig.get_paths().values()) | {sys.prefix, sys.base_prefix, sys.exec_prefix}
  folders |= set(added_libraries())  # Bound read-only in the sandbox (sandbox.py).
  folders |= {os.path.join(job_dir, 'hidden'),
              os.path.join(sys.argv[2], 'summarizer') if len(sys.argv) > 2 else sys.prefix}
  folders = {folder for folder in folders if folder and folder != os.sep}
  folders |= {os.path.realpath(folder) for folder in folders}
  # The worker's files alone of their folder: with --sandbox process it is the
  # job's folder, which the learner's code can write to. (The probes are the package's.)
  here = os.path.dirname(os.path.abspath(__file__))
  files = {os.path.join(here, name) for name in WORKER_FILES}
  return (tuple(folder.rstrip(os.sep) + os.sep for folder in folders),
          frozenset(files | {os.path.realpath(path) for path in files}))


def watch_what_runs(fd, roots):
  """Adds the audit hook that writes the learner's events to ``fd`` (see the docstring).

  Everything the hook uses is bound here, before learner code runs: its
  functions read a copy of this module's names and of the builtins
  (``sealed``), so a cell that rebinds ``__main__.whose``, ``os.write`` or a
  builtin changes nothing it does.
  """
  (folders, files), ident = roots, os.fstat(fd)
  ident, busy = (ident.st_dev, ident.st_ino), set()  # The threads in the hook: one at a time each.
  fstat, write, getframe, text = os.fstat, os.write, sys._getframe, repr  # pylint: disable=protected-access
  thread = threading.get_ident
  trusted_cache = {}

  def trusted(filename):
    known = trusted_cache.get(filename)
    if known is None:
      known = (filename in GRADER_FILES or filename.startswith('<frozen ') or filename in files
               or not filename.startswith('<') and filename.startswith(folders))
      trusted_cache[filename] = known
    return known
  trusted = sealed(trusted)  # The hook's cell: it calls this copy.

  def hook(event, args):
    me = thread()
    if me in busy or event not in WATCHED and not event.startswith('ctypes.'):
      return  # The hook's own events (sys._getframe), and those it does not read.
    if event == 'object.__setattr__' and not (len(args) > 1 and type(args[1]) is str
                                              and args[1] == '__code__'):
      return
    busy.add(me)
    try:
      frame = getframe(1)
      what = whose(event, args, frame, trusted)
      if what:
        stat = fstat(fd)
        if (stat.st_dev, stat.st_ino) != ident:
          raise OSError('closed or replaced')
        write(fd, (text({'event': event, 'what': what[:300], 'where': where(frame)})
                   + '\n').encode('utf-8', 'replace'))
    except OSError as error:
      raise RuntimeError(f'{event} refused: the grader cannot be told of it ({error})') from None
    finally:
      busy.discard(me)
  sys.addaudithook(sealed(hook))


def sealed(*functions):
  """The functions, the first returned, reading copies of this module's names and the builtins."""
  names = dict(globals(), __builtins__=dict(vars(builtins)))
  copies = [types.FunctionType(f.__code__, names, f.__name__, f.__defaults__, f.__closure__)
            for f in (*functions, whose, imported, described, where)]
  names.update((f.__name__, f) for f in copies)
  return copies[0]


def whose(event, args, frame, trusted):
  """What the event did, in a few words, when it is the learner's; None when not."""
  if frame.f_code.co_filename.startswith('<frozen importlib'):
    return imported(event, args, frame, trusted)
  if event == 'open':
    return None  # Opening a file runs nothing; only the import machinery's counts.
  if event in ('exec', 'compile') and frame.f_code.co_filename.endswith(GENERATORS):
    return None
  while frame is not None:
    filename = frame.f_code.co_filename
    if not trusted(filename):
      return described(event, args)
    if frame.f_code.co_name == '<module>':
      return None  # A library's module body, as it is imported: its code generation.
    frame = frame.f_back
  return None


def imported(event, args, frame, trusted):
  """An import machinery's event: the learner's when the file it loads is outside the libraries."""
  paths = []
  # Only values of exact types are read: a learner's object could run code here.
  if event == 'open' and args and type(args[0]) is str:
    paths.append(args[0])
  if event == 'exec' and args and type(args[0]) is types.CodeType:
    paths.append(args[0].co_filename)
  if event == 'compile' and len(args) > 1 and type(args[1]) is str:
    paths.append(args[1])
  while frame is not None and frame.f_code.co_filename.startswith('<frozen '):
    local = frame.f_locals
    paths += [local[name] for name in IMPORT_PATHS if type(local.get(name)) is str]
    spec = local.get('spec')
    if type(spec) is importlib.machinery.ModuleSpec and type(spec.origin) is str:
      paths.append(spec.origin)
    frame = frame.f_back
  outside = [path for path in paths if path[:1] in '/<' and not trusted(path)]
  return outside and (f'an import of a module from a file outside the installed libraries '
                      f'({outside[0]})')


def described(event, args):
  """An event in a few words for the teacher."""
  if event in ('exec', 'compile'):
    source = args[0] if args else None
    if type(source) is types.CodeType:
      return f'{event} of code from {source.co_filename}'
    if type(source) not in (str, bytes):  # An AST (the learner's object: not read).
      return f'{event} of a syntax tree built at run time'
    shown = source.decode('utf-8', 'replace') if type(source) is bytes else source
    return f'{event} of source not in a cell: {" ".join(shown.split())[:120]!r}'
  if event == 'object.__setattr__':
    return "a function's __code__ replaced"
  if event == 'code.__new__':
    return 'a code object built'
  return f'{event} called'


def where(frame):
  """The innermost learner cell on the stack, and its line: '<cell NAME> line N'."""
  while frame is not None:
    if frame.f_code.co_filename.startswith('<cell '):
      return f'{frame.f_code.co_filename} line {frame.f_lineno}'
    frame = frame.f_back
  return 'no cell on the stack'


# The event a learner's call into a library beyond the handout's imports writes
# (``call_check``): named on the teacher's page, and Exercises 1 and 3 by hand.
BEYOND = 'beyond'
BEYOND_KEPT = 4  # Of those, the first few an item (the audit channel keeps 8 events).


class Surface(NamedTuple):
  """What the handout's own imports reach (``handout_surface``)."""
  modules: frozenset  # Module names.
  codes: frozenset    # Code objects of the functions reached, wrappers' included.
  loaded: frozenset   # The modules the setup's imports loaded, reached or not.
  libraries: frozenset  # The handout's libraries: its imports' packages, and those whose
                        # private modules its functions are made of (jaxlib's).


def handout_surface(names):
  """What the handout's own imports reach: the modules and code of every name its setup binds.

  For each module the setup binds (``np``, ``jnp``, ``tl``, ``fastmath``,
  ``trax``, ``training``, ``os``...), each public attribute's defining modules
  (its ``__module__`` and its code's) and its code object, and for a class
  every method's along its MRO; the types of the arrays those return
  (NumPy's, jax's and its tracers') likewise. A public module of those
  libraries that the setup's imports did not even load (Pallas's kernels,
  ``jax.experimental``'s) is beyond the handout, as is any other library
  (Keras, flax, TensorFlow); the libraries' private machinery (``jax._src``'s
  API boundary, which jax's compiled functions call back) is within.
  """
  found, values, bound = set(), [], set()
  for value in list(names.values()):
    stands_for = sys.modules.get(getattr(value, '__name__', None))
    if isinstance(stands_for, types.ModuleType):  # Trax's ``jnp`` is an object standing for jax.numpy.
      value = stands_for
    if isinstance(value, types.ModuleType):
      found.add(value.__name__)
      bound.add(value.__name__)
      values += [_attribute(value, attr) for attr in dir(value) if not attr.startswith('__')]
    else:
      values.append(value)
  for module_name, type_name in (('numpy', 'ndarray'), ('jax', 'Array'),
                                 ('jax._src.array', 'ArrayImpl'), ('jax._src.core', 'Tracer')):
    values.append(getattr(sys.modules.get(module_name), type_name, None))
  for value in values:
    if isinstance(value, types.ModuleType):
      found.add(value.__name__)
    for each in (type.mro(value) if isinstance(value, type) else (value,)):
      found.update(_defining_modules(each))
      if isinstance(each, type):
        for member in vars(each).values():
          found.update(_defining_modules(getattr(member, '__func__', member)))
  modules = frozenset(each for each in found if type(each) is str)
  codes = frozenset(each for each in found if type(each) is types.CodeType)
  stdlib = set(sys.stdlib_module_names)
  libraries = {module.partition('.')[0] for module in bound}
  libraries |= {module.partition('.')[0] for module in modules
                if any(part.startswith('_') for part in module.split('.')[1:])}
  return Surface(modules, codes, frozenset(sys.modules), frozenset(libraries - stdlib))


def _attribute(module, name):
  """A module's attribute, or None where reading it fails (a deprecated name that raises)."""
  try:
    return getattr(module, name, None)
  except Exception:  # pylint: disable=broad-except
    return None


def _defining_modules(value):
  """Where a function or class is defined: its ``__module__``, its code and its code's module, unwrapped."""
  found = []
  for _ in range(4):  # functools.wraps chains, a few deep.
    found += [getattr(value, '__module__', None), getattr(value, '__code__', None)]
    code_globals = getattr(value, '__globals__', None)
    if isinstance(code_globals, dict):
      found.append(code_globals.get('__name__'))
    value = getattr(value, '__wrapped__', None)
    if value is None:
      break
  return found


def call_rules(surface):
  """``call_check``'s rule over ``surface``: ``beyond(module, code)``, a call outside the handout.

  Outside: another library than the handout's, or a public module of one of
  its libraries that its setup never loaded (Pallas's kernels); within: the
  standard library, the package, the learner's own code, what the handout's
  names reach, and its libraries' private machinery.
  """
  stdlib, libraries = frozenset(sys.stdlib_module_names), surface.libraries

  def private(module):
    return any(part.startswith('_') for part in module.split('.'))

  def beyond(module, code):
    top = module.partition('.')[0]
    if top in stdlib or top in ('__main__', 'summarizer') or code in surface.codes:
      return False
    if top in libraries:  # A handout library's public module its setup never loaded.
      return module not in surface.loaded and not private(module)
    return module not in surface.modules  # Another library.

  return beyond


# Each call a cell's code makes goes through the grader's check first: ``f(x)``
# runs as ``check(f)(x)``, the check a constant of the cell's compiled code
# (``checked_code``), not a name a cell could rebind. The compiler sees this
# string in its place; it is drawn afresh each sandbox.
CALL_MARK = f'\x00graded call {os.urandom(8).hex()}'
_TYPE_MODULE = type.__dict__['__module__'].__get__  # A class's own, whatever its metaclass says.
_TYPE_NAME = type.__dict__['__qualname__'].__get__


class ThroughCheck(ast.NodeTransformer):
  """Routes every call of a cell's code, decorators' included, through ``CALL_MARK``."""

  @staticmethod
  def checked(node):
    mark = ast.copy_location(ast.Constant(CALL_MARK), node)
    return ast.copy_location(ast.Call(mark, [node], []), node)

  def visit_Call(self, node):  # pylint: disable=invalid-name
    self.generic_visit(node)
    node.func = self.checked(node.func)
    return node

  def _decorated(self, node):
    self.generic_visit(node)
    node.decorator_list = [self.checked(each) for each in node.decorator_list]
    return node

  visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _decorated


def checked_code(code, check):
  """``code`` and the code objects it holds, ``check`` in the place of ``CALL_MARK``."""
  return code.replace(co_consts=tuple(
      check if type(value) is str and value == CALL_MARK
      else checked_code(value, check) if type(value) is types.CodeType else value
      for value in code.co_consts))


def called(callee, libraries):
  """What calling ``callee`` runs, read without running any of the learner's code.

  Returns (module, code or None, name): a function's own module and code, a C
  function's module (its object's type's for a method), a class's module (its
  ``__init__`` runs), an object's type's (its ``__call__``); through bound
  methods, ``functools.partial`` and a library's wrappers (jax's ``jit``).
  """
  for _ in range(6):
    kind = type(callee)
    if kind is types.FunctionType:
      return callee.__globals__.get('__name__'), callee.__code__, callee.__qualname__
    if kind is types.MethodType:
      callee = callee.__func__
    elif kind is types.BuiltinFunctionType:
      owner = callee.__self__
      module = callee.__module__
      if module is None and type(owner) is types.ModuleType:
        module = owner.__name__
      elif module is None:
        module = _TYPE_MODULE(type(owner))
      return module, None, callee.__qualname__
    elif issubclass(kind, type):
      return _TYPE_MODULE(callee), None, _TYPE_NAME(callee) + '.__init__'
    elif kind is functools.partial:
      callee = callee.func
    else:
      module, inner = _TYPE_MODULE(kind), None
      if type(module) is str and module.partition('.')[0] in libraries:
        inner = getattr(callee, '__wrapped__', None)  # A library's own type: no learner code.
      if inner is None:
        return module, None, _TYPE_NAME(kind) + '.__call__'
      callee = inner
  return None, None, '?'


def beyond_event(what, place):
  """The audit channel's line for a call beyond the handout."""
  return (repr({'event': BEYOND, 'what': what[:300], 'where': place}) + '\n').encode(
      'utf-8', 'replace')


def call_check(fd, surface, probe_files):
  """The check every call of a cell goes through: returns the callee, and writes the first few beyond the handout to ``fd``.

  A call counts while a probe runs it (a frame of one of ``probe_files`` below the
  cell's): what the cells run as the notebook is rebuilt (a helper cell's
  plot) does not. What is outside is ``call_rules``'s; each (module, name)
  is written once, and ``BEYOND_KEPT`` of them at most.
  """
  seen, write, getframe, libraries = set(), os.write, sys._getframe, surface.libraries  # pylint: disable=protected-access
  beyond = call_rules(surface)

  def check(callee):
    if len(seen) < BEYOND_KEPT:
      caller = getframe(1)
      below = caller.f_back
      while below is not None and below.f_code.co_filename not in probe_files:
        below = below.f_back
      if below is not None:
        module, code, name = called(callee, libraries)
        if type(module) is str and (module, name) not in seen and beyond(module, code):
          seen.add((module, name))
          write(fd, beyond_event(f'{module}.{name}', where(caller)))
    return callee
  return sealed(check, called, beyond_event)


def origin_event(function, fd):
  """Writes an event when the graded name holds no function of a cell (a library's, bound to it)."""
  for _ in range(4):  # Through functools.wraps and partial.
    inner = getattr(function, '__wrapped__', None) or getattr(function, 'func', None)
    if inner is None or not callable(inner):
      break
    function = inner
  code = getattr(function, '__code__', None)
  if isinstance(code, types.CodeType) and code.co_filename.startswith('<cell '):
    return
  module = getattr(function, '__module__', None) or type(function).__module__
  if isinstance(module, str) and (module == '__main__' or module.startswith('summarizer')):
    return
  name = getattr(function, '__qualname__', type(function).__qualname__)
  os.write(fd, beyond_event(f'{module}.{name}', 'the graded name, bound to it'))
