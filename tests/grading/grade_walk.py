"""The walk of one grade: which of the package's modules run, and where it crosses between rooms.

nbgrader's preprocessor (``SandboxedGrades``, in ``--sandbox process``) grades
the course's answers (or them with one learner variant in place) while
``sys.setprofile`` records every Python call made in this process: the
modules of the package whose code runs, and each call from one room
(``grading/``, ``contract/``, the course's files and the base) into another.
The worker runs in a process of its own and is not counted.

By default the seed is prepared first by one grade that is not recorded (as
every grade but the first of a grading run finds it); ``--cold`` records the
first grade, the preparation included. It takes a few minutes:

    .venv/bin/python tests/grading/grade_walk.py [--cold] [--variant NAME]
"""

import argparse
import collections
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'assignment'))

import learner_variants  # pylint: disable=wrong-import-position
import summarizer  # pylint: disable=wrong-import-position
from summarizer.grading.nbgrader_plugin import SandboxedGrades  # pylint: disable=wrong-import-position

PACKAGE = os.path.dirname(os.path.abspath(summarizer.__file__)) + os.sep


def module_of(code):
  """The package's module a code object is from ('grading/grader.py'), or None."""
  return code.co_filename[len(PACKAGE):] if code.co_filename.startswith(PACKAGE) else None


def room_of(module):
  """A module's room ('grading', 'contract', ...), or 'root' for the course and the base."""
  return module.split('/')[0] if '/' in module else 'root'


class Walk:
  """Calls recorded while it is on: ``modules`` (module -> calls) and ``crossings``."""

  def __init__(self):
    self.modules = collections.Counter()
    self.crossings = collections.Counter()  # (caller's module:function, callee's) -> calls

  def __call__(self, frame, event, arg):
    del arg
    module = event == 'call' and module_of(frame.f_code)
    if not module:
      return
    self.modules[module] += 1
    caller = frame.f_back
    while caller is not None and module_of(caller.f_code) is None:
      caller = caller.f_back  # Through the libraries' frames, to the package's caller.
    if caller is not None and room_of(module_of(caller.f_code)) != room_of(module):
      self.crossings[(f'{module_of(caller.f_code)}:{caller.f_code.co_name}',
                      f'{module}:{frame.f_code.co_name}')] += 1

  def record(self, work):
    threading.setprofile(self)
    sys.setprofile(self)
    try:
      return work()
    finally:
      sys.setprofile(None)
      threading.setprofile(None)


def notebook(variant=None):
  """The course's answers, with one of ``learner_variants.VARIANTS`` (by name) in its cell."""
  answers = dict(learner_variants.COURSE_ANSWERS)
  if variant:
    chosen = [v for v in learner_variants.VARIANTS if v.name == variant]
    if not chosen:
      raise SystemExit(f'error: no learner variant is named {variant!r}')
    answers[chosen[0].function] = chosen[0].source
  return learner_variants.notebook_with(answers)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--cold', action='store_true', help='record the first grade of the seed')
  parser.add_argument('--variant', help="a learner variant's name (a mistake) in its cell")
  args = parser.parse_args(argv)
  grades = SandboxedGrades(sandbox='process', graders=1)
  if not args.cold:
    grades.preprocess(notebook(), {})
  graded, walk = notebook(args.variant), Walk()  # Written before the walk: not the grade's.
  walk.record(lambda: grades.preprocess(graded, {}))
  print(f'{len(walk.modules)} modules run')
  for module in sorted(walk.modules, key=lambda m: (room_of(m), m)):
    print(f'  {module}  ({walk.modules[module]} calls)')
  entered = sorted({callee.split(':')[0] for (caller, callee) in walk.crossings
                    if room_of(caller) == 'grading' and room_of(callee) == 'contract'})
  print(f'{len(walk.crossings)} calls between rooms (caller -> callee); the grading room '
        f'called {len(entered)} of the contract modules: {", ".join(entered) or "none"}')
  for (caller, callee), calls in sorted(walk.crossings.items()):
    print(f'  {caller} -> {callee}  x{calls}')


if __name__ == '__main__':
  main()
