"""python -m summarizer.exercises: the assignment notebook, nbgrader's version, grading.

The command lives in ``summarizer.assignment.command``; see its ``--help``.
"""

import sys

from summarizer.assignment.command import main

if __name__ == '__main__':
  sys.exit(main())
