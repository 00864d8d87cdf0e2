"""Trax's training ``Loop`` as a run drives it: hooks after each step and around saving.

Trax's ``Loop`` has no hook after a step (for a progress bar and a clean stop
on Ctrl-C) or around saving (for checkpoints that a kill cannot leave half
written: ``runs.saving``), and it prints its own progress to standard output
(a run sends it to ``train.log``).
"""

import contextlib
import os

from summarizer import files
from summarizer._trax import training


@contextlib.contextmanager
def quiet_loop_log(log_path=None):
  """Sends Trax Loop's own progress prints to a log file instead of stdout.

  Args:
    log_path: The file to append them to (``train.log``); None drops them.

  Yields:
    The open log file, for lines of one's own.
  """
  # Appended to, never through a link planted at its name.
  flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
  fd = files.open_unfollowed(log_path, flags, 0o666) if log_path else os.open(os.devnull, flags)
  log = os.fdopen(fd, 'a', encoding='utf-8')
  original = training._log  # pylint: disable=protected-access

  def to_file(message, stdout=True):
    del stdout
    log.write(f'{message}\n')
    log.flush()

  training._log = to_file  # pylint: disable=protected-access
  try:
    yield log
  finally:
    training._log = original  # pylint: disable=protected-access
    log.close()


class HookedLoop(training.Loop):
  """Trax's ``Loop`` with a hook after each step and one around saving.

  Args:
    *args: ``Loop``'s.
    on_step: Called as ``on_step(step, loss)`` after every training step; it
      may raise to stop the loop between two steps.
    save: Called as ``save(write, directory)`` to save the checkpoint named
      ``model``, where ``write(basename)`` is Loop's own save (the run passes
      ``runs.saving.save_or_explain``).
    on_eval: Called as ``on_eval()`` after each evaluation, Loop's own (at the
      steps ``eval_at`` picks) or one asked for with ``run_evals``.
    **kwargs: ``Loop``'s.
  """

  def __init__(self, *args, on_step=None, save=None, on_eval=None, **kwargs):
    self._on_step = on_step
    self._save = save
    self._on_eval = on_eval
    super().__init__(*args, **kwargs)

  def run_evals(self, summary_writers=None):
    super().run_evals(summary_writers)
    if self._on_eval is not None:
      self._on_eval()

  def save_checkpoint(self, basename):
    if self._save is None or basename != 'model':
      return super().save_checkpoint(basename)
    return self._save(super().save_checkpoint, self._output_dir)

  def _run_one_step(self, task_index, task_changed):
    loss, metrics = super()._run_one_step(task_index, task_changed)
    if self._on_step is not None:
      self._on_step(self.step, loss)
    return loss, metrics
