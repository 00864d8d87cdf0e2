"""Progress bars that suit where they are shown.

On a terminal, tqdm's bar, updated in place. Anywhere else (a log file, CI,
a pipe), carriage-return updates pile up into one unreadable line, so a
plain line is written every so often instead::

  training: 200/1000 steps, 4 min 10 s, batch_loss=0.812, tok_s=3050
"""

import sys
import time

# Plain lines a whole run writes, at most (plus the last one).
PLAIN_LINES = 20


def bar(iterable=None, total=None, desc='', unit='it', disable=False, initial=0,
        file=None):
  """Returns a progress bar over ``iterable`` (or one updated by hand).

  Args:
    iterable: What to iterate over, counting one a step; None for a bar
      moved with ``update``.
    total: Expected number of steps (None if unknown).
    desc: What is being done ('training', 'summarising').
    unit: What a step is ('step', 'article').
    disable: Show nothing.
    initial: Steps already done (a resumed run).
    file: Where to write; default standard error.

  Returns:
    A tqdm bar on a terminal, else a ``PlainProgress``; both iterate and
    have ``update``, ``set_postfix``, ``write`` and ``close``.
  """
  file = file or sys.stderr
  if not disable and _is_terminal(file):
    from tqdm import tqdm  # pylint: disable=g-import-not-at-top
    return tqdm(iterable, total=total, desc=desc or None, unit=unit, initial=initial,
                dynamic_ncols=True, file=file)
  return PlainProgress(iterable, total, desc, unit, disable, initial, file)


def _is_terminal(file):
  try:
    return file.isatty()
  except (AttributeError, ValueError):  # No isatty, or closed.
    return False


class PlainProgress:
  """A progress report as plain lines, one every ``every`` steps and at the end.

  Args:
    iterable, total, desc, unit, disable, initial, file: as ``bar``'s.
    every: Steps between lines; default: a twentieth of ``total`` (or 50).
  """

  def __init__(self, iterable=None, total=None, desc='', unit='it', disable=False,
               initial=0, file=None, every=None):
    self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
    self.disable, self.file = disable, file or sys.stderr
    self.n = initial
    self.every = every or (max(1, -(-(total - initial) // PLAIN_LINES)) if total else 50)
    self._postfix = ''
    self._started = time.monotonic()
    self._last_shown = initial

  def __iter__(self):
    for item in self.iterable:
      yield item
      self.update(1)
    self.close()

  def update(self, n=1):
    self.n += n
    if self.n - self._last_shown >= self.every:
      self._show()

  def set_postfix(self, **values):
    self._postfix = ''.join(f', {key}={value}' for key, value in values.items())

  def write(self, line):
    """Prints a line of results to standard output, as ``tqdm.write`` does."""
    print(line, flush=True)

  def close(self):
    if self.n != self._last_shown:
      self._show()

  def _show(self):
    self._last_shown = self.n
    if self.disable:
      return
    seconds = int(time.monotonic() - self._started)
    elapsed = f'{seconds // 60} min {seconds % 60} s' if seconds >= 60 else f'{seconds} s'
    count = f'{self.n}/{self.total}' if self.total else f'{self.n}'
    label = f'{self.desc}: ' if self.desc else ''
    print(f'{label}{count} {plural(self.unit)}, {elapsed}{self._postfix}', file=self.file,
          flush=True)


def plural(noun):
  """'steps', 'articles', 'stories'."""
  if noun.endswith('y') and noun[-2:-1] not in tuple('aeiou'):
    return noun[:-1] + 'ies'
  return noun + 's'
