"""The contract: what the learner's checks and the teacher's grader both run, written once.

What is handed out:
- ``exercise_code``: the graded functions' source, read from the package, and the
  notebook's setup cell; ``handout`` writes the assignment notebook from it (and
  nbgrader's source version); ``notebook_data`` is the data the notebook reads.

How an answer is measured and judged:
- ``recording``: every name a case is recorded under (the graded functions', the
  measures', the cases'), and how a case is recorded; the package's function of a
  graded name; the inputs both sides draw (Exercise 1's, the calls under ``jax.jit``);
- ``probes`` (Exercises 8-10, Parts 4-5, the table of all) and ``probes_layers``
  (Exercises 1-7): a function's outputs on the grading's inputs, nothing judged.
  They run inside the sandbox too: the sandbox shows these three modules of the
  contract, and of the rest only the two below;
- ``measures``: each measure once (a ``judge.Measure``), compared by one of the
  judge's comparisons, its difference printed by ``failure_text``, the mistake it
  names by ``mistakes``;
- ``judge``: the one judge both sides hand a measure and its expected value, with
  what a measure is and the comparisons it names;
- ``following`` (a call followed line by line, and the learner's first value the
  course's function never held: the ``where:`` line) and ``check_inputs`` (the
  notebook's check inputs of Exercises 1-4, which both sides follow). The
  sandbox shows these two as well: it follows the learner's function alone and
  sends its trace back; the package's is followed outside.

The learner's room (``summarizer.assignment``, the checks in the kernel) and the
teacher's (``summarizer.grading``, the sandboxed grader) import this room, never
each other; this room imports neither.
"""
