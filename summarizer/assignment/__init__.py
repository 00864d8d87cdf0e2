"""The learner's room: the assignment notebook and the checks a learner runs in it.

- ``handout``: writes the assignment notebook (and nbgrader's source version); its
  command is ``python -m summarizer.exercises``. ``exercise_code`` reads the
  package's graded functions as the exercises' code; ``notebook_data`` is the
  data the notebook reads (stories, the shipped model).
- ``checks``: the checks a learner runs in the notebook (``checks_arrays``,
  ``checks_layers``, ``checks_loop``), run case by case by ``runner``.
- What the notebook's checks and the teacher's grader (``summarizer.grading``)
  both use: ``probes`` (what is measured of a function, and the measures'
  names), ``measures`` (each measure defined once: how it is compared, by
  ``compare``; how a difference is printed, by ``failure_text``; the mistake it
  names, by ``mistakes``) and ``judge`` (the one judge both sides hand a
  measure). ``blame`` names the earlier exercise at fault.

Nothing here imports ``summarizer.grading``: the learner's kernel never loads the
teacher's grader.
"""
