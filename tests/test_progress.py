"""Progress: a live bar on a terminal, plain lines anywhere else."""

import io

from summarizer import progress


class Terminal(io.StringIO):
  def isatty(self):
    return True


def test_off_a_terminal_a_plain_line_every_twentieth_and_at_the_end():
  log = io.StringIO()
  bar = progress.bar(total=200, desc='training', unit='step', file=log)
  assert isinstance(bar, progress.PlainProgress)
  for _ in range(199):
    bar.set_postfix(loss='0.500')
    bar.update(1)
  bar.close()
  lines = log.getvalue().splitlines()
  assert '\r' not in log.getvalue() and len(lines) == 20
  assert lines[0].startswith('training: 10/200 steps, ') and lines[0].endswith(', loss=0.500')
  assert lines[-1].startswith('training: 199/200 steps, ')


def test_iterating_counts_and_a_resumed_bar_starts_where_it_was():
  log = io.StringIO()
  assert list(progress.bar(range(5), total=5, desc='reading', unit='article', file=log)) == [
      0, 1, 2, 3, 4]
  assert log.getvalue().splitlines()[-1].startswith('reading: 5/5 articles, ')
  judging = io.StringIO()
  list(progress.bar(range(3), total=3, desc='judging against Lead-3', unit='story',
                    file=judging))
  assert judging.getvalue().splitlines()[-1].startswith('judging against Lead-3: 3/3 stories, ')
  assert [progress.plural(n) for n in ('step', 'story', 'day')] == ['steps', 'stories', 'days']
  resumed = progress.bar(total=100, initial=90, file=io.StringIO())
  assert resumed.n == 90 and resumed.every == 1


def test_on_a_terminal_it_is_tqdm_and_disabled_is_silent():
  from tqdm import tqdm  # pylint: disable=import-outside-toplevel
  terminal = Terminal()
  live = progress.bar(total=3, file=terminal)
  assert isinstance(live, tqdm)
  live.close()
  quiet = io.StringIO()
  bar = progress.bar(total=3, file=quiet, disable=True)
  bar.update(3)
  bar.close()
  assert quiet.getvalue() == ''
