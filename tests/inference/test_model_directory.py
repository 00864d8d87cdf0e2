"""Model directories read back: the same model Trax's own loader gives, faster; and the
course's model as a learner saved it (two checkpoint files, no config.json), read by its shapes."""

import gzip
import io
import json
import os
import shutil

import jax
import numpy as np
import pytest

from summarizer import decoding
from summarizer import text
from summarizer.__main__ import main as summarize_main
from summarizer._trax import tl, trax
from summarizer.config import COURSE_VOCAB_FILE, PRESETS
from summarizer.errors import SummarizerError
from summarizer.evaluation import scorecard
from summarizer.inference import layout
from summarizer.inference import loaded_model
from summarizer.inference import model_directory
from summarizer.inference import summaries
from summarizer.model import TransformerLM

from conftest import COURSE_SHAPED, SMALL_CONFIG, write_course_dir, write_model_dir
from conftest import make_special, no_hang


def trax_loaded(model_dir, mode):
  """The model as Trax's init_from_file loads it (random init, then the file)."""
  model = TransformerLM(**SMALL_CONFIG.model_kwargs(), mode=mode)
  model.init_from_file(os.path.join(model_dir, 'model.pkl.gz'), weights_only=True,
                       input_signature=trax.shapes.ShapeDtype((1, 1), np.int32))
  return model


@pytest.mark.parametrize('mode', ['eval', 'predict'])
@pytest.mark.slow
def test_a_read_model_is_what_trax_init_from_file_gives(random_model_dir, mode):
  ours = model_directory.read(random_model_dir).model(mode)
  theirs = trax_loaded(random_model_dir, mode)
  for mine, reference in ((ours.weights, theirs.weights), (ours.state, theirs.state)):
    assert (jax.tree_util.tree_structure(mine)
            == jax.tree_util.tree_structure(reference))
    for a, b in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(reference)):
      assert a.shape == b.shape and a.dtype == b.dtype
      np.testing.assert_array_equal(a, b)
  x = np.array([[5, 9, 2, 1, 0, 7]], np.int32)  # (1, 6)
  if mode == 'eval':
    np.testing.assert_allclose(ours(x), theirs(x), atol=1e-6)
  else:  # The caches fill and the next token's log-probs agree.
    rng = trax.fastmath.random.get_prng(0)
    np.testing.assert_allclose(ours(x, rng=rng), theirs(x, rng=rng), atol=1e-6)
    np.testing.assert_allclose(ours(x[:, :1], rng=rng), theirs(x[:, :1], rng=rng),
                               atol=1e-6)


def test_set_weights_takes_another_models_tree(random_model_dir):
  source = model_directory.read(random_model_dir).model('predict')
  target = TransformerLM(**SMALL_CONFIG.model_kwargs(), mode='eval')
  layout.set_weights(target, source.weights)
  flat_source, _ = tl.flatten_weights_and_state(source.weights, ())
  flat_target, _ = tl.flatten_weights_and_state(target.weights, ())
  assert all(a is b for a, b in zip(flat_source, flat_target))


def test_loaded_weights_are_on_the_device(random_model_dir):
  # Weights left as numpy arrays would be copied to the device at every call.
  model = model_directory.read(random_model_dir).model('predict')
  leaves = jax.tree_util.tree_leaves(model.weights)
  assert leaves and all(isinstance(leaf, jax.Array) for leaf in leaves)


@pytest.mark.parametrize('change,fragment', [
    ({'d_model': 64, 'd_ff': 128}, 'd_model is 64, but the weights beside it have d_model 32'),
    ({'n_layers': 3}, 'n_layers is 3, but the weights beside it have n_layers 2'),
])
def test_weights_of_another_architecture_are_refused(tmp_path, change, fragment):
  model_dir = write_model_dir(tmp_path / 'model')
  config_path = os.path.join(model_dir, 'config.json')
  with open(config_path, encoding='utf-8') as f:
    values = json.load(f)
  values.update(change)
  with open(config_path, 'w', encoding='utf-8') as f:
    json.dump(values, f)
  with pytest.raises(SummarizerError, match=f'config.json: {fragment}'):
    model_directory.read(model_dir)


def test_weights_a_model_cannot_take_are_refused_array_by_array(random_model_dir):
  source = model_directory.read(random_model_dir)
  weights = list(source.weights)
  weights[3] = np.zeros((7,), np.float32)  # Sizes alike, one array not.
  with pytest.raises(SummarizerError, match='cannot load the weights.*a weight of shape'):
    layout.built(source.config, weights, 'eval', random_model_dir)


def test_loading_builds_no_model_until_one_decodes(random_model_dir):
  loaded = loaded_model.LoadedModel(model_directory.read(random_model_dir))
  assert loaded.decoder._sized == {}  # pylint: disable=protected-access
  prefix = text.tokenize('A storm hit the coast.', loaded.vocab_file) + [0]
  assert len(list(loaded.decoder.generate(prefix, 4, stop_at_eos=False))) == 4
  assert list(loaded.decoder._sized) == [128]  # pylint: disable=protected-access


def test_missing_weights_file_is_named(tmp_path):
  model_dir = write_model_dir(tmp_path / 'model')
  os.remove(os.path.join(model_dir, 'model.weights.npy.gz'))
  with pytest.raises(SummarizerError, match='model.weights.npy.gz'):
    model_directory.read(model_dir)


def test_a_model_directory_is_loaded_once(random_model_dir):
  assert loaded_model.load(random_model_dir) is loaded_model.load(random_model_dir, None)
  assert loaded_model.load(random_model_dir) is loaded_model.load(model_dir=random_model_dir)


def test_a_model_directory_whose_files_changed_is_read_again(tmp_path):
  from summarizer.config import update_config  # pylint: disable=import-outside-toplevel
  model_dir = write_model_dir(tmp_path / 'model')
  first = loaded_model.load(model_dir)
  assert first.source.verdict is None
  update_config(model_dir, verdict={'n': 3})  # As a run's end writes it.
  again = loaded_model.load(model_dir)
  assert again is not first and again.source.verdict == {'n': 3}
  assert loaded_model.load(model_dir) is again


@pytest.mark.parametrize('mode', ['train', 'eval', 'predict'])
@pytest.mark.slow
def test_set_weights_gives_the_state_trax_init_gives(mode):
  # Dropout keeps its rate in its state: zeros there would turn it off.
  kwargs = dict(vocab_size=50, d_model=16, d_ff=32, n_layers=2, n_heads=4,
                dropout=0.1, max_len=64, mode=mode)
  initialised = TransformerLM(**kwargs)
  initialised.init(trax.shapes.ShapeDtype((1, 1), np.int32))
  loaded = TransformerLM(**kwargs)
  layout.set_weights(loaded, initialised.weights)
  assert (jax.tree_util.tree_structure(loaded.state)
          == jax.tree_util.tree_structure(initialised.state))
  for a, b in zip(jax.tree_util.tree_leaves(loaded.state),
                  jax.tree_util.tree_leaves(initialised.state)):
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)
  rates = [float(s) for s in jax.tree_util.tree_leaves(loaded.state)
           if np.ndim(s) == 0 and np.issubdtype(np.asarray(s).dtype, np.floating)]
  assert rates and set(rates) == {np.float32(0.1)}


# ------------------------------------------- the course's checkpoint, read by its shapes

ARTICLE = ('It was a sunny day when I went to the market to buy some flowers. '
           'But I only found roses, not tulips.')


def course_loaded(model_dir):
  """The model as the course's notebook loads it: random init, then the file."""
  model = TransformerLM(**COURSE_SHAPED, mode='eval')
  model.init_from_file(os.path.join(model_dir, 'model.pkl.gz'), weights_only=True,
                       input_signature=trax.shapes.ShapeDtype((1, 1), np.int32))
  return model


def test_architecture_and_vocabulary_come_from_the_files(course_model_dir):
  loaded = loaded_model.load(course_model_dir)
  expected = {k: v for k, v in COURSE_SHAPED.items()}
  assert {k: getattr(loaded.config, k) for k in expected} == expected
  assert loaded.config.dropout == PRESETS['course'].dropout
  # No vocab_dir/ beside it: the copy of the course's vocabulary in data/.
  assert loaded.vocab_file == COURSE_VOCAB_FILE
  assert loaded.calibration is None and loaded.max_article_tokens is None


def test_vocab_dir_beside_the_model_is_the_courses_layout(tmp_path):
  model_dir = write_course_dir(tmp_path)
  vocab_dir = tmp_path / 'vocab_dir'
  vocab_dir.mkdir()
  shutil.copyfile(COURSE_VOCAB_FILE, vocab_dir / 'summarize32k.subword.subwords')
  assert model_directory.read(model_dir).vocab_file == str(vocab_dir / 'summarize32k.subword.subwords')


@pytest.mark.parametrize('method', ['fast', 'greedy'])
@pytest.mark.slow
def test_summaries_are_the_courses_greedy_summary(course_model_dir, method):
  from summarizer import text  # pylint: disable=import-outside-toplevel
  prefix = text.tokenize(ARTICLE, COURSE_VOCAB_FILE) + [0]  # The course's start.
  course = list(decoding.greedy_tokens(prefix, course_loaded(course_model_dir), 12))
  course = course[:course.index(1)] if 1 in course else course
  ours = list(summaries.summarize_tokens(ARTICLE, loaded_model.load(course_model_dir), 12,
                                         method))
  assert ours == course and len(course) > 3


@pytest.mark.slow
def test_commands_take_the_course_directory(course_model_dir, capsys, tmp_path):
  assert summarize_main(['--text', ARTICLE, '--model', course_model_dir,
                         '--max-length', '4', '--json']) == 0
  (result,) = json.loads(capsys.readouterr().out)
  assert result['out_of_domain'] is None and result['article_perplexity'] > 0
  scores = scorecard.evaluate(course_model_dir, limit=2, max_length=4,
                             retrieval_pool=5)
  assert scores['n'] == 2


def test_n_heads_must_divide_the_width(course_model_dir, capsys):
  assert summarize_main(['--text', ARTICLE, '--model', course_model_dir,
                         '--n-heads', '5']) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and '--n-heads 5 does not divide the model width 32' in err
  loaded = loaded_model.load(course_model_dir, None, 4)  # 4 divides 32: another model.
  assert loaded.config.n_heads == 4


def _broken(tmp_path, how):
  model_dir = write_course_dir(tmp_path)
  weights = os.path.join(model_dir, 'model.weights.npy.gz')
  if how == 'missing weights':
    os.remove(weights)
  elif how == 'truncated':
    with open(weights, 'rb') as f:
      head = f.read(os.path.getsize(weights) // 2)
    with open(weights, 'wb') as f:
      f.write(head)
  elif how == 'not a TransformerLM':
    arrays = [np.zeros((7, 3), np.float32)] * 5
    with gzip.open(weights, 'wb') as f:
      for array in arrays:
        np.save(f, array)
  return model_dir


@pytest.mark.parametrize('how,fragment', [
    ('missing weights', 'model.weights.npy.gz missing'),
    ('truncated', 'cannot load the weights'),
    ('not a TransformerLM', 'fit no TransformerLM'),
])
def test_a_broken_checkpoint_is_one_line_and_exit_2(tmp_path, capsys, how, fragment):
  model_dir = _broken(tmp_path, how)
  assert summarize_main(['--text', ARTICLE, '--model', model_dir]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and fragment in err, err
  with pytest.raises(SummarizerError, match=fragment):
    model_directory.read(model_dir)


def test_a_directory_with_neither_config_nor_checkpoint_is_named(tmp_path):
  with pytest.raises(SummarizerError, match='not a model directory'):
    model_directory.read(str(tmp_path))


def test_a_vocabulary_that_fits_but_is_not_the_models_is_refused(random_model_dir, tmp_path):
  from summarizer import text  # pylint: disable=g-import-not-at-top
  from summarizer.config import update_config  # pylint: disable=g-import-not-at-top
  from summarizer.corpus import subwords  # pylint: disable=g-import-not-at-top
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  own = str(model_dir / model_directory.VOCAB_NAME)
  update_config(str(model_dir), vocab_fingerprint=text.vocab_fingerprint(own))
  model_directory.read(str(model_dir))
  # Another vocabulary with no more ids than the model: it would load.
  other = str(tmp_path / 'other.subwords')
  subwords.build_vocab('news', 300, other, limit=50, progress=False)
  assert text.vocab_size(other) <= text.vocab_size(own)
  with pytest.raises(SummarizerError, match='not the vocabulary the model .* was trained with'):
    model_directory.read(str(model_dir), vocab_file=other)


@pytest.mark.parametrize('special', ['fifo', 'zero'])
@pytest.mark.parametrize('name', ['model.pkl.gz', 'model.weights.npy.gz', 'vocab.subwords'])
def test_a_file_of_the_directory_that_is_no_regular_file_is_refused_unopened(
    random_model_dir, tmp_path, name, special):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  (model_dir / name).unlink()
  kind = make_special(model_dir / name, special)
  with no_hang(), pytest.raises(SummarizerError) as raised:
    model_directory.read(str(model_dir))
  assert str(raised.value) == f'{model_dir / name}: not a regular file ({kind})'


def test_weights_that_unpack_past_the_bound_are_one_line_and_exit_2(tmp_path, capsys):
  model_dir = write_course_dir(tmp_path)
  weights = os.path.join(model_dir, 'model.weights.npy.gz')
  header = io.BytesIO()  # One array of 1 GB and a float more, in a file of a few KB.
  np.lib.format.write_array_header_1_0(header, {'descr': '<f4', 'fortran_order': False,
                                                'shape': (10**9 // 4 + 1,)})
  with open(weights, 'wb') as f:
    f.write(gzip.compress(header.getvalue() + bytes(10**6)))
  assert summarize_main(['--text', ARTICLE, '--model', model_dir]) == 2
  assert capsys.readouterr().err == (f'error: {weights}: too large (over 1 GB, the most the '
                                     'arrays of a checkpoint file may hold unpacked)\n')


@pytest.mark.parametrize('how,fragment', [
    ('nan', 'holds 1 NaN or infinite values: its training diverged, or the file is damaged'),
    ('inf', 'holds 3 NaN or infinite values'),
    ('complex', 'holds complex64 values, not real floating-point numbers'),
    ('int', 'holds int32 values, not real floating-point numbers'),
])
def test_weights_that_are_not_finite_real_numbers_are_refused_at_load_in_one_line(
    tmp_path, capsys, how, fragment):
  from summarizer import safe_pickle  # pylint: disable=g-import-not-at-top
  model_dir = write_course_dir(tmp_path)
  weights = os.path.join(model_dir, 'model.weights.npy.gz')
  arrays = [np.array(a) for a in safe_pickle.load_arrays(weights)]
  last = arrays[-1]
  if how == 'nan':
    last.flat[0] = np.nan
  elif how == 'inf':
    last.flat[:3] = [np.inf, -np.inf, np.inf]
  else:
    arrays[-1] = last.astype(np.complex64 if how == 'complex' else np.int32)
  with gzip.open(weights, 'wb') as f:
    for array in arrays:
      np.save(f, array)
  assert summarize_main(['--text', ARTICLE, '--model', model_dir]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith(f'error: {model_dir}: cannot load the weights')
  assert fragment in err, err


def test_a_folder_of_ours_that_lost_its_config_is_named_not_the_courses_vocabulary(tmp_path):
  from summarizer.config import DEFAULT_MODEL_DIR  # pylint: disable=g-import-not-at-top
  model_dir = tmp_path / 'model'
  shutil.copytree(DEFAULT_MODEL_DIR, model_dir)
  (model_dir / 'config.json').unlink()
  with pytest.raises(SummarizerError) as raised:
    model_directory.read(str(model_dir))
  assert str(raised.value) == (
      f"{model_dir}: no config.json, and its weights know 2048 ids, not the 33021 of the "
      "course's vocabulary, so it is not the course's checkpoint; it holds vocab.subwords, as a "
      "model directory of ours does, which needs its config.json; restore its config.json, or "
      'export it again')


def test_several_articles_are_pointed_at_a_name_the_package_exports():
  import summarizer  # pylint: disable=g-import-not-at-top
  with pytest.raises(TypeError, match=r'several articles: summarizer.summarize_many\)'):
    summarizer.summarize(['one article.', 'another.'])
  assert callable(summarizer.summarize_many)
