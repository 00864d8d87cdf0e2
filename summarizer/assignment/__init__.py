"""The assignment room: the course's ten graded functions as a notebook, and their grading.

- ``handout``: writes the assignment notebook (and nbgrader's source version); its
  command is ``python -m summarizer.exercises``.
- ``checks``: the checks a learner runs in the notebook, feedback while working.
- ``coursework``: the data the notebook reads (stories, the shipped model).
- ``grader``: the teacher's verdict, computed outside the learner's kernel: the
  learner's cells run in a bubblewrap sandbox (``sandbox``, ``worker``) that
  returns only outputs (``probes``), compared here with the package's; ``watch``
  stops it from outside at the limits of ``limits``.
- ``nbgrader_plugin``: the nbgrader preprocessor that writes that verdict.
"""
