"""The train command's optimizers: Muon's orthogonalised matrix steps beside Trax's Adam."""

import dataclasses
import json

import numpy as np
import pytest

from summarizer import config as config_module
from summarizer import train as train_command
from summarizer._trax import trax
from summarizer.errors import SummarizerError
from summarizer.runs import optimizers
from summarizer.runs import prepare as run_prepare

from conftest import micro_args

VOCAB = 40


def random_matrix(shape, seed=0):
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.parametrize('shape', [(6, 6), (8, 5), (5, 8), (64, 128)])
def test_orthogonalised_keeps_the_singular_vectors_and_brings_the_values_near_one(shape):
  matrix = random_matrix(shape)
  u, values, vt = np.linalg.svd(matrix, full_matrices=False)
  result = np.asarray(optimizers.orthogonalised(matrix))
  assert result.shape == shape
  # Five steps bring every singular value into about [0.7, 1.2], whatever the input's spread.
  assert values.max() / values.min() > 3 or shape == (6, 6)
  got = np.linalg.svd(result, compute_uv=False)
  assert got.min() > 0.6 and got.max() < 1.25, got
  # ... along the input's own singular vectors: U diag(s') V^T with s' near 1.
  on_vectors = u.T @ result @ vt.T
  assert np.allclose(on_vectors, np.diag(np.diag(on_vectors)), atol=1e-3)
  assert np.corrcoef((u @ vt).ravel(), result.ravel())[0, 1] > 0.95


def muon_and_adam(learning_rate=0.01):
  return (optimizers.Muon(learning_rate, VOCAB, matrix_scale=2.0, b2=0.95),
          trax.optimizers.Adam(learning_rate, weight_decay_rate=0.0, b2=0.95))


@pytest.mark.parametrize('shape', [(16,), (VOCAB, 16), (16, VOCAB), (3, 4, 5)])
def test_what_is_not_a_hidden_matrix_steps_exactly_as_trax_adam(shape):
  muon, adam = muon_and_adam()
  weights, grads = random_matrix(shape, 1), random_matrix(shape, 2)
  assert not muon.is_hidden_matrix(weights)
  slots = muon.init(weights)
  for step in range(3):
    mine = muon.update(step, grads, weights, slots, muon.opt_params)
    theirs = adam.update(step, grads, weights, slots, adam.opt_params)
    np.testing.assert_array_equal(mine[0], theirs[0])
    weights, slots = mine


def test_a_hidden_matrix_steps_along_its_orthogonalised_nesterov_momentum():
  muon, _ = muon_and_adam(learning_rate=0.01)
  weights, grads = random_matrix((16, 32), 1), random_matrix((16, 32), 2)
  assert muon.is_hidden_matrix(weights)
  slots = muon.init(weights)
  new, (velocity, _) = muon.update(0, grads, weights, slots, muon.opt_params)
  np.testing.assert_allclose(velocity, grads)  # From zero: the first gradient.
  # Nesterov's look-ahead: the gradient plus momentum times the new velocity.
  expected = optimizers.orthogonalised(grads + 0.95 * grads)
  # A (16, 32) kernel widens its input: the step grows by sqrt(32 / 16).
  np.testing.assert_allclose(weights - new, 0.01 * 2.0 * np.sqrt(2) * np.asarray(expected),
                             rtol=1e-4, atol=1e-7)
  # The step's size is set by the learning rate, not by the gradient's.
  scaled = muon.update(0, grads * 1000, weights, slots, muon.opt_params)[0]
  np.testing.assert_allclose(weights - scaled, weights - new, rtol=1e-3, atol=1e-6)


def test_a_config_names_its_optimizer_and_the_checks_refuse_others():
  adam = optimizers.for_config(config_module.PRESETS['quick'])
  assert type(adam) is trax.optimizers.adam.Adam  # pylint: disable=unidiomatic-typecheck
  muon = optimizers.for_config(dataclasses.replace(config_module.PRESETS['quick'],
                                                   optimizer='muon', matrix_scale=3.0))
  assert isinstance(muon, optimizers.Muon) and float(muon.opt_params['matrix_scale']) == 3.0
  values = json.loads(json.dumps(config_module.PRESETS['quick'].to_dict()))
  config_module.check_values(values)
  for field, value in (('optimizer', 'sgd'), ('optimizer', 1), ('matrix_scale', -1.0),
                       ('matrix_scale', None)):
    with pytest.raises(SummarizerError, match=f'"{field}"'):
      config_module.check_values(dict(values, **{field: value}))


def test_the_optimizer_flag_wins_over_the_token_recipe_and_a_resumed_run_keeps_its_own(
    tmp_path, capsys):
  recipe = config_module.TOKEN_RECIPES['quick']['config'].get('optimizer', 'adam')
  tokens = run_prepare.prepare(micro_args(tmp_path / 'tokens', preset='quick', max_steps=None,
                                          max_tokens=1000))
  assert tokens.config.optimizer == recipe
  other = next(name for name in config_module.OPTIMIZERS if name != recipe)
  mine = run_prepare.prepare(micro_args(tmp_path / 'mine', preset='quick', max_steps=None,
                                        max_tokens=1000, optimizer=other))
  assert mine.config.optimizer == other
  quick = config_module.PRESETS['quick']
  saved = dataclasses.replace(quick, optimizer=other)
  from summarizer.runs import run_dir  # pylint: disable=import-outside-toplevel
  directory = run_dir.RunDirectory(path='x', recorded=frozenset(), entries=(), checkpoint=True,
                                   staged=False, config=saved)
  resumed = run_prepare._budget_config(  # pylint: disable=protected-access
      micro_args('x', preset='quick', resume=True, max_tokens=1000), quick, directory, None)
  assert resumed.optimizer == other
  with pytest.raises(SystemExit) as stopped:
    train_command.parse_args(['--optimizer', 'sgd'])
  assert stopped.value.code == 2 and "invalid choice: 'sgd'" in capsys.readouterr().err
  scaled = run_prepare.prepare(micro_args(tmp_path / 'scaled', optimizer='muon', matrix_scale=3.5))
  assert (scaled.config.optimizer, scaled.config.matrix_scale) == ('muon', 3.5)
  for bad in ('0', '-1', 'nan'):
    with pytest.raises(SystemExit) as stopped:
      train_command.parse_args(['--matrix-scale', bad])
    assert stopped.value.code == 2 and '--matrix-scale' in capsys.readouterr().err


@pytest.mark.slow
def test_a_muon_run_learns_and_resumes(tmp_path):
  from conftest import train_run  # pylint: disable=import-outside-toplevel
  args = micro_args(tmp_path / 'run', max_steps=6, optimizer='muon')
  first = train_run(args)
  still = train_run(micro_args(tmp_path / 'still', max_steps=6, optimizer='muon',
                               learning_rate=0.0))
  assert first['eval_loss'] < still['eval_loss'] - 0.1, (first, still)
  with open(tmp_path / 'run' / 'config.json', encoding='utf-8') as f:
    assert json.load(f)['optimizer'] == 'muon'
  again = train_run(dataclasses.replace(args, resume=True, max_steps=8, optimizer=None))
  assert again['step'] == 8
  with open(tmp_path / 'run' / 'config.json', encoding='utf-8') as f:
    assert json.load(f)['optimizer'] == 'muon'  # Resumed without the flag: its own optimizer.
