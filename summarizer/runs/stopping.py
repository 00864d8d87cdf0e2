"""Stopping a run cleanly: Ctrl-C and SIGTERM become a request checked between steps."""

import contextlib
import signal
import sys


class Stopped(Exception):
  """Raised between two steps after Ctrl-C or SIGTERM, so the step count is whole."""


class BudgetSpent(Exception):
  """Raised between two steps once a run's ``--max-minutes`` leave no time to train."""


class Diverged(Exception):
  """Raised when a step's loss, or the weights about to be saved, are not finite.

  Attributes:
    step: The step at which it was seen.
  """

  def __init__(self, step):
    super().__init__(step)
    self.step = step


def finite(tree):
  """Tells whether every number in ``tree`` (a loss, the weights) is finite."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  return all(bool(np.all(np.isfinite(np.asarray(leaf))))
             for leaf in jax.tree_util.tree_leaves(tree))


# The signals that stop a run cleanly, and the exit status each leaves with.
STOP_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143}


@contextlib.contextmanager
def stop_signals():
  """Turns Ctrl-C and SIGTERM into a request checked between steps.

  Yields a dict whose 'signal' becomes the first signal received. A second
  one raises KeyboardInterrupt at once (for a long evaluation); the last
  checkpoint stays loadable either way.
  """
  stop = {'signal': None}

  def handler(signum, frame):
    del frame
    if stop['signal'] is not None:
      raise KeyboardInterrupt
    stop['signal'] = signal.Signals(signum)
    print(f'\n{stop["signal"].name}: stopping after this step (again to stop at once)',
          file=sys.stderr, flush=True)

  previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
  try:
    yield stop
  finally:
    for signum, old in previous.items():
      signal.signal(signum, old)
