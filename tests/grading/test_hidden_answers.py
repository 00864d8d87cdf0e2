"""Trax's own answers to the exercises are hidden while grading (``sandbox.py``).

The list names what an upgrade must not move; the stubs keep the rest of each
file; in the sandbox the originals read as their stubs, and a notebook that
calls Trax's answers gets nothing for them, with the reason, in both modes.
"""

import ast
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

import learner_variants
from summarizer._trax import tl, trax
from summarizer.contract import handout
from summarizer.grading import watchers, grader, sandbox
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

from . import SEED

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
needs_bwrap = pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')


def definitions(tree):
  """Top-level function and class definitions: name -> their nodes."""
  found = {}
  for node in tree.body:
    if isinstance(node, DEFINITIONS):
      found.setdefault(node.name, []).append(node)
  return found


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


@pytest.mark.parametrize('path', sorted(sandbox.HIDDEN))
def test_each_hidden_name_is_still_defined_where_the_list_says(path):
  # Fails when a Trax (or jax) upgrade moves or renames one: update sandbox.py.
  names = definitions(ast.parse(read(sandbox.installed(path))))
  assert set(sandbox.HIDDEN[path]) <= set(names), sorted(set(sandbox.HIDDEN[path]) - set(names))


def test_the_list_covers_every_exercise_that_has_a_counterpart():
  # training_loop uses Trax's Loop as the course does; next_symbol's argmax over a
  # padded input has no counterpart of its own (the samplers hide it with Exercise 10).
  exercises = {n for names in sandbox.HIDDEN.values() for n in names.values()}
  assert exercises == {1, 2, 3, 4, 5, 6, 7, 10}


def test_the_courses_answers_call_nothing_hidden():
  hidden_names = {name for names in sandbox.HIDDEN.values() for name in names}
  for name in GRADED:
    for source in (handout.solution_source(name), learner_variants.COURSE_ANSWERS[name]):
      used = {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)}
      assert not used & hidden_names, name


SOURCE = textwrap.dedent('''
    import math

    def kept(x):
      return x + 1

    @decorated
    def one_liner(x): return math.sqrt(x)

    class Layer:
      """A layer."""
      size = 3

      def __init__(self):
        """Makes it."""
        self.weights = [1, 2]

      def forward(self, x):
        return x * 2  # The answer.

    def only_a_docstring():
      """Nothing else."""

    def kept_too():
      return Layer.size
    ''')


def test_a_stub_raises_in_each_hidden_function_and_keeps_every_other_line():
  stubbed = sandbox.stubbed_source(SOURCE, {'one_liner': 1, 'Layer': 5, 'only_a_docstring': 2},
                                  'trax/example.py')
  assert len(stubbed.split('\n')) == len(SOURCE.split('\n'))
  changed = [(a, b) for a, b in zip(SOURCE.split('\n'), stubbed.split('\n')) if a != b]
  assert 'x * 2' not in stubbed and 'self.weights' not in stubbed
  assert all('def kept' not in a and 'import' not in a for a, _ in changed)
  names = {'decorated': lambda function: function}
  exec(compile(stubbed, 'trax/example.py', 'exec'), names)  # pylint: disable=exec-used
  assert names['kept'](1) == 2 and names['kept_too']() == 3
  assert names['Layer'].__doc__ == 'A layer.'
  for call, exercise in ((lambda: names['one_liner'](4), 'Exercise 1 (DotProductAttention)'),
                         (names['Layer'], 'Exercise 5 (CausalAttention)'),
                         (names['only_a_docstring'], 'Exercise 2')):
    with pytest.raises(NotImplementedError,
                       match=re.escape(f"Trax's own answer to {exercise}") + '.*hidden while'):
      call()


def test_a_name_the_library_no_longer_defines_stops_the_grading():
  with pytest.raises(SummarizerError, match='no longer defines CausalAttention'):
    sandbox.stubbed_source('def Other():\n  pass\n', {'CausalAttention': 5},
                          'trax/layers/attention.py')


@pytest.fixture(scope='module')
def stubs(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp('job'))
  return directory, sandbox.write_stubs(directory)


def test_each_installed_file_is_stubbed_only_in_its_hidden_definitions(stubs):
  directory, written = stubs
  assert [stub['module'] for stub in written] == [sandbox.module_name(p) for p in sandbox.HIDDEN]
  for path, stub in zip(sandbox.HIDDEN, written):
    original, copy = read(stub['original']), read(os.path.join(directory, stub['stub']))
    assert len(copy.split('\n')) == len(original.split('\n')), path
    spans = set()
    for name in sandbox.HIDDEN[path]:
      for node in definitions(ast.parse(original))[name]:
        spans |= set(range(node.lineno - 1, node.end_lineno))
    changed = {i for i, (a, b) in enumerate(zip(original.split('\n'), copy.split('\n'))) if a != b}
    assert changed and changed <= spans, path
    for name in sandbox.HIDDEN[path]:
      for node in definitions(ast.parse(copy))[name]:
        raises = [n for n in ast.walk(node) if isinstance(n, ast.Raise)]
        assert raises and 'hidden while grading' in ast.unparse(raises[0]), (path, name)


@pytest.mark.slow
def test_the_stubbed_attention_module_keeps_what_a_correct_answer_uses(stubs):
  directory, _ = stubs
  spec = importlib.util.spec_from_file_location(
      'stubbed_attention', os.path.join(directory, sandbox.STUBS_DIR, 'trax/layers/attention.py'))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  ids = np.array([[5, 6, 7]], np.int32)
  assert np.asarray(module.ShiftRight(mode='train')(ids)).tolist() == [[0, 5, 6]]
  x = np.zeros((1, 4, 6), np.float32)
  ours, theirs = module.PositionalEncoding(max_len=8, mode='eval'), tl.PositionalEncoding(
      max_len=8, mode='eval')
  for layer in (ours, theirs):
    layer.init(trax.shapes.signature(x))
  np.testing.assert_allclose(ours(x), theirs(x))
  with pytest.raises(NotImplementedError, match=r"CausalAttention is Trax's own answer to "
                     r'Exercise 5 \(CausalAttention\): hidden while grading; write your own'):
    module.CausalAttention(4, n_heads=2)
  with pytest.raises(NotImplementedError, match='DotProductCausalAttention'):
    module.DotProductCausalAttention(mode='eval')


def in_the_sandbox(stubs, script, *arguments, timeout=60):
  """Runs ``python -I -c script arguments`` as the worker would run, in its sandbox."""
  directory, written = stubs
  command = sandbox.bwrap_command(directory, [], written)
  command = command[:command.index('/grader/worker.py', command.index('-I'))]
  # The package's parent, which the worker puts on the path, after --clearenv.
  at = len(command) - 2
  command[at:at] = ['--setenv', 'PACKAGE_PARENT', os.path.dirname(sandbox.PACKAGE_DIR)]
  return subprocess.run(command + ['-c', script, *arguments], capture_output=True, text=True,
                        timeout=timeout, check=False)


@needs_bwrap
def test_in_the_sandbox_each_original_reads_as_its_stub_and_its_bytecode_is_empty(stubs):
  directory, written = stubs
  script = textwrap.dedent('''
      import hashlib, sys
      for path in sys.argv[1:]:
        with open(path, 'rb') as f:
          print(hashlib.sha256(f.read()).hexdigest())
      ''')
  originals = [stub['original'] for stub in written]
  caches = [cache for stub in written for cache in stub['bytecode']]
  done = in_the_sandbox(stubs, script, *originals, *caches)
  assert done.returncode == 0, done.stderr
  stubbed = [hashlib.sha256(read(os.path.join(directory, stub['stub'])).encode()).hexdigest()
             for stub in written]
  assert done.stdout.split() == stubbed + [hashlib.sha256(b'').hexdigest()] * len(caches)


@needs_bwrap
def test_in_the_sandbox_the_hidden_libraries_are_empty_folders_and_trax_still_trains(stubs):
  script = textwrap.dedent('''
      import importlib, os, sys
      for name in sys.argv[1:]:
        module = name.replace(os.sep, '.')
        spec = importlib.util.find_spec(module)
        folders = list(spec.submodule_search_locations or []) if spec else []
        print(module, spec is not None and spec.origin, [os.listdir(f) for f in folders])
        for attempt in (module + '.ops', module + '.layers', module + '.gpu.attention'):
          try:
            importlib.import_module(attempt)
            print('imported', attempt)
          except ImportError:
            pass
      sys.path.insert(0, os.environ['PACKAGE_PARENT'])  # As the worker puts the package on it.
      from summarizer._trax import training, trax
      import tensorflow as tf
      print('trax', type(training.Loop).__name__, type(tf.constant(1)).__name__)
      ''')
  done = in_the_sandbox(stubs, script, *sandbox.HIDDEN_LIBRARIES, timeout=300)
  assert done.returncode == 0, done.stderr[-3000:]
  lines = done.stdout.splitlines()
  installed = [name for name in sandbox.HIDDEN_LIBRARIES
               if any(os.path.isdir(os.path.join(folder, name))
                      for folder in watchers.library_folders())]
  assert {'keras', os.path.join('jax', 'experimental', 'pallas', 'ops')} <= set(installed)
  for name in installed:  # Found, if at all, as an empty folder: no file, nothing under it.
    assert f"{name.replace(os.sep, '.')} None [[]]" in lines, lines
  assert not [line for line in lines if line.startswith('imported')], lines
  assert lines[-1] == 'trax type EagerTensor', lines


# --------------------------------------------------------------------------
# Grading: Trax's answers get nothing, and say why; the course's get full marks.

def cheat(name):
  return next(c for c in learner_variants.CHEATS if c.name == name)


LAYER, MODEL = "Trax's own layer: tl.CausalAttention", "Trax's own model: trax.models.TransformerLM"
FUNCTIONS = ('CausalAttention', 'TransformerLM')


def trax_answers():
  """One notebook whose CausalAttention and TransformerLM are Trax's."""
  return learner_variants.notebook_with({c.function: c.source for c in map(cheat, (LAYER, MODEL))})


def assert_hidden_and_said_so(report):
  for verdict in report.verdicts:
    text = grader.verdict_text(verdict)
    assert verdict.points == 0, text
    exercise = grader.title(verdict.grade_id[len('test_'):]).split(':')[0]
    assert f"Trax's own answer to {exercise}" in text, text
    assert 'hidden while grading' in text and "why: Trax's (and jax's) own versions" in text, text


@pytest.fixture(scope='module')
def graded():
  if not shutil.which('bwrap'):
    pytest.skip('needs bubblewrap')
  notebooks = [learner_variants.notebook_with(learner_variants.COURSE_ANSWERS), trax_answers()]
  return grader.grade_batch(notebooks, seed=SEED, functions=FUNCTIONS, whole=False)


@pytest.mark.slow
def test_trax_own_layer_and_model_get_nothing_and_the_feedback_says_why(graded):
  assert_hidden_and_said_so(graded[1])


@pytest.mark.slow
def test_the_courses_answers_still_get_full_marks(graded):
  # TransformerLM uses tl.ShiftRight and tl.PositionalEncoding from the stubbed attention.py.
  assert graded[0].total == graded[0].max_total, grader.table(graded[0])


@pytest.mark.slow
def test_without_bubblewrap_the_worker_still_imports_the_stubs():
  # tl's layers are imported as the worker starts; trax.models when the cell reads it.
  report = grader.grade(trax_answers(), seed=SEED, mode='process', functions=FUNCTIONS,
                        whole=False)
  assert_hidden_and_said_so(report)
