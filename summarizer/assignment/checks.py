"""Checks for the ten graded functions of the assignment, runnable offline.

The course grades its week-2 assignment (UNQ_C1 to UNQ_C10) with a unit-test
file; these checks ask the same questions, with the same names and call
forms, and need neither the course's files nor a network. Hand a check your
function; it runs the course's cases, prints each one that fails (what was
expected, what came) and ends with ``All tests passed`` or
``N Tests passed, M Tests failed``::

  from summarizer.assignment import checks
  checks.test_DotProductAttention(DotProductAttention)
  checks.test_training_loop(training_loop, TransformerLM)
  checks.test_greedy_decode(greedy_decode)

Each check returns the number of failed cases. A function that raises (an
exercise not filled in yet, a wrong shape) fails its cases with the
exception's message and the line of the learner's code that raised it (a
Trax ``LayerError`` is unwrapped to its cause); the check itself never
raises. A printed layer that differs from the course's is reported by the
layers missing, extra or changed.

Each failure is printed once, in a few lines: arrays cut to their edges
and shown once a check (later failures say where they differ most), long
lists to their ends, a case's failures like those above in one line. A mistake
the checks know is named on a ``why:`` line (softmax over the wrong axis,
no scale, a wrong mask, one block repeated, a missing output layer, an
off-by-one of decoding ...); the measures that name them are the grader's
too (``measures.py``). A case that fails only because of an earlier
exercise (it passes with the package's function in place of the
learner's) says which to fix first, and only when that exercise fails its
own check. A failed case names, on a ``where:`` line, the learner's line
where its values (or the layers it builds) first leave the package's
(``runner.where``); beside its cases each check holds what every answer
keeps (``runner.kept_cases``: its inputs unchanged, jax.jit, ``max_length``
tokens exactly, the package's dtype). ``failed_cases()``, which a check
cell's ``assert`` shows, only sums up what the check printed.

Beyond the course's cases, each check runs what the course only prints:
every layer is run beside the package's, with the same weights and random
key, in 'train', 'eval' and 'predict' mode, at sizes where the heads' width
differs from their number and with two blocks of their own weights; the
loop ``training_loop`` builds is checked for its mode and its model's
output; ``greedy_decode`` is run with and without ``verbose`` (what it prints
is feedback, never a failure). A
mistake in a function therefore fails the checks of the functions built on
it too. ``test_trained_model`` and ``test_summary`` check the assignment's
last parts: the shipped weights in the learner's model, and its summary.

``next_symbol`` and ``greedy_decode`` are checked with stand-ins for the
trained model, the tokenizer and ``next_symbol``, so they run in a second:
what is checked is how they pad, read and loop, not what a model says
(``test_next_symbol(next_symbol, TransformerLM)`` adds the course's own case
with the full-size model, a few seconds).

The checks are written in ``checks_arrays.py`` (UNQ_C1 to UNQ_C4),
``checks_layers.py`` (UNQ_C5 to UNQ_C7) and ``checks_loop.py`` (UNQ_C8 to
UNQ_C10, Parts 4 and 5), on the runner (``runner.py``), which hands each
measure (``measures.py``) to the judge the grader uses too (``judge.py``);
this module is their front.
"""

from summarizer.assignment import cell_errors as _cell_errors
from summarizer.assignment import runner as _runner
from summarizer.assignment.checks_arrays import (test_compute_attention_heads_closure,
                                                 test_compute_attention_output_closure,
                                                 test_dot_product_self_attention,
                                                 test_DotProductAttention)
from summarizer.assignment.checks_layers import (test_CausalAttention, test_DecoderBlock,
                                                 test_TransformerLM)
from summarizer.assignment.checks_loop import (loss_remark, shipped_weights_fit,
                                               test_greedy_decode, test_next_symbol, test_summary,
                                               test_trained_model, test_training_loop)
from summarizer.assignment.runner import failed_cases
from summarizer.contract import recording as _recording

# Blame reads them: an earlier exercise is named at fault only when it fails its own check.
_runner.OWN_CHECKS.update({name[len('test_'):]: check for name, check in dict(globals()).items()
                          if name.startswith('test_') and name[len('test_'):] in _recording.GRADED})

__all__ = sorted(name for name in dir() if not name.startswith('_'))  # What is imported above.
_cell_errors.install()  # In a notebook: Trax's errors in the training and loading cells, short.
