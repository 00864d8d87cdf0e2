"""The grader's tests grade the same learner variants as the notebook's checks are tested on."""

import os
import sys

# learner_variants.py lives beside the checks' tests, in tests/assignment.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'assignment'))
