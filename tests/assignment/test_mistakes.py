"""Typical mistakes fail their checks and those built on them; correct answers
written another way pass (the list: ``learner_variants.py``)."""

import pytest

import learner_variants
from summarizer.assignment import checks


@pytest.mark.parametrize('variant', learner_variants.VARIANTS,
                         ids=[f'{v.function}: {v.name}' for v in learner_variants.VARIANTS])
def test_the_checks_catch_mistakes_and_pass_correct_answers(variant):
  failed = learner_variants.outcome(checks, variant)
  if variant.correct:
    assert not any(failed.values()), failed
  else:
    assert {name for name, bad in failed.items() if bad} == set(variant.fails)


def test_every_graded_function_has_mistakes_and_a_correct_variant():
  functions = [variant.function for variant in learner_variants.VARIANTS]
  for name in learner_variants.handout.GRADED:
    kinds = {variant.correct for variant in learner_variants.VARIANTS if variant.function == name}
    assert kinds == {True, False}, name
  assert len(functions) >= 30


def test_a_mistake_in_a_layer_names_the_learners_line():
  variant = next(v for v in learner_variants.VARIANTS if v.name == 'left blank')
  names = learner_variants.namespace(variant)
  failed, printed = learner_variants.run_check(checks, 'CausalAttention', names)
  assert failed
  assert ('it raised NotImplementedError (in compute_attention_output, line 5: '
          'raise NotImplementedError())') in printed


@pytest.mark.parametrize('name, function, cause', [
    ('weights normalised over the queries (axis -2)', 'DotProductAttention',
     'why: the weights were normalised over the queries (axis -2): each row of weights '
     'must sum to 1 over the keys, the last axis'),
    ('the mask above the diagonal (triu)', 'dot_product_self_attention',
     'why: the mask is the upper triangle (triu): position 0 may see only itself'),
    ('no causal mask', 'dot_product_self_attention', 'why: no causal mask'),
    ('PositionalEncoding not told the mode', 'TransformerLM',
     "why: PositionalEncoding ignored mode='predict': ShiftRight and PositionalEncoding need mode"),
    ('ShiftRight not told the mode', 'TransformerLM',
     "why: ShiftRight ignored mode='predict': ShiftRight and PositionalEncoding need mode"),
])
def test_a_recognised_mistake_is_named(name, function, cause):
  variant = next(v for v in learner_variants.VARIANTS if v.name == name)
  failed, printed = learner_variants.run_check(checks, function,
                                               learner_variants.namespace(variant))
  assert failed
  assert cause in printed


def test_a_cause_is_named_only_when_recognised():
  variant = next(v for v in learner_variants.VARIANTS if v.name == 'scores not scaled by sqrt(depth)')
  failed, printed = learner_variants.run_check(checks, 'DotProductAttention',
                                               learner_variants.namespace(variant))
  assert failed
  assert 'normalised over the queries' not in printed and 'why:' not in printed
