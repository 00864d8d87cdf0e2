"""Runs a learner's cells inside the sandbox and writes what they output; judges nothing.

Started by ``sandbox.py`` as ``python -I worker.py JOB_DIR PACKAGE_PARENT`` inside
bubblewrap, next to ``probes.py`` (the only other file it loads of the
assignment room). ``JOB_DIR/job.json`` names the items to run, in the course's order,
and holds the notebook's setup (trusted) and the learner's cells;
``JOB_DIR/given.npz`` holds the arrays the grader hands in (weights, ids),
read without pickle. The package's solutions of an item's earlier exercises
come on stdin, one frame an item, read just before the item runs.

Each item runs in a child process of its own (forked after the imports, the
setup's included, so Trax and TensorFlow load once: see ``preload``) with its
own memory and time limits: a crash, a hang or an out-of-memory costs that
item only. A child sends its results (a JSON
document and an .npz of arrays) through a pipe of its own; this process
writes, on its standard output (the grader's only channel, which no child
holds), one frame an item: a header (the item, its exit status, whether it
ran out of time, seconds) and the bytes the child sent. After each item every
other process of the sandbox is killed, so nothing an item leaves behind can
reach a later one. This process is not dumpable: no child opens its stdout
through /proc.

Before anything imports Trax, ``hide_answers`` puts the stubs of Trax's own
answers (``hidden_answers.py``, written by the grader into ``JOB_DIR/hidden``, named
in the job's ``'hidden'``) in the place of their modules: every object that
holds one (``tl.CausalAttention``, gin's wrappers and registry, a module
imported later such as ``trax.models``) holds the stub, which raises.

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
import ctypes
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import linecache
import os
import resource
import select
import signal
import sys
import threading
import time
import types
import warnings
from typing import NamedTuple

import numpy as np

# python -I leaves this file's folder off the path: probes.py is beside it. The
# package is imported from the folder the grader found it in (argv[2]: a
# checkout on PYTHONPATH, which -I and the empty environment would lose).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path[1:1] = sys.argv[2:3]


class Stubs(importlib.abc.MetaPathFinder):
  """Imports each module named in ``stubs`` (name -> file) from its stub file."""

  def __init__(self, stubs):
    self.stubs = stubs

  def find_spec(self, fullname, path=None, target=None):
    del path, target
    stub = self.stubs.get(fullname)
    return stub and importlib.util.spec_from_file_location(fullname, stub)


def hide_answers(job_dir):
  """Makes the job's stubs of Trax's answers the modules any later import finds."""
  with open(os.path.join(job_dir, 'job.json'), encoding='utf-8') as f:
    stubs = json.load(f).get('hidden', {})
  early = sorted(set(stubs) & set(sys.modules))
  if early:  # Never: nothing before this imports them. Grade nothing rather than expose them.
    sys.exit(f'imported before they could be hidden: {", ".join(early)}')
  sys.meta_path.insert(0, Stubs({name: os.path.join(job_dir, path)
                                 for name, path in stubs.items()}))


if __name__ == '__main__':
  hide_answers(sys.argv[1])
import probes  # pylint: disable=import-error,wrong-import-position


# The audit events the hook reads (``ctypes.*`` too); see the module's docstring.
WATCHED = frozenset({'exec', 'compile', 'code.__new__', 'object.__setattr__', 'marshal.load',
                     'marshal.loads', 'pickle.find_class', 'open', 'subprocess.Popen',
                     'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn',
                     'gc.get_objects', 'gc.get_referrers', 'gc.get_referents',
                     'sys.setprofile', 'sys.settrace'})
# The grader's own code run from a string in the learner's namespace: trusted.
GRADER_FILES = ('<grader setup>', '<package solution>')
# Library functions a learner may call that build code from identifiers alone.
GENERATORS = ('collections/__init__.py',)
# Locals of the import machinery's frames that name the file being loaded.
IMPORT_PATHS = ('path', 'bytecode_path', 'source_path', 'filename', 'fullpath')


def trusted_roots(job_dir):
  """The libraries' folders and the grader's own files, (folders, files): none the learner's to write."""
  import sysconfig  # pylint: disable=g-import-not-at-top
  folders = set(sysconfig.get_paths().values()) | {sys.prefix, sys.base_prefix, sys.exec_prefix}
  folders |= {os.path.join(job_dir, 'hidden'),
              os.path.join(sys.argv[2], 'summarizer') if len(sys.argv) > 2 else sys.prefix}
  folders = {folder for folder in folders if folder and folder != os.sep}
  folders |= {os.path.realpath(folder) for folder in folders}
  # This file and probes.py alone of their folder: with --sandbox process it is the
  # job's folder, which the learner's code can write to.
  files = {os.path.abspath(__file__), os.path.abspath(probes.__file__)}
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
SURFACE = None  # ``handout_surface`` of the setup, set by ``preload`` before the forks.


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
    if top in stdlib or top in ('__main__', 'summarizer', 'probes') or code in surface.codes:
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


def call_check(fd, surface, probe_file):
  """The check every call of a cell goes through: returns the callee, and writes the first few beyond the handout to ``fd``.

  A call counts while a probe runs it (a frame of ``probe_file`` below the
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
      while below is not None and below.f_code.co_filename != probe_file:
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


def load_job(job_dir):
  with open(os.path.join(job_dir, 'job.json'), encoding='utf-8') as f:
    job = json.load(f)
  with np.load(os.path.join(job_dir, 'given.npz'), allow_pickle=False) as arrays:
    given = {key: arrays[key] for key in arrays.files}
  given.update(job.get('given', {}))
  return job, given


class TookTooLong(BaseException):
  """A statement of another cell than the graded one ran past its seconds (see run_cell)."""


def _too_long(signum, frame):
  del signum, frame
  raise TookTooLong()


def run_cell(source, label, names, errors, seconds=None, check=None):
  """Runs a cell statement by statement, as far as each goes; errors are recorded.

  With ``seconds``, each statement is stopped after that many seconds of
  wall-clock time (a scratch cell's loop costs the other functions a few
  seconds, not their whole limit). With ``check`` (``call_check``), every
  call of the cell's code goes through it.
  """
  filename = f'<cell {label}>'
  linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
  try:
    tree = ast.parse(source, filename)
  except SyntaxError as error:
    errors.append(f'{label}: SyntaxError: {error.msg} (line {error.lineno})')
    return
  for statement in tree.body:
    if seconds:
      signal.signal(signal.SIGALRM, _too_long)
      signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
      exec(compiled(statement, filename, check), names)  # pylint: disable=exec-used
    except TookTooLong:
      errors.append(f'{label}: line {statement.lineno} ran past {seconds} s and was stopped '
                    '(while grading another function)')
    except (Exception, SystemExit) as error:  # pylint: disable=broad-except
      errors.append(f'{label}: {probes.describe(error)}')
    finally:
      if seconds:
        signal.setitimer(signal.ITIMER_REAL, 0)


def compiled(statement, filename, check=None):
  """A cell's statement compiled; with ``check``, each of its calls made through it."""
  if check is None:
    return compile(ast.Module([statement], []), filename, 'exec')
  module = ast.Module([ThroughCheck().visit(statement)], [])
  with warnings.catch_warnings():
    warnings.simplefilter('ignore', SyntaxWarning)  # "'str' object is not callable": the mark.
    return checked_code(compile(module, filename, 'exec'), check)


def namespace(job, item, solutions, errors, check=None):
  """The names an item's function sees, as a kernel running the notebook would have them.

  The trusted setup, the stand-ins of Part 1's helpers, then the learner's
  code cells in the notebook's order (solution cells, scratch cells, imports,
  helpers), up to the last cell of the item's function (all of them for the
  whole model); then the package's answers to the earlier exercises take the
  place of the learner's, so one mistake costs its own function only.
  """
  names = {'__name__': '__main__'}
  exec(compile(job['setup'], GRADER_FILES[0], 'exec'), names)  # pylint: disable=exec-used
  names.update(tokenize=probes.stand_in_tokenize, detokenize=probes.stand_in_detokenize)
  # The package's earlier answers first too: a cell whose default argument names an
  # earlier exercise the learner's cells fail to define still defines its function.
  _run_package(item['package'], solutions, names)
  cells = job['submissions'][item['submission']]
  own = item.get('upto')
  ids = [cell['grade_id'] for cell in cells]
  last = len(cells) - 1 - ids[::-1].index(own) if own and own in ids else len(cells) - 1
  for cell in cells[:last + 1]:
    run_cell(cell['source'], cell['label'], names, errors,
             None if own and cell['grade_id'] == own else job['other cells seconds'], check)
  learners = {name: names.get(name) for name in item['package']}
  _run_package(item['package'], solutions, names)
  rebind_defaults(names.get(item.get('function')), learners, names)
  return names


def _run_package(package, solutions, names):
  for name in package:
    exec(compile(solutions[name], GRADER_FILES[1], 'exec'), names)  # pylint: disable=exec-used


def rebind_defaults(function, learners, names):
  """Points a function's default arguments that hold the learner's earlier answers at the package's.

  The course's ``CausalAttention(..., compute_attention_heads_closure=
  compute_attention_heads_closure, ...)`` and ``greedy_decode(...,
  next_symbol=next_symbol)`` bind the earlier functions when their cell runs:
  without this, a mistake in an earlier exercise would cost this one too.
  """
  swap = {id(own): names[name] for name, own in learners.items()
          if own is not None and own is not names.get(name)}
  if not swap or not isinstance(function, types.FunctionType):
    return
  if function.__defaults__:
    function.__defaults__ = tuple(swap.get(id(value), value) for value in function.__defaults__)
  if function.__kwdefaults__:
    function.__kwdefaults__ = {key: swap.get(id(value), value)
                               for key, value in function.__kwdefaults__.items()}


# The whole-model items: Part 4 and Part 5 apart, so that a crash in Part 5
# (next_symbol, greedy_decode) leaves Part 4's result.
WHOLE = {'whole': (4, 5), 'part 4': (4,), 'part 5': (5,)}


def run_item(job, item, solutions, given, events=None, surface=None):
  """In the child: builds the namespace, probes; returns the results.

  With ``events`` (the audit channel), a function's probe is watched for
  calls beyond the handout's imports (``call_check``, ``origin_event``).
  """
  errors, check = [], None
  if events is not None and surface is not None and item['probe'] not in WHOLE:
    check = call_check(events, surface, probes.__file__)
  names = namespace(job, item, solutions, errors, check)
  if item['probe'] in WHOLE:
    cases = probes.probe_whole(names, given, job['model_size'], job['model_file'],
                               WHOLE[item['probe']])
  elif item['function'] not in names or not callable(names[item['function']]):
    cases = []
    errors.append(f"{item['function']} is not defined by its cell")
  else:
    if check is not None:
      origin_event(names[item['function']], events)
    cases = probes.graded_cases(item['probe'], names[item['function']], job['seed'], given,
                                names)
  return {'cases': cases, 'cell errors': errors}


def encode_results(results):
  """The results as bytes: a JSON document, then an .npz of the arrays it names."""
  arrays = {}

  def encode(value):
    if isinstance(value, np.ndarray):
      key = f'a{len(arrays)}'
      arrays[key] = value
      return {'__array__': key}
    if isinstance(value, dict):
      return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
      return [encode(v) for v in value]
    return value
  document = json.dumps(encode(results), default=repr).encode('utf-8')
  packed = io.BytesIO()
  np.savez(packed, **arrays)
  return frame(document) + frame(packed.getvalue())


def read_exactly(fd, size):
  """Exactly ``size`` bytes of a file descriptor, unbuffered: nothing read ahead."""
  chunks = []
  while size:
    chunk = os.read(fd, size)
    if not chunk:
      raise EOFError('the grader closed the job early')
    chunks.append(chunk)
    size -= len(chunk)
  return b''.join(chunks)


def read_frame(fd):
  """One frame from the grader (unbuffered, so later frames stay in the pipe)."""
  return read_exactly(fd, int.from_bytes(read_exactly(fd, 8), 'big'))


def frame(data):
  return len(data).to_bytes(8, 'big') + data


def limit(memory_mb, seconds, file_mb):
  """The child's own limits: its address space, its CPU time, the size of a file it writes.

  Its wall-clock seconds are this process's to count (``fork_item``); the
  sandbox's memory and processes together are watched from outside it.
  """
  memory = memory_mb << 20
  resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
  resource.setrlimit(resource.RLIMIT_CPU, (seconds * 4, seconds * 4))  # 2 cores, threads.
  resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
  resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def child(job, item, solutions, given, write_end, events):
  """The child: no way back to the grader but its pipes; limits; the watch; the learner's code."""
  code = 0
  try:
    os.setpgid(0, 0)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)  # Later items' solutions wait on stdin: not the child's.
    os.dup2(quiet, 1)  # The grader's channel is the parent's stdout: not the child's.
    limit(item['memory_mb'], item['seconds'], job['file mb'])
    read_compiled(job.get('jax cache'))
    os.set_blocking(events, False)  # A full pipe refuses the event (the hook raises), never hangs.
    watch_what_runs(events, trusted_roots(sys.argv[1]))
    data = encode_results(run_item(job, item, solutions, given, events, SURFACE))
    with os.fdopen(write_end, 'wb') as pipe:
      pipe.write(data)
  except BaseException:  # pylint: disable=broad-except
    code = 3
  finally:
    os._exit(code)  # pylint: disable=protected-access


def read_compiled(folder):
  """jax reads the programs the grader compiled for the package's results (never writes)."""
  if folder:
    import jax  # pylint: disable=g-import-not-at-top
    jax.config.update('jax_compilation_cache_dir', folder)
    jax.config.update('jax_persistent_cache_min_compile_time_secs', 1e9)


def fork_item(job, item, solutions, given):
  """Runs one item in a child; returns (status, the bytes it sent)."""
  sys.stdout.flush()
  sys.stderr.flush()
  read_end, write_end = os.pipe()
  events_read, events_write = os.pipe()
  started = time.monotonic()
  pid = os.fork()
  if pid == 0:
    os.close(read_end)
    os.close(events_read)
    child(job, item, solutions, given, write_end, events_write)
  os.close(write_end)
  os.close(events_write)
  data, timed_out = read_until(read_end, started + item['seconds'], job['item bytes'])
  os.close(read_end)
  status = reap(pid, time.monotonic() + (0 if timed_out else 5))
  sweep()
  return {'exit': os.waitstatus_to_exitcode(status), 'timed out': timed_out,
          'seconds': round(time.monotonic() - started, 2),
          'events': read_events(events_read)}, data


def read_events(fd, cap=1 << 20, keep=8):
  """The audit events a child wrote (its processes all gone): the first ``keep``, then a count.

  A line that is not the hook's (a learner's code may write to the pipe) is
  an event too: nothing the learner writes there can make an event vanish.
  """
  os.set_blocking(fd, False)
  chunks, size = [], 0
  while size < cap:
    try:
      chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
      break
    if not chunk:
      break
    chunks.append(chunk)
    size += len(chunk)
  os.close(fd)
  events = []
  for line in b''.join(chunks).decode('utf-8', 'replace').splitlines():
    try:
      event = ast.literal_eval(line)
      event = {key: str(event[key])[:400] for key in ('event', 'what', 'where')}
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
      event = {'event': 'unreadable', 'what': 'a line on the audit channel that is not the '
               'hook\'s: ' + line[:100], 'where': 'unknown'}
    events.append(event)
  return events[:keep] + ([{'event': 'more', 'what': f'{len(events) - keep} more events',
                            'where': ''}] if len(events) > keep else [])


def reap(pid, deadline):
  """The child's wait status: it may exit until the deadline, then it is killed."""
  while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
      with_group(pid, signal.SIGKILL)  # What it started in its group.
      return status
    time.sleep(0.02)
  with_group(pid, signal.SIGKILL)
  return os.waitpid(pid, 0)[1]


def read_until(fd, deadline, cap):
  """Reads a pipe to its end, or until the deadline or the cap."""
  chunks, size = [], 0
  while True:
    left = deadline - time.monotonic()
    if left <= 0:
      return b''.join(chunks), True
    ready, _, _ = select.select([fd], [], [], min(left, 1.0))
    if not ready:
      continue
    chunk = os.read(fd, 1 << 20)
    if not chunk:
      return b''.join(chunks), False
    size += len(chunk)
    if size > cap:
      return b'', False
    chunks.append(chunk)


def with_group(pid, sig):
  for target in (lambda: os.killpg(pid, sig), lambda: os.kill(pid, sig)):
    try:
      target()
    except (ProcessLookupError, PermissionError):
      pass


def sweep():
  """Kills every other process of the sandbox (what an item left behind).

  Only as the sandbox's first process: with ``--sandbox process`` /proc shows
  the machine's processes, and the child's group is all ``reap`` kills.
  """
  if os.getpid() != 1:
    return
  keep = {os.getpid(), os.getppid(), 1}
  for entry in os.listdir('/proc'):
    if entry.isdigit() and int(entry) not in keep:
      try:
        os.kill(int(entry), signal.SIGKILL)
      except (ProcessLookupError, PermissionError):
        pass
  while True:  # This process is the sandbox's init: it reaps what was left.
    try:
      if os.waitpid(-1, os.WNOHANG)[0] == 0:
        break
    except ChildProcessError:
      break


def preload(setup):
  """Runs the notebook's setup (trusted) once here, before the forks, for its imports.

  Every child runs the setup again, in a namespace of its own, and finds its
  modules imported: TensorFlow, which Trax's training loop imports, took each
  item seconds. The imports start no thread and no jax backend (a test checks):
  each child starts its own backend, as before, since a process forked from
  one with threads could deadlock. What the setup prints goes nowhere (this
  process's stdout is the grader's channel); an error is left to the
  children, which meet it as before.
  """
  sys.stdout.flush()
  channel, quiet = os.dup(1), os.open(os.devnull, os.O_WRONLY)
  os.dup2(quiet, 1)
  global SURFACE  # pylint: disable=global-statement
  names = {'__name__': '__main__'}
  try:
    exec(setup, names)  # pylint: disable=exec-used
    SURFACE = handout_surface(names)
  except (Exception, SystemExit):  # pylint: disable=broad-except
    pass
  finally:
    sys.stdout.flush()
    os.dup2(channel, 1)
    os.close(channel)
    os.close(quiet)


def not_dumpable():
  """No other process of the sandbox may open this one's files (its stdout) through /proc."""
  ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


def main(job_dir):
  not_dumpable()
  job, given = load_job(job_dir)
  preload(job['setup'])
  channel, solutions = sys.stdout.buffer, {}
  for item in job['items']:
    # Each item's solutions come on stdin just before it runs (items are in the
    # course's order): no process here ever holds the package's answer to an
    # item's own function, or to a later one.
    solutions.update(json.loads(read_frame(0)))
    status, data = fork_item(job, item, {n: solutions[n] for n in item['package']}, given)
    header = json.dumps({'id': item['id'], 'status': status, 'size': len(data)}).encode()
    channel.write(frame(header) + data)
    channel.flush()
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv[1]))
