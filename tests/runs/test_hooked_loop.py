"""Trax's Loop as a run drives it: its prints sent to the run's log, hooks after each step and
around saving (``summarizer.runs.hooked_loop``)."""

import inspect

import numpy as np
import pytest

from summarizer._trax import tl, training, trax
from summarizer.runs.hooked_loop import HookedLoop, quiet_loop_log


def _tiny_loop(output_dir=None, **hooks):
  x = np.ones((2, 4), np.int32)
  task = training.TrainTask(
      labeled_data=iter(lambda: (x, x, np.ones_like(x, np.float32)), None),
      loss_layer=tl.CrossEntropyLoss(), optimizer=trax.optimizers.Adam(0.01))
  model = tl.Serial(tl.Embedding(8, 4), tl.Dense(8), tl.LogSoftmax())
  return HookedLoop(model, [task], output_dir=output_dir, **hooks)


def test_loop_prints_through_its_log_function_which_a_run_redirects(capfd, tmp_path):
  _tiny_loop()  # Without an output_dir, Loop says it will not write metrics.
  assert 'output_dir is None' in capfd.readouterr().out
  with quiet_loop_log(tmp_path / 'train.log'):
    _tiny_loop()
  assert capfd.readouterr().out == ''
  assert 'output_dir is None' in (tmp_path / 'train.log').read_text()
  assert training._log is not None  # pylint: disable=protected-access


@pytest.mark.slow
def test_hooked_loop_calls_back_after_each_step_and_around_saving(tmp_path):
  # The two methods it overrides must still be Loop's, with these parameters.
  assert list(inspect.signature(training.Loop._run_one_step).parameters) == [  # pylint: disable=protected-access
      'self', 'task_index', 'task_changed']
  assert list(inspect.signature(training.Loop.save_checkpoint).parameters) == [
      'self', 'basename']
  steps, saves = [], []

  def save(write, directory):
    saves.append(directory)
    write('model')

  with quiet_loop_log():
    loop = _tiny_loop(str(tmp_path), on_step=lambda step, loss: steps.append(step),
                      save=save)
    loop.run(2)
    saved_by_run = len(saves)
    loop.save_checkpoint('model')
  assert steps == [1, 2]
  assert len(saves) == saved_by_run + 1 and set(saves) == {str(tmp_path)}
  assert (tmp_path / 'model.pkl.gz').exists()
