"""A learner's cell reaches the grader as Jupyter runs it: magics and ``!`` made plain Python."""

import ast

import nbformat

import learner_variants
from summarizer.grading import grader, static_reading
from summarizer.grading.static_reading import python_source

ANSWER = learner_variants.COURSE_ANSWERS['DotProductAttention']


def test_a_cell_without_magics_is_kept_byte_for_byte():
  for source in (ANSWER, 'x = 1  # a comment\n\n\n', 'def f(:\n  pass', ''):
    assert python_source(source) == source


def test_time_and_capture_run_their_body_on_its_own_lines():
  timed = python_source('%%time\n' + ANSWER)
  assert timed == '\n' + ANSWER  # Comments and line numbers as written.
  assert python_source('%%capture out\n%time y = f(2)\n') == '\ny = f(2)\n'


def test_other_magics_and_shell_commands_change_nothing_a_grade_reads():
  source = python_source('%matplotlib inline\n!pip install x\nfiles = !ls\n%timeit f(1)\nx = 1\n')
  assert source.splitlines() == ['None', 'None', 'files = []', 'None', 'x = 1']
  assert python_source('%%bash\nrm -rf /\n').startswith('pass  # %%bash')
  ast.parse(python_source('if True:\n    %time z = 2\n'))


def test_a_cell_that_does_not_parse_stays_as_it_was():
  source = '%%time\ndef f(:\n  pass\n'
  assert python_source(source) == '\ndef f(:\n  pass\n'  # Its syntax error, on its line.
  assert python_source('def g(:\n%matplotlib inline\n') == 'def g(:\n%matplotlib inline\n'


def test_the_learners_own_get_ipython_is_still_read_as_code_built_at_run_time():
  source = "get_ipython().run_cell_magic('time', '', 'x = 1')\n"
  assert python_source(source) == source
  assert static_reading.findings(source)


def test_the_grader_and_the_static_reading_read_the_transformed_cells():
  notebook = learner_variants.notebook_with({'DotProductAttention': '%%time\n' + ANSWER})
  notebook.cells.insert(1, nbformat.v4.new_code_cell('%matplotlib inline\n!ls'))
  cells = grader.learner_cells(notebook)
  assert grader.read_cells(cells)['DotProductAttention'] == '\n' + ANSWER
  assert static_reading.manual_reasons(cells) == {}
