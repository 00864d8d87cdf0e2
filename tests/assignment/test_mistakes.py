"""Typical mistakes fail their checks and those built on them; correct answers
written another way pass (the list: ``learner_variants.py``).

A mistake's own check names it (its ``why:`` line) and prints each failure
once, in a few lines; a check built on it sends the learner back to the
exercise at fault ("fix Exercise N (name) first")."""

import pytest

import learner_variants
from summarizer.assignment import checks
from summarizer.contract import mistakes
from summarizer.contract.recording import GRADED

# What a failed check may print at most: lines (one at least for each failed test, and
# the checks of the layers count up to 19), and characters on a line below a header.
MOST_LINES = 35
WIDEST_DETAIL = 200


def headers(printed):
  return [line for line in printed.splitlines() if line.startswith('Failed: ')]


def fix_first(function):
  number = GRADED.index(function) + 1
  return f'fix Exercise {number} ({function}) first'


_RAN = {}


def ran_checks(variant):
  """The checks' results on a variant ({check: (failed, printed)}), run once for this file."""
  key = (variant.function, variant.name)
  if key not in _RAN:
    _RAN[key] = learner_variants.run_checks(checks, variant)
  return _RAN[key]


@pytest.mark.parametrize('variant', learner_variants.VARIANTS,
                         ids=[f'{v.function}: {v.name}' for v in learner_variants.VARIANTS])
@pytest.mark.slow
def test_the_checks_catch_mistakes_and_pass_correct_answers(variant):
  ran = ran_checks(variant)
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
    assert_said_once(printed)
    assert len(printed.splitlines()) <= MOST_LINES, (name, printed)
    assert max(len(line) for line in printed.splitlines()
               if not line.startswith('Failed: ')) <= WIDEST_DETAIL, (name, printed)


def test_every_graded_function_has_mistakes_and_a_correct_variant():
  functions = [variant.function for variant in learner_variants.VARIANTS]
  for name in GRADED:
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
  for name in GRADED:
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


# The median of what a listed mistake's own check prints, at most (characters).
MEDIAN_FAILURE = 1200


def failure_blocks(printed):
  """The failures a check printed, each its header and the lines below it."""
  blocks = []
  for line in printed.splitlines():
    if line.startswith('Failed: ') or not blocks:
      blocks.append([line])
    else:
      blocks[-1].append(line)
  return blocks


def assert_said_once(printed):
  """No line twice within one failure, and no header with two remarks on what is above."""
  for block in failure_blocks(printed):
    assert len(block) == len(set(block)), block
    assert block[0].count('above)') <= 1, block[0]


@pytest.mark.slow
def test_the_median_failure_is_short_and_says_each_line_once():
  lengths = []
  for variant in learner_variants.VARIANTS:
    if variant.correct:
      continue
    _, printed = ran_checks(variant)[variant.function]  # Run once, above.
    assert_said_once(printed)
    lengths.append(len(printed))
  lengths.sort()
  middle = len(lengths) // 2
  median = (lengths[middle] + lengths[~middle]) / 2
  assert median <= MEDIAN_FAILURE, lengths


def test_an_extra_eos_before_the_separator_is_not_called_a_missing_separator():
  # The separator is there, after one EOS too many: the calls show it.
  source = learner_variants.textwrap.dedent('''
      def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                        detokenize=detokenize, verbose=False, max_length=64):
        cur_output_tokens = tokenize(input_sentence) + [EOS, 0]
        generated_output = []
        for _ in range(max_length):
          cur_output = next_symbol(cur_output_tokens, model)
          cur_output_tokens.append(cur_output)
          generated_output.append(cur_output)
          if cur_output == EOS:
            break
        return detokenize(generated_output)
      ''')
  names = learner_variants.course_namespace(greedy_decode=source)
  failed, printed = learner_variants.run_check(checks, 'greedy_decode', names)
  assert failed
  assert 'without the separator' not in printed
  assert ('why: 1 EOS (1) too many before the separator: tokenize(sentence) already ends '
          'with EOS') in printed
  assert_said_once(printed)


def test_a_block_built_wrong_is_not_called_a_block_too_few():
  tree = str(learner_variants.namespace()['TransformerLM'](
      vocab_size=10, d_model=4, d_ff=8, n_layers=2, n_heads=2))
  lines = tree.split('\n')
  # The second block's feed-forward residual, cut out: three residuals, not four.
  starts = [i for i, line in enumerate(lines)
            if line.startswith('  Serial[') and 'Branch_out2' in lines[i + 1]]
  end = next(i for i in range(starts[-1] + 1, len(lines)) if lines[i] == '  ]')
  cut = '\n'.join(lines[:starts[-1]] + lines[end + 1:])
  assert mistakes.blocks_cause(cut, tree) is None
  one_block = '\n'.join(lines[:starts[-2]] + lines[end + 1:])
  assert mistakes.blocks_cause(one_block, tree).startswith(
      '1 decoder block(s) where n_layers asks for 2')


def test_a_repeat_is_called_a_repeated_block_only_when_whole_blocks_repeat():
  # Serial flattens each block's two residuals: [DecoderBlock(...)] * 2 repeats a pair.
  assert mistakes.repeated_blocks_cause([0, 1, 2, 3, 4, 5, 4, 5, 6]).startswith(
      'one block object repeated')
  assert mistakes.repeated_blocks_cause([0, 1, 2, 1, 3]).startswith(
      'one layer object is used twice')
  assert mistakes.repeated_blocks_cause([0, 1, 2, 3]) is None
