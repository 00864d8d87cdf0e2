"""The run as its user sees it: a progress bar, a line per evaluation, loss.png."""

import time

import numpy as np

from summarizer import files
from summarizer import progress


# Steps whose batch losses the evaluation line's train loss averages.
TRAIN_LOSS_WINDOW = 50


class Report:
  """The run as its user sees it: a progress bar, a line per evaluation, the losses.

  The bar shows the loss of the last step's batch (``batch_loss``); each
  evaluation line, the mean of the last ``TRAIN_LOSS_WINDOW`` of those and
  the mean over the evaluation batches. A line before the first says so,
  so that the two do not seem to disagree.

  Args:
    counter: The run's token counter (for tokens/s).
    first_step: The step the run starts from.
    budget: The run's ``Budget`` (``--max-minutes``), or None. With one, the
      bar counts the training time's seconds and shows the time left.
    preview: A ``summarizer.runs.preview.Preview``, whose story's summary
      follows each evaluation line, or None.
    lessons: Whether the run begins with repeat lessons: its lines then say
      which phase they are in, and the train loss of the lessons is never
      averaged with the stories'.
    tokens: The run's ``TokenBudget`` (``--max-tokens``), or None. With one
      and no ``budget``, the bar counts the tokens read; with both, it counts
      seconds and shows the tokens read beside them.
    max_steps: The step the run ends at (None: a budget ends it).
    eval_batches: The validation batches each evaluation averages over.
    show_progress: Whether the bar is shown.
  """

  def __init__(self, counter, first_step, budget=None, preview=None, lessons=False,
               tokens=None, max_steps=None, eval_batches=8, show_progress=True):
    self.counter = counter
    self._lessons = lessons
    self._phase_start = 0  # Index in train_losses of the current phase's first step.
    self._preview = preview
    self.eval_batches = eval_batches
    self.train_losses = []
    self.started = time.time()
    self._last_line = None
    self._budget, self._tokens = budget, tokens
    self.first_step_at = None  # time.monotonic() at the end of the first step.
    if budget is None and tokens is not None:
      self.bar = progress.bar(total=tokens.tokens, unit='token',
                              desc='training', disable=not show_progress)
    elif budget is None:
      self.bar = progress.bar(total=max_steps, initial=first_step, unit='step',
                              desc='training', disable=not show_progress)
    else:
      self._seconds_shown = 0
      self.bar = progress.bar(total=max(int(budget.seconds_left()), 1), unit='second',
                              desc='training', disable=not show_progress)

  def step(self, step, loss):
    """Records a step's loss and moves the bar."""
    loss = float(np.mean(loss))  # One value per device when data-parallel.
    if self.first_step_at is None:
      self.first_step_at = time.monotonic()
    self.train_losses.append((step, loss))
    elapsed = max(time.time() - self.started, 1e-9)
    shown = dict(batch_loss=f'{loss:.3f}', tok_s=f'{self.counter["tokens"] / elapsed:.0f}')
    if self._tokens is not None and self._budget is None:
      self.bar.set_postfix(step=step, **shown)
      self.bar.update(min(self._tokens.read(), self._tokens.tokens) - self.bar.n)
      return
    if self._tokens is not None:
      shown['tokens'] = f'{self._tokens.read() / 1e6:.2f}M/{self._tokens.tokens / 1e6:.2f}M'
    if self._budget is None:
      self.bar.set_postfix(**shown)
      self.bar.update(1)
      return
    left = max(self._budget.seconds_left(), 0)
    self.bar.set_postfix(step=step, left=f'{int(left) // 60}:{int(left) % 60:02d}', **shown)
    seconds = min(int(elapsed), self.bar.total)
    self.bar.update(seconds - self._seconds_shown)
    self._seconds_shown = seconds

  def new_phase(self):
    """The repeat lessons are over: the train loss averages the stories' steps from now."""
    self._phase_start = len(self.train_losses)

  def evaluation(self, loop, log, phase=None):
    """Prints 'step N: train loss X, eval loss Y, eval accuracy Z' once per evaluation.

    In a run with repeat lessons, 'step N, repeat lessons: ...' or 'step N,
    stories: ...', the lessons' loss named as theirs.
    """
    evals = loop.history.get('eval', 'metrics/CrossEntropyLoss')
    accuracy = loop.history.get('eval', 'metrics/Accuracy')
    if not evals or evals[-1][0] != loop.step:
      return
    scores = f'eval loss {evals[-1][1]:.4f}, eval accuracy {accuracy[-1][1]:.4f}'
    train = self.mean_train_loss()
    train = 'none yet' if train is None else f'{train:.4f}'  # The stories' first step is next.
    if phase == 'repeat lessons':
      line = (f"step {loop.step}, repeat lessons: the lessons' train loss {train}; "
              f'on the stories, {scores}')
    elif phase is not None:
      line = f'step {loop.step}, {phase}: train loss {train}, {scores}'
    else:
      line = f'step {loop.step}: train loss {train}, {scores}'
    if self._last_line is None:
      legend = self.legend()
      self.bar.write(legend)
      log.write(legend + '\n')
    if line != self._last_line:
      self.bar.write(line)
      log.write(line + '\n')
      self._last_line = line
      if self._preview is not None:
        preview = f'  summary of validation story 1: {self._preview.summary(loop.model.weights)}'
        self.bar.write(preview)
        log.write(preview + '\n')

  def note(self, line, log):
    """Prints a line of the run's own (above the bar) and logs it."""
    self.bar.write(line)
    log.write(line + '\n')

  def legend(self):
    """Says which loss the bar and the evaluation lines show (and the preview's story)."""
    legend = (f"losses: the bar's batch_loss is the last step's batch; each evaluation line's "
              f"train loss is the mean over the last {TRAIN_LOSS_WINDOW} steps' batches (or all, "
              f"if fewer), its eval loss and accuracy the mean over {self.eval_batches} "
              f"validation batch{'' if self.eval_batches == 1 else 'es'}")
    if self._lessons:
      legend += ("\nthe run begins with repeat lessons (a story's names and numbers, twice): "
                 "their train loss falls while the stories' eval loss does not; the stories "
                 'come after them')
    if self._preview is not None:
      legend += ("\nafter each, the model's summary of validation story 1, whose highlights "
                 f'are: {self._preview.highlights}')
    return legend

  def mean_train_loss(self, n=TRAIN_LOSS_WINDOW):
    """Mean of the last ``n`` step losses of the current phase (one step's loss is noisy)."""
    losses = self.train_losses[self._phase_start:]
    if not losses:
      return None
    return float(np.mean([loss for _, loss in losses[-n:]]))


def plot_losses(train_losses, eval_losses, path, lessons_ended=None):
  """Writes the learning curve: train loss per step (smoothed) and eval loss.

  Args:
    train_losses: (step, loss) of every training step.
    eval_losses: (step, loss) of every evaluation.
    path: Where to write the PNG.
    lessons_ended: In a run with repeat lessons, the step they ended at (or
      the last step, if they never did): they are shaded and their train
      loss drawn apart from the stories'.
  """
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(7, 4))
  if lessons_ended is None:
    _plot_smoothed(ax, train_losses, 'train (weighted cross-entropy)')
  else:
    _plot_smoothed(ax, [(s, v) for s, v in train_losses if s <= lessons_ended],
                   'train: repeat lessons')
    _plot_smoothed(ax, [(s, v) for s, v in train_losses if s > lessons_ended], 'train: stories')
    first = train_losses[0][0] if train_losses else 0
    ax.axvspan(first, lessons_ended, color='0.9', zorder=0)
    ax.text(first, 1.0, ' repeat lessons', transform=ax.get_xaxis_transform(), va='top',
            ha='left', fontsize=8, color='0.35')
  if eval_losses:
    steps, values = zip(*eval_losses)
    ax.plot(steps, values, 'o-', label='eval (validation stories)')
  ax.set_xlabel('step')
  ax.set_ylabel('loss')
  ax.legend()
  ax.grid(alpha=0.3)
  fig.tight_layout()
  with files.replacing(path) as temporary:  # Never through a link planted at its name.
    fig.savefig(temporary, dpi=100, format='png')
  plt.close(fig)


def _plot_smoothed(ax, losses, label):
  """Plots (step, loss) pairs averaged over a fiftieth of them."""
  if not losses:
    return
  steps, values = zip(*losses)
  window = max(1, len(values) // 50)
  smooth = np.convolve(values, np.ones(window) / window, mode='valid')
  ax.plot(steps[window - 1:], smooth, label=label)
