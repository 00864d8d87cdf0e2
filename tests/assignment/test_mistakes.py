"""Typical mistakes fail their checks and those built on them; correct answers
written another way pass (the list: ``learner_variants.py``).

A mistake's own check names it (its ``why:`` line) and prints each failure
once, in a few lines; a check built on it sends the learner back to the
exercise at fault ("fix Exercise N (name) first")."""

import pytest

import learner_variants
from summarizer.assignment import checks

# What a failed check may print at most: lines (one at least for each failed test, and
# the checks of the layers count up to 19), and characters on a line below a header.
MOST_LINES = 35
WIDEST_DETAIL = 200


def headers(printed):
  return [line for line in printed.splitlines() if line.startswith('Failed: ')]


def fix_first(function):
  number = learner_variants.handout.GRADED.index(function) + 1
  return f'fix Exercise {number} ({function}) first'


@pytest.mark.parametrize('variant', learner_variants.VARIANTS,
                         ids=[f'{v.function}: {v.name}' for v in learner_variants.VARIANTS])
@pytest.mark.slow
def test_the_checks_catch_mistakes_and_pass_correct_answers(variant):
  ran = learner_variants.run_checks(checks, variant)
  failed = {name: bool(count) for name, (count, _) in ran.items()}
  if variant.correct:
    assert not any(failed.values()), failed
    return
  assert {name for name, bad in failed.items() if bad} == set(variant.fails)
  own = ran[variant.function][1]
  if variant.why:
    assert f'why: {variant.why}' in own
  assert 'fix Exercise' not in own  # The mistake is the learner's own function's.
  for name in variant.fails[1:]:
    assert fix_first(variant.function) in ran[name][1], name
  for name in variant.fails:
    printed = ran[name][1]
    assert len(headers(printed)) == len(set(headers(printed))), name
    assert len(printed.splitlines()) <= MOST_LINES, (name, printed)
    assert max(len(line) for line in printed.splitlines()
               if not line.startswith('Failed: ')) <= WIDEST_DETAIL, (name, printed)


def test_every_graded_function_has_mistakes_and_a_correct_variant():
  functions = [variant.function for variant in learner_variants.VARIANTS]
  for name in learner_variants.handout.GRADED:
    kinds = {variant.correct for variant in learner_variants.VARIANTS if variant.function == name}
    assert kinds == {True, False}, name
  assert len(functions) >= 30


def test_the_issues_families_of_mistakes_are_named():
  named = {variant.name for variant in learner_variants.VARIANTS if variant.why}
  assert {'one block repeated', 'reads the last position (-1)',
          'scores not scaled by sqrt(depth)', 'the mask above the diagonal (triu)',
          'an additive mask (0 and -1e9), not boolean', 'the mask with k=-1',
          'weights normalised over the queries (axis -2)', 'no LogSoftmax at the end',
          'no Dense of vocab_size at the end', 'no last Dense',
          'no separator after the article', 'appends one token after EOS',
          'stops before appending EOS', 'pads to a power of two not above the length'} <= named


def test_a_mistake_in_a_layer_names_the_learners_line():
  variant = next(v for v in learner_variants.VARIANTS if v.name == 'left blank')
  names = learner_variants.namespace(variant)
  failed, printed = learner_variants.run_check(checks, 'CausalAttention', names)
  assert failed
  assert ('it raised NotImplementedError (in compute_attention_output, line 5: '
          'raise NotImplementedError())') in printed
  assert f"why: with the package's compute_attention_output_closure in place of yours this " \
         f"case passes: {fix_first('compute_attention_output_closure')}" in printed


def test_a_cause_is_named_only_when_recognised():
  variant = next(v for v in learner_variants.VARIANTS if v.name == 'd_head = n_heads')
  failed, printed = learner_variants.run_check(checks, 'CausalAttention',
                                               learner_variants.namespace(variant))
  assert failed
  assert 'why:' not in printed


@pytest.mark.slow
def test_the_courses_answers_pass_every_check(capsys):
  names = learner_variants.course_namespace()
  for name in learner_variants.handout.GRADED:
    failed, printed = learner_variants.run_check(checks, name, names)
    assert (failed, printed) == (0, 'All tests passed\n'), name


def test_an_earlier_function_bound_as_a_default_argument_is_found_and_put_back():
  # The course's CausalAttention binds the closures as default arguments: the
  # one defined above it (here, a wrong one) is what it runs.
  wrong = next(v for v in learner_variants.VARIANTS
               if v.name == 'heads reshaped without the transpose')
  names = learner_variants.course_namespace(compute_attention_heads_closure=wrong.source)
  causal_attention = names['CausalAttention']
  defaults, learners = causal_attention.__defaults__, names['compute_attention_heads_closure']
  for name in ('CausalAttention', 'DecoderBlock'):
    failed, printed = learner_variants.run_check(checks, name, names)
    assert failed and fix_first('compute_attention_heads_closure') in printed, name
  assert causal_attention.__defaults__ is defaults
  assert names['compute_attention_heads_closure'] is learners


def test_exercise_1s_mistake_seen_from_exercise_5_is_one_line_a_case():
  variant = next(v for v in learner_variants.VARIANTS
                 if v.name == 'scores not scaled by sqrt(depth)')
  failed, printed = learner_variants.run_check(checks, 'CausalAttention',
                                               learner_variants.namespace(variant))
  assert failed == 3
  assert printed.splitlines()[1] == (
      "    why: with the package's DotProductAttention in place of yours this case passes: "
      'fix Exercise 1 (DotProductAttention) first')
  assert printed.count('(same as above)') == 2
  assert 'expected:' not in printed  # The case's own numbers would only mislead.
  assert len(printed.splitlines()) == 3 + 1 + 1
