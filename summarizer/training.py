"""Part 3 of the course: training the model (C8), the way the course does.

The course trains with Trax's supervised ``training.Loop``: a ``TrainTask``
(labelled batches, a loss, an optimizer and a learning-rate schedule), an
``EvalTask`` (batches and metrics) and the model, checkpointing into an
output directory. ``training_loop`` is the course's graded function; the
train command's machinery (run directories, kill-safe checkpoints, progress)
is ``summarizer.runs``.
"""

import os

from summarizer._trax import tl, training, trax
from summarizer.config import COURSE_STEPS_PER_CHECKPOINT, LEARNING_RATE, WARMUP_STEPS


def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):  # pylint: disable=invalid-name,redefined-outer-name
  """Returns the course's training loop (UNQ_C8) over a small TransformerLM.

  The course's exercise: cross-entropy loss, Adam at 0.01 with a warmup of
  1,000 steps then an rsqrt decay, a checkpoint every 10 steps, and
  cross-entropy and accuracy on evaluation. ``loop.run(n)`` trains n steps.

  Args:
    TransformerLM: The model function to train (the learner's or ours); it
      is built with d_model=4, d_ff=16, n_layers=1, n_heads=2 in 'train'
      mode, as in the course.
    train_gen: Stream of ``(inputs, targets, weights)`` training batches.
    eval_gen: Stream of such batches for evaluation.
    output_dir: Where checkpoints and metrics go. Trax resumes from a
      checkpoint it finds there.

  Returns:
    A ``trax.supervised.training.Loop``.
  """
  output_dir = os.path.expanduser(output_dir)
  learning_rate = LEARNING_RATE
  train_task = training.TrainTask(
      labeled_data=train_gen,
      loss_layer=tl.CrossEntropyLoss(),
      optimizer=trax.optimizers.Adam(learning_rate),
      lr_schedule=trax.lr.warmup_and_rsqrt_decay(WARMUP_STEPS, learning_rate),
      n_steps_per_checkpoint=COURSE_STEPS_PER_CHECKPOINT)
  eval_task = training.EvalTask(
      labeled_data=eval_gen,
      metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
  return training.Loop(
      TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train'),
      train_task, eval_tasks=[eval_task], output_dir=output_dir)
