"""Greedy decoding as in the course, and the cached decoder that must match it."""

import numpy as np
import pytest

from summarizer import decoding, greedy_decode, next_symbol, summarize
from summarizer.errors import SummarizerError

ARTICLES = [
    'Heavy rain closed the coast road on Monday, officials said.',
    'The council voted 7 to 2 to build a new bridge over the river. ' * 6,
    'Scientists said the comet would pass close to Earth in March.',
]


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
  assert capsys.readouterr().out == '5\n5 6\n5 6 1\n'


def test_greedy_decode_has_a_length_guard():
  summary = greedy_decode('x', model=None, max_length=4,
                          next_symbol=lambda tokens, model: 8,
                          tokenize=lambda text: [2, 1],
                          detokenize=lambda ids: ids)
  assert summary == [8, 8, 8, 8]


def test_fast_decoder_gives_greedy_tokens(random_model_dir):
  model, decoder, _, vocab = decoding.load(random_model_dir)
  from summarizer import text
  for article in ARTICLES:
    prefix = text.tokenize(article, vocab) + [0]
    greedy = list(decoding.greedy_tokens(prefix, model, max_length=12))
    fast = list(decoder.generate(prefix, max_length=12))
    assert fast == greedy


def test_sampling_is_seeded_and_top_1_is_greedy(random_model_dir):
  _, decoder, _, vocab = decoding.load(random_model_dir)
  from summarizer import text
  prefix = text.tokenize(ARTICLES[0], vocab) + [0]
  greedy = list(decoder.generate(prefix, 10))
  first = list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first == list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first != greedy  # A random model's flat distribution: samples differ.
  assert list(decoder.generate(prefix, 10, temperature=1.0, top_k=1)) == greedy


def test_summarize_methods_agree(random_model_dir):
  # An article the random model answers with more than EOS.
  fast = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10)
  greedy = summarize(ARTICLES[0], model_dir=random_model_dir, max_length=10,
                     method='greedy')
  assert isinstance(fast, str) and fast
  assert fast == greedy


def test_summarize_rejects_bad_arguments(random_model_dir):
  with pytest.raises(SummarizerError, match='empty'):
    summarize('   \n', model_dir=random_model_dir)
  with pytest.raises(SummarizerError, match='unknown method'):
    summarize('text', model_dir=random_model_dir, method='beam')


def test_long_article_is_cut_to_fit(random_model_dir):
  cuts = []
  ids = list(decoding.summarize_tokens(
      'word ' * 2000, random_model_dir, max_length=5,
      on_cut=lambda kept, total: cuts.append((kept, total))))
  assert len(ids) <= 5
  (kept, total), = cuts
  assert kept == 512 - 5 - 3 and total > kept


@pytest.mark.parametrize('length', [62, 63, 64, 127])
def test_fast_decoder_matches_greedy_across_prefill_blocks(random_model_dir, length):
  # The prefill pads to a multiple of PREFILL_BLOCK: lengths either side of it.
  model, decoder, _, _ = decoding.load(random_model_dir)
  prefix = [(7 * i) % 500 + 2 for i in range(length - 2)] + [1, 0]
  assert decoding.PREFILL_BLOCK == 64
  greedy = list(decoding.greedy_tokens(prefix, model, max_length=6, stop_at_eos=False))
  assert list(decoder.generate(prefix, 6, stop_at_eos=False)) == greedy


def test_fast_generators_do_not_share_their_caches(random_model_dir):
  # Each step gives up (donates) its cache: two summaries made in turn must
  # each keep their own.
  _, decoder, _, vocab = decoding.load(random_model_dir)
  from summarizer import text
  prefixes = [text.tokenize(article, vocab) + [0] for article in ARTICLES[:2]]
  alone = [list(decoder.generate(p, 8, stop_at_eos=False)) for p in prefixes]
  first, second = (decoder.generate(p, 8, stop_at_eos=False) for p in prefixes)
  interleaved = [[], []]
  for _ in range(8):
    interleaved[0].append(next(first))
    interleaved[1].append(next(second))
  assert interleaved == alone
  assert alone[0] != alone[1]


def test_clean_article_drops_what_training_articles_never_have():
  assert decoding.clean_article('  One.\r\n\r\nTwo.\rThree.\n\n') == 'One.\n\nTwo.\nThree.'


def test_a_final_newline_does_not_reach_the_model(random_model_dir, monkeypatch):
  tokenized, tokenize = [], decoding.tokenize

  def recording_tokenize(article, vocab_file=None):
    tokenized.append(article)
    return tokenize(article, vocab_file)

  monkeypatch.setattr(decoding, 'tokenize', recording_tokenize)
  summaries = [list(decoding.summarize_tokens(ARTICLES[0] + end, random_model_dir, 4))
               for end in ('', '\n', '\r\n')]
  assert tokenized == [ARTICLES[0]] * 3
  assert summaries[0] == summaries[1] == summaries[2]
