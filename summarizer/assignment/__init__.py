"""The learner's room: the checks a learner runs in the assignment notebook, in the learner's kernel.

- ``checks``: the front the notebook calls (``test_DotProductAttention(...)``):
  ``checks_arrays`` (Exercises 1-4), ``checks_layers`` (5-7), ``checks_loop``
  (8-10 and Parts 4-5), each case run and tallied by ``runner``, beside what
  every answer keeps, and with the ``where:`` line (the learner's line where the
  values leave the course's).
- What else a failure shows the learner: ``cell_errors`` (a Trax or jax error in
  a cell, short) and ``blame`` ("fix Exercise N first").

What is measured and how it is judged is the contract's (``summarizer.contract``),
which the teacher's grader runs too. Nothing here imports ``summarizer.grading``:
the learner's kernel never loads the teacher's grader.
"""


def __getattr__(name):
  # Notebooks written before the contract had its own room import the notebook's data
  # from here (``from summarizer.assignment import checks, notebook_data``): they still run.
  if name == 'notebook_data':
    from summarizer.contract import notebook_data  # pylint: disable=g-import-not-at-top
    return notebook_data
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
