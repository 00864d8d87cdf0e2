"""The teacher's verdict on a submitted notebook, computed outside the learner's kernel.

``grade(notebook)`` reads the notebook's solution cells (nbgrader's
``grade_id`` names the function), runs them in the sandbox (``sandbox.py``)
on inputs drawn from a fresh seed, and compares what comes back with what the
package's own functions give on the same inputs, here, where the learner's
code never runs. Each function is graded with the package's earlier functions
in place of the learner's (one mistake costs its own points); a second run
with the learner's own earlier functions only adds a note. Parts 4 and 5 run
the learner's whole model. The package's files are hashed before and after.
A function that code built at run time may reach (``static_reading.py``, read here)
is graded by a teacher, by hand: its verdict says why, and scores nothing.

The grader enters the contract (``summarizer/contract/``) in two places:
``handout.package_code()`` for what it hands the sandbox and compares with
(the package's solutions, the blank cells, the setup, the shipped model),
read once a process, and ``measures`` for judging each report.
"""

import ast
import collections
import contextlib
import dataclasses
import difflib
import functools
import secrets
import shutil
import tempfile
import threading
import time
import weakref

from summarizer import files
from summarizer.contract import handout, recording
from summarizer.grading import (causes, limits, report_schema, sandbox,
                                static_reading, where_line)
from summarizer.contract.judge import ALL_PASSED
from summarizer.contract.measures import failed_cases, printed
from summarizer.config import PACKAGE_DIR
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

POINTS = handout.POINTS
# Functions whose check runs the learner's earlier ones too (the note's run).
USES_EARLIER = (recording.SELF_ATTENTION, recording.CAUSAL_ATTENTION, recording.DECODER_BLOCK,
                recording.TRANSFORMER_LM, recording.TRAINING_LOOP)
WHOLE_ITEMS = ('part 4', 'part 5')  # The whole-model items, apart (see worker.py).
WHOLE_IDS = tuple(f'test_{name}' for name in (handout.TRAINED_MODEL, handout.SUMMARY))  # Their cells.
# Near-copies of the package's code (see ``near_copy``): the similarity (0-1) of
# normalised code from which a function is flagged, on its structure alone or
# with the package's comments; the package's tokens from which its code tells
# (dot_product_self_attention has 56, compute_attention_output_closure 78, the
# others 89 to 133); the functions flagged alone that a short one needs beside it.
NEAR_COPY, NEAR_COPY_TEXT, TELLING_TOKENS, CORROBORATING = 0.95, 0.9, 85, 2


@dataclasses.dataclass
class Verdict:
  """One graded cell's verdict.

  Attributes:
    grade_id: nbgrader's id of the graded cell ('test_<name>').
    title: 'Exercise N: name' or 'Part 4: ...'.
    points, max_points: Scored and possible.
    lines: What failed and why (empty when it passed).
    notes: What costs nothing: a note on earlier functions, a near-copy flag.
    manual: Why a teacher grades it by hand (points 0 until then), or ''.
    cause: Its cause as the class report groups it (``causes.cause_of``), or None.
  """
  grade_id: str
  title: str
  points: float
  max_points: float
  lines: list
  notes: list
  manual: str = ''
  cause: dict = None


@dataclasses.dataclass
class Report:
  seed: int
  mode: str
  verdicts: list
  seconds: float

  @property
  def total(self):
    return sum(v.points for v in self.verdicts)

  @property
  def max_total(self):
    return sum(v.max_points for v in self.verdicts)

  @property
  def by_hand(self):
    """The points a teacher gives by hand (counted 0 in ``total`` until then)."""
    return sum(v.max_points for v in self.verdicts if v.manual)


def learner_cells(path_or_notebook):
  """The learner's code cells in order: solution cells and cells of their own (no nbgrader metadata).

  The teacher's cells (the setup, Part 1's data, the runs, the graded test
  cells) are left out: the setup runs trusted, and a graded cell is the
  teacher's, never the learner's copy of it.

  Returns:
    list of {'label', 'source', 'grade_id'}: grade_id is the graded
    function's name for its solution cell, else None; the source as
    Jupyter runs it (``static_reading.python_source``: ``%%time``, ``%matplotlib``, ``!ls``).
  """
  notebook = path_or_notebook
  if isinstance(path_or_notebook, str):
    notebook = files.read_notebook(path_or_notebook)
  cells, read = [], 0
  for index, cell in enumerate(notebook.cells):
    nbgrader = cell.get('metadata', {}).get('nbgrader') or {}
    if cell.get('cell_type') != 'code' or nbgrader and not nbgrader.get('solution'):
      continue
    grade_id = nbgrader.get('grade_id')
    graded = grade_id if grade_id in GRADED else None
    source = cell.get('source', '')
    source = ''.join(map(str, source)) if isinstance(source, list) else str(source)
    entry = {'label': graded or f'cell {index + 1}', 'grade_id': graded, 'source': source}
    read += len(source)
    if len(source) > limits.CELL_CHARS or read > limits.NOTEBOOK_CHARS:
      entry[static_reading.TOO_LONG] = len(source)  # Unread here: a teacher's (static_reading).
    else:
      entry['source'] = static_reading.python_source(source)  # Magics as Jupyter runs them.
    cells.append(entry)
  return cells


def read_cells(path_or_notebook):
  """Each graded function's solution cell (its grade_id): the last one, as Jupyter shows it."""
  cells = path_or_notebook
  if not isinstance(cells, list):
    cells = learner_cells(path_or_notebook)
  return {cell['grade_id']: cell['source'] for cell in cells if cell['grade_id']}


def trusted_setup():
  """The notebook's setup cell without the checks and the data (hidden in the sandbox)."""
  hidden = ('from summarizer.assignment import', 'from summarizer.contract import')
  setup = handout.package_code().setup
  lines = [line for line in setup.splitlines() if not line.startswith(hidden)]
  return '\n'.join(lines)


def _item(item_id, probe, package, submission=0):
  """One run: the learner's cells up to the probed function's (all for the whole model)."""
  function = None if probe in WHOLE_ITEMS else probe
  return dict(id=item_id, probe=probe, function=function, package=list(package),
              upto=function, seconds=limits.function_seconds(probe),
              memory_mb=limits.PROCESS_MEMORY_MB, submission=submission)


def first_items(functions=GRADED, whole=True, submission=0):
  """The whole model first (it holds none of the package's functions), then each function.

  Items are in the course's order: the package's solutions they receive only
  grow, so no process of the sandbox ever holds the answer to its own function.
  """
  items = [_item(part, part, [], submission) for part in WHOLE_ITEMS] if whole else []
  return items + [_item(name, name, GRADED[:GRADED.index(name)], submission)
                  for name in GRADED if name in functions]


def was_stopped(result):
  """Whether a run was stopped at a limit (its seconds, or the sandbox's memory or processes)."""
  status = (result or {}).get('status') or {}
  return bool(status.get('timed out') or status.get('stopped'))


def failed_own_check(result):
  """Whether a run that failed did so on its own checks: it ran, whole, and was not stopped.

  A function stopped at a limit, never run, or whose sandbox stopped before
  it is not blamed for a later part's failure: nothing says it is wrong.
  """
  return bool(result) and not was_stopped(result) and result.get('results') is not None


def with_yours_items(own, submission=0, stopped=()):
  """The note's runs: functions that pass while an earlier one of the learner's fails.

  None where an earlier function was stopped at a limit: it would be again,
  and each of these runs would wait its whole limit for a note.
  """
  items = []
  for name in USES_EARLIER:
    index = GRADED.index(name)
    if set(stopped) & set(GRADED[:index]):
      continue
    if name in own and not own[name].lines and any(
        own[n].lines for n in GRADED[:index] if n in own):
      items.append(_item(name + ' with yours', name, [], submission))
  return items


@functools.lru_cache(maxsize=2)
def prepared(seed):
  """The arrays handed to the sandbox, the package's results and their compiled programs.

  Once a seed: (given arrays, given JSON, expected results, the folder of
  jax's compilation cache the sandbox reads; removed when the grader exits).
  """
  from summarizer.grading import reference_results  # pylint: disable=g-import-not-at-top
  folder = tempfile.mkdtemp(prefix='grading-jax-')
  weakref.finalize(prepared, shutil.rmtree, folder, ignore_errors=True)
  with reference_results.compilation_cache(folder):
    given, shapes = reference_results.given_arrays(seed)
    json_given = {recording.SHIPPED_SHAPES: shapes}
    expected = reference_results.expected_results(seed, given, json_given)
  return given, json_given, expected, folder


def run_items(submissions, items, seed, mode, seconds=limits.SUBMISSION_SECONDS, watched=None):
  """Runs items (each naming its submission) in one sandbox; returns id -> result.

  The sandbox is stopped after ``seconds`` (CPU, and charged: ``limits.py``), all its
  items together; ``watched`` is ``sandbox.run``'s.
  """
  given, json_given, _, compiled = prepared(seed)
  code = handout.package_code()
  job = {'seed': seed, 'setup': trusted_setup(), 'submissions': submissions, 'items': items,
         'model_size': code.model_size, 'model_file': code.model_file,
         'given': json_given, 'other cells seconds': limits.OTHER_CELLS_SECONDS,
         'file mb': limits.FILE_MB, 'item bytes': report_schema.MAX_ITEM_BYTES,
         # Read-only in bubblewrap; a plain process could write it for the next student.
         'jax cache': compiled if mode == 'bwrap' else None}
  solutions = [{name: code.solutions[name] for name in item['package']}
               for item in items]
  return sandbox.run(job, given, solutions, mode=mode,
                     read_only_dirs=[code.model_dir, compiled], seconds=seconds,
                     watched=watched, waiting=_sandbox_running)


# The grader's own work in this process (reading cells, the static reading,
# the verdicts) is done by one thread at a time: CPython's ``ast`` is not
# thread-safe (two threads parsing at once raise "AST constructor recursion
# depth mismatch"). Only the waits for the sandboxes overlap (``class_run.py``).
_OWN_WORK = threading.Lock()


@contextlib.contextmanager
def _sandbox_running():
  """While a sandbox runs, another thread may do its own grading work."""
  _OWN_WORK.release()
  try:
    yield
  finally:
    _OWN_WORK.acquire()


_SESSION_SEED = secrets.randbits(31)  # Drawn when the grader loads: one a grading run.


def session_seed(seed=None):
  """The inputs' seed: ``seed``, or the one drawn for this grading run."""
  return _SESSION_SEED if seed is None else int(seed)


def grade(notebook, seed=None, mode='bwrap', functions=GRADED, whole=True):
  """Grades a notebook (a path or a NotebookNode); returns a Report.

  Args:
    notebook: The submission.
    seed: The inputs' seed; by default one drawn afresh for this grading run
      (every notebook graded by one process shares it, so the package's
      results are computed once).
    mode: The sandbox: 'bwrap', or 'process' (weaker, see ``sandbox.py``).
    functions, whole: What to grade (all by default; fewer for tests).
  """
  return grade_batch([notebook], seed, mode, functions, whole)[0]


def grade_batch(notebooks, seed=None, mode='bwrap', functions=GRADED, whole=True):
  """Grades several notebooks of ONE author in one sandbox run (tests, a teacher's variants).

  Every notebook's code can read the others' in that run: never batch students
  (``class_run.grade_all`` grades a class, each student's sandbox apart).
  """
  with _OWN_WORK:
    return _graded_batch(notebooks, seed, mode, functions, whole)


def _graded_batch(notebooks, seed, mode, functions, whole):
  """``grade_batch``'s work, this thread holding ``_OWN_WORK``."""
  sandbox.require_linux()
  started = time.monotonic()
  seed = session_seed(seed)
  if mode == 'bwrap' and not shutil.which('bwrap'):
    raise SummarizerError(sandbox.INSTALL_HINT)
  submissions = [learner_cells(notebook) for notebook in notebooks]
  watched = [PACKAGE_DIR, handout.package_code().model_dir]
  before = sandbox.package_digest(watched)
  expected = prepared(seed)[2]
  items = sorted((dict(item, id=f'{k}/{item["id"]}') for k in range(len(submissions))
                  for item in first_items(functions, whole, k)), key=_course_order)
  budget, watches = limits.SUBMISSION_SECONDS * len(submissions), []
  ran = fitted(run_items(submissions, items, seed, mode, budget, watches), expected)
  owns = [{name: function_verdict(name, ran.get(f'{k}/{name}'), expected[name])
           for name in functions} for k in range(len(submissions))]
  later = [dict(item, id=f'{k}/{item["id"]}') for k, own in enumerate(owns)
           for item in with_yours_items(own, k, [n for n in functions
                                                 if was_stopped(ran.get(f'{k}/{n}'))])]
  left = budget - watches[0].clock.cpu  # CPU seconds: the notes' run takes what is left.
  if later and left > limits.FUNCTION_SECONDS / 2:  # Notes only.
    ran.update(fitted(run_items(submissions, later, seed, mode, left), expected))
  if sandbox.package_digest(watched) != before:
    raise SummarizerError('the installed package changed while grading: reinstall it '
                          'before trusting any grade')
  seconds = round(time.monotonic() - started, 1)
  return [Report(seed, mode, verdicts_of(cell_sources(cells), _mine(ran, k), expected, owns[k],
                                         whole, static_reading.manual_reasons(
                                             cells, ran=_mine(ran, k))), seconds)
          for k, cells in enumerate(submissions)]



def fitted(ran, expected):
  """Each report held against the package's results (``report_schema.fit``) before anything reads it.

  A report that does not fit loses its results (the judge never reads it) and
  says why in ``unfit``.
  """
  for item_id, entry in ran.items():
    probe = item_id.split('/', 1)[-1].replace(' with yours', '')
    cases = expected['whole'] if probe in WHOLE_ITEMS or probe == 'whole' else expected.get(probe)
    if entry.get('results') is None or cases is None:
      continue
    try:
      entry['results'] = report_schema.fit(entry['results'], cases)
    except report_schema.Unfit as error:
      entry['results'], entry['unfit'] = None, str(error)
  return ran


def _course_order(item):
  return -1 if item['probe'] in WHOLE_ITEMS else GRADED.index(item['probe'])


def _mine(ran, k):
  prefix = f'{k}/'
  return {key[len(prefix):]: value for key, value in ran.items() if key.startswith(prefix)}


def verdicts_of(cells, ran, expected, own, whole=True, manual=None):
  """The verdicts of a notebook's runs, notes added; those of ``manual`` (key -> reason) by hand."""
  manual = manual or {}
  for name in USES_EARLIER:
    note = name in own and earlier_note(name, ran.get(name + ' with yours'), expected[name], own)
    if note:
      own[name].notes.append(note)
  for name, flag in near_copies(cells).items():
    if name in own:
      own[name].notes.append(flag)
  for name, module in sandbox.hidden_imports(ran).items():
    if name in own and own[name].points < own[name].max_points:  # Where it cost the function.
      own[name].notes.append(f'{module} is {sandbox.HIDDEN_LIBRARY_NOTE}')
  verdicts = [own[name] for name in GRADED if name in own]
  verdicts += whole_verdicts(ran, expected['whole'], own) if whole else []
  keys = [static_reading.WHOLE_KEY if v.grade_id in WHOLE_IDS else v.grade_id[len('test_'):] for v in verdicts]
  return [by_hand(v, manual[key]) if key in manual else v for v, key in zip(verdicts, keys)]


def by_hand(verdict, reason):
  """A verdict a teacher gives: no points yet; the automatic check's outcome kept for them."""
  outcome = (['the automatic check, not counted: passed'] if not verdict.lines else
             ['the automatic check, not counted, failed:', *verdict.lines])
  return dataclasses.replace(verdict, points=0, lines=[reason, *outcome], manual=reason)


def title(name):
  return f'Exercise {GRADED.index(name) + 1}: {name}'


def failure_lines(name, result, expected_cases):
  """What failed in one run of a function, or [] when it passed."""
  if result is None:
    return ['not run (the sandbox stopped before it)']
  status, results = result['status'], result['results']
  if status.get('stopped'):
    return [str(status['stopped'])]
  if status.get('timed out'):
    return [limits.stopped_after(status.get('limit', 0)) + ', its limit']
  if result.get('unfit'):
    return [f"its report does not fit what the grader reads ({result['unfit'][:300]}): "
            'nothing in it is graded']
  if results is None:
    code = status.get('exit')
    how = f'killed by signal {-code}' if code and code < 0 else f'exit status {code}'
    return [f'crashed ({how}; out of memory, os._exit or a crash in your code) before '
            'it returned anything']
  errors = results.get('cell errors')
  errors = [str(error) for error in errors] if isinstance(errors, list) else []
  errors.sort(key=lambda error: not error.startswith(f'{name}:'))  # Its own cell's first.
  lines = [f'your cell: {error[:600]}' for error in errors][:5]
  if not isinstance(results.get('cases'), list):
    results = dict(results, cases=[])
  if not results.get('cases') and not lines:
    lines.append(f'{name} is not defined by its cell')
  failed = failed_cases(name, results.get('cases', []), expected_cases)
  if not failed and results.get('cases'):
    return []
  where = where_line.where_lines(name, results.get('traces'), failed[0][0]) if failed else []
  return [hidden_reason(line) for line in lines + printed(failed, where)]


def hidden_reason(line):
  """A cell error that reached for the package's own code, or Trax's own answers, said so."""
  if "No module named 'summarizer." in line or 'summarizer' in line and 'has no attribute' in line:
    return (line + "\n    why: the package's own functions (and wrappers or copies of them) "
            'are hidden while grading: write the function yourself')
  if 'hidden while grading; write your own' in line:
    return (line + "\n    why: Trax's (and jax's) own versions of the exercises "
            '(tl.CausalAttention, trax.models.TransformerLM, ...) are hidden while grading, '
            "as the package's are: write the function from the layers the exercise names")
  return line


def function_verdict(name, result, expected_cases):
  lines = failure_lines(name, result, expected_cases)
  points = POINTS[name]
  note = printed_note(result)
  return Verdict(f'test_{name}', title(name), 0 if lines else points, points, lines,
                 [note] if note else [],
                 cause=causes.cause_of(lines, result, [case['name'] for case in expected_cases]))


def printed_note(result):
  """What a function printed where it was asked not to: feedback, never a deduction."""
  cases = ((result or {}).get('results') or {}).get('cases')
  for case in cases if isinstance(cases, list) else []:
    measured = case.get('measures') if isinstance(case, dict) else None
    printed = measured.get(recording.PRINTED) if isinstance(measured, dict) else None
    if case.get('name') == recording.QUIET_CASE and isinstance(printed, list) and printed:
      return (f'with verbose=False it printed {len(printed)} lines (the first: '
              f'{str(printed[0])[:60]!r}); what a function prints is feedback, no points lost')
  return None


def earlier_note(name, result, expected_cases, own):
  """A note when the learner's own earlier functions make a passing function fail."""
  if result is None or own[name].lines or not failure_lines(name, result, expected_cases):
    return None
  index = GRADED.index(name)
  at_fault = [title(n) for n in GRADED[:index] if n in own and own[n].lines]
  return ('with your own earlier functions instead of the package\'s, this check fails ('
          + (', '.join(at_fault) + ' failed its own check' if at_fault else
             'they pass their own checks, so look at how they work together')
          + '); no points lost here: fix the earlier exercise')


def whole_verdicts(ran, expected_cases, own):
  """Parts 4 and 5: each passes or fails by its case of the whole-model run."""
  at_fault = [n for n in GRADED if n in own and own[n].lines and failed_own_check(ran.get(n))]
  blame = (f"    why: these functions fail their own checks: {', '.join(at_fault)}"
           if at_fault else None)
  verdicts = []
  for grade_id, title_, index in zip(WHOLE_IDS, ('Part 4: the trained model',
                                                 'Part 5: the summary'), (0, 1)):
    key = grade_id[len('test_'):]
    expected = expected_cases[index:index + 1]
    result = _only_case(ran.get(WHOLE_ITEMS[index]), expected)
    lines = failure_lines('whole', result, expected)
    if lines and blame:
      lines.append(blame)
    verdicts.append(Verdict(grade_id, title_, 0 if lines else POINTS[key], POINTS[key],
                            lines, [], cause=causes.cause_of(lines, result,
                                                             [case['name'] for case in expected])))
  return verdicts


def _only_case(result, expected):
  """The whole-model run restricted to one of its cases (Part 4 or Part 5)."""
  if result is None or result['results'] is None:
    return result
  names = {case['name'] for case in expected}
  cases = [case for case in result['results'].get('cases', []) if case['name'] in names]
  if not cases:
    cases = [{'name': next(iter(names)), 'measures': {},
              'error': None, 'not run': 'not run: Part 4 did not pass'}]
  return {'status': result['status'],
          'results': dict(result['results'], cases=cases, **{'cell errors': []})}


# --------------------------------------------------------------------------
# Near-copies of the package's code: a flag, not a deduction.

def normalised(source, name):
  """The function's code as tokens: names numbered in order of use; docstrings and comments gone.

  A node's type a token; a variable's or argument's name is its number in
  order of first use (breadth first), so renaming changes nothing; an
  attribute's or keyword's name is kept (``tl.Dense``, ``mode=``): the
  learner does not choose them. A string statement (a docstring) is skipped
  with what it holds; formatting and comments never reach the tree.
  """
  try:
    tree = ast.parse(source)
  except SyntaxError:
    return None
  function = next((node for node in ast.walk(tree)
                   if isinstance(node, ast.FunctionDef) and node.name == name), None)
  return None if function is None else _tokens(function)


# What the learner's cells may define a graded function's code in, under any name.
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@functools.lru_cache(maxsize=64)  # Each cell is compared with every graded function.
def definitions(source):
  """The tokens (``normalised``) of every function, lambda and class a source defines, any name."""
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return []
  return [_tokens(node) for node in ast.walk(tree) if isinstance(node, DEFINITIONS)]


def _tokens(function):
  """A definition's tokens: its own name left out, so that renaming it changes nothing."""
  numbers, tokens, queue = {}, [], collections.deque([function])
  while queue:
    node = queue.popleft()
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str):
      continue
    label = type(node).__name__
    for field in ('id', 'arg', 'attr'):
      value = getattr(node, field, None)
      if isinstance(value, str):
        kept = field == 'attr' or isinstance(node, ast.keyword)
        label += ':' + (value if kept else str(numbers.setdefault(value, len(numbers))))
    tokens.append(label)
    queue.extend(ast.iter_child_nodes(node))
  return tokens


def _text_lines(source):
  """A source's comment and string lines, spaces squeezed (20 characters or more)."""
  found = set()
  for line in source.splitlines():
    squeezed = ' '.join(line.split())
    if len(squeezed) >= 20 and ('#' in squeezed or squeezed[:1] in '"\'' or '"""' in squeezed):
      found.add(squeezed[squeezed.find('#'):] if '#' in squeezed else squeezed)
  return found


def _copied_text(name, source):
  """The package's comments in the learner's cell that the blank scaffold does not show."""
  code = handout.package_code()
  package, scaffold = _text_lines(code.solutions[name]), _text_lines(code.scaffolds[name])
  learner = ' '.join(source.split())
  return sorted(line for line in package - scaffold if line in learner)


def near_copy(name, source, alongside=0):
  """A flag when the learner's function is the package's, renamed, stripped or reformatted.

  The course's answers are close to the package's by design: two of them
  (dot_product_self_attention, compute_attention_output_closure) are the
  package's token for token once renamed, as the steps dictate every line.
  So the rule, on the tokens of ``normalised`` (names numbered; docstrings,
  comments and layout gone):

  * at least ``NEAR_COPY_TEXT`` alike and carrying comments of the
    package's that the scaffold does not show: flagged;
  * at least ``NEAR_COPY`` alike, the package's function long enough to
    leave the course's learner choices (``TELLING_TOKENS``): flagged;
  * as alike but shorter: flagged only alongside ``CORROBORATING`` functions
    of the same notebook that the rules above flag (``near_copies``).

  Args:
    name: The graded function.
    source: The learner's solution cell.
    alongside: How many other functions of the notebook the first two rules flag.
  """
  package = _package_tokens(name)
  candidates = [mine for mine in definitions(source or '') if mine]
  if not candidates or not package:
    return None
  ratio = max(_alike(mine, package) for mine in candidates)
  copied = _copied_text(name, source) if ratio >= NEAR_COPY_TEXT else []
  how = f"flag: the code is a near-copy of the package's {name} ({ratio:.0%} alike after " \
        'renaming and reformatting'
  if copied or ratio >= NEAR_COPY and len(package) >= TELLING_TOKENS:
    return (how + (f', {len(copied)} of its comments' if copied else '')
            + '); a flag for the teacher, no points lost')
  if ratio >= NEAR_COPY and alongside >= CORROBORATING:
    return (how + f'; short, flagged as {alongside} other functions of this notebook are); '
            'a flag for the teacher, no points lost')
  return None


@functools.lru_cache(maxsize=None)
def _package_tokens(name):
  return normalised(handout.package_code().solutions[name], name)


def _alike(mine, package):
  """The similarity of two token lists (0-1); a cheap bound first, as most definitions differ."""
  matcher = difflib.SequenceMatcher(a=mine, b=package, autojunk=False)
  if matcher.real_quick_ratio() < NEAR_COPY_TEXT or matcher.quick_ratio() < NEAR_COPY_TEXT:
    return 0.0  # Below every rule's bound (the bounds are upper bounds of the ratio).
  return matcher.ratio()


def near_copies(cells):
  """The flags of a notebook's cells (label -> source): graded name -> flag, see ``near_copy``.

  Every function, lambda and class of every cell is compared with each
  graded function of the package, whatever its name: a renamed copy bound to
  the graded name (``DotProductAttention = _f_``), or defined in a scratch
  cell, is flagged as the copy in its own cell is. The graded function's own
  cell is read first.
  """
  deadline = time.monotonic() + limits.READING_SECONDS

  def flag(name, alongside=0):
    sources = [cells[name]] if name in cells else []
    sources += [source for label, source in cells.items() if label != name]
    for source in sources:
      if time.monotonic() > deadline:
        return UNREAD_COPIES
      found = near_copy(name, source, alongside)
      if found:
        return found
    return None
  named = [name for name in GRADED if name in cells]
  flags = {name: flag(name) for name in named}
  alone = sum(bool(each) and each != UNREAD_COPIES for each in flags.values())
  flags = {name: each or flag(name, alone) for name, each in flags.items()}
  return {name: each for name, each in flags.items() if each}


UNREAD_COPIES = (f'not compared with the package\'s code: the notebook\'s cells took more than '
                 f'{limits.READING_SECONDS} s to compare; for the teacher to see, no points lost')


def cell_sources(cells):
  """Every learner cell's source by its label (``learner_cells``); a graded cell pasted twice, both."""
  sources = {}
  for index, cell in enumerate(cells):
    if static_reading.TOO_LONG in cell:
      continue  # Left unread (``learner_cells``): a teacher reads it.
    if cell['label'] in sources:  # The last copy keeps the graded name, as Jupyter shows it.
      sources[f"{cell['label']} (copy {index})"] = sources.pop(cell['label'])
    sources[cell['label']] = cell['source']
  return sources


# --------------------------------------------------------------------------
# The table.

def table(report):
  """The report as text: one line a graded cell, its failures and notes below it."""
  lines = [f'{"check":<44} {"points":>7}', '-' * 52]
  for verdict in report.verdicts:
    score = '  ?' if verdict.manual else f'{verdict.points:>3g}'
    lines.append(f'{verdict.title:<44} {score} / {verdict.max_points:g}'
                 + ('  (by hand)' if verdict.manual else ''))
    lines += ['    ' + line for text in verdict.lines for line in text.splitlines()]
    lines += ['    note: ' + note for note in verdict.notes]
  lines += ['-' * 52, f'{"total":<44} {report.total:>3g} / {report.max_total:g}'
            + (f'  ({report.by_hand:g} by hand)' if report.by_hand else ''),
            f'seed {report.seed}, sandbox {report.mode}, {report.seconds:.0f} s']
  return '\n'.join(lines)


def verdict_text(verdict):
  """A graded cell's feedback: its title, its score, what failed and why."""
  head = (f'{verdict.title}: graded by hand, out of {verdict.max_points:g}' if verdict.manual
          else f'{verdict.title}: {verdict.points:g} / {verdict.max_points:g}')
  body = verdict.lines or [ALL_PASSED]
  return '\n'.join([head, *body, *('note: ' + note for note in verdict.notes)]) + '\n'
