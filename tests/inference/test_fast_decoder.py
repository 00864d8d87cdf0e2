"""The cached fast decoder: the course's greedy tokens, one call a token or one a summary."""

import numpy as np
import pytest

from summarizer import decoding
from summarizer.inference import fast_decoder
from summarizer.inference import loaded_model
from summarizer.inference import model_directory

from conftest import ARTICLES


@pytest.mark.slow
def test_fast_decoder_gives_greedy_tokens(random_model_dir):
  loaded = loaded_model.load(random_model_dir)
  model, decoder = loaded.model, loaded.decoder
  for article in ARTICLES:
    prefix = loaded.tokenize(article) + [0]
    greedy = list(decoding.greedy_tokens(prefix, model, max_length=12))
    fast = list(decoder.generate(prefix, max_length=12))
    assert fast == greedy


def test_sampling_is_seeded_and_top_1_is_greedy(random_model_dir):
  loaded = loaded_model.load(random_model_dir)
  decoder = loaded.decoder
  prefix = loaded.tokenize(ARTICLES[0]) + [0]
  greedy = list(decoder.generate(prefix, 10))
  first = list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first == list(decoder.generate(prefix, 10, temperature=1.5, seed=3))
  assert first != greedy  # A random model's flat distribution: samples differ.
  assert list(decoder.generate(prefix, 10, temperature=1.0, top_k=1)) == greedy


@pytest.mark.parametrize('length', [62, 63, 64, 127])
def test_fast_decoder_matches_greedy_across_prefill_blocks(random_model_dir, length):
  # The prefill pads to a multiple of PREFILL_BLOCK: lengths either side of it.
  loaded = loaded_model.load(random_model_dir)
  model, decoder = loaded.model, loaded.decoder
  prefix = [(7 * i) % 500 + 2 for i in range(length - 2)] + [1, 0]
  assert fast_decoder.PREFILL_BLOCK == 64
  greedy = list(decoding.greedy_tokens(prefix, model, max_length=6, stop_at_eos=False))
  assert list(decoder.generate(prefix, 6, stop_at_eos=False)) == greedy


def test_fast_generators_do_not_share_their_caches(random_model_dir):
  # Each step gives up (donates) its cache: two summaries made in turn must
  # each keep their own.
  loaded = loaded_model.load(random_model_dir)
  decoder = loaded.decoder
  prefixes = [loaded.tokenize(article) + [0] for article in ARTICLES[:2]]
  alone = [list(decoder.generate(p, 8, stop_at_eos=False)) for p in prefixes]
  first, second = (decoder.generate(p, 8, stop_at_eos=False) for p in prefixes)
  interleaved = [[], []]
  for _ in range(8):
    interleaved[0].append(next(first))
    interleaved[1].append(next(second))
  assert interleaved == alone
  assert alone[0] != alone[1]


@pytest.mark.slow
def test_new_weights_decode_as_a_model_loaded_with_them(random_model_dir):
  # A training run's preview swaps the weights into what was compiled for the last one.
  source = model_directory.read(random_model_dir)
  weights, config, vocab = source.weights, source.config, source.vocab_file
  other = [w * 1.5 + 0.01 for w in weights]
  swapped = loaded_model.LoadedModel.from_weights(weights, config, vocab)
  prefix = swapped.tokenize(ARTICLES[0]) + [0]
  before = swapped.decoder.start(prefix, max_length=8)[0].log_probs
  swapped.replace_weights(other)
  after = swapped.decoder.start(prefix, max_length=8)[0].log_probs
  fresh = loaded_model.LoadedModel.from_weights(other, config, vocab)
  expected = fresh.decoder.start(prefix, max_length=8)[0].log_probs
  assert not np.allclose(before, after)
  np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-5)
  assert (list(swapped.decoder.generate(prefix, 8, stop_at_eos=False))
          == list(fresh.decoder.generate(prefix, 8, stop_at_eos=False)))
