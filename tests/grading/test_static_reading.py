"""Code built at run time goes to a teacher; a disguised copy of the package's code is flagged.

The learner's cells are read, never run (``static_reading.py``), so most tests need no
sandbox; one cheap grading (three array functions, no whole model) checks the
verdicts, and nbgrader's own SaveAutoGrades and GetGrades, on a gradebook
under tmp, check what the teacher's gradebook and the feedback page show.
"""

import ast
import base64
import glob
import os
import shutil
import sys

import nbformat
import pytest

import learner_variants
from summarizer.contract import handout
from summarizer.grading import grader, nbgrader_plugin, static_reading
from summarizer.contract.recording import GRADED

from . import SEED

SCRATCH = nbformat.v4.new_code_cell  # A cell the learner added: no nbgrader metadata.


def hidden(name):
  """The package's function exec'd from base64 in its cell: nothing left for near_copy to read."""
  encoded = base64.b64encode(handout.solution_source(name).encode()).decode()
  return f'import base64\nexec(base64.b64decode({encoded!r}).decode())\n'


def scratch_before(notebook, grade_id, source):
  """The notebook with a scratch cell just above ``grade_id``'s cell; the cell's label."""
  [index] = [i for i, cell in enumerate(notebook.cells)
             if cell.metadata.get('nbgrader', {}).get('grade_id') == grade_id]
  notebook.cells.insert(index, SCRATCH(source))
  return notebook, f'cell {index + 1}'


def equivalent_answers():
  """A correct variant of each function that has one, written otherwise than the package."""
  chosen = {}
  for each in learner_variants.VARIANTS:
    if each.correct:
      chosen.setdefault(each.function, each.source)
  return chosen


# --------------------------------------------------------------------------
# What counts as code built at run time.

@pytest.mark.parametrize('source, construct', [
    ('exec(source)', 'exec'),
    ('run = eval\nrun(text)', 'eval'),
    ("code = compile(text, 'x', 'exec')", 'compile'),
    ("np2 = __import__('numpy')", '__import__'),
    ('import importlib', 'import importlib'),
    ('from importlib import import_module', 'from importlib import'),
    ('import marshal', 'import marshal'),
    ('import base64 as b64', 'import base64'),
    ('from binascii import a2b_base64', 'from binascii import'),
    ('import numpy, codecs', 'import codecs'),
    ('import zlib', 'import zlib'),
    ('import pickle', 'import pickle'),
    ('import lzma', 'import lzma'),
    ('import bz2', 'import bz2'),
    ('import types\nf = types.FunctionType(code, {})', 'FunctionType'),
    ('from types import CodeType', 'from types import CodeType'),
    ('body = DotProductAttention.__code__', '__code__'),
    ('names = f.__globals__', '__globals__'),
    ('kinds = object.__subclasses__()', '__subclasses__'),
    ('b = __builtins__', '__builtins__'),
    ('import builtins', 'import builtins'),
    ('module = print.__self__', '__self__'),
    ('f = getattr(print, name)', 'getattr on print by a computed name'),
    ("f = getattr(thing, '__globals__')", "the string '__globals__'"),
    ("f = namespace['exec']", "the string 'exec'"),
    ('import sys\nsys.modules.clear()', 'sys.modules'),
    ("sys.path.insert(0, '.')", 'sys.path'),
    ('get_ipython().run_cell(text)', 'get_ipython'),
    ("data = bytes.fromhex('00')", 'fromhex'),
    ('import subprocess', 'import subprocess'),
    ("os.system('python x.py')", 'os.system'),
])
def test_each_construct_is_found_and_named(source, construct):
  found = static_reading.findings(source)
  assert found and found[0][0] == construct, found


@pytest.mark.parametrize('source', [
    'import numpy as np\nimport math\nimport jax\nimport jax.numpy as jnp\nimport trax',
    'from trax import layers as tl\nfrom trax.fastmath import numpy as fnp',
    "model = TransformerLM(mode='eval')",
    "eval_task = training.EvalTask(labeled_data=eval_gen, metrics=[tl.Accuracy()])",
    "pattern = re.compile('[a-z]+')",
    'layer = getattr(tl, name)()',
    "heads = tl.Fn('AttnHeads', f, n_out=1)",
    'fast = jax.jit(f)',
    'from functools import partial',
    'import types\nsettings = types.SimpleNamespace(depth=2)',
    "import ast\nvalue = ast.literal_eval('[1, 2]')",
    'def evaluate(x):\n  return x.shape[-1]',
    "path = os.path.expanduser('~/model')",
    'import time\ntime.sleep(0)',
    'x = 1 +',  # Does not parse: runs nothing in the sandbox either (its SyntaxError is said).
])
def test_ordinary_code_trips_nothing(source):
  assert static_reading.findings(source) == []


def test_the_course_the_package_and_the_notebooks_trip_nothing():
  sources = [handout.setup_source()]
  for name in GRADED:
    sources += [handout.solution_source(name), handout.exercise_source(name),
                learner_variants.COURSE_ANSWERS[name]]
  sources += [variant.source for variant in learner_variants.VARIANTS]
  for path in sorted(glob.glob(os.path.join(os.path.dirname(handout.NOTEBOOK_03), '*.ipynb'))):
    sources += [cell.source for cell in nbformat.read(path, as_version=4).cells
                if cell.cell_type == 'code']
  assert [source for source in sources if static_reading.findings(source)] == []
  for answers in (learner_variants.COURSE_ANSWERS, equivalent_answers(), {}):
    cells = grader.learner_cells(learner_variants.notebook_with(answers))
    assert static_reading.manual_reasons(cells) == {}


# --------------------------------------------------------------------------
# Which functions go to the teacher: their cell's, or any cell that runs before it.

def test_the_packages_function_exec_d_from_base64_goes_to_the_teacher_with_what_follows():
  notebook = learner_variants.notebook_with(dict(
      learner_variants.COURSE_ANSWERS, DotProductAttention=hidden('DotProductAttention')))
  reasons = static_reading.manual_reasons(grader.learner_cells(notebook))
  assert set(reasons) == {*GRADED, static_reading.WHOLE_KEY}  # Every later cell runs after it.
  assert reasons['DotProductAttention'] == (
      "code built at run time (import base64, cell 'DotProductAttention' line 1): "
      'a teacher grades this function by hand')
  assert reasons[static_reading.WHOLE_KEY].endswith('a teacher grades this part by hand')
  assert grader.near_copies(grader.read_cells(grader.learner_cells(notebook))) == {}


def test_a_scratch_cell_with_eval_sends_the_functions_after_it():
  notebook, label = scratch_before(learner_variants.notebook_with(
      learner_variants.COURSE_ANSWERS), 'dot_product_self_attention', "n = eval('1 + 1')")
  reasons = static_reading.manual_reasons(grader.learner_cells(notebook))
  assert set(reasons) == {*GRADED[2:], static_reading.WHOLE_KEY}
  assert reasons['dot_product_self_attention'] == (
      f'code built at run time (eval, {label} line 1): a teacher grades this function by hand')


def test_a_cell_after_the_last_function_sends_only_the_whole_model():
  notebook = learner_variants.notebook_with(learner_variants.COURSE_ANSWERS)
  notebook.cells.append(SCRATCH('x = 1\nimport marshal'))
  reasons = static_reading.manual_reasons(grader.learner_cells(notebook))
  assert list(reasons) == [static_reading.WHOLE_KEY]
  assert f'(import marshal, cell {len(notebook.cells)} line 2)' in reasons[static_reading.WHOLE_KEY]


# --------------------------------------------------------------------------
# The verdicts: one cheap grading in the sandbox.

@pytest.fixture(scope='module')
def graded():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  answers = learner_variants.COURSE_ANSWERS
  first = learner_variants.notebook_with(dict(answers, DotProductAttention=hidden(
      'DotProductAttention')))
  second, label = scratch_before(learner_variants.notebook_with(answers),
                                 'dot_product_self_attention', "n = eval('1 + 1')")
  reports = grader.grade_batch([first, second], seed=SEED, functions=GRADED[:3], whole=False)
  return reports, label


@pytest.mark.slow
def test_a_function_sent_to_the_teacher_scores_nothing_and_says_why(graded):
  (report, _), _ = graded
  verdict = report.verdicts[0]
  assert verdict.manual and verdict.points == 0 and report.total == 0, grader.table(report)
  assert verdict.lines == [verdict.manual, 'the automatic check, not counted: passed']
  assert "(import base64, cell 'DotProductAttention' line 1)" in verdict.manual
  assert grader.verdict_text(verdict).startswith(
      'Exercise 1: DotProductAttention: graded by hand, out of 1\ncode built at run time')
  assert report.by_hand == 3 and '(3 by hand)' in grader.table(report)


@pytest.mark.slow
def test_the_functions_before_the_scratch_cell_are_graded_as_usual(graded):
  (_, report), label = graded
  scored = {v.grade_id: (v.points, bool(v.manual)) for v in report.verdicts}
  assert scored == {'test_DotProductAttention': (1, False),
                    'test_compute_attention_heads_closure': (1, False),
                    'test_dot_product_self_attention': (0, True)}, grader.table(report)
  assert f'(eval, {label} line 1)' in report.verdicts[2].manual


# --------------------------------------------------------------------------
# nbgrader: the gradebook and the feedback page (no sandbox: the report is given).

def _gradebook(url, notebook):
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  name = handout.ASSIGNMENT
  with Gradebook(url) as gradebook:
    gradebook.add_assignment(name)
    gradebook.add_notebook(name, name)
    for cell in notebook.cells:
      meta = cell.metadata.get('nbgrader', {})
      if meta.get('grade'):
        gradebook.add_grade_cell(meta['grade_id'], name, name, max_score=meta['points'],
                                 cell_type='code')
      if meta.get('solution'):
        gradebook.add_solution_cell(meta['grade_id'], name, name)
    gradebook.add_student('learner')
    gradebook.add_submission(name, 'learner')


@pytest.mark.slow
def test_the_gradebook_marks_it_for_manual_grading_and_the_feedback_says_why(
    tmp_path, monkeypatch):
  import nbgrader  # pylint: disable=g-import-not-at-top
  from nbconvert.exporters import HTMLExporter  # pylint: disable=g-import-not-at-top
  from nbgrader.api import Gradebook  # pylint: disable=g-import-not-at-top
  from nbgrader import preprocessors  # pylint: disable=g-import-not-at-top
  # nbgrader runs `alembic` from the PATH to make its database.
  monkeypatch.setenv('PATH', os.path.dirname(sys.executable) + os.pathsep + os.environ['PATH'])
  notebook = handout.exercise_notebook()
  url = f'sqlite:///{tmp_path}/gradebook.db'
  _gradebook(url, notebook)
  why = "code built at run time (exec, cell 'DotProductAttention' line 3): " + static_reading.MANUAL.format(
      'function')
  verdicts = [grader.Verdict(f'test_{name}', grader.title(name) if name in GRADED else name,
                            points, points, [], [])
              for name, points in handout.POINTS.items()]
  verdicts[0] = grader.by_hand(verdicts[0], why)
  monkeypatch.setattr(grader, 'grade', lambda nb, mode: grader.Report(SEED, mode, verdicts, 0))
  name = handout.ASSIGNMENT
  resources = {'nbgrader': {'notebook': name, 'assignment': name, 'student': 'learner',
                            'db_url': url}}
  for step in (nbgrader_plugin.SandboxedGrades, preprocessors.SaveAutoGrades,
               nbgrader_plugin.RecordReason):
    notebook, resources = step().preprocess(notebook, resources)
  with Gradebook(url) as gradebook:
    submitted = gradebook.find_submission_notebook(name, name, 'learner')
    grades = {grade.name: grade for grade in submitted.grades}
    by_hand = grades['test_DotProductAttention']
    assert (by_hand.auto_score, by_hand.needs_manual_grade, by_hand.score) == (None, True, 0)
    assert not any(grade.needs_manual_grade for key, grade in grades.items()
                   if key != 'test_DotProductAttention')
    assert submitted.needs_manual_grade and submitted.score == 19
    comments = {comment.name: comment.auto_comment for comment in submitted.comments}
    assert comments['DotProductAttention'] == why
    assert not any(comments[key] for key in GRADED[1:])
  notebook, resources = preprocessors.GetGrades().preprocess(notebook, resources)
  formgrader = os.path.join(os.path.dirname(nbgrader.__file__), 'server_extensions', 'formgrader')
  exporter = HTMLExporter(  # As `nbgrader generate_feedback` makes the page.
      template_name='feedback', extra_template_basedirs=[os.path.join(formgrader, 'templates')],
      extra_template_paths=[os.path.join(formgrader, 'static', 'node_modules', 'bootstrap',
                                         'dist', 'css')])
  html, _ = exporter.from_notebook_node(notebook, resources=resources)
  assert 'Score: 19.0 / 20.0' in html
  assert 'Exercise 1: DotProductAttention: graded by hand, out of 1' in html
  # In the cell's output (its text and its error), and as the comment of the function's cell.
  assert html.count('line 3): a teacher grades this function by hand') == 3


# --------------------------------------------------------------------------
# The near-copy flag: a disguised copy of the package's code, not the course's answers.

class _Renamed(ast.NodeTransformer):
  """Every variable, argument and inner function renamed; globals and keywords kept."""

  def __init__(self, bound):
    self.names = {name: f'v{k}' for k, name in enumerate(sorted(bound))}

  def visit_Name(self, node):
    node.id = self.names.get(node.id, node.id)
    return node

  def visit_arg(self, node):
    node.arg = self.names.get(node.arg, node.arg)
    return node

  def visit_FunctionDef(self, node):
    self.generic_visit(node)
    node.name = self.names.get(node.name, node.name)
    return node


def disguised(name, rename=True):
  """The package's function with its docstrings and comments gone, reformatted, renamed."""
  tree = ast.parse(handout.solution_source(name))
  for node in ast.walk(tree):
    body = getattr(node, 'body', None)
    if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
        body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
      node.body = body[1:] or [ast.Pass()]
  bound = {node.id for node in ast.walk(tree)
           if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
  bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
  bound |= {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.name != name}
  source = ast.unparse(_Renamed(bound).visit(tree) if rename else tree)  # 4-space layout.
  assert '#' not in source and '"""' not in source
  return source


def test_a_renamed_stripped_reformatted_copy_is_flagged_for_every_function():
  copies = {name: disguised(name) for name in GRADED}
  assert copies['DecoderBlock'] != handout.solution_source('DecoderBlock')
  assert set(grader.near_copies(copies)) == set(GRADED)
  # On its own a short one is the course's answer token for token: flagged only beside others.
  alone = {name for name in GRADED if grader.near_copy(name, copies[name])}
  assert alone == set(GRADED) - {'dot_product_self_attention', 'compute_attention_output_closure'}
  assert 'short, flagged as 8 other functions' in grader.near_copies(copies)[
      'dot_product_self_attention']


def test_a_copy_stripped_of_comments_is_flagged_as_the_issue_found_it_was_not():
  for name in GRADED[5:]:
    assert grader.near_copy(name, disguised(name, rename=False)), name


def test_the_courses_answers_and_other_correct_variants_are_not_flagged():
  assert grader.near_copies(learner_variants.COURSE_ANSWERS) == {}
  assert grader.near_copies(equivalent_answers()) == {}
  for variant in learner_variants.VARIANTS:
    if variant.correct:  # Not even beside nine flagged functions.
      assert grader.near_copy(variant.function, variant.source, len(GRADED) - 1) is None, \
          variant.name
  # The course's two short answers beside one copied function: still not flagged.
  mixed = dict(learner_variants.COURSE_ANSWERS, CausalAttention=disguised('CausalAttention'))
  assert set(grader.near_copies(mixed)) == {'CausalAttention'}


def renamed(name):
  """The package's function verbatim, comments kept, renamed, then bound to the graded name."""
  source = handout.solution_source(name)
  assert f'def {name}(' in source
  return source.replace(f'def {name}(', 'def _f_(', 1) + f'\n{name} = _f_\n'


def test_a_renamed_copy_bound_to_the_graded_name_is_flagged_as_a_verbatim_one():
  # Before: 0 flags (only a def with the graded name was read); the verbatim copy got 10.
  verbatim = {name: handout.solution_source(name) for name in GRADED}
  copies = {name: renamed(name) for name in GRADED}
  assert set(grader.near_copies(copies)) == set(grader.near_copies(verbatim)) == set(GRADED)


def test_a_copy_in_a_scratch_cell_flags_the_function_it_copies():
  cells = dict(learner_variants.COURSE_ANSWERS, DecoderBlock='DecoderBlock = _block_\n')
  cells['cell 40'] = renamed('DecoderBlock').replace('\nDecoderBlock = _f_\n', '').replace(
      'def _f_(', 'def _block_(')
  assert set(grader.near_copies(cells)) == {'DecoderBlock'}


def test_the_courses_whole_notebook_of_cells_flags_nothing():
  notebook = learner_variants.notebook_with(learner_variants.COURSE_ANSWERS)
  notebook.cells.insert(3, SCRATCH('double = lambda x: 2 * x\nclass Box:\n  size = 3\n'))
  assert grader.near_copies(grader.cell_sources(grader.learner_cells(notebook))) == {}
