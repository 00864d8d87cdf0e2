"""python -m summarizer.exercises: the assignment notebook, nbgrader's version, a grade.

  python -m summarizer.exercises                  # transformer_summarizer_exercises.ipynb
  python -m summarizer.exercises --out mine.ipynb --force
  python -m summarizer.exercises --nbgrader course/   # nbgrader's source version and config
  python -m summarizer.exercises --grade submitted.ipynb   # the teacher's verdict, a table
  python -m summarizer.exercises --class-report course/ --out report/   # after autograde

The notebook is the course's assignment in its five parts (the data; UNQ_C1 to
UNQ_C7; training_loop and a short run of it; the shipped weights in your
TransformerLM; next_symbol, greedy_decode and your summary of an article), each
graded function with its steps above a blank, followed by its check. It is
written by ``contract.handout``; the grade comes from ``grading.grader``
(the sandbox); ``--nbgrader`` writes the course directory's
``nbgrader_config.py`` whose autograde uses that grade (``nbgrader_plugin``).
``--class-report`` reads an autograded course: the class's mistakes grouped by
cause (``grading.class_report``), a page and a CSV.
"""

import argparse
import os
import sys

from summarizer.contract.handout import (ASSIGNMENT, DEFAULT_OUT, _write,
                                           nbgrader_source_path, write_exercises,
                                           write_nbgrader_source)
from summarizer.errors import OneLineParser, SummarizerError, run_command, user_path
from summarizer.files import check_writable, exists_message
from summarizer.contract.recording import GRADED


def write_nbgrader_config(course_dir, sandbox='bwrap', force=False):
  """Writes ``course_dir/nbgrader_config.py`` (the sandboxed autograde); returns its path."""
  from summarizer.grading import nbgrader_plugin  # pylint: disable=g-import-not-at-top
  path = os.path.join(course_dir, 'nbgrader_config.py')
  return _write(path, nbgrader_plugin.config_source(sandbox=sandbox), force)


def _parser():
  parser = OneLineParser(prog='python -m summarizer.exercises', description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--out', type=user_path,
                      help=f'the notebook to write (default: {DEFAULT_OUT}); with '
                           '--class-report, the folder to write the report into')
  parser.add_argument('--nbgrader', type=user_path, metavar='COURSE_DIR',
                      help="write the teacher's source version (solutions included) "
                           f'into COURSE_DIR/source/{ASSIGNMENT}/ and COURSE_DIR/'
                           'nbgrader_config.py (autograding in the sandbox) instead')
  parser.add_argument('--grade', type=user_path, metavar='NOTEBOOK',
                      help="grade a learner's notebook in the sandbox and print the table")
  parser.add_argument('--class-report', type=user_path, metavar='COURSE',
                      help='after nbgrader autograde: write the class report of the course '
                           'directory COURSE (class_report.html and class_report.csv) into '
                           'the folder --out names')
  parser.add_argument('--sandbox', choices=('bwrap', 'process'), default='bwrap',
                      help="with --grade or --nbgrader: 'bwrap' (bubblewrap, the default) "
                           "or 'process', a weaker mode for where bubblewrap cannot be "
                           'installed (a separate process: nothing hidden, nothing read-only)')
  parser.add_argument('--seed', type=int, help='with --grade: the inputs\' seed (default: '
                      'drawn afresh)')
  parser.add_argument('--force', action='store_true',
                      help='overwrite the notebook (and nbgrader_config.py) if they exist')
  return parser


def _grade(args):
  from summarizer.grading import grader  # pylint: disable=g-import-not-at-top
  if not os.path.lexists(args.grade):
    raise SummarizerError(f'{args.grade}: no such notebook')
  report = grader.grade(args.grade, seed=args.seed, mode=args.sandbox)
  print(grader.table(report))
  return 0


def _class_report(args):
  from summarizer.grading import report_page  # pylint: disable=g-import-not-at-top
  if not args.out:
    raise SummarizerError('--class-report needs --out DIR, the folder to write the report into')
  print(report_page.report_course(args.class_report, args.out))
  return 0


def _write_course(args):
  # Both files asked about before either is written: a refusal leaves no half course.
  for target in (nbgrader_source_path(args.nbgrader),
                 os.path.join(args.nbgrader, 'nbgrader_config.py')):
    if not args.force and os.path.lexists(target):
      raise SummarizerError(exists_message(target))
    check_writable(target)
  path = write_nbgrader_source(args.nbgrader, force=args.force)
  config = write_nbgrader_config(args.nbgrader, sandbox=args.sandbox, force=args.force)
  print(f'wrote {path}: the source version for nbgrader, and {config}; next, in '
        f'{args.nbgrader}: nbgrader generate_assignment {ASSIGNMENT}')
  return 0


def main(argv=None):
  args = _parser().parse_args(argv)

  def command():
    if args.grade:
      return _grade(args)
    if args.nbgrader:
      return _write_course(args)
    if args.class_report:
      return _class_report(args)
    args.out = args.out or DEFAULT_OUT
    write_exercises(args.out, force=args.force)
    print(f'wrote {args.out}: {len(GRADED)} exercises in five parts; fill in each blank '
          'and run the check below it')
    return 0
  return run_command(command, interrupted='stopped')


if __name__ == '__main__':
  sys.exit(main())
