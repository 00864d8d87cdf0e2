"""The sandboxed grader, without nbgrader: correct work gets full marks, each mistake
costs its own points, and no cheat gains any.

Each fixture grades a batch of notebooks in one sandbox run (``grade_batch``),
with one seed for the module, so the package's results are computed once.
"""

import ast
import os
import shutil
import subprocess
import sys
import textwrap

import nbformat
import numpy as np
import pytest

import learner_variants
from summarizer import attention
from summarizer.contract import handout, measures, probes, probes_layers, recording
from summarizer.grading import grader, sandbox
from summarizer.config import PACKAGE_DIR
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

from . import SEED

needs_bwrap = pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')


def answers(**changed):
  """The course's answers with some functions replaced (name -> code)."""
  return dict(learner_variants.COURSE_ANSWERS, **changed)


def variant(name):
  return next(v for v in learner_variants.VARIANTS if v.name == name)


def equivalent_answers():
  """One correct variant of each function, written another way than the course's."""
  chosen = {}
  for each in learner_variants.VARIANTS:
    if each.correct and each.function not in chosen:
      chosen[each.function] = each.source
  chosen['next_symbol'] = variant('a warning on stderr as it works').source
  assert set(chosen) == set(GRADED)
  return chosen


CRASH = '''
def next_symbol(cur_output_tokens, model):
  os._exit(3)
'''
# A wrong CausalAttention, a next_symbol that ends the process, a wrong greedy_decode.
MIXED = {'CausalAttention': variant('no last Dense').source, 'next_symbol': CRASH,
         'greedy_decode': variant('does not stop at EOS').source}


def points(report):
  return {verdict.grade_id[len('test_'):]: verdict.points for verdict in report.verdicts}


@pytest.fixture(scope='module')
def reports():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = {
      'course': learner_variants.notebook_with(answers()),
      'equivalent': learner_variants.notebook_with(equivalent_answers()),
      'blank': learner_variants.notebook_with({}),
      'mixed': learner_variants.notebook_with(answers(**MIXED)),
      'magics': with_magics(learner_variants.notebook_with(answers())),
  }
  graded = grader.grade_batch(list(notebooks.values()), seed=SEED)
  return dict(zip(notebooks, graded))


@pytest.mark.slow
def test_the_courses_answers_and_an_equivalent_set_get_full_marks(reports):
  for name in ('course', 'equivalent'):
    report = reports[name]
    assert report.total == report.max_total == 20, grader.table(report)


def with_magics(notebook):
  """The course's answers as a learner runs them in Jupyter: %%time, %matplotlib, !ls."""
  for cell in notebook.cells:
    if cell.metadata.get('nbgrader', {}).get('grade_id') == 'DotProductAttention':
      cell.source = '%%time\n' + cell.source
  setup = next(i for i, cell in enumerate(notebook.cells) if cell.get('id') == 'setup')
  notebook.cells.insert(setup + 1, nbformat.v4.new_code_cell(
      '%matplotlib inline\n!ls\nimport numpy as onp  # A helper cell of the learner\'s.'))
  return notebook


@pytest.mark.slow
def test_magics_grade_as_jupyter_runs_them(reports):
  # Before: 'SyntaxError: invalid syntax (line 1)' and 14/20.
  report = reports['magics']
  assert report.total == report.max_total == 20, grader.table(report)
  assert not report.by_hand


@pytest.mark.slow
def test_a_blank_notebook_gets_nothing(reports):
  assert reports['blank'].total == 0
  assert 'raised NotImplementedError' in grader.table(reports['blank'])


@pytest.mark.slow
def test_three_wrong_functions_one_a_crash_lose_only_theirs_and_the_whole_models(reports):
  scored = points(reports['mixed'])
  lost = {name for name, score in scored.items() if score == 0}
  assert lost == {'CausalAttention', 'next_symbol', 'greedy_decode', 'trained_model',
                  'summary'}, grader.table(reports['mixed'])
  assert reports['mixed'].total == 10
  table = grader.table(reports['mixed'])
  assert 'crashed (exit status 3' in table
  assert 'why: these functions fail their own checks: CausalAttention' in table


@pytest.mark.slow
def test_a_wrong_causal_attention_leaves_a_note_on_the_functions_built_on_it(reports):
  notes = {verdict.grade_id: verdict.notes for verdict in reports['mixed'].verdicts}
  for name in ('DecoderBlock', 'TransformerLM'):
    assert any('Exercise 5: CausalAttention failed its own check' in note
               for note in notes[f'test_{name}']), notes


@pytest.mark.slow
def test_the_inputs_are_drawn_from_the_recorded_seed(reports):
  assert {report.seed for report in reports.values()} == {SEED}
  assert f'seed {SEED}, sandbox bwrap' in grader.table(reports['course'])


# --------------------------------------------------------------------------
# The notebook runs as a kernel runs it; only results are graded.

SCRATCH = nbformat.v4.new_code_cell  # A cell the learner added: no nbgrader metadata.
ACROSS = ('DotProductAttention', 'dot_product_self_attention', 'greedy_decode')


def across_cells():
  """Correct work written across cells, a looping scratch cell, a decoder that always prints."""
  notebook = learner_variants.notebook_with(answers(
      DotProductAttention=learner_variants.COURSE_ANSWERS['DotProductAttention'] + textwrap.dedent('''
          def causal_mask(size):  # A helper used in Exercise 3's cell.
            return onp.tril(onp.ones((1, size, size), dtype=bool))
          '''),
      dot_product_self_attention=textwrap.dedent('''
          def dot_product_self_attention(q, k, v):
            return DotProductAttention(q, k, v, causal_mask(q.shape[-2]))
          '''),
      greedy_decode=variant('prints whatever verbose says (printing is feedback)').source))
  setup = next(i for i, cell in enumerate(notebook.cells) if cell.get('id') == 'setup')
  notebook.cells[setup + 1:setup + 1] = [
      SCRATCH('import numpy as onp'),  # An import in a scratch cell.
      SCRATCH('import time\nwhile True:\n  time.sleep(1)')]  # Stopped: other cells than its own.
  return notebook


def learners_test_cell():
  """A blank solution cell, and the answer written into the learner's copy of its test cell."""
  return learner_variants.notebook_with(answers(
      DotProductAttention=handout.exercise_source('DotProductAttention'),
      test_DotProductAttention=learner_variants.COURSE_ANSWERS['DotProductAttention']))


@pytest.fixture(scope='module')
def kernel_like():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  return grader.grade_batch([across_cells(), learners_test_cell()], seed=SEED,
                            functions=ACROSS, whole=False)


@pytest.mark.slow
def test_work_across_cells_gets_its_points_and_printing_costs_nothing(kernel_like):
  report = kernel_like[0]
  assert report.total == report.max_total == 4, grader.table(report)
  [decode] = [v for v in report.verdicts if v.grade_id == 'test_greedy_decode']
  assert any('with verbose=False it printed' in note and 'no points lost' in note
             for note in decode.notes), decode.notes
  # The looping scratch cell was stopped after OTHER_CELLS_SECONDS in each run.
  assert report.seconds < 120


@pytest.mark.slow
def test_the_learners_copy_of_a_test_cell_is_never_run(kernel_like):
  scored = points(kernel_like[1])
  assert scored['DotProductAttention'] == 0, grader.table(kernel_like[1])


def test_the_learners_cells_are_their_solution_cells_and_their_own_in_order():
  cells = grader.learner_cells(across_cells())
  assert [cell['label'] for cell in cells][:3] == ['cell 3', 'cell 4', 'DotProductAttention']
  assert [cell['grade_id'] for cell in cells if cell['grade_id']] == list(GRADED)
  assert grader.read_cells(cells)['dot_product_self_attention'].strip().startswith('def ')


@pytest.mark.slow
def test_the_whole_model_runs_every_cell_and_a_function_the_cells_up_to_its_own():
  # Cells of the learner's own (no grade id) before a solution cell pasted twice.
  cells = [{'label': 'cell 3', 'grade_id': None, 'source': 'order.append("scratch")'},
           {'label': 'f', 'grade_id': 'f', 'source': 'order.append("first f")'},
           {'label': 'cell 5', 'grade_id': None, 'source': 'order.append("pasted")'},
           {'label': 'f', 'grade_id': 'f', 'source': 'order.append("last f")'},
           {'label': 'g', 'grade_id': 'g', 'source': 'order.append("g")'}]
  script = textwrap.dedent(f'''
      import sys
      sys.path.insert(0, {sandbox.HERE!r})
      import worker
      job = {{'setup': 'order = []', 'submissions': [{cells!r}], 'other cells seconds': 5}}
      for upto in ('f', None):
        item = {{'submission': 0, 'upto': upto, 'package': []}}
        print(worker.namespace(job, item, {{}}, [])['order'])
      ''')
  done = subprocess.run([sys.executable, '-I', '-c', script, 'job', os.path.dirname(
      sandbox.HERE.rsplit(os.sep, 1)[0])], capture_output=True, text=True, timeout=600,
                        check=False, env={'PATH': '/usr/bin', 'JAX_PLATFORMS': 'cpu'})
  assert done.returncode == 0, done.stderr
  assert done.stdout.splitlines() == [
      "['scratch', 'first f', 'pasted', 'last f']",
      "['scratch', 'first f', 'pasted', 'last f', 'g']"]


@pytest.fixture(scope='module')
def cheats(tmp_path_factory):
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  directory = tmp_path_factory.mktemp('cheats')
  paths = [learner_variants.cheat_notebook(cheat, str(directory / str(index)))
           for index, cheat in enumerate(learner_variants.CHEATS)]
  targets = {cheat.function for cheat in learner_variants.CHEATS}
  return grader.grade_batch(paths, seed=SEED, functions=targets)


@pytest.mark.slow
def test_no_cheat_gains_a_point(cheats):
  for cheat, report in zip(learner_variants.CHEATS, cheats):
    assert report.total == 0, (cheat.name, grader.table(report))


@pytest.mark.slow
def test_the_packages_function_is_named_as_the_reason(cheats):
  for cheat, report in zip(learner_variants.CHEATS, cheats):
    if cheat.name in ('from summarizer import CausalAttention', 'a module alias',
                      'a types.FunctionType copy', 'exec(inspect.getsource(...))'):
      assert "why: the package's own functions" in grader.table(report), cheat.name


def test_every_family_of_the_issue_is_tried():
  families = {cheat.family for cheat in learner_variants.CHEATS}
  assert {'the checker patched', 'files handed in', 'the checker read',
          'the package written', "the package's function"} <= families
  assert len(learner_variants.CHEATS) >= 15


@pytest.fixture(scope='module')
def explained():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  mistakes = ['heads reshaped without the transpose', 'heads joined without the transpose',
              'one block repeated', 'a block too few']
  notebooks = [learner_variants.notebook_with(answers(**{variant(m).function: variant(m).source}))
               for m in mistakes]
  functions = {variant(m).function for m in mistakes}
  return dict(zip(mistakes, grader.grade_batch(notebooks, seed=SEED, functions=functions,
                                               whole=False)))


@pytest.mark.parametrize('mistake, cause', [
    ('heads reshaped without the transpose', 'why: the heads were split without the transpose'),
    ('heads joined without the transpose', 'why: the heads were joined without the transpose'),
    ('one block repeated', 'why: one block object repeated ([DecoderBlock(...)] * n_layers)'),
    ('a block too few', 'where n_layers asks for'),
])
@pytest.mark.slow
def test_a_recognised_mistake_is_named_and_costs_its_function_only(explained, mistake, cause):
  report = explained[mistake]
  assert cause in grader.table(report)
  lost = {verdict.grade_id for verdict in report.verdicts if verdict.points == 0}
  assert lost == {f'test_{variant(mistake).function}'}


# --------------------------------------------------------------------------
# The sandbox's parts, quickly.

def test_without_bubblewrap_it_refuses_in_one_line(monkeypatch):
  monkeypatch.setattr(shutil, 'which', lambda name: None)
  with pytest.raises(SummarizerError, match='sudo apt-get install bubblewrap'):
    grader.grade(learner_variants.notebook_with({}), seed=SEED)


def test_no_graded_module_is_visible_in_the_sandbox():
  modules = sandbox.graded_modules()
  assert set(modules) == set(GRADED)
  assert not set(modules.values()) & set(sandbox.VISIBLE_MODULES)
  assert all(not name.startswith('assignment') for name in sandbox.VISIBLE_MODULES)


def test_the_sandbox_shows_of_the_contract_only_the_probes_and_what_they_import():
  visible = {name[:-len('.py')].replace('/', '.') for name in sandbox.VISIBLE_MODULES}
  shown = {name for name in visible if name.startswith('contract.')}
  # The probes, and what follows the learner's function for the where: line (its trace alone).
  assert shown == {'contract.__init__', 'contract.recording', 'contract.signature',
                   'contract.probes_layers', 'contract.probes', 'contract.following',
                   'contract.check_inputs'}
  # Every module of the package a visible module imports is visible too.
  for name in visible:
    path = os.path.join(PACKAGE_DIR, name.replace('.', os.sep) + '.py')
    for node in ast.walk(ast.parse(open(path, encoding='utf-8').read())):
      if isinstance(node, ast.ImportFrom) and (node.module or '').startswith('summarizer.'):
        imported = node.module[len('summarizer.'):]
        inner = {f'{imported}.{alias.name}' for alias in node.names}
        assert imported in visible or imported + '.__init__' in visible and inner <= visible, (
            name, node.module)


@needs_bwrap
def test_what_the_sandbox_reads_may_live_under_tmp(tmp_path):
  # A checkout, its virtual environment or a model folder under /tmp must
  # stay visible: the sandbox's own fresh /tmp is mounted before them.
  model_dir, job_dir = tmp_path / 'model', tmp_path / 'job'
  model_dir.mkdir()
  job_dir.mkdir()
  (model_dir / 'config.json').write_text('{}')
  (tmp_path / 'private.txt').write_text('not for the sandbox')
  assert str(tmp_path).startswith('/tmp/')
  command = sandbox.bwrap_command(str(job_dir), [str(model_dir)])
  probe = ('import os, sys; print(sorted(os.listdir(sys.argv[1])), '
           'os.path.exists(sys.argv[2]), os.path.exists(sys.argv[3]))')
  command = command[:command.index('/grader/worker.py', command.index('-I'))]
  command += ['-c', probe, str(model_dir), str(tmp_path / 'private.txt'),
              '/grader/watchers.py']
  done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
  assert done.returncode == 0, done.stderr
  assert done.stdout.split() == ["['config.json']", 'False', 'True']


def test_the_setup_loaded_before_the_forks_starts_no_thread_and_no_jax_backend():
  # The sandbox's first process runs the setup (its imports: TensorFlow too) once,
  # then forks a child an item: a process forked with threads could deadlock.
  script = textwrap.dedent(f'''
      import sys
      sys.path.insert(0, {sandbox.HERE!r})
      import worker
      from jax._src import xla_bridge

      def threads():
        with open('/proc/self/status') as f:
          return next(line.split()[1] for line in f if line.startswith('Threads:'))

      before = threads()
      worker.preload({grader.trusted_setup()!r})
      print(before, threads(), xla_bridge.backends_are_initialized(),
            'tensorflow' in sys.modules, 'trax.supervised.training' in sys.modules)
      ''')
  done = subprocess.run([sys.executable, '-I', '-c', script], capture_output=True, text=True,
                        timeout=600, check=False, cwd=os.path.dirname(sandbox.HERE),
                        env={'PATH': '/usr/bin', 'JAX_PLATFORMS': 'cpu'})
  assert done.returncode == 0, done.stderr
  before, after, started, *imported = done.stdout.split()
  assert after == before and started == 'False'
  assert imported == ['True', 'True']


@needs_bwrap
@pytest.mark.slow
def test_the_sandbox_reads_the_graders_compiled_programs_and_writes_none(reports):
  # The package's results left jax's compiled programs in a folder that every
  # submission's sandbox reads: the learner's code never writes there.
  folder = grader.prepared(SEED)[3]
  before = {entry.name: entry.stat().st_mtime for entry in os.scandir(folder)}
  assert len(before) > 20
  report = grader.grade(learner_variants.notebook_with(answers()), seed=SEED,
                        functions={'DecoderBlock'}, whole=False)
  assert report.total == 2
  assert {entry.name: entry.stat().st_mtime for entry in os.scandir(folder)} == before


def test_bytes_that_are_not_the_workers_are_ignored():
  good = sandbox._frame(b'{"id": "x", "status": {"exit": 0}, "size": 0}')  # pylint: disable=protected-access
  assert sandbox.read_frames(good + b'\x00garbage')['x']['results'] is None
  assert sandbox.read_frames(b'\xff' * 40) == {}


def test_a_copy_of_the_packages_code_is_flagged_not_the_courses_answers():
  for name in GRADED:
    assert grader.near_copy(name, handout.solution_source(name)), name
    assert grader.near_copy(name, learner_variants.COURSE_ANSWERS[name]) is None, name


def test_the_package_digest_sees_a_change(tmp_path):
  (tmp_path / 'a.py').write_text('x = 1\n')
  before = sandbox.package_digest([str(tmp_path)])
  (tmp_path / 'a.py').write_text('x = 2\n')
  assert sandbox.package_digest([str(tmp_path)]) != before
  assert np.isscalar(len(before))


def test_the_package_digest_leaves_bytecode_out(tmp_path):
  # A worker of --sandbox process may compile the package's modules (the grader's
  # own environment may not write bytecode): not a change of the package.
  (tmp_path / 'a.py').write_text('x = 1\n')
  before = sandbox.package_digest([str(tmp_path)])
  (tmp_path / '__pycache__').mkdir()
  (tmp_path / '__pycache__' / 'a.cpython-311.pyc').write_bytes(b'compiled')
  assert sandbox.package_digest([str(tmp_path)]) == before


def test_every_seed_draws_a_model_trax_can_build():
  # Trax's sinusoidal PositionalEncoding needs an even d_model; an odd one failed
  # the package's own TransformerLM for about one seed in six.
  for seed in range(300):
    for _, kwargs, _ in probes_layers.transformer_runs(seed):
      assert kwargs['d_model'] % 2 == 0 and kwargs['d_model'] % kwargs['n_heads'] == 0, seed


# The array exercises' probes, with a function that returns its input (only the
# case names are looked at).
ARRAY_PROBES = {
    'DotProductAttention': lambda q, k, v, mask: q,
    'compute_attention_heads_closure': lambda n_heads, d_head: lambda x: x,
    'dot_product_self_attention': lambda q, k, v: q,
    'compute_attention_output_closure': lambda n_heads, d_head: lambda x: x,
}


@pytest.mark.slow
def test_no_seed_gives_two_cases_one_name():
  # A drawn head size and shape equal to a fixed one's named two cases alike, and
  # the judge compared the learner's second with the package's first: correct
  # work lost its point for about one grading run in forty (CI's seed did).
  for seed in range(3000):
    for name, function in ARRAY_PROBES.items():
      names = [case['name'] for case in probes.PROBES[name](function, seed, None, None)]
      assert len(set(names)) == len(names), (seed, name, names)


def test_cases_of_one_name_are_judged_in_the_order_they_ran():
  expected = [{'name': 'same', 'measures': {'output': np.zeros(2, np.float32)}},
              {'name': 'same', 'measures': {'output': np.ones(2, np.float32)}}]
  got = [dict(case, error=None) for case in expected]
  # A function's measures are its own (measures.of): one whose cases record an output.
  name = recording.DOT_PRODUCT_ATTENTION
  assert measures.judge_cases(name, got, expected) == []
  assert measures.judge_cases(name, got[::-1], expected)
  assert measures.judge_cases(name, got[:1], expected)[-1] == 'Failed: same: not run'


@pytest.mark.parametrize('seed', [452, 2656, 127, 2715])  # Seeds whose names collided.
def test_the_courses_closures_pass_whatever_the_seed(seed):
  namespace = {'jnp': attention.jnp}
  for name in ('compute_attention_heads_closure', 'compute_attention_output_closure'):
    exec(learner_variants.COURSE_ANSWERS[name], namespace)  # pylint: disable=exec-used
    probe = probes.PROBES[name]
    got = probe(namespace[name], seed, None, None)
    assert measures.judge_cases(name, got, probe(getattr(attention, name), seed, None, None)) == []


@needs_bwrap
@pytest.mark.slow
def test_an_earlier_exercise_bound_by_a_default_argument_costs_only_its_own_points():
  # The course's signatures bind earlier exercises as defaults when their cell runs:
  # CausalAttention(..., compute_attention_heads_closure=compute_attention_heads_closure)
  # and greedy_decode(..., next_symbol=next_symbol). One earlier function is wrong here,
  # the other does not even parse (so its name is never defined).
  wrong_closure = learner_variants.COURSE_ANSWERS['compute_attention_heads_closure'].replace(
      'def compute_attention_heads(x):',
      'def compute_attention_heads(x):\n    x = x * 2.0  # scaled by mistake', 1)
  assert wrong_closure != learner_variants.COURSE_ANSWERS['compute_attention_heads_closure']
  notebook = learner_variants.notebook_with(answers(
      compute_attention_heads_closure=wrong_closure,
      next_symbol='def next_symbol(cur_output_tokens, model)\n  return 0\n'))
  report = grader.grade(notebook, seed=SEED, whole=False, functions=(
      'compute_attention_heads_closure', 'CausalAttention', 'next_symbol', 'greedy_decode'))
  scored = points(report)
  assert scored['compute_attention_heads_closure'] == 0 and scored['next_symbol'] == 0
  assert scored['CausalAttention'] > 0 and scored['greedy_decode'] > 0, grader.table(report)
