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

import builtins
import importlib.machinery
import os
import sys
import threading
import types


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


def library_folders():
  """The library folders on the path (site-packages), a .pth file's too (a venv reading another's)."""
  return [entry for entry in sys.path
          if os.path.basename(entry).endswith('-packages') and os.path.isdir(entry)]  # site-, dist-


def trusted_roots(job_dir):
  """The libraries' folders and the grader's own files, (folders, files): none the learner's to write."""
  import sysconfig  # pylint: disable=g-import-not-at-top
  folders = set(sysconfig.get_paths().values()) | {sys.prefix, sys.base_prefix, sys.exec_prefix}
  folders |= set(library_folders())  # Bound read-only in the sandbox (sandbox.py).
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
