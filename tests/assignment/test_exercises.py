"""The assignment notebook: its five parts, scaffolding and not answers, nbgrader's
metadata; run as written it prints Part 1's expected outputs and stops at the first
blank. (Filled with the package's answers it passes every check: tests/test_nbgrader.py
autogrades such a submission to full marks.)"""

import ast
import copy
import inspect
import io
import re
import textwrap
import tokenize

import nbclient
import nbformat
import pytest

import summarizer
from summarizer import exercises, files
from summarizer.contract import handout
from summarizer.errors import SummarizerError

# The course's graded functions, UNQ_C1 to UNQ_C10, in its order.
COURSE_ORDER = ['DotProductAttention', 'compute_attention_heads_closure',
                'dot_product_self_attention', 'compute_attention_output_closure',
                'CausalAttention', 'DecoderBlock', 'TransformerLM', 'training_loop',
                'next_symbol', 'greedy_decode']
CLOSURES = {'compute_attention_heads_closure', 'compute_attention_output_closure'}
# Setup, Part 1's three, ten exercises and their checks, the training run, the
# loading and the two checks of the whole.
N_CODE_CELLS = 1 + 3 + 2 * 10 + 4


@pytest.fixture(scope='module')
def notebook():
  return handout.exercise_notebook()


def cell_index(notebook, tag):
  [index] = [i for i, cell in enumerate(notebook.cells)
             if tag in cell.metadata.get('tags', [])]
  return index


def printed(cell):
  return ''.join(output.text for output in cell.outputs if output.output_type == 'stream')


def execute(notebook, directory):
  """Runs the notebook in place, as Jupyter would, in ``directory``."""
  client = nbclient.NotebookClient(notebook, timeout=900, kernel_name='python3',
                                   resources={'metadata': {'path': str(directory)}})
  client.execute()


def explained_in_notebook_03():
  """name -> the text of notebook 03's cell tagged explains:<name>."""
  explained = {}
  for cell in nbformat.read(handout.NOTEBOOK_03, as_version=4).cells:
    for tag in cell.metadata.get('tags', []):
      if tag.startswith('explains:'):
        assert tag[len('explains:'):] not in explained, tag
        explained[tag[len('explains:'):]] = cell.source
  return explained


# --------------------------------------------------------------------------
# Run as written, and filled in.

@pytest.mark.slow
def test_run_as_written_it_prints_part_1_and_stops_at_the_first_exercises_check(
    notebook, tmp_path):
  ran = copy.deepcopy(notebook)
  with pytest.raises(nbclient.exceptions.CellExecutionError):
    execute(ran, tmp_path)
  # Part 1 runs and prints what its expected-output cells say.
  for name in ('tokenize', 'preprocess', 'buckets'):
    cell = ran.cells[cell_index(ran, f'data:{name}')]
    expected = ran.cells[cell_index(ran, f'expected:{name}')].source
    assert expected == ('**Expected output**\n\n```\n' + printed(cell) + '```\n'), name
  stop = cell_index(ran, 'check:DotProductAttention')
  check = ran.cells[stop]
  assert [output.ename for output in check.outputs
          if output.output_type == 'error'] == ['AssertionError']
  out = printed(check)
  assert 'Failed: DotProductAttention, example 1' in out
  assert 'it raised NotImplementedError (in DotProductAttention, line ' in out
  assert re.fullmatch(r'0 Tests passed, \d+ Tests failed', out.strip().splitlines()[-1])
  before = [cell for cell in ran.cells[:stop] if cell.cell_type == 'code']
  assert len(before) == 5  # Setup, Part 1's three cells and the first exercise.
  assert all(cell.execution_count and not any(output.output_type == 'error'
                                               for output in cell.outputs)
             for cell in before)
  after = [cell for cell in ran.cells[stop + 1:] if cell.cell_type == 'code']
  assert len(after) == N_CODE_CELLS - 6
  assert all(cell.execution_count is None and not cell.outputs for cell in after)


# --------------------------------------------------------------------------
# What the generator writes.

def package_body_code(name):
  """The package's body lines (comments dropped), which a cell must not show.

  For a closure, the inner function's body.
  """
  source = textwrap.dedent(inspect.getsource(getattr(summarizer, name)))
  lines = source.splitlines()
  for token in tokenize.generate_tokens(io.StringIO(source).readline):
    if token.type == tokenize.COMMENT:
      row, column = token.start
      lines[row - 1] = lines[row - 1][:column]
  function = ast.parse(source).body[0]
  body = function.body[1:] if ast.get_docstring(function) else function.body
  if name in CLOSURES:
    body = body[0].body
  code = [line.strip() for line in lines[body[0].lineno - 1:body[-1].end_lineno]]
  return [line for line in code if len(line) >= 8]


def blanked_function(source, name):
  """Parses an exercise cell; asserts its function's body is the blank only."""
  [function] = [node for node in ast.parse(source).body
                if isinstance(node, ast.FunctionDef)]
  assert function.name == name
  statements = function.body[1:] if ast.get_docstring(function) else function.body
  if name in CLOSURES:  # Outer function kept: def inner, return inner.
    inner, returned = statements
    assert isinstance(inner, ast.FunctionDef)
    assert ast.unparse(returned) == f'return {inner.name}'
    statements = inner.body
  assert [ast.unparse(statement) for statement in statements] == [
      'raise NotImplementedError()']
  return function


def test_ten_exercises_in_course_order_each_after_its_explanation(notebook):
  explained = explained_in_notebook_03()
  assert sorted(explained) == sorted(COURSE_ORDER)
  blanks = [i for i, cell in enumerate(notebook.cells)
            if cell.cell_type == 'code' and '# YOUR CODE HERE' in cell.source]
  assert len(blanks) == 10
  for number, (index, name) in enumerate(zip(blanks, COURSE_ORDER), 1):
    cell = notebook.cells[index]
    assert cell.metadata['tags'] == [f'exercise:{name}']
    assert f'# UNQ_C{number}\n' in cell.source
    assert cell.source.count('# YOUR CODE HERE') == 1
    assert cell.source.count('raise NotImplementedError()') == 1
    function = blanked_function(cell.source, name)
    package_tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(summarizer, name))))
    package_arguments = ast.unparse(package_tree.body[0].args)
    for package_name, notebook_name in handout.NOTEBOOK_NAMES.items():
      package_arguments = package_arguments.replace(package_name, notebook_name)
    assert ast.unparse(function.args) == package_arguments
    assert ast.get_docstring(function) == ast.get_docstring(package_tree.body[0])
    code = package_body_code(name)
    assert len(code) >= 1
    leaked = [line for line in code if line in cell.source]
    assert not leaked, (name, leaked)
    explanation = notebook.cells[index - 1]
    assert explanation.cell_type == 'markdown'
    assert explanation.source.endswith(explained[name])
    assert f'`{name}` (UNQ_C{number})' in explanation.source.splitlines()[0]
    assert f'checks.test_{name}({name}' in notebook.cells[index + 1].source


def test_exercises_show_hints_not_code(notebook):
  attention = notebook.cells[cell_index(notebook, 'exercise:DotProductAttention')].source
  assert 'jnp.matmul(' not in attention
  assert 'jnp.matmul' in attention and '(..., L_q, L_k)' in attention
  assert 'logsumexp' in attention
  causal = notebook.cells[cell_index(notebook, 'exercise:CausalAttention')].source
  assert 'tl.Branch(' not in causal
  assert 'tl.Branch' in causal and "'AttnHeads'" in causal
  heads = notebook.cells[cell_index(notebook, 'exercise:compute_attention_heads_closure')].source
  assert '(B, L, H, Dh)' in heads
  assert 'jnp.reshape(' not in heads and 'jnp.transpose(' not in heads
  training = notebook.cells[cell_index(notebook, 'exercise:training_loop')].source
  assert 'pylint' not in training  # The package's linter pragmas are not for learners.


def test_check_cells_use_the_courses_call_forms_and_stop_on_failure(notebook):
  sources = {name: notebook.cells[cell_index(notebook, f'check:{name}')].source
             for name in COURSE_ORDER}
  assert ("assert checks.test_DotProductAttention(DotProductAttention) == 0"
          in sources['DotProductAttention'])
  assert ('checks.test_training_loop(training_loop, TransformerLM) == 0'
          in sources['training_loop'])
  assert 'checks.test_next_symbol(next_symbol, TransformerLM) == 0' in sources['next_symbol']
  assert 'checks.test_greedy_decode(greedy_decode) == 0' in sources['greedy_decode']


def test_setup_imports_numpy_trax_the_data_and_the_checks_only(notebook):
  setup = notebook.cells[cell_index(notebook, 'setup')]
  assert notebook.cells.index(setup) == 1
  bound, modules = set(), set()
  for node in ast.walk(ast.parse(setup.source)):
    if isinstance(node, ast.Import):
      bound.update(alias.asname or alias.name for alias in node.names)
      modules.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
      bound.update(alias.asname or alias.name for alias in node.names)
      modules.add(node.module)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      bound.add(node.id)
  assert not bound & set(COURSE_ORDER)
  assert modules == {'os', 'tempfile', 'textwrap', 'numpy', 'summarizer.assignment',
                     'summarizer.contract', 'summarizer._trax'}
  assert bound == {'os', 'tempfile', 'textwrap', 'np', 'checks', 'notebook_data', 'trax', 'tl',
                   'jnp', 'fastmath', 'training',
                   # The constants the solutions read, written out.
                   'EOS', 'SEP', 'MASK_SCORE', 'MAX_SUMMARY_TOKENS', 'LEARNING_RATE',
                   'WARMUP_STEPS', 'COURSE_STEPS_PER_CHECKPOINT', 'VOCAB_SIZE'}


# Package functions that would do (part of) an exercise: no cell may name them.
PACKAGE_HELPERS = ('causal_mask', 'FeedForward', 'PositionalEncoder', 'greedy_tokens',
                   'CachedDotProductAttention', 'joint_sequence', 'summarize')


def test_no_cell_names_a_package_function_that_does_an_exercise(notebook):
  for cell in notebook.cells:
    if cell.cell_type == 'code':
      named = {node.id for node in ast.walk(ast.parse(cell.source))
               if isinstance(node, ast.Name)}
      assert not named & set(PACKAGE_HELPERS), cell.metadata.tags
      assert 'summarizer.' not in cell.source.replace('summarizer._trax', '').replace(
          'summarizer.assignment import checks', '').replace(
          'summarizer.contract import notebook_data', ''), cell.metadata.tags
  texts = [cell.source for cell in notebook.cells if 'exercise:' in cell.metadata.tags[0]]
  assert not any(helper in text for helper in PACKAGE_HELPERS for text in texts)


def test_each_step_names_what_the_solution_assigns():
  for name in COURSE_ORDER:
    assigned = handout._assigned(handout.cut(name).tree)  # pylint: disable=protected-access
    targets = [target for target, _ in handout.STEPS[name]
               if target and target != handout.BEYOND_THE_COURSE]
    assert set(targets) <= set(assigned), name
    source = handout.exercise_source(name)
    assert all(f'. {target}: ' in source for target in targets), name


def test_the_hints_follow_the_course_and_say_last_what_goes_beyond_it():
  hints = handout.steps('CausalAttention')
  text = ' '.join(line.lstrip(' #') for line in hints)
  # The course asserts that the heads split the features; so do the hints.
  assert hints[1].strip() == ('# 1. assert that d_feature is a multiple of n_heads, as the '
                              'course does')
  assert 'ValueError' not in text and 'raise' not in text
  # The predict-mode cache is the package's, not the course's: one short note, last.
  beyond = [i for i, line in enumerate(hints) if line.strip().startswith('# Beyond the course: ')]
  assert beyond and beyond[0] > max(i for i, line in enumerate(hints) if 'Useful here' in line)
  assert len(hints) - beyond[0] <= 3
  assert text.count('cache') == 1
  for name in COURSE_ORDER:  # Only notes marked so go beyond the course, after the steps.
    numbered = [line for line in handout.steps(name) if re.match(r'\s*# \d+\. ', line)]
    assert not any('Beyond the course' in line for line in numbered), name


def test_the_packages_causal_attention_asserts_as_the_course_does():
  with pytest.raises(AssertionError, match='not a multiple of n_heads'):
    summarizer.CausalAttention(d_feature=10, n_heads=3)
  assert 'assert d_feature % n_heads == 0' in handout.solution_source('CausalAttention')


def test_a_grade_takes_the_cells_and_setup_the_learner_was_handed(notebook):
  code = handout.package_code()
  handed = {cell.metadata['nbgrader'].get('grade_id'): cell.source for cell in notebook.cells}
  assert code.scaffolds == {name: handed[name] for name in COURSE_ORDER}
  assert code.setup == next(cell.source for cell in notebook.cells if cell.get('id') == 'setup')
  for name in COURSE_ORDER:  # The answers, where the learner's cells hold the blank.
    assert 'raise NotImplementedError()' in handed[name]
    assert code.solutions[name] == handout.solution_source(name)
    assert 'NotImplementedError' not in code.solutions[name], name
  assert handout.package_code() is code  # Read once a process.


def test_every_cell_has_nbgrader_metadata(notebook):
  ids = []
  for cell in notebook.cells:
    metadata = cell.metadata['nbgrader']
    assert metadata['schema_version'] == 3
    ids.append(metadata['grade_id'])
    tag = cell.metadata['tags'][0]
    if tag.startswith('exercise:'):
      assert metadata['solution'] and not metadata['grade'] and not metadata['locked']
      assert metadata['grade_id'] == tag[len('exercise:'):]
    elif tag.startswith('check:'):
      name = tag[len('check:'):]
      assert metadata['grade'] and metadata['locked'] and not metadata['solution']
      assert metadata['grade_id'] == f'test_{name}'
      assert metadata['points'] == handout.POINTS[name]
    else:
      assert metadata['locked'] and not metadata['solution'] and not metadata['grade']
  assert len(ids) == len(set(ids))


def test_the_five_parts_in_order(notebook):
  tags = [cell.metadata['tags'][0] for cell in notebook.cells]
  parts = [tag for tag in tags if tag.startswith('part:')]
  assert parts == ['part:1', 'part:1.2', 'part:1.3', 'part:2', 'part:3', 'part:4', 'part:5']
  order = ['setup', 'data:tokenize', 'data:preprocess', 'data:buckets',
           *[f'exercise:{name}' for name in COURSE_ORDER[:8]], 'run:training', 'run:load',
           'check:trained_model', 'exercise:next_symbol', 'exercise:greedy_decode',
           'check:summary']
  assert [tags.index(tag) for tag in order] == sorted(tags.index(tag) for tag in order)
  assert 'training_loop(TransformerLM, ' in notebook.cells[tags.index('run:training')].source
  load = notebook.cells[tags.index('run:load')].source
  assert "TransformerLM(**notebook_data.model_size(), mode='eval')" in load
  assert 'init_from_file(notebook_data.MODEL_FILE, weights_only=True)' in load


def test_no_outputs_python3_kernel_and_the_same_notebook_each_time(notebook):
  assert notebook.metadata.kernelspec.name == 'python3'
  nbformat.validate(notebook)
  code = [cell for cell in notebook.cells if cell.cell_type == 'code']
  assert len(code) == N_CODE_CELLS
  assert all(not cell.outputs and cell.execution_count is None for cell in code)
  assert nbformat.writes(handout.exercise_notebook()) == nbformat.writes(notebook)


def test_notebook_03_runs_every_check_with_its_output_stored(notebook):
  notebook_03 = nbformat.read(handout.NOTEBOOK_03, as_version=4)
  for name in COURSE_ORDER:
    ours = notebook.cells[cell_index(notebook, f'check:{name}')].source
    runs = [cell for cell in notebook_03.cells if cell.cell_type == 'code'
            and f'checks.test_{name}(' in cell.source]
    assert [cell.source for cell in runs] == [ours], name
    assert printed(runs[0]) == 'All tests passed\n', name


def test_a_function_without_its_explanation_is_an_error(tmp_path):
  notebook_03 = nbformat.read(handout.NOTEBOOK_03, as_version=4)
  for cell in notebook_03.cells:
    if 'explains:CausalAttention' in cell.metadata.get('tags', []):
      cell.metadata['tags'] = []
  path = tmp_path / '03.ipynb'
  nbformat.write(notebook_03, str(path))
  with pytest.raises(SummarizerError, match='explains:CausalAttention'):
    handout.exercise_notebook(explained_by=str(path))


# --------------------------------------------------------------------------
# The command.

def one_line(text):
  assert text.count('\n') == 1 and text.startswith('error: '), text
  return text


def test_command_writes_refuses_to_overwrite_and_overwrites_with_force(
    notebook, tmp_path, capsys):
  path = tmp_path / 'mine.ipynb'
  assert exercises.main(['--out', str(path)]) == 0
  assert nbformat.reads(path.read_text(), as_version=4) == notebook
  capsys.readouterr()
  path.write_text('my answers')
  assert exercises.main(['--out', str(path)]) == 2
  captured = capsys.readouterr()
  assert '--force' in one_line(captured.err) and not captured.out
  assert path.read_text() == 'my answers'
  assert exercises.main(['--out', str(path), '--force']) == 0
  assert path.read_text() == nbformat.writes(notebook)


def test_command_writes_the_default_file_in_the_current_directory(
    tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert exercises.main([]) == 0
  assert (tmp_path / 'transformer_summarizer_exercises.ipynb').is_file()


def test_command_errors_are_one_line(tmp_path, capsys):
  assert exercises.main(['--out', str(tmp_path / 'missing' / 'x.ipynb')]) == 2
  assert 'cannot write' in one_line(capsys.readouterr().err)
  assert exercises.main(['--out', str(tmp_path), '--force']) == 2
  one_line(capsys.readouterr().err)
  with pytest.raises(SystemExit) as exited:
    exercises.main(['--outt', 'x.ipynb'])
  assert exited.value.code == 2
  one_line(capsys.readouterr().err)


def test_the_written_out_layers_are_lab_2s_helpers():
  # The graded DecoderBlock and TransformerLM write out the layers of
  # FeedForward and PositionalEncoder (the exercise asks for them).
  from summarizer import model  # pylint: disable=g-import-not-at-top
  from summarizer._trax import tl  # pylint: disable=g-import-not-at-top
  block = model.DecoderBlock(16, 32, 4, 0.1, 'train', tl.Relu)
  assert str(block[1]) == str(tl.Residual(model.FeedForward(16, 32, 0.1, 'train', tl.Relu)))
  lm = model.TransformerLM(vocab_size=100, d_model=16, d_ff=32, n_layers=1, n_heads=4,
                           max_len=64, mode='eval')
  encoder = tl.Serial(model.PositionalEncoder(100, 16, 0.1, 64, 'eval'))
  assert [str(layer) for layer in lm.sublayers[1:4]] == [str(layer) for layer in encoder.sublayers]


@pytest.mark.parametrize('content,message', [
    ('{"cells": 5}', 'cannot read the notebook (not a notebook: no "nbformat" version number)'),
    ('{"cells": 5, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
     'cannot read the notebook (not a notebook: '),
    ('[1, 2]', 'cannot read the notebook (not a notebook: not a JSON object)'),
    ('{"cells": ' + '[' * 100_000 + ']' * 100_000 + '}', 'nested more than 64 levels deep'),
])
def test_a_notebook_to_grade_that_is_no_notebook_is_one_line_and_status_2(
    tmp_path, capsys, content, message):
  path = tmp_path / 'submitted.ipynb'
  path.write_text(content)
  assert exercises.main(['--grade', str(path)]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and message in err, err
  assert str(path) in err


def test_a_notebook_to_grade_over_the_bound_is_refused_unread(tmp_path, capsys, monkeypatch):
  monkeypatch.setattr(files, 'MAX_NOTEBOOK_BYTES', 1000)
  path = tmp_path / 'large.ipynb'
  path.write_text('{"cells": [], "x": "' + 'a' * 2000 + '"}')
  assert exercises.main(['--grade', str(path)]) == 2
  assert 'too large (over 1 KB, the most a notebook may be)' in capsys.readouterr().err


def test_a_course_refused_for_an_existing_config_writes_nothing(tmp_path, capsys):
  course = tmp_path / 'course'
  course.mkdir()
  (course / 'nbgrader_config.py').write_text('# the teacher\'s own\n')
  assert exercises.main(['--nbgrader', str(course)]) == 2
  assert capsys.readouterr().err == (f'error: {course / "nbgrader_config.py"} exists: pass '
                                     '--force to overwrite it\n')
  assert [p.name for p in course.iterdir()] == ['nbgrader_config.py']
  assert (course / 'nbgrader_config.py').read_text() == '# the teacher\'s own\n'
