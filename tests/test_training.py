"""Part 3: the course's training_loop."""

import pytest

from summarizer._trax import training
from summarizer.corpus import streams
from summarizer.inference import model_directory
from summarizer.model import TransformerLM
from summarizer.runs.hooked_loop import quiet_loop_log
from summarizer.training import training_loop


@pytest.mark.slow
def test_the_courses_training_loop_trains_on_the_courses_streams(tmp_path):
  # The course's streams: (inputs, targets, weights) batches, bucketed by length.
  def stream(split):
    return streams.batches('news', split, boundaries=(128, 256, 512), batch_sizes=(8, 4, 2, 1),
                           repeat=True, n_devices=1)

  loop = training_loop(TransformerLM, stream('train'), stream('validation'),
                       output_dir=str(tmp_path / 'model'))
  assert isinstance(loop, training.Loop)
  with quiet_loop_log():
    loop.run(10)
  assert loop.step == 10
  assert model_directory.saved_step(str(tmp_path / 'model')) == 10  # A checkpoint every 10 steps.
  (step, loss), = loop.history.get('eval', 'metrics/CrossEntropyLoss')[-1:]
  assert step == 10 and 0 < loss < 20
