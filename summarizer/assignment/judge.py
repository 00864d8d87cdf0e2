"""Compares what a learner's function gave with what the package's gave, case by case.

Runs in the trusted grader only. Both sides ran the same probe
(``probes.py``) on the same inputs; the package's measures are the expected
ones. Measures named ``input ...`` are the inputs, kept for the ``why:``
lines, never compared. A failure is said as the in-notebook checks say it:
``Failed: case: what``, expected, got, and a ``why:`` line when a known
mistake is recognised in what came.
"""

import numpy as np

from summarizer.assignment.mistakes import (attention_cause, blocks_cause, decoding_cause,
                                          join_heads_cause, mask_cause, predict_mode_cause,
                                          repeated_blocks_cause, split_heads_cause)
from summarizer.assignment.compare import agree
from summarizer.assignment.failure_text import (first_token_difference, largest_difference, show,
                                            tree_difference, weight_difference)
from summarizer.assignment.probes import CALLS, ENCODINGS, SHIFTED

# What a function prints is feedback (grader.printed_note), never compared: the
# course's greedy_decode prints the summary as it grows, whatever verbose says.
NOT_COMPARED = ('takes verbose', 'what it prints, line by line')
QUIET = 'greedy_decode(..., verbose=False)'
# Cases only a function that takes their argument is run through.
OPTIONAL_CASES = (QUIET,)


def judge_cases(name, got_cases, expected_cases):
  """The failure lines of one function's run ([] when every case agrees)."""
  got_by_name = {}  # name -> its cases in the order they ran (a name may come twice)
  for case in got_cases:
    if isinstance(case, dict):
      got_by_name.setdefault(case.get('name'), []).append(case)
  lines = []
  for expected in expected_cases:
    same_name = got_by_name.get(expected['name'])
    got = same_name.pop(0) if same_name else None
    if got is None and expected['name'] in OPTIONAL_CASES:
      continue
    if got is None or got.get('not run'):
      lines.append(f"Failed: {expected['name']}: " + ((got or {}).get('not run') or 'not run'))
    elif got.get('error'):
      lines.append(f"Failed: {expected['name']}: it raised {str(got['error'])[:600]}")
    else:
      measures = got.get('measures')
      lines += judge_measures(name, expected['name'],
                              measures if isinstance(measures, dict) else {},
                              expected['measures'])
  return lines


def judge_measures(name, case_name, got, expected):
  lines = []
  for what, wanted in expected.items():
    if what.startswith('input ') or what in NOT_COMPARED:
      continue
    came = got.get(what, '(not measured: the call did not get that far)')
    if agree(what, came, wanted):
      continue
    lines += failure(case_name, what, came, wanted)
    cause = why(name, what, came, wanted, expected)
    if cause:
      lines.append(f'    why: {cause}')
  return lines


def failure(case_name, what, got, expected):
  lines = [f'Failed: {case_name}: {what}']
  if isinstance(expected, str) and '\n' in expected and isinstance(got, str):
    return lines + ['    ' + line for line in tree_difference(expected, got)]
  if what in ('weight shapes', 'shapes of its weights') and isinstance(got, list):
    return lines + ['    ' + weight_difference(got, expected)]
  lines += [f'    expected: {show(expected)}', f'    got:      {show(got)}']
  difference = (first_token_difference(got, expected)
                or (isinstance(expected, np.ndarray) and largest_difference(got, expected)))
  return lines + ([f'    {difference}'] if difference else [])


# --------------------------------------------------------------------------
# Causes recognised in what came.

def why(name, what, got, wanted, measures):
  explain = EXPLAIN.get((name, what))
  if explain is None:
    return None
  try:
    return explain(got, wanted, measures)
  except Exception:  # pylint: disable=broad-except  # Too far off to be read.
    return None


# The causes the in-notebook checks name too (checks.py), read from the measures.

def _attention_cause(got, wanted, m):
  return attention_cause(got, m['input q'], m['input k'], m['input v'], m['input mask'])


def _mask_cause(got, wanted, m):
  return mask_cause(got, m['input q'], m['input k'], m['input v'])


def _heads_cause(got, wanted, m):
  return split_heads_cause(got, m['input x'], wanted)


def _join_cause(got, wanted, m):
  return join_heads_cause(got, m['input x'], wanted)


def _blocks_cause(got, wanted, m):
  return blocks_cause(got, wanted)


def _repeated_cause(got, wanted, m):
  return repeated_blocks_cause(len(got) - len(set(got)))


def _shift_cause(got, wanted, m):
  return predict_mode_cause({SHIFTED: got})


def _encoding_cause(got, wanted, m):
  return predict_mode_cause({ENCODINGS: got})


def _decoding_cause(got, wanted, m):
  return decoding_cause(got)


def _shipped_cause(got, wanted, m):
  return ("your model's weights are not the shapes of the shipped model's, so its weights "
          "cannot be loaded: build it from notebook_data.model_size(), with the layers of "
          'Exercise 7')


EXPLAIN = {
    ('DotProductAttention', 'output'): _attention_cause,
    ('dot_product_self_attention', 'output'): _mask_cause,
    ('compute_attention_heads_closure', 'output'): _heads_cause,
    ('compute_attention_output_closure', 'output'): _join_cause,
    ('TransformerLM', 'str(layer)'): _blocks_cause,
    ('TransformerLM', 'which sublayer each is'): _repeated_cause,
    ('whole', 'weight shapes'): _shipped_cause,
    ('greedy_decode', CALLS): _decoding_cause,
    ('TransformerLM', SHIFTED): _shift_cause,
    ('TransformerLM', ENCODINGS): _encoding_cause,
}
