"""The teacher's room: a submitted notebook graded outside the learner's kernel.

- ``grader``: the verdict. The learner's cells, read first by ``static_reading``
  (magics as Jupyter runs them; code built at run time goes to a teacher), run
  in a bubblewrap sandbox (``sandbox``, with ``worker`` inside it, Trax's own
  answers hidden) that returns only outputs (the contract's ``probes``);
  ``report_schema`` reads them back within bounds, and the contract's
  ``measures`` hold each of them against the package's own results
  (``reference_results``), as the notebook's checks do. ``limits`` holds the
  limits, and stops the sandbox from outside at them. ``where_line`` names
  the learner's line where the values leave the course's, from the learner's
  trace the sandbox sends beside the package's followed here.
- ``nbgrader_plugin``: the nbgrader preprocessors that write that verdict.

The grader imports the contract (``summarizer.contract``), never the learner's room
(``summarizer.assignment``).
"""
