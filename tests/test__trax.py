"""How ``summarizer._trax`` keeps TensorFlow out until it is used.

Each behaviour runs in a fresh interpreter (the test process itself may have
imported TensorFlow for another test) and says which TensorFlow modules it
found in ``sys.modules`` after each step. The mechanism's own tests fail if
a Trax upgrade reads TensorFlow at import, makes a deferred ``__init__`` do
more than import, checks other TensorFlow types, or renames the tokenizer's
table.
"""

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from summarizer import _trax
from summarizer.config import DATA_DIR

SAMPLE = os.path.join(DATA_DIR, 'samples', 'sport.txt')

# Prepended to every script: `loaded()` names the TensorFlow modules imported.
_PRELUDE = '''
import json, sys
def loaded():
  return sorted(m for m in sys.modules
                if m.split('.')[0] in ('tensorflow', 'tensorflow_datasets'))
steps = {}
'''


def _fresh(script, env=None):
  """Runs ``script`` in a new interpreter; returns its last line of output, parsed."""
  done = subprocess.run(
      [sys.executable, '-c', _PRELUDE + textwrap.dedent(script)
       + '\nprint(json.dumps(steps))'],
      capture_output=True, text=True, check=False,
      env=dict(os.environ, **(env or {})))
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout.strip().splitlines()[-1]), done


def _assert_no_tensorflow(steps):
  assert steps and steps == {step: [] for step in steps}, steps


@pytest.mark.slow
def test_the_summarize_command_imports_no_tensorflow():
  steps, done = _fresh(f'''
      from summarizer.__main__ import main
      main([{SAMPLE!r}, '--max-length', '12'])
      steps['the command'] = loaded()
      main([{SAMPLE!r}, '--max-length', '12', '--num-beams', '2', '--json'])
      steps['the command, beam search, --json'] = loaded()
  ''')
  _assert_no_tensorflow(steps)
  assert done.stderr == ''  # And no library noise.


@pytest.mark.slow
def test_summarize_details_and_explain_import_no_tensorflow(tmp_path):
  steps, _ = _fresh(f'''
      import summarizer
      article = open({SAMPLE!r}, encoding='utf-8').read()
      assert summarizer.summarize(article, max_length=8)
      steps['summarize'] = loaded()
      assert summarizer.summarize_details(article, max_length=8, num_beams=2)['summary_text']
      steps['summarize_details, beam search'] = loaded()
      summarizer.explain(article, max_length=8)
      steps['explain'] = loaded()
  ''')
  _assert_no_tensorflow(steps)


@pytest.mark.slow
def test_model_directory_course_layers_and_decoding_import_no_tensorflow(random_model_dir):
  steps, _ = _fresh(f'''
      import numpy as np
      import jax
      from summarizer import TransformerLM, greedy_decode, tokenize, detokenize
      steps['import TransformerLM'] = loaded()
      from summarizer import _trax
      from summarizer.inference import loaded_model, model_directory, summaries
      model = model_directory.read({random_model_dir!r}).model('eval')
      steps['read a model directory'] = loaded()
      loaded_model.load({random_model_dir!r})
      steps['loaded_model.load'] = loaded()
      course = TransformerLM(vocab_size=64, d_model=8, d_ff=16, n_layers=1, n_heads=2,
                             max_len=32, mode='train')
      ids = np.ones((1, 8), np.int32)
      course.init(_trax.trax.shapes.signature(ids), rng=jax.random.PRNGKey(0))
      course(ids)
      steps['a course TransformerLM, initialised and run'] = loaded()
      shipped = model_directory.read().model('eval')
      greedy_decode('Rain fell on Monday.', shipped, tokenize=tokenize,
                    detokenize=detokenize, max_length=3)
      steps['the course greedy_decode'] = loaded()
      from summarizer.inference import beam
      summaries.summarize_tokens('Rain fell on Monday.', loaded_model.load(), 4,
                                 search=beam.Search(num_beams=2)).details()
      steps['beam search'] = loaded()
  ''')
  _assert_no_tensorflow(steps)


@pytest.mark.slow
def test_the_exercise_checks_import_no_tensorflow():
  steps, _ = _fresh('''
      import contextlib, io
      import summarizer
      from summarizer import decoding
      from summarizer.assignment import checks
      with contextlib.redirect_stdout(io.StringIO()):
        for name in ('DotProductAttention', 'compute_attention_heads_closure',
                     'compute_attention_output_closure', 'dot_product_self_attention',
                     'CausalAttention', 'DecoderBlock', 'TransformerLM'):
          assert getattr(checks, 'test_' + name)(getattr(summarizer, name)) == 0, name
          steps[name] = loaded()
        assert checks.test_next_symbol(decoding.next_symbol) == 0
        steps['next_symbol'] = loaded()
        assert checks.test_greedy_decode(decoding.greedy_decode) == 0
        steps['greedy_decode'] = loaded()
  ''')
  _assert_no_tensorflow(steps)


@pytest.mark.slow
def test_training_and_tfds_import_tensorflow_when_used_quietly():
  steps, done = _fresh('''
      from summarizer import _trax
      steps['_trax'] = loaded()
      assert _trax.training is _trax.trax.supervised.training
      steps['training'] = loaded()[:1]
      assert _trax.tfds is sys.modules['tensorflow_datasets']
      steps['tfds'] = sorted({m.split('.')[0] for m in loaded()})
      assert _trax.trax.data.Serial.__module__ == 'trax.data.inputs'
      assert _trax.trax.lr is _trax.trax.supervised.lr_schedules
  ''')
  assert steps == {'_trax': [], 'training': ['tensorflow'],
                   'tfds': ['tensorflow', 'tensorflow_datasets']}
  assert done.stderr == ''


@pytest.mark.slow
def test_a_stand_in_gives_way_to_the_real_module_on_first_use(tmp_path):
  steps, _ = _fresh(f'''
      import numpy as np
      from summarizer import _trax
      import trax.layers.base, trax.layers.initializers, trax.shapes
      steps['held before'] = sorted({{type(m.tf).__name__ for m in (
          trax.layers.base, trax.layers.initializers, trax.shapes)}})
      # isinstance(x, tf.TensorShape) is answered without TensorFlow.
      assert trax.shapes.signature(np.ones((2, 3))).shape == (2, 3)
      steps['signature'] = loaded()
      layer = _trax.tl.Dense(4)
      layer.init(trax.shapes.signature(np.ones((1, 3), np.float32)))
      path = {str(tmp_path / 'dense.pkl.gz')!r}
      layer.save_to_file(path)  # tf.io.gfile: the real thing.
      steps['save_to_file'] = loaded()[:1]
      tf = sys.modules['tensorflow']
      trax.layers.initializers.tf.io  # The first use of this stand-in.
      steps['held after'] = [
          m.tf is sys.modules[name] and name for m, name in (
              (trax.layers.base, 'tensorflow'),
              (trax.layers.initializers, 'tensorflow.compat.v2'),
              (trax.shapes, 'tensorflow'))]
      again = _trax.tl.Dense(4)
      again.init_from_file(path, weights_only=True,
                           input_signature=trax.shapes.signature(np.ones((1, 3), np.float32)))
      assert np.array_equal(again.weights[0], layer.weights[0])
      assert trax.shapes.ShapeDtype(tf.TensorShape([2, 5])).shape == (2, 5)
  ''')
  assert steps == {'held before': ['_StandIn'], 'signature': [],
                   'save_to_file': ['tensorflow'],
                   'held after': ['tensorflow', 'tensorflow.compat.v2', 'tensorflow']}


def _startup_trax_modules():
  """The Trax modules ``summarizer._trax`` imports, from a fresh interpreter."""
  steps, _ = _fresh('''
      from summarizer import _trax
      steps['modules'] = sorted(m for m in sys.modules if m.startswith('trax'))
  ''')
  return steps['modules']


def test_trax_checks_only_the_tensorflow_types_stood_in_for():
  # `isinstance(x, tf.T)` is answered False while TensorFlow is not imported:
  # right only for the types named in _TYPES_BEFORE_IMPORT.
  checked = set()
  for name in _startup_trax_modules():
    spec = importlib.util.find_spec(name)
    if not spec.origin or not spec.origin.endswith('.py'):
      continue
    with open(spec.origin, encoding='utf-8') as f:
      tree = ast.parse(f.read())
    for node in ast.walk(tree):
      if (isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'isinstance'
          and len(node.args) == 2):
        for part in ast.walk(node.args[1]):
          if (isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name)
              and part.value.id == 'tf'):
            checked.add(part.attr)
  assert checked == set(_trax._TYPES_BEFORE_IMPORT)  # pylint: disable=protected-access


def test_the_deferred_inits_only_import_and_are_deferred():
  for name in _trax._DEFERRED_PACKAGES:  # pylint: disable=protected-access
    bound = _trax._init_statements(importlib.util.find_spec(name))  # pylint: disable=protected-access
    assert bound, f'{name}/__init__.py does more than import: it must run whole'
    assert callable(vars(sys.modules[name]).get('__getattr__')), name
  trax = _trax.trax
  assert 'AsKeras' in dir(trax) and 'Tokenize' in dir(trax.data)
  assert trax.supervised.TrainTask is trax.supervised.training.TrainTask
  with pytest.raises(AttributeError):
    trax.no_such_name  # pylint: disable=pointless-statement
  with pytest.raises(AttributeError):
    trax.data.no_such_module  # pylint: disable=pointless-statement


def test_the_tokenizer_table_answers_as_trax_set_does():
  tokenizer = sys.modules['trax.data.tokenizer']
  ours = getattr(tokenizer, _trax._LETTERS_AND_DIGITS)  # pylint: disable=protected-access
  assert isinstance(ours, _trax._LettersAndDigits), 'Trax renamed or moved its table'  # pylint: disable=protected-access
  # Trax's module run whole, under another name: the set it builds.
  spec = importlib.util.spec_from_file_location('trax_tokenizer_whole',
                                                tokenizer.__spec__.origin)
  whole = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(whole)
  table = getattr(whole, _trax._LETTERS_AND_DIGITS)  # pylint: disable=protected-access
  assert isinstance(table, (set, frozenset))
  disagree = [i for i in range(sys.maxunicode + 1) if (chr(i) in table) != (chr(i) in ours)]
  assert disagree == []
  assert all((x in ours) is False for x in ('ab', '', 5, None))
  text = 'Kaev Darviski scored 3 goals — «très bien», 東京 ٣ ½ x²!'
  assert tokenizer.encode(text) == whole.encode(text)
  assert tokenizer.decode(whole.encode(text)) == whole.decode(whole.encode(text)) == text


def test_library_noise_is_silenced_and_the_learners_own_warnings_show():
  # Trax's Loop calls jax.host_count, whose warning jax raises from its own module; so does a
  # learner's call. Only Trax's is silenced, and a learner's message naming jax is theirs too.
  steps, done = _fresh('''
      import warnings
      import jax
      import numpy as np
      import summarizer
      from summarizer._trax import tl, trax
      model = tl.Serial(tl.Embedding(8, 4), tl.Dense(8), tl.LogSoftmax())
      batch = (np.ones((2, 3), np.int32),) * 2 + (np.ones((2, 3), np.float32),)
      task = trax.supervised.training.TrainTask(
          labeled_data=iter(lambda: batch, None), loss_layer=tl.WeightedCategoryCrossEntropy(),
          optimizer=trax.optimizers.Adam(0.01))
      trax.supervised.training.Loop(model, [task]).run(1)
      steps['a Loop'] = loaded()[:1]
      sys.stderr.write('-- the learner --\\n')
      warnings.warn('my jax.tree_util helper is slow', UserWarning)
      jax.host_count()
  ''')
  assert steps == {'a Loop': ['tensorflow']}
  library, learner = done.stderr.split('-- the learner --\n')
  assert library == ''
  assert 'UserWarning: my jax.tree_util helper is slow' in learner
  assert 'UserWarning: jax.process_count has been renamed' in learner
