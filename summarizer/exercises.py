"""python -m summarizer.exercises: the assignment notebook, nbgrader's version, grading.

The command lives in ``summarizer.assignment.exercises``; see its ``--help``.
"""

import sys

from summarizer.assignment.exercises import main

if __name__ == '__main__':
  sys.exit(main())
