"""A cached fast decoder: the same weights in predict mode, one call a token or one a summary.

``FastDecoder`` runs the model in predict mode, where attention keeps the
keys and values of earlier positions: the article goes through once, then
each new token is one small jitted call, or the whole token loop one
compiled call (``summarizer.inference.beam``: greedy or beam search, with
Hugging Face's constraints). Several articles, or the beams of one, are
decoded side by side as rows of one batch, each getting exactly the summary
it gets alone.
"""

import collections
import functools

import jax
from jax import numpy as jnp
import numpy as np

from summarizer.config import EOS
from summarizer.decoding import MAX_SUMMARY_TOKENS
from summarizer.errors import SummarizerError
from summarizer.inference import beam
from summarizer.inference.sized_decoder import SizedDecoder


# The prefill pads the article to a multiple of this many tokens: few shapes
# to compile, little padding to compute.
PREFILL_BLOCK = 64


# A summary's caches are sized to what it needs, rounded up to a multiple of
# this many positions: each step attends over the whole cache, so a cache of
# the model's full context (the course's 4096) would cost most of the time.
CACHE_BLOCK = 128


class Started(collections.namedtuple('Started', 'log_probs state size')):
  """Prefixes read by ``FastDecoder.start_rows``: what decoding continues from.

  Attributes:
    log_probs: Array (B, V) of each article's next token.
    state: The articles' model state.
    size: The positions their caches hold.
  """


class FastDecoder:
  """Greedy, sampled or beam decoding with a key/value cache.

  A prefix is read in one call; then either one jitted call a token
  (``resume``: streaming and sampling) or the whole token loop in one
  compiled call (``decode_rows``, greedy or beam search). Several articles
  are decoded side by side as one batch in which each keeps its own caches
  and position counters (``jax.vmap`` over the model's pure function), so
  articles of different lengths each get what they would alone; an
  article's beams are rows that share its position, and move with a gather
  on the batch axis of its caches.

  Args:
    model: A predict-mode ``TransformerLM`` (batch of one) with its weights,
      or None where ``build`` makes every size.
    max_len: The model's ``max_len`` (size of its caches).
    build: A function of a size returning a predict-mode ``TransformerLM``
      of that ``max_len`` with its weights: summaries then get caches of the
      size they need (see ``CACHE_BLOCK``), not the whole context, and a
      model is traced only at the sizes used. None: always ``model``.
  """

  def __init__(self, model, max_len, build=None):
    if model is None and build is None:
      raise ValueError('FastDecoder needs a model or a build function')
    self._max_len = max_len
    self._build = build
    self._sized = {} if model is None else {max_len: SizedDecoder(model)}
    self._constrain = jax.jit(beam.constrain, static_argnums=(3, 4))

  def _at(self, size):
    """The decoder whose caches hold ``size`` positions (built on first use)."""
    if size not in self._sized:
      self._sized[size] = SizedDecoder(self._build(size))
    return self._sized[size]

  def reweigh(self, weights_at):
    """Gives every size built so far new weights of the same shapes; nothing is recompiled.

    Args:
      weights_at: A function of a size returning the flat list of weights (a
        checkpoint's order) of the model at that size.
    """
    for size, sized in self._sized.items():
      sized.weights = sized.weights_tree(weights_at(size))

  def cache_size(self, padded_length, max_length=None):
    """The positions a prefix (padded to ``padded_length``) and its summary need."""
    if self._build is None or max_length is None:
      return self._max_len
    needed = max(padded_length, padded_length + max_length)
    return min(self._max_len, -(-needed // CACHE_BLOCK) * CACHE_BLOCK)

  @functools.cached_property
  def row_bytes(self):
    """Bytes of the caches one row keeps, at the model's whole context."""
    size, sized = next(iter(self._sized.items()), (None, None))
    if sized is None:
      size = min(CACHE_BLOCK, self._max_len)
      sized = self._at(size)
    # The caches (heads, size, d_head) grow with the size; the counters do not.
    return int(sum(jnp.size(s) * jnp.asarray(s).dtype.itemsize
                   * (self._max_len / size if jnp.ndim(s) else 1)
                   for s in jax.tree_util.tree_leaves(sized.empty_state)))

  def rows_per_batch(self, num_beams=1):
    """How many articles of ``num_beams`` rows each fit ``beam.ROWS_MEMORY_BYTES``."""
    return max(1, beam.ROWS_MEMORY_BYTES // (self.row_bytes * num_beams))

  def start_rows(self, prefixes, n_scored=None, max_length=None):
    """Reads several prefixes side by side, in one call.

    Args:
      prefixes: Lists of ids, each ``article + [EOS, SEP]``.
      n_scored: For each, how many of its first ids to score (default: none).
      max_length: The most summary tokens that will follow (None: as many
        as the context holds; known, the caches are made no larger than
        needed).

    Returns:
      (started, mean_nlls): a ``Started`` that ``decode_rows`` (or, for one
      prefix, ``resume``) continues from once, and each prefix's mean
      negative log-probability of its scored ids.
    """
    n_scored = [0] * len(prefixes) if n_scored is None else n_scored
    # Predict mode does not shift by itself: each row starts with a 0.
    lengths = [len(prefix) + 1 for prefix in prefixes]
    padded_length = min(-(-max(lengths) // PREFILL_BLOCK) * PREFILL_BLOCK, self._max_len)
    size = self.cache_size(padded_length, max_length)
    padded_length = min(padded_length, size)
    padded = np.zeros((len(prefixes), padded_length), np.int32)  # (B, P)
    for row, prefix in enumerate(prefixes):
      padded[row, 1:lengths[row]] = prefix
    sized = self._at(size)
    log_probs, mean_nlls, state = sized.prefill(
        padded, np.array(lengths, np.int32), np.array(n_scored, np.int32),
        sized.weights, sized.articles_state(len(prefixes)))
    return Started(log_probs, state, size), [float(x) for x in np.asarray(mean_nlls)]

  def start(self, prefix, n_scored=0, max_length=None):
    """Reads the prefix in one call.

    Args:
      prefix: Ids of ``article + [EOS, SEP]``.
      n_scored: How many of the first ids to score (the article's).
      max_length: The most summary tokens that will follow (None: as many
        as the context holds).

    Returns:
      (started, mean_nll): what ``resume`` or ``decode_rows`` continues from
      (once), and the mean negative log-probability of the first
      ``n_scored`` ids.
    """
    started, (mean_nll,) = self.start_rows([prefix], [n_scored], max_length)
    return started, mean_nll

  def resume(self, started, max_length=MAX_SUMMARY_TOKENS, temperature=0.0,
             top_k=None, seed=0, stop_at_eos=True, min_length=0,
             no_repeat_ngram_size=0):
    """Yields the token ids that follow a ``start``-ed prefix, EOS included if reached.

    One jitted call a token: for streaming and sampling.

    Args:
      started: What ``start`` returned first.
      max_length: Most tokens to generate.
      temperature: 0 for greedy (argmax); above 0 samples from the softened
        distribution.
      top_k: When sampling, draw only among the k most likely tokens.
      seed: Seed of the sampling.
      stop_at_eos: Stop after EOS (False: always make ``max_length`` tokens,
        for benchmarks).
      min_length: Forbid EOS before this many tokens.
      no_repeat_ngram_size: Forbid any n-gram of this many tokens twice.
    """
    log_probs, state, size = started
    sized = self._at(size)
    rng = np.random.default_rng(seed)
    constrained = min_length > 0 or no_repeat_ngram_size > 0
    generated = np.zeros((1, max_length), np.int32)
    for t in range(max_length):
      if constrained:
        log_probs = self._constrain(log_probs, generated, np.int32(t), min_length,
                                    no_repeat_ngram_size)
      token = _choose(np.asarray(log_probs[0]), temperature, top_k, rng)
      generated[0, t] = token
      yield token
      if token == EOS and stop_at_eos:
        return
      log_probs, state = sized.step(np.array([[token]], np.int32), sized.weights, state)
      log_probs = log_probs[:, 0]

  def decode_rows(self, started, max_length=MAX_SUMMARY_TOKENS, search=beam.Search(),
                  stop_at_eos=True, with_scores=False):
    """Decodes every ``start_rows``-ed prefix in one compiled call.

    Args:
      started: What ``start_rows`` (or ``start``) returned first.
      max_length: Most tokens to generate.
      search: A ``beam.Search`` (default: greedy).
      stop_at_eos: Stop a row at its EOS (greedy search only).
      with_scores: Also return beam search's score of each summary (its
        log-probability / length ** length_penalty); this runs beam search
        even with one beam, which is greedy search only with a length
        penalty of 0.

    Returns:
      A list, for each prefix, of its summary's ids, EOS included if reached
      (with ``with_scores``, a pair of that list and the scores).
    """
    log_probs, state, size = started
    sized = self._at(size)
    scores = None
    if search.num_beams == 1 and not with_scores:
      tokens, lengths = sized.greedy_loop(
          sized.weights, log_probs, state, max_length, search.min_length,
          search.no_repeat_ngram_size, stop_at_eos)
    else:
      tokens, lengths, scores = sized.beam_loop(
          sized.weights, log_probs, state, search.num_beams, max_length,
          float(search.length_penalty), search.min_length, search.no_repeat_ngram_size,
          search.early_stopping)
      scores = np.asarray(scores).tolist()
    tokens, lengths = np.asarray(tokens), np.asarray(lengths)
    summaries = [row[:length].tolist() for row, length in zip(tokens, lengths)]
    return (summaries, scores) if with_scores else summaries

  def check_fits(self, prefix_length, max_length):
    """Raises ``SummarizerError`` if prefix and summary overflow the context."""
    if prefix_length + max_length + 1 > self._max_len:
      raise SummarizerError(
          f'{prefix_length} article tokens + {max_length} summary tokens do not '
          f'fit the model context of {self._max_len}')

  def generate(self, prefix, max_length=MAX_SUMMARY_TOKENS, temperature=0.0,
               top_k=None, seed=0, stop_at_eos=True):
    """Yields the summary's token ids one by one, EOS included if reached.

    ``start`` then ``resume``; the arguments are ``resume``'s.
    """
    self.check_fits(len(prefix), max_length)
    started, _ = self.start(prefix, max_length=max_length)
    yield from self.resume(started, max_length, temperature, top_k, seed, stop_at_eos)


def _choose(log_probs, temperature, top_k, rng):
  """Picks a token: argmax, or a sample at ``temperature`` among the top k."""
  if temperature <= 0:
    return int(np.argmax(log_probs))
  logits = log_probs.astype(np.float64) / temperature
  if top_k:
    cutoff = np.sort(logits)[-min(top_k, logits.size)]
    logits = np.where(logits >= cutoff, logits, -np.inf)
  probs = np.exp(logits - logits.max())
  return int(rng.choice(probs.size, p=probs / probs.sum()))
