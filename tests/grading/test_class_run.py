"""A class graded side by side (``class_run.py``): each submission alone, several at once.

nbgrader's own run over a class, graded ahead two at a time, is
``test_nbgrader.py``'s; here ``grade_all`` and the reports it files.
"""

import shutil
import threading

import pytest

import learner_variants
from summarizer.grading import class_run, sandbox

SEED = 13
ONE = ('DotProductAttention',)


def test_a_teacher_may_name_the_count_and_zero_means_a_sandbox_a_core():
  assert class_run.graders_for(3) == 3 and class_run.graders_for(1) == 1
  assert class_run.graders_for(0) == class_run.usable_cores() >= 1


def test_a_report_graded_ahead_is_taken_once_for_each_notebook_with_those_cells():
  right = learner_variants.notebook_with(learner_variants.COURSE_ANSWERS)
  again = learner_variants.notebook_with(learner_variants.COURSE_ANSWERS)
  wrong = learner_variants.notebook_with(dict(
      learner_variants.COURSE_ANSWERS, DotProductAttention='def DotProductAttention(q, k, v, m):\n'
                                                           '  return q\n'))
  assert class_run.cells_key(right) == class_run.cells_key(again) != class_run.cells_key(wrong)
  ahead = class_run.Ahead()
  ahead.reports[class_run.cells_key(right)] = ['first', 'second']
  assert [ahead.take(again), ahead.take(right), ahead.take(right), ahead.take(wrong)] == [
      'first', 'second', None, None]


class Log:
  def __init__(self):
    self.lines = []

  def info(self, text, *args):
    self.lines.append(text % args)

  warning = info


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which('bwrap'), reason='needs bubblewrap')
def test_a_class_is_graded_two_at_a_time_each_alone_with_its_own_verdict(monkeypatch):
  wrong = dict(learner_variants.COURSE_ANSWERS, DotProductAttention=(
      'def DotProductAttention(query, key, value, mask):\n  return value\n'))
  notebooks = [learner_variants.notebook_with(answers)
               for answers in (learner_variants.COURSE_ANSWERS, wrong, {})]
  running, most, run = [0], [0], sandbox.run
  lock = threading.Lock()

  def counted(*args, **kwargs):  # The sandboxes running at once.
    with lock:
      running[0] += 1
      most[0] = max(most[0], running[0])
    try:
      return run(*args, **kwargs)
    finally:
      with lock:
        running[0] -= 1
  monkeypatch.setattr(sandbox, 'run', counted)
  log, ahead = Log(), class_run.Ahead()
  monkeypatch.setattr(class_run, 'grade_all', lambda *a, **k: _one_function(*a, **k))
  ahead.grade_class(notebooks[0], notebooks[1:], 2, 'bwrap', log)
  assert most[0] == 2  # Two sandbox runs at once, never three.
  scores = [ahead.take(notebook).total for notebook in notebooks]
  assert scores == [1, 0, 0]
  assert log.lines[0] == 'Grading ahead: 3 submissions, 2 at a time'
  assert sorted(log.lines[1:]) == [f'Graded ahead: {k} of 3' for k in (1, 2, 3)]
  assert all(ahead.take(notebook) is None for notebook in notebooks)  # Each taken once.


_GRADE_ALL = class_run.grade_all


def _one_function(notebooks, graders, mode='bwrap', on_each=None, on_progress=None):
  return _GRADE_ALL(notebooks, graders, seed=SEED, mode=mode, on_each=on_each,
                    on_progress=on_progress, functions=ONE, whole=False)


def test_a_submission_that_cannot_be_graded_is_left_for_its_turn(monkeypatch):
  def broken(notebooks, graders, **_):
    return [RuntimeError('the sandbox did not start') for _ in notebooks]
  monkeypatch.setattr(class_run, 'grade_all', broken)
  log, ahead = Log(), class_run.Ahead()
  notebook = learner_variants.notebook_with({})
  ahead.grade_class(notebook, [], 2, 'bwrap', log)
  assert ahead.take(notebook) is None
  assert 'not graded (the sandbox did not start); it is graded in its turn' in log.lines[1]
