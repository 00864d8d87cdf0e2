"""The learner's room: the assignment notebook and the checks a learner runs in it.

- ``handout``: writes the assignment notebook (and nbgrader's source version); its
  command is ``python -m summarizer.exercises``. ``exercise_code`` reads the
  package's graded functions as the exercises' code; ``notebook_data`` is the
  data the notebook reads (stories, the shipped model).
- ``checks``: the checks a learner runs in the notebook (``checks_arrays``,
  ``checks_layers``, ``checks_loop``), run case by case by ``runner``.
- ``probes`` (what is measured of a function) and ``judge`` (how a measure is
  compared, printed and explained): the one place the notebook's checks and the
  teacher's grader (``summarizer.grading``) both use. ``failure_text`` prints a
  failure, ``mistakes`` names its cause, ``blame`` the earlier exercise at fault.

Nothing here imports ``summarizer.grading``: the learner's kernel never loads the
teacher's grader.
"""
