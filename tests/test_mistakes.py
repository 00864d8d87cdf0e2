"""Typical mistakes fail their checks and those built on them; correct answers
written another way pass (the list: ``learner_variants.py``)."""

import pytest

import learner_variants
from summarizer import checks


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
  for name in learner_variants.exercises.GRADED:
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
