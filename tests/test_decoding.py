"""Greedy decoding as in the course, and the cached decoder that must match it."""

import textwrap

import numpy as np
import pytest

from summarizer import greedy_decode, next_symbol


class RecordingModel:
  """Stands in for an eval-mode model: records inputs, prefers one token."""

  def __init__(self, vocab=10, favourite=7):
    self.inputs = []
    self.vocab, self.favourite = vocab, favourite

  def __call__(self, batch):
    inputs, _ = batch
    self.inputs.append(np.array(inputs))
    log_probs = np.full(inputs.shape + (self.vocab,), -5.0)
    log_probs[..., 3] = -1.0
    log_probs[0, :, self.favourite] = -0.5
    return log_probs, inputs


@pytest.mark.parametrize('length,padded', [(1, 2), (3, 4), (4, 8), (7, 8), (8, 16)])
def test_next_symbol_pads_to_next_power_of_two(length, padded):
  model = RecordingModel()
  assert next_symbol(list(range(2, 2 + length)), model) == 7
  (seen,) = model.inputs
  assert seen.shape == (1, padded)
  assert seen[0, :length].tolist() == list(range(2, 2 + length))
  assert not seen[0, length:].any()


def test_greedy_decode_starts_after_sep_and_stops_at_eos(capsys):
  calls = []
  outputs = iter([5, 6, 1, 9])

  def fake_next_symbol(tokens, model):
    calls.append(list(tokens))
    return next(outputs)

  summary = greedy_decode('ignored', model=None, next_symbol=fake_next_symbol,
                          tokenize=lambda text: [2, 3, 1],
                          detokenize=lambda ids: ' '.join(map(str, ids)),
                          verbose=True)
  assert summary == '5 6 1'
  assert calls == [[2, 3, 1, 0], [2, 3, 1, 0, 5], [2, 3, 1, 0, 5, 6]]
  assert capsys.readouterr().out == '5 6 1\n'  # Each new word once, as it comes.


def test_verbose_decoding_prints_each_new_word_once(capsys):
  # A detokenize that wraps (the course's, at 70 columns; here at 10) moves a growing
  # word to the next line; a piece of a word (a subword) joins the word before it.
  pieces = {5: 'Heavy', 6: ' rain', 7: 'fall', 1: '<EOS>'}
  outputs = iter([5, 6, 7, 1])
  summary = greedy_decode('ignored', model=None,
                          next_symbol=lambda tokens, model: next(outputs),
                          tokenize=lambda text: [2, 1],
                          detokenize=lambda ids: textwrap.fill(''.join(pieces[i] for i in ids),
                                                               width=10, break_long_words=False),
                          verbose=True)
  printed = capsys.readouterr().out
  assert summary == 'Heavy\nrainfall<EOS>'
  assert printed == 'Heavy rainfall<EOS>\n'


def test_greedy_decode_has_a_length_guard():
  summary = greedy_decode('x', model=None, max_length=4,
                          next_symbol=lambda tokens, model: 8,
                          tokenize=lambda text: [2, 1],
                          detokenize=lambda ids: ids)
  assert summary == [8, 8, 8, 8]
