"""Every adjustment ``summarizer._trax`` makes to Trax: still needed, and right.

Each test fails if a Trax or jax upgrade makes its adjustment unneeded (the
original works again) or wrong (ours no longer does what Trax expects).
"""

import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap
import warnings

import jax
import numpy as np
import pytest

from summarizer import _trax, _trax_init
from summarizer._trax import trax


def test_trax_still_calls_inspect_stack_at_import_and_the_real_one_is_back():
  # What makes `import trax` take 22 s; swapped only while Trax imports.
  source = inspect.getsource(sys.modules['trax.layers.assert_shape'])
  assert 'inspect.stack()' in source and 'inspect.getframeinfo(' in source
  assert inspect.stack is not _trax._light_stack  # pylint: disable=protected-access
  assert inspect.getframeinfo is not _trax._light_getframeinfo  # pylint: disable=protected-access


def test_only_known_noise_is_dropped_from_standard_error(capsys):
  _trax._write_kept('Gym has been unmaintained since 2022\nreal trouble here\n')  # pylint: disable=protected-access
  assert capsys.readouterr().err == 'real trouble here\n'


def test_jax_lacks_device_put_replicated_and_trax_gets_it_back():
  assert _trax.ORIGINAL['device_put_replicated'] is None
  replicated = jax.device_put_replicated(np.arange(3), jax.local_devices())
  assert replicated.shape == (len(jax.local_devices()), 3)


def test_trax_tree_unflatten_fails_on_arrays_and_ours_restores_them():
  tree = (jax.numpy.ones(2), (), [None, jax.numpy.zeros(3)])
  flat = [np.full(2, 5.0), np.full(3, 7.0)]
  try:  # (Its recursion would call ours: it is given an array at the top.)
    _trax.ORIGINAL['tree_unflatten'](flat, tree[0], copy_from_tree=[None, ()])
  except (TypeError, ValueError):
    pass
  else:
    raise AssertionError("Trax's tree_unflatten works again: drop the adjustment")
  rebuilt, rest = trax.fastmath.tree_unflatten(flat, tree, copy_from_tree=[None, ()])
  assert rest == [] and rebuilt[1] == () and rebuilt[2][0] is None
  np.testing.assert_array_equal(rebuilt[0], flat[0])
  np.testing.assert_array_equal(rebuilt[2][1], flat[1])
  assert sys.modules['trax.fastmath.numpy'].tree_unflatten is trax.fastmath.tree_unflatten



def _rename_warnings(call):
  """The messages of jax's rename warnings that ``call()`` raises."""
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    call()
  return [str(w.message) for w in caught if 'has been renamed' in str(w.message)]


def test_trax_loop_still_calls_jax_renamed_host_count_and_ours_is_quiet():
  training = _trax.training
  assert _rename_warnings(_trax.ORIGINAL['init_host_and_devices']), (
      'Trax no longer calls jax.host_count: drop the adjustment')
  assert _rename_warnings(training.init_host_and_devices) == []
  assert _rename_warnings(jax.host_count)  # jax's own warning is left to a learner's call.


PMAP_CHECK = textwrap.dedent('''
    import jax, numpy as np
    from summarizer import _trax
    on_one_device = jax.device_put(np.ones((2, 3), np.float32), jax.devices()[0])
    try:
      _trax.ORIGINAL['pmap'](lambda a: a * 2)(on_one_device)
      print('original pmap works')
    except ValueError:
      print('original pmap refuses')
    print(float(_trax.trax.fastmath.pmap(lambda a: a * 2)(on_one_device).sum()))
''')


def test_pmap_refuses_arrays_on_one_device_and_ours_moves_them():
  env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=2')
  done = subprocess.run([sys.executable, '-c', PMAP_CHECK], capture_output=True,
                        text=True, env=env, check=True)
  assert done.stdout.split('\n')[:2] == ['original pmap refuses', '12.0']




def test_trax_data_still_imports_tensorflow_text_at_the_top():
  # What the stand-in of tensorflow_text is for (where it has no wheel: Windows).
  import ast  # pylint: disable=import-outside-toplevel
  spec = importlib.util.find_spec('trax.data.tf_inputs')
  with open(spec.origin, encoding='utf-8') as f:
    tree = ast.parse(f.read())
  top = {alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
  assert 'tensorflow_text' in top, "Trax's data no longer imports tensorflow_text: drop the stand-in"


@pytest.mark.slow  # A subprocess that imports jax and TensorFlow.
def test_without_tensorflow_text_trax_data_imports_and_the_stand_in_says_why():
  hide = textwrap.dedent('''
      import sys
      class Hide:
        def find_spec(self, name, path=None, target=None):
          if name.partition('.')[0] == 'tensorflow_text':
            raise ModuleNotFoundError(f'{name} hidden', name=name)
      sys.meta_path.insert(0, Hide())
      from summarizer._trax import trax
      from trax.data import tf_inputs
      import tensorflow_text
      try:
        tensorflow_text.SentencepieceTokenizer
      except ModuleNotFoundError as e:
        print(e.name, '|', e)
  ''')
  done = subprocess.run([sys.executable, '-c', hide], capture_output=True, text=True,
                        timeout=300, check=False)
  assert done.returncode == 0, done.stderr
  name, why = done.stdout.strip().split(' | ')
  assert name == 'tensorflow_text' and 'not installed' in why and 'tokenizers' in why


def _initialised(build, inputs, seed=3):
  """(weights flat, output signature, the layer) of ``build()`` initialised on ``inputs``."""
  layer = build()
  signature = trax.shapes.signature(inputs)
  layer.init(signature, rng=trax.fastmath.random.get_prng(seed))
  return [np.asarray(w) for w in jax.tree_util.tree_leaves(layer.weights)], (
      layer.output_signature(signature)), layer


def _course_models():
  from summarizer import model  # pylint: disable=import-outside-toplevel
  tl = trax.layers
  shared = tl.Dense(4)
  return {
      'TransformerLM': (lambda: model.TransformerLM(vocab_size=40, d_model=16, d_ff=32, n_layers=2,
                                                    n_heads=2, mode='train'),
                        np.ones((2, 6), np.int32)),
      'a Dense used twice': (lambda: tl.Serial(shared, tl.Relu(), shared), np.ones((2, 4))),
      'a Branch of three': (lambda: tl.Serial(tl.Branch(tl.Dense(3), None, tl.Dense(5)),
                                              tl.Parallel(None, tl.Dense(2)), tl.Select([2, 0])),
                            np.ones((2, 4))),
  }


@pytest.mark.parametrize('name', ['TransformerLM', 'a Dense used twice', 'a Branch of three'])
def test_init_gives_traxs_own_weights_and_outputs(name):
  build, inputs = _course_models()[name]
  ours = _initialised(build, inputs)
  with _trax_init.traxs_own_init(trax.layers.combinators):
    traxs = _initialised(build, inputs)
  assert len(ours[0]) == len(traxs[0]) > 0
  for mine, theirs in zip(ours[0], traxs[0]):
    np.testing.assert_array_equal(mine, theirs)
  assert ours[1] == traxs[1]


def _nested_counter():
  """A Fn three combinators deep, and the list its traces are counted in."""
  tl = trax.layers
  traced = []

  def scaled(x):
    traced.append(x.shape)
    return x * 2.0
  nested = tl.Serial(tl.Residual(tl.Serial(tl.Fn('Scaled', scaled), tl.Dense(4))), tl.Dense(2))
  return nested, traced


def test_init_traces_a_nested_layer_once_where_trax_traced_it_once_a_level():
  layer, traced = _nested_counter()
  layer.init(trax.shapes.signature(np.ones((3, 4))))
  ours = len(traced)
  with _trax_init.traxs_own_init(trax.layers.combinators):
    layer, traced = _nested_counter()
    layer.init(trax.shapes.signature(np.ones((3, 4))))
  assert ours == 1 and len(traced) > 2, (ours, len(traced))


def test_an_error_inside_a_combinator_names_the_layers_and_shapes_trax_named():
  """The same layers, in the same order, with the same inputs and the same error; only the frames
  of the combinators' init are this package's file, not Trax's."""
  tl = trax.layers

  def wrong():
    return tl.Serial(tl.Residual(tl.Serial(tl.Dense(3), tl.Fn('Bad', lambda x: x @ x))))

  def raised():
    with pytest.raises(Exception) as error:
      wrong().init(trax.shapes.signature(np.ones((2, 4))))
    said = [line for line in str(error.value).splitlines()
            if line.lstrip().startswith(('Exception passing', 'layer ', 'LayerError', 'TypeError'))]
    return type(error.value), said
  ours = raised()
  assert any('Bad' in line for line in ours[1]), ours
  with _trax_init.traxs_own_init(trax.layers.combinators):
    assert ours == raised()
  assert trax.layers.Serial.init_weights_and_state is not _trax_init.ORIGINAL['serial']
