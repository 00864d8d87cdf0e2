"""Inputs a check never compared, and the where: of values no array leads to (issue 64).

A function that reads the notebook's globals in place of its arguments (a
stream, a size), a layer not told the mode, a plain value written in (a
learning rate, a mode): each mistake is one of ``learner_variants.VARIANTS``,
written for these tests; its where: line is asserted to be the line the
mistake changed, and its why: to hold of the learner's own values.
"""

import textwrap

import pytest

import learner_variants
from summarizer.assignment import checks, runner, written_values
from summarizer.contract import probes, probes_layers, recording
from summarizer.contract.judge import Measure
from summarizer.model import DecoderBlock as package_block


def variant(name):
  return next(v for v in learner_variants.VARIANTS if v.name == name)


def line_of(source, text):
  """The number of the first line of ``source`` holding ``text``, as the cell numbers it."""
  return next(number for number, line in enumerate(source.splitlines(), 1) if text in line)


def own_check(name):
  """(failed, printed, the notebook's names) of a variant's own check."""
  mistake = variant(name)
  names = learner_variants.namespace(mistake)
  failed, printed = learner_variants.run_check(checks, mistake.function, names)
  return failed, printed, names


def said(printed, start):
  return [line.strip() for line in printed.splitlines() if line.strip().startswith(start)]


@pytest.mark.slow
def test_a_training_stream_read_from_the_notebook_is_caught_at_its_line():
  name = "trains on the notebook's train_batch_stream"
  failed, printed, names = own_check(name)
  assert failed == 1
  line = line_of(variant(name).source, 'labeled_data=train_batch_stream')
  assert said(printed, 'where: ') == [
      f"where: line {line} of training_loop reads `train_batch_stream`, where the course's has "
      '`train_gen`']
  # The why is true of the learner's loop: its training task reads the notebook's stream.
  assert said(printed, 'why: ')[0].startswith('why: the TrainTask reads train_batch_stream')
  streams = {recording.TRAIN_GEN: probes.batches(0), recording.EVAL_GEN: probes.batches(1)}
  loop = names['training_loop'](names['TransformerLM'], *streams.values(),
                                output_dir=str(names['tempfile'].mkdtemp()))
  assert loop.tasks[0].labeled_data is names['train_batch_stream']
  assert probes.training_stream(loop, streams, names['training_loop']) == (
      "the notebook's train_batch_stream")


@pytest.mark.slow
def test_a_global_read_in_place_of_max_length_is_named_with_its_value():
  name = "the notebook's MAX_SUMMARY_TOKENS in place of max_length"
  failed, printed, names = own_check(name)
  assert failed == 1
  line = line_of(variant(name).source, 'range(MAX_SUMMARY_TOKENS)')
  assert said(printed, 'where: ') == [
      f'where: line {line} of greedy_decode reads `MAX_SUMMARY_TOKENS` (64), where the course\'s '
      'has 3']
  # 64 is what the learner's function wrote, and what the global holds.
  assert names['MAX_SUMMARY_TOKENS'] == 64 == probes.written_without_eos(names['greedy_decode'])


@pytest.mark.slow
def test_a_learning_rate_written_in_is_located_at_its_literal():
  name = 'learning rate 0.001'
  _, printed, _ = own_check(name)
  line = line_of(variant(name).source, 'Adam(0.001)')
  assert said(printed, 'where: ') == [
      f'where: line {line} of training_loop writes 0.001, where the course\'s has 0.01']


@pytest.mark.slow
def test_a_layer_not_told_the_mode_is_named_at_the_line_that_built_it():
  name = 'dropout not told the mode'
  _, printed, names = own_check(name)
  line = line_of(variant(name).source, 'causal_attention, tl.Dropout(rate=dropout)')
  assert said(printed, 'where: ') == [
      f"where: line {line} of DecoderBlock built `Dropout` in mode 'train'; the course has "
      "`Dropout` in mode 'eval' here"]
  # True of the learner's layers: in an eval-mode block, its Dropout keeps mode 'train'.
  def dropout_modes(block):
    return {layer._mode for layer in probes_layers.all_sublayers(probes_layers.as_layer(block))  # pylint: disable=protected-access
            if layer.name == 'Dropout'}
  assert dropout_modes(names['DecoderBlock'](12, 14, 3, 0.3, 'eval', names['tl'].Relu)) == {'train'}
  assert dropout_modes(package_block(12, 14, 3, 0.3, 'eval', names['tl'].Relu)) == {'eval'}


@pytest.mark.slow
def test_an_activation_not_handed_on_is_caught_and_never_blamed_on_the_earlier_exercise():
  failed, printed, _ = own_check('ff_activation not handed to the blocks')
  assert failed
  assert 'ff_activation=tl.FastGelu' in printed
  # The Relu was built by DecoderBlock, at a line of it that is right: no where: there.
  assert not [line for line in said(printed, 'where: ') if 'of DecoderBlock' in line]


def _defined(source, name, **names):
  """The function ``name`` defined from ``source`` (its globals ``names``), as a cell defines it."""
  source = textwrap.dedent(source).lstrip('\n')
  filename = f'<course {name}>'
  learner_variants.linecache.cache[filename] = (len(source), None,
                                                source.splitlines(keepends=True), filename)
  exec(compile(source, filename, 'exec'), names)  # pylint: disable=exec-used
  return names[name]


def package_rate():
  return 0.01 * 2


def package_writes_it():
  return 0.002


def test_a_value_where_is_said_only_of_what_the_learners_line_writes():
  learners = _defined('''
      def rate(steps=0.001):
        scale = 0.002
        return [steps, scale * RATE]
      ''', 'rate', RATE=3.0)
  # The literal the check got, on the learner's line; the course's body does not write it.
  assert written_values.value_where(learners, package_rate, [(0.002, 0.01)]) == (
      "where: line 2 of rate writes 0.002, where the course's has 0.01")
  assert written_values.value_where(learners, package_rate, [(3.0, 0.01)]) == (
      "where: line 3 of rate reads `RATE` (3.0), where the course's has 0.01")
  # A value no line writes, a default (the signature's), 0 and 1: no line is named.
  assert written_values.value_where(learners, package_rate, [(0.005, 0.01)]) is None
  assert written_values.value_where(learners, package_rate, [(0.001, 0.01)]) is None
  assert written_values.value_where(learners, package_rate, [(1, 2)]) is None
  # A literal the course's function writes too says nothing of where the learner's differs.
  assert written_values.value_where(learners, package_writes_it, [(0.002, 0.01)]) is None


def test_only_plain_values_that_differ_are_paired():
  case = {'expected': {Measure('a'): {'rate': 0.01, 'modes': ['train'], 'shape': (2, 3)}}}
  recorded = {'measures': {'a': {'rate': 0.001, 'modes': ['eval'], 'shape': (2, 4)}}}
  assert runner.differing(case, recorded) == [(0.001, 0.01), ('eval', 'train')]

