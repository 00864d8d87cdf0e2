"""The cached fast decoder: the course's greedy tokens, one call a token or one a summary."""

import numpy as np
import pytest

from summarizer import decoding
from summarizer.inference import fast_decoder
from summarizer.inference import loading

from conftest import ARTICLES


def test_fast_decoder_gives_greedy_tokens(random_model_dir):
  model, decoder, _, vocab = loading.load(random_model_dir)
  from summarizer import text
  for article in ARTICLES:
    prefix = text.tokenize(article, vocab) + [0]
    greedy = list(decoding.greedy_tokens(prefix, model, max_length=12))
    fast = list(decoder.generate(prefix, max_length=12))
    assert fast == greedy


def test_sampling_is_seeded_and_top_1_is_greedy(random_model_dir):
  _, decoder, _, vocab = loading.load(random_model_dir)
  from summarizer import text
  prefix = text.tokenize(ARTICLES[0], vocab) + [0]
  greedy = list(decoder.generate(prefix, 10))
  first = list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first == list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first != greedy  # A random model's flat distribution: samples differ.
  assert list(decoder.generate(prefix, 10, temperature=1.0, top_k=1)) == greedy


@pytest.mark.parametrize('length', [62, 63, 64, 127])
def test_fast_decoder_matches_greedy_across_prefill_blocks(random_model_dir, length):
  # The prefill pads to a multiple of PREFILL_BLOCK: lengths either side of it.
  model, decoder, _, _ = loading.load(random_model_dir)
  prefix = [(7 * i) % 500 + 2 for i in range(length - 2)] + [1, 0]
  assert fast_decoder.PREFILL_BLOCK == 64
  greedy = list(decoding.greedy_tokens(prefix, model, max_length=6, stop_at_eos=False))
  assert list(decoder.generate(prefix, 6, stop_at_eos=False)) == greedy


def test_fast_generators_do_not_share_their_caches(random_model_dir):
  # Each step gives up (donates) its cache: two summaries made in turn must
  # each keep their own.
  _, decoder, _, vocab = loading.load(random_model_dir)
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


def test_new_weights_decode_as_a_model_loaded_with_them(random_model_dir):
  # A training run's preview swaps the weights into what was compiled for the last one.
  from summarizer import text
  from summarizer.inference import checkpoint
  weights, config, vocab, _ = checkpoint.read_model_weights(random_model_dir)
  other = [w * 1.5 + 0.01 for w in weights]
  prefix = text.tokenize(ARTICLES[0], vocab) + [0]
  swapped = loading.LoadedModel.from_weights(weights, config, vocab)
  before = swapped.decoder.start(prefix, max_length=8)[0].log_probs
  swapped.replace_weights(other)
  after = swapped.decoder.start(prefix, max_length=8)[0].log_probs
  fresh = loading.LoadedModel.from_weights(other, config, vocab)
  expected = fresh.decoder.start(prefix, max_length=8)[0].log_probs
  assert not np.allclose(before, after)
  np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-5)
  assert (list(swapped.decoder.generate(prefix, 8, stop_at_eos=False))
          == list(fresh.decoder.generate(prefix, 8, stop_at_eos=False)))
