"""The sandbox a submission's code runs in: bubblewrap, read-only, hidden package, no network.

``run(job, given)`` writes the job into a temporary folder and starts
``worker.py`` in it under bubblewrap (``bwrap``, Debian's ``bubblewrap``):

- the filesystem is empty but for what is bound read-only: ``/usr``, the
  Python installation and its virtual environment, the shipped model's
  folder, the job and the worker's files (``worker.py``, ``watchers.py``, ``cpu_clock.py``);
- the package's folder is a fresh tmpfs holding only ``VISIBLE_MODULES``:
  no graded function (``graded_modules()``), no assignment room, of the
  contract only the probes and what follows the learner's function for the
  ``where:`` line (``following``, ``check_inputs``), no notebook, no ``.git``:
  ``from summarizer import CausalAttention`` fails;
- Trax's own answers to the exercises (``HIDDEN``, below) are stubs that raise:
  each file that defines one is a copy with those definitions' bodies
  replaced, bound over the original, and its bytecode is an empty file;
- the libraries that hold whole answers and that nothing graded needs
  (``HIDDEN_LIBRARIES``: Keras, flax, Pallas's reference kernels, and
  tensorflow_text, whose tokenizers nothing graded uses) are empty folders:
  no module of theirs imports, however a cell spells the import;
- its own ``/tmp`` (empty but for what is bound there: a checkout under
  ``/tmp`` still runs) and ``/dev/shm``, each a tmpfs of ``limits.TMP_MB``,
  ``/proc``, and a read-only ``/dev``; no network (all namespaces
  unshared), an unprivileged user, no capabilities, an empty environment;
- the working directory is the sandbox's ``/tmp``: a submission's own files
  are never there, so nothing shadows the package.

Results come back on the worker's standard output only (see ``worker.py``).
``Watch`` looks at the sandbox from outside while it runs: its processes'
memory together, their number, and the submission's CPU seconds and wall
clock charged to it (the limits are in ``limits.py``).
With ``mode='process'`` (the teacher's explicit choice where bubblewrap is
missing) the worker is a plain separate process: limits and fresh inputs,
but nothing hidden and nothing read-only (the worker still imports Trax's
answers as stubs, which a submission can undo).
"""

import ast
import contextlib
import functools
import glob
import hashlib
import importlib
import importlib.util
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import summarizer
from summarizer.contract import recording
from summarizer.grading import limits, report_schema, watchers
from summarizer.config import PACKAGE_DIR
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER_FILES = watchers.WORKER_FILES  # Bound into the sandbox's /grader/.
# The package's files the sandbox shows: what the notebook's setup imports (Trax through
# the package, its init tracing each layer once, the constants, and the checkpoint reader
# that ``_trax`` puts in place of Trax's pickle), and the contract's probes, which the
# worker imports (the grader and the notebook's checks measure alike). Every
# other file is hidden: the contract's judge and mistakes, the graded functions.
VISIBLE_MODULES = ('__init__.py', '_trax.py', '_trax_init.py', 'config.py', 'errors.py', 'files.py',
                   'safe_pickle.py',
                   'contract/__init__.py', 'contract/recording.py', 'contract/signature.py',
                   'contract/probes_layers.py', 'contract/probes.py', 'contract/following.py',
                   'contract/check_inputs.py')
INSTALL_HINT = ('bubblewrap (bwrap) is not installed: sudo apt-get install bubblewrap '
                '(or pass --sandbox process for a weaker mode: a separate process, '
                'nothing hidden)')
MODES = ('bwrap', 'process')


def require_linux():
  """Refuses, before any work, to grade anywhere but Linux: bubblewrap, the sandbox, is Linux's.

  The weaker ``process`` mode's limits and worker are POSIX's and tested on
  Linux only, so it is refused there too; the learner's path runs anywhere.

  Raises:
    SummarizerError: not Linux; one line naming where grading runs.
  """
  if not sys.platform.startswith('linux'):
    import platform  # pylint: disable=import-outside-toplevel
    raise SummarizerError(f'grading runs on Linux only (its sandbox, bubblewrap, is Linux\'s), '
                          f'not on {platform.system() or sys.platform}: grade on a Linux '
                          'machine, or in WSL2 on Windows')


def graded_modules():
  """Each graded function -> the package's file that defines it (hidden in the sandbox).

  Read from ``summarizer``'s table of public names, so a module that moves
  is followed.
  """
  found = {}
  for name in GRADED:
    module = importlib.import_module(summarizer._LAZY[name])  # pylint: disable=protected-access
    found[name] = os.path.relpath(module.__file__, PACKAGE_DIR)
  return found


def package_digest(directories):
  """A sha256 of every file under the directories (bytecode caches aside)."""
  digest = hashlib.sha256()
  for directory in directories:
    for root, folders, files in os.walk(directory):  # Top-down: the pruning below holds.
      folders[:] = sorted(f for f in folders if f != '__pycache__')
      for name in sorted(files):
        path = os.path.join(root, name)
        digest.update(os.path.relpath(path, directory).encode() + b'\0')
        with open(path, 'rb') as f:
          digest.update(hashlib.sha256(f.read()).digest())
  return digest.hexdigest()


def _ro(path):
  return ['--ro-bind', path, path]


# Folders under each library folder on the path (site-packages) that the sandbox
# shows empty. An empty folder is no module that imports: TensorFlow, which Trax's
# training loop imports, takes Keras as missing then (``tf.keras`` is the one thing
# that fails), and the package stands in for tensorflow_text as on Windows
# (``_trax.py``). Whole attentions live in these: Keras's layers and
# ``keras.ops.dot_product_attention``, flax's, Pallas's reference kernels
# (``mha_reference``); jax's own ``jax.nn.dot_product_attention`` is one of
# ``HIDDEN``'s stubs instead, since jax is the handout's.
HIDDEN_LIBRARIES = ('keras', 'tf_keras', 'flax', 'tensorflow_text',
                    os.path.join('jax', 'experimental', 'pallas', 'ops'))
# What a function that failed to import one of them is told (a note the grader adds).
HIDDEN_LIBRARY_NOTE = ('not in the grading sandbox, which holds only the libraries the '
                       'handout needs (the teachers\' page says which)')


# --------------------------------------------------------------------------
# Trax's own answers to the exercises, hidden while grading as the package's are.
#
# Trax ships its versions of what the graded exercises ask for (``tl.CausalAttention``,
# ``trax.models.TransformerLM``, its per-head attention, its head split and
# merge, its samplers), and jax has ``jax.nn.dot_product_attention``: a cell
# that calls them gets the right outputs without the work. ``HIDDEN`` names
# them in one place, file by file (a path under site-packages); the test
# ``tests/grading/test_hidden_answers.py`` fails when an upgrade moves one.
#
# ``write_stubs`` writes, for a grading, a copy of each file in which every
# named function (and every method of a named class) raises
# ``NotImplementedError`` at once; every other line stays as it was, on the
# same line number. The sandbox binds each copy over its original (and an
# empty file over the original's bytecode), so the hidden code can be neither
# called nor read in the sandbox; ``worker.py`` imports the copies in both
# modes (``--sandbox process`` hides nothing on disk). Only named definitions
# go: ``tl.PositionalEncoding`` and ``tl.ShiftRight``, which a correct answer
# uses, live in ``attention.py`` too. What Trax builds on a hidden definition
# (its other attentions and models) fails with it; nothing a correct answer
# or the probes use does.

# Path under site-packages -> {top-level function or class there: the exercise
# (1-10, the course's UNQ_C numbers) it answers}. Where Trax's name is the exercise's
# (the course named its exercises after Trax's layers), it is the probes' name of it.
HIDDEN = {
    'trax/layers/attention.py': {
        '_per_head_attention': 1,        # softmax(QK^T / sqrt(d) + mask) V
        recording.DOT_PRODUCT_ATTENTION: 1,  # the same, as a layer of (q, k, v, mask)
        'SplitIntoHeads': 2,             # (B, L, H * Dh) -> (B * H, L, Dh)
        '_causal_mask': 3,               # the causal mask
        'DotProductCausalAttention': 3,  # the causal mask, then Exercise 1
        'MergeHeads': 4,                 # (B * H, L, Dh) -> (B, L, H * Dh)
        'PureAttention': 5,              # split, attend, merge
        'AttentionQKV': 5,               # Dense q k v, PureAttention, Dense
        'Attention': 5,                  # the same on one input and a mask
        'ConfigurableAttention': 5,      # Exercise 5 with its layers handed in
        recording.CAUSAL_ATTENTION: 5,      # Exercise 5 itself
    },
    'trax/layers/research/efficient_attention.py': {
        'attend': 1,                     # masked attention (a causal mask_fn: Exercise 3)
    },
    'trax/layers/research/rel_attention.py': {
        recording.DOT_PRODUCT_ATTENTION: 1,  # Exercise 1 with zero position terms (tl's name)
    },
    'trax/models/transformer.py': {
        '_FeedForwardBlock': 6,          # the block's feed-forward layers
        '_DecoderBlock': 6,              # Exercise 6 itself
        'TransformerDecoder': 7,         # the model without ShiftRight and its head
        recording.TRANSFORMER_LM: 7,        # Exercise 7 but the last LogSoftmax
    },
    'trax/models/research/configurable_transformer.py': {
        '_FeedForward': 6,               # the block's feed-forward layers
        'FeedForwardWithOptions': 6,     # the same, with a layer norm
        recording.DECODER_BLOCK: 6,         # Exercise 6 with options
        'ConfigurableTransformerLM': 7,  # Exercise 7 with options
    },
    'trax/supervised/decoding.py': {
        'autoregressive_sample_stream': 10,  # greedy decoding at temperature 0 (eval_mode too)
        'autoregressive_sample': 10,         # the same, collected
        'beam_search': 10,                   # one beam: greedy decoding
    },
    'jax/_src/nn/functions.py': {
        'dot_product_attention': 1,          # jax.nn.dot_product_attention (and is_causal: 3)
        '_dot_product_attention_xla': 1,     # its implementation on CPU
        '_dot_product_attention_core': 1,    # its core, one head group
    },
}
STUBS_DIR = 'hidden'  # The stubs' folder in a grading's job folder.
EMPTY = os.path.join(STUBS_DIR, 'empty')  # An empty file there, bound over bytecode.


def module_name(path):
  """'trax/layers/attention.py' -> 'trax.layers.attention'."""
  return path[:-len('.py')].replace('/', '.')


def installed(path):
  """The installed file of a path under site-packages (found without importing it)."""
  spec = importlib.util.find_spec(path.split('/')[0])
  if spec is None or not spec.submodule_search_locations:
    raise SummarizerError(f'{path}: its library is not installed')
  root = os.path.dirname(list(spec.submodule_search_locations)[0])
  return os.path.realpath(os.path.join(root, *path.split('/')))


def message(name, path, exercise):
  """What a hidden function raises: whose answer it is, to which exercise."""
  library = {'trax': 'Trax', 'jax': 'jax'}.get(path.split('/')[0], path.split('/')[0])
  return (f"{name} is {library}'s own answer to Exercise {exercise} "
          f'({GRADED[exercise - 1]}): hidden while grading; write your own')


def hidden_functions(tree, names):
  """The named top-level definitions' functions (a class's: its methods), and the names found."""
  functions, found = [], set()
  kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
  for node in tree.body:
    if not isinstance(node, kinds) or node.name not in names:
      continue
    found.add(node.name)
    pending = [(node.name, node)]
    while pending:
      name, current = pending.pop()
      if isinstance(current, ast.ClassDef):
        pending += [(name, n) for n in current.body if isinstance(n, kinds)]
      else:
        functions.append((name, current))
  return functions, found


def stubbed_source(source, names, path):
  """The file's source with each named definition's body one ``raise`` (line numbers kept).

  ``names``: name -> exercise, as in ``HIDDEN``.

  A docstring stays (``help`` still tells what the function was); the body's
  other lines become blank lines.
  """
  tree = ast.parse(source)
  functions, found = hidden_functions(tree, names)
  missing = sorted(set(names) - found)
  if missing:
    raise SummarizerError(f'{path} no longer defines {", ".join(missing)}: the installed '
                          'library changed; update HIDDEN in summarizer/grading/sandbox.py')
  lines = source.split('\n')  # As ast counts lines (splitlines also splits at form feeds).
  for name, function in sorted(functions, key=lambda f: -f[1].lineno):
    body = function.body
    docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                 and isinstance(body[0].value.value, str))
    first = body[1] if docstring and len(body) > 1 else body[0]
    start, end = first.lineno - 1, body[-1].end_lineno
    head = lines[start].encode('utf-8')[:first.col_offset].decode('utf-8')
    statement = f'raise NotImplementedError({message(name, path, names[name])!r})'
    lines[start:end] = [head + statement] + [''] * (end - start - 1)
  stubbed = '\n'.join(lines)
  compile(stubbed, path, 'exec')
  return stubbed


@functools.lru_cache(maxsize=None)
def _stub(path, stamp):
  del stamp  # The cache's key: a stub is written again when its original changes.
  with open(installed(path), encoding='utf-8') as f:
    return stubbed_source(f.read(), HIDDEN[path], path)


def write_stubs(directory):
  """Writes the stubs (and an empty file) under ``directory/hidden``; returns one dict a file.

  Returns:
    list of {'module': its module's name, 'stub': the stub's path relative to
    ``directory``, 'original': the installed file, 'bytecode': the
    original's compiled caches}.
  """
  written = []
  os.makedirs(os.path.join(directory, STUBS_DIR), exist_ok=True)
  with open(os.path.join(directory, EMPTY), 'wb'):
    pass
  for path in HIDDEN:
    original = installed(path)
    status = os.stat(original)
    stub = os.path.join(STUBS_DIR, *path.split('/'))
    os.makedirs(os.path.dirname(os.path.join(directory, stub)), exist_ok=True)
    with open(os.path.join(directory, stub), 'w', encoding='utf-8') as f:
      f.write(_stub(path, (status.st_mtime_ns, status.st_size)))
    stem = os.path.splitext(os.path.basename(original))[0]
    bytecode = sorted(glob.glob(os.path.join(os.path.dirname(original), '__pycache__',
                                             glob.escape(stem) + '.*.pyc')))
    written.append({'module': module_name(path), 'stub': stub, 'original': original,
                    'bytecode': bytecode})
  return written


def _library_binds():
  """``HIDDEN_LIBRARIES`` as empty read-only folders, in every library folder on the path."""
  binds = []
  for folder in sorted({os.path.realpath(entry) for entry in watchers.library_folders()}):
    for name in HIDDEN_LIBRARIES:
      path = os.path.join(folder, name)
      if os.path.isdir(path):
        binds += ['--tmpfs', path, '--remount-ro', path]
  return binds


def hidden_imports(ran):
  """The hidden library each function's run failed to import: name -> module (``HIDDEN_LIBRARIES``).

  Read from the run's cell errors and its cases' errors ('No module named
  'keras.layers'', 'cannot import name 'ops' from 'keras'', TensorFlow's
  'Keras cannot be imported').
  """
  found = {}
  for item, result in ran.items():
    results = (result or {}).get('results') or {}
    lines = [str(line) for line in results.get('cell errors') or []]
    lines += [str(case.get('error')) for case in results.get('cases') or []
              if isinstance(case, dict) and case.get('error')]
    for line in lines:
      module = next((name.replace(os.sep, '.') for name in HIDDEN_LIBRARIES
                     if f"'{name.replace(os.sep, '.')}" in line
                     or (name == 'keras' and 'Keras cannot be imported' in line)), None)
      if module and item not in found:
        found[item] = module
  return found


def _system_binds():
  """/usr, and /lib, /lib64, /bin as the host has them (links into /usr, or folders)."""
  binds = _ro('/usr')
  for name in ('lib', 'lib64', 'bin', 'sbin'):
    path = '/' + name
    if os.path.islink(path):
      binds += ['--symlink', os.readlink(path), path]
    elif os.path.isdir(path):
      binds += _ro(path)
  return binds


def _python_binds():
  paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
  paths.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
  # Libraries' folders a .pth file adds from elsewhere: only such, never a checkout on the path.
  paths |= {os.path.realpath(entry) for entry in watchers.library_folders()}
  binds = []
  for path in sorted(paths):
    if not path.startswith('/usr'):
      binds += _ro(path)
  return binds


def _inside_package(path):
  return os.path.commonpath([os.path.abspath(path), PACKAGE_DIR]) == PACKAGE_DIR


def _package_binds(read_only_dirs=()):
  """The package's folder as a fresh tmpfs with only the visible modules bound back.

  Folders the job reads that live inside the package (an installed wheel's
  shipped model) are bound back too, before the tmpfs is made read-only.
  """
  binds = ['--tmpfs', PACKAGE_DIR]
  for name in VISIBLE_MODULES:
    binds += _ro(os.path.join(PACKAGE_DIR, name))
  for directory in read_only_dirs:
    if _inside_package(directory):
      binds += _ro(directory)
  return binds + ['--remount-ro', PACKAGE_DIR]


def _hidden_binds(job_dir, stubs):
  """Each stub (``write_stubs``) over its original, an empty file over its bytecode."""
  binds = []
  for stub in stubs:
    binds += ['--ro-bind', os.path.join(job_dir, stub['stub']), stub['original']]
    for cache in stub['bytecode']:
      binds += ['--ro-bind', os.path.join(job_dir, EMPTY), cache]
  return binds


def bwrap_command(job_dir, read_only_dirs, stubs=()):
  """The bwrap command line that runs the worker on the job in ``job_dir``.

  ``stubs`` are ``write_stubs(job_dir)``'s: Trax's answers, hidden.
  """
  bwrap = shutil.which('bwrap')
  if bwrap is None:
    raise SummarizerError(INSTALL_HINT)
  # /tmp first: a fresh tmpfs mounted after the binds would hide any of
  # them that lives under /tmp (a checkout, its virtual environment, a model).
  # /dev/shm is bwrap's /dev's folder otherwise: writable, as large as /tmp was.
  size = str(limits.TMP_MB << 20)
  command = [bwrap, '--dev', '/dev', '--size', size, '--tmpfs', '/dev/shm', '--remount-ro', '/dev',
             '--proc', '/proc', '--size', size, '--tmpfs', '/tmp',
             *_system_binds(), *_python_binds()]
  for directory in read_only_dirs:
    if not _inside_package(directory):
      command += _ro(directory)
  command += _library_binds() + _package_binds(read_only_dirs) + _hidden_binds(job_dir, stubs)
  command += ['--ro-bind', job_dir, '/job',
              *[arg for name in WORKER_FILES
                for arg in ('--ro-bind', os.path.join(HERE, name), f'/grader/{name}')],
              '--unshare-all', '--unshare-user', '--uid', '1000', '--gid', '1000',
              '--as-pid-1',  # No reaper of bwrap's holding the channel: the worker is init.
              '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--clearenv',
              '--setenv', 'HOME', '/tmp', '--setenv', 'PATH', '/usr/bin',
              '--setenv', 'JAX_PLATFORMS', 'cpu', '--chdir', '/tmp',
              sys.executable, '-I', '/grader/worker.py', '/job', os.path.dirname(PACKAGE_DIR)]
  return command


def process_command(job_dir):
  """The weaker mode: the worker as a plain process, from a copy of its two files."""
  for name in WORKER_FILES:
    shutil.copy(os.path.join(HERE, name), os.path.join(job_dir, name))
  return [sys.executable, '-I', os.path.join(job_dir, 'worker.py'), job_dir,
          os.path.dirname(PACKAGE_DIR)]


def run(job, given, solutions, mode='bwrap', read_only_dirs=(),
        seconds=limits.SUBMISSION_SECONDS, watched=None, waiting=contextlib.nullcontext):
  """Runs the job's items in the sandbox, watched from outside (``limits.Watch``).

  Args:
    job: The job (see ``worker.py``), JSON.
    given: Arrays handed in, name -> numpy array.
    solutions: For each item, the package's solutions it may use (name ->
      source), sent on the worker's stdin one item at a time.
    mode: 'bwrap', or 'process' (weaker, named by the teacher).
    read_only_dirs: Host folders the sandbox may read (the shipped model's).
    seconds: CPU (and charged) seconds for the whole run (``limits.py``).
    watched: A list the run's ``Watch`` is appended to (its peaks).
    waiting: A context manager held while the sandbox runs (``grader.py``'s
      lets another thread's grading work meanwhile).

  Returns:
    dict: item id -> {'status': ..., 'results': ... or None}. The item a limit
    of the watch stopped has ``status['stopped']`` (one line), and so has each
    item that never ran because the whole sandbox was stopped.
  """
  if mode not in MODES:
    raise SummarizerError(f'unknown sandbox mode {mode!r}: choose one of {", ".join(MODES)}')
  with tempfile.TemporaryDirectory(prefix='grading-') as job_dir:
    stubs = write_stubs(job_dir)
    with open(os.path.join(job_dir, 'job.json'), 'w', encoding='utf-8') as f:
      json.dump(dict(job, hidden={stub['module']: stub['stub'] for stub in stubs}), f)
    np.savez(os.path.join(job_dir, 'given.npz'), **given)
    os.chmod(job_dir, 0o755)
    command = (bwrap_command(job_dir, read_only_dirs, stubs) if mode == 'bwrap'
               else process_command(job_dir))
    env = None if mode == 'bwrap' else {'PATH': '/usr/bin', 'HOME': job_dir,
                                        'JAX_PLATFORMS': 'cpu'}
    frames = b''.join(_frame(json.dumps(each).encode('utf-8')) for each in solutions)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=job_dir, env=env)
    watcher = limits.Watch(process.pid, seconds)
    if watched is not None:
      watched.append(watcher)
    cap = len(job['items']) * (report_schema.MAX_ITEM_BYTES + (1 << 16))
    with waiting():
      stdout, stderr, stops = _pump(process, frames, watcher, cap)
  items = read_frames(stdout)
  if not items and process.returncode and not stops:
    tail = stderr.decode('utf-8', 'replace').strip().splitlines()[-3:]
    raise SummarizerError('the sandbox did not start: ' + ' / '.join(tail))
  _mark_stops(items, [str(item['id']) for item in job['items']], stops)
  return items


def _feed(pipe, data):
  try:
    pipe.write(data)
    pipe.close()
  except (BrokenPipeError, ValueError, OSError):
    pass  # The worker ended before it read every item's solutions.


def _drain(pipe, kept, cap=1 << 16):
  while True:
    chunk = pipe.read(1 << 16)
    if not chunk:
      return
    kept[:] = [(b''.join(kept) + chunk)[-cap:]]


def _pump(process, frames, watcher, cap=report_schema.MAX_ITEM_BYTES):
  """Feeds the worker, reads its output to the end and lets the watch look meanwhile.

  Returns:
    (stdout, stderr's end, stops): each stop as (items done when it came, ``limits.Stop``).
  """
  threads = [threading.Thread(target=_feed, args=(process.stdin, frames), daemon=True)]
  err = []
  threads.append(threading.Thread(target=_drain, args=(process.stderr, err), daemon=True))
  for thread in threads:
    thread.start()
  out, stops, looked = bytearray(), [], 0.0
  fd = process.stdout.fileno()
  while True:
    ready, _, _ = select.select([fd], [], [], limits.WATCH_SECONDS)
    if ready:
      chunk = os.read(fd, 1 << 20)
      if not chunk:
        break
      out += chunk
      if len(out) > cap:  # More than its items' reports can hold: not the worker's.
        process.kill()
        break
    ended = stops and stops[-1][1].everything
    if time.monotonic() - looked >= limits.WATCH_SECONDS and not ended:
      looked = time.monotonic()
      done = complete_frames(out)
      stop = watcher.look(everything=[d for d, _ in stops].count(done) >= 2)
      if stop:
        stops.append((done, stop))
  process.stdout.close()
  process.wait()
  for thread in threads:
    thread.join(timeout=5)
  return bytes(out), b''.join(err), stops


def complete_frames(data):
  """How many items' frames (a header and the bytes it announces) the data holds whole."""
  count, at = 0, 0
  while at + 8 <= len(data):
    end = at + 8 + int.from_bytes(data[at:at + 8], 'big')
    try:
      end += int(json.loads(bytes(data[at + 8:end]))['size'])
    except (ValueError, KeyError, TypeError):
      break  # A header not yet whole.
    if end > len(data):
      break
    count, at = count + 1, end
  return count


def _mark_stops(items, order, stops):
  """Puts each stop's line on the item it stopped (and the items never run after a full stop)."""
  for done, stop in stops:
    for k, item_id in enumerate(order[done:]):
      if k and not stop.everything:
        break
      entry = items.setdefault(item_id, {'status': {}, 'results': None})
      entry['status'].setdefault('stopped', stop.reason if k == 0 else 'not run: ' + stop.reason)
      if stop.starved:
        entry['status'].setdefault('passed', 'starved')


def _frame(data):
  return len(data).to_bytes(8, 'big') + data


def read_frames(data):
  """Parses the worker's frames: a header, then the child's report (``report_schema.read_report``).

  A report that cannot be read within the bounds has ``results`` None and
  the reason in ``unfit``; bytes after the last whole frame are left.
  """
  items, stream = {}, io.BytesIO(data)
  while True:
    try:
      header = json.loads(report_schema.read_frame(stream, 1 << 16))
      size = int(header['size'])
      if not 0 <= size <= report_schema.MAX_ITEM_BYTES:
        return items
      body = stream.read(size)
      entry = {'status': dict(header['status']), 'results': None}
      item_id = str(header['id'])
    except Exception:  # pylint: disable=broad-except  # The end, or bytes not the worker's.
      return items
    try:
      entry['results'] = report_schema.read_report(body) if body else None
    except report_schema.Unfit as error:
      entry['unfit'] = str(error)
    items[item_id] = entry
