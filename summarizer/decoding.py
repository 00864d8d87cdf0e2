"""Writing a summary: the course's greedy decoder and a cached fast decoder.

The model reads ``article + [EOS, SEP]`` and each next token is the argmax of
its output. The course's ``greedy_decode`` re-runs the whole model over the
padded sequence for every token: easy to follow, but each token costs a full
forward pass. ``FastDecoder`` runs the same weights in predict mode, where
attention keeps the keys and values of earlier positions: the article goes
through once, then each new token is one small jitted call, or the whole
token loop one compiled call (``summarizer.beam``: greedy or beam search,
with Hugging Face's constraints). Several articles, or the beams of one,
are decoded side by side as rows of one batch (``summarize_many``), each
getting exactly the summary it gets alone.
"""

import collections
import functools
import warnings

import jax
from jax import numpy as jnp
import numpy as np

from summarizer import beam
from summarizer import checkpoint
from summarizer import options
from summarizer._trax import fastmath
from summarizer.config import CALIBRATION_KEY, EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM
from summarizer.text import course_detokenize, course_tokenize, detokenize, tokenize

# Summary tokens generated at most when the caller does not say.
MAX_SUMMARY_TOKENS = 64


def next_symbol(cur_output_tokens, model):
  """Returns the model's most likely next token after ``cur_output_tokens``.

  As in the course: pad to the smallest power of two strictly greater than
  the length, run the eval-mode model on ``(padded, padded)`` and take the
  argmax of the log-probabilities at position ``len(cur_output_tokens)``.

  Args:
    cur_output_tokens: List of token ids so far (article, EOS, SEP, summary).
    model: An eval-mode ``TransformerLM`` with its weights.

  Returns:
    int: the next token id.
  """
  token_length = len(cur_output_tokens)
  padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
  padded = list(cur_output_tokens) + [0] * (padded_length - token_length)
  padded_with_batch = np.array(padded, dtype=np.int32)[None, :]  # (1, P)
  output, _ = model((padded_with_batch, padded_with_batch))  # (1, P, V)
  log_probs = output[0, token_length, :]
  return int(np.argmax(log_probs))


def greedy_decode(input_sentence, model, next_symbol=next_symbol,  # pylint: disable=redefined-outer-name
                  tokenize=course_tokenize, detokenize=course_detokenize,
                  verbose=False, max_length=MAX_SUMMARY_TOKENS):
  """Summarises ``input_sentence`` one argmax token at a time (the course's way).

  The parameters come in the course's order, so the course's call
  ``greedy_decode(sentence, model, next_symbol, tokenize, detokenize)``
  works; ``max_length`` comes last. As in the course, ``tokenize`` and
  ``detokenize`` default to the course's vocabulary (``detokenize`` wraps at
  70 columns): a model of another vocabulary needs its own.

  Args:
    input_sentence: The article text.
    model: An eval-mode ``TransformerLM``.
    next_symbol: Function (tokens, model) -> next id.
    tokenize: Function text -> ids ending in EOS (default: the course's).
    detokenize: Function ids -> text (default: the course's).
    verbose: Print the summary as it grows, as the course does.
    max_length: Most summary tokens to generate (the course's loop has no
      bound; a model that never writes EOS would run forever).

  Returns:
    The detokenised summary, ending in '<EOS>' when the model ended it.
  """
  cur_output_tokens = list(tokenize(input_sentence)) + [SEP]  # article, EOS, SEP
  generated_output = []
  for _ in range(max_length):
    cur_output = next_symbol(cur_output_tokens, model)
    cur_output_tokens.append(cur_output)
    generated_output.append(cur_output)
    if verbose:
      print(detokenize(generated_output))
    if cur_output == EOS:
      break
  return detokenize(generated_output)


def greedy_tokens(prefix, model, max_length=MAX_SUMMARY_TOKENS,
                  next_symbol=next_symbol, stop_at_eos=True):  # pylint: disable=redefined-outer-name
  """Yields the greedy continuation of ``prefix`` token by token, up to EOS."""
  tokens = list(prefix)
  for _ in range(max_length):
    token = next_symbol(tokens, model)
    tokens.append(token)
    yield token
    if token == EOS and stop_at_eos:
      return


# The prefill pads the article to a multiple of this many tokens: few shapes
# to compile, little padding to compute.
PREFILL_BLOCK = 64


# A summary's caches are sized to what it needs, rounded up to a multiple of
# this many positions: each step attends over the whole cache, so a cache of
# the model's full context (the course's 4096) would cost most of the time.
CACHE_BLOCK = 128


def _per_article(fn, in_axes):
  """Maps ``fn`` over the leading (article) axis of the arguments whose axis is 0.

  A batch of several articles is a ``jax.vmap``: each article keeps its own
  caches and position counters. A batch of one skips it, for a batch of
  one runs faster without (the vmapped cache update is a scatter).
  """
  mapped = jax.vmap(fn, in_axes)

  def per_article(*args):
    first = next(a for a, axis in zip(args, in_axes) if axis == 0)
    if jnp.shape(jax.tree_util.tree_leaves(first)[0])[0] > 1:
      return mapped(*args)
    args = [a if axis is None else jax.tree_util.tree_map(lambda x: x[0], a)
            for a, axis in zip(args, in_axes)]
    return jax.tree_util.tree_map(lambda x: x[None], fn(*args))
  return per_article


def _expand(state, k):
  """Copies one article's row to k rows (its beams): (1*H, C, Dh) -> (K*H, C, Dh)."""
  return jax.tree_util.tree_map(
      lambda s: jnp.tile(s, (k,) + (1,) * (s.ndim - 1)) if s.ndim else s, state)


def _reorder(state, source):
  """Row j of the article's new state is its row ``source[j]`` (K,)."""
  def gather(s):
    if not s.ndim:  # A position counter: the same for every beam.
      return s
    beams = s.reshape((source.shape[0], -1) + s.shape[1:])   # (K, H, C, Dh)
    return beams[source].reshape(s.shape)                   # (K*H, C, Dh)
  return jax.tree_util.tree_map(gather, state)


class _SizedDecoder:
  """The jitted functions of a predict-mode model whose caches hold ``size`` positions.

  The state is a batch of articles (leading axis B), each of K rows (its
  beams, or one row) sharing the article's position.
  """

  def __init__(self, model):
    self.weights = model.weights
    self.empty_state = model.state
    forward = model.pure_fn
    rng = fastmath.random.get_prng(0)  # Unused: no dropout in predict mode.

    def prefill(tokens, length, n_scored, weights, state):
      """Feeds one article's tokens (P,) of which ``length`` are real.

      Returns the log-probs (V,) after the last real token, the mean negative
      log-probability of tokens 1..n_scored (each given those before it:
      the model reads the article anyway, so its perplexity costs nothing
      more) and the state.
      """
      log_probs, state = forward(tokens[None, :], weights, state, rng)  # (1, P, V)
      # Position i predicts token i + 1 of the shifted input.
      following = jnp.roll(tokens, -1)                                      # (P,)
      predicted = jnp.take_along_axis(log_probs[0], following[:, None], 1)  # (P, 1)
      scored = jnp.arange(tokens.shape[0]) < n_scored                       # (P,)
      mean_nll = -jnp.sum(jnp.where(scored, predicted[:, 0], 0.0)) / jnp.maximum(n_scored, 1)
      # The pad slots of the caches will be overwritten by the tokens that
      # follow (until then, causal masking hides them): the position
      # counters go back to the real length.
      state = fastmath.nested_map(
          lambda s: length.astype(s.dtype) if s.ndim == 0 and s.dtype == jnp.int32 else s,
          state)
      next_log_probs = fastmath.dynamic_slice_in_dim(log_probs[0], length - 1, 1)[0]
      return next_log_probs, mean_nll, state

    def step(tokens, weights, state):
      """Feeds one article's K rows a token each (K,); returns log-probs (K, V)."""
      log_probs, state = forward(tokens[:, None], weights, state, rng)  # (K, 1, V)
      return log_probs[:, -1], state

    prefill_articles = _per_article(prefill, (0, 0, 0, None, 0))
    step_articles = _per_article(step, (0, None, 0))
    expand = lambda state, k: _per_article(_expand, (0, None))(state, k)
    reorder = _per_article(_reorder, (0, 0))
    self.prefill = jax.jit(prefill_articles)
    # The caches are updated in place: the state passed in is given up.
    self.step = jax.jit(step_articles, donate_argnums=(2,))

    def greedy(weights, log_probs, state, max_length, min_length, no_repeat_ngram_size,
               stop_at_eos):
      return beam.greedy_loop(lambda tokens, state: step_articles(tokens, weights, state),
                              log_probs, state, max_length, min_length,
                              no_repeat_ngram_size, stop_at_eos)

    def beams(weights, log_probs, state, num_beams, max_length, length_penalty,
              min_length, no_repeat_ngram_size, early_stopping):
      return beam.beam_loop(lambda tokens, state: step_articles(tokens, weights, state),
                            expand, reorder, log_probs, state, num_beams, max_length,
                            length_penalty, min_length, no_repeat_ngram_size,
                            early_stopping)

    self.greedy_loop = jax.jit(greedy, static_argnums=(3, 4, 5, 6))
    self.beam_loop = jax.jit(beams, static_argnums=(3, 4, 5, 6, 7, 8))

  def articles_state(self, batch):
    """Returns the state of ``batch`` articles before any token."""
    return jax.tree_util.tree_map(
        lambda s: jnp.broadcast_to(jnp.asarray(s), (batch,) + jnp.shape(s)),
        self.empty_state)


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
    model: A predict-mode ``TransformerLM`` (batch of one) with its weights.
    max_len: The model's ``max_len`` (size of its caches).
    build: A function of a size returning a predict-mode ``TransformerLM``
      without weights, of that ``max_len``: summaries then get caches of the
      size they need (see ``CACHE_BLOCK``), not the whole context. None:
      always ``max_len``.
  """

  def __init__(self, model, max_len, build=None):
    self._max_len = max_len
    self.weights = model.weights
    self._build = build
    # (By name: ``tl.PositionalEncoding`` is gin's wrapper of the layer's class.)
    self._positions = next(i for i, layer in enumerate(model.sublayers)
                           if type(layer).__name__ == 'PositionalEncoding')
    self._sized = {max_len: _SizedDecoder(model)}
    self._empty_state = model.state
    self._constrain = jax.jit(beam.constrain, static_argnums=(3, 4))

  def _at(self, size):
    """The decoder whose caches hold ``size`` positions (built on first use)."""
    if size not in self._sized:
      model = self._build(size)
      weights = list(self.weights)
      # The positional encodings (max_len, d) of the first ``size`` positions.
      weights[self._positions] = self.weights[self._positions][..., :size, :]
      checkpoint.set_weights(model, tuple(weights))
      self._sized[size] = _SizedDecoder(model)
    return self._sized[size]

  def cache_size(self, padded_length, max_length=None):
    """The positions a prefix (padded to ``padded_length``) and its summary need."""
    if self._build is None or max_length is None:
      return self._max_len
    needed = max(padded_length, padded_length + max_length)
    return min(self._max_len, -(-needed // CACHE_BLOCK) * CACHE_BLOCK)

  @functools.cached_property
  def row_bytes(self):
    """Bytes of the caches one row keeps, at the model's whole context."""
    return sum(jnp.size(s) * jnp.asarray(s).dtype.itemsize
               for s in jax.tree_util.tree_leaves(self._empty_state))

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


class LoadedModel:
  """A model directory ready to decode; unpacks as (model, decoder, config, vocab_file).

  The fast decoder is built at once; the eval-mode model that the course's
  greedy decoder needs is built on first use, from the same weights, so a
  command that decodes fast does not pay for it.

  Attributes:
    config: The model's ``Config``.
    vocab_file: The vocabulary it reads and writes.
    decoder: Its ``FastDecoder``.
    max_article_tokens: The longest article it trained on (None: unknown).
    calibration: Its article perplexities on its validation split (None:
      not calibrated, e.g. the course's checkpoint).
  """

  def __init__(self, model_dir=None, vocab_file=None, n_heads=None):
    predict_model, self.config, self.vocab_file, values = checkpoint.read_model_dir(
        model_dir, mode='predict', vocab_file=vocab_file, n_heads=n_heads)
    kwargs = self.config.model_kwargs()
    self.decoder = FastDecoder(
        predict_model, self.config.max_len,
        build=lambda size: TransformerLM(**dict(kwargs, max_len=size), mode='predict'))
    self.max_article_tokens = values.get('max_article_tokens') or None
    self.calibration = values.get(CALIBRATION_KEY)

  @functools.cached_property
  def model(self):
    """The eval-mode ``TransformerLM`` with the decoder's weights."""
    model = TransformerLM(**self.config.model_kwargs(), mode='eval')
    checkpoint.set_weights(model, self.decoder.weights)
    return model

  def __iter__(self):
    return iter((self.model, self.decoder, self.config, self.vocab_file))


def load(model_dir=None, vocab_file=None, n_heads=None):
  """Loads a model directory once per process; returns a ``LoadedModel``."""
  return _load(model_dir, vocab_file, n_heads)


@functools.lru_cache(maxsize=4)
def _load(model_dir, vocab_file, n_heads):
  # Arguments always passed by position: ``load()`` and ``load(None, None)``
  # must share one entry (a cache keyed by how it was called loads twice).
  return LoadedModel(model_dir, vocab_file, n_heads)


def clean_article(text):
  """Returns the article as the model saw articles in training.

  A text file ends in a newline and may have Windows line ends; the training
  articles have neither. Left in, a final newline alone becomes a subword the
  model never saw before ``[EOS, SEP]``, enough to change the whole summary.
  """
  return text.replace('\r\n', '\n').replace('\r', '\n').strip()


def article_room(loaded, max_length):
  """Returns how many article tokens a summary of ``max_length`` leaves room for.

  The context must hold article, EOS, SEP and summary; and past the longest
  article a model trained on, its summaries turn to word salad, so articles
  are cut there too.
  """
  room = loaded.config.max_len - max_length - 3
  if room < 1:
    raise SummarizerError(f'--max-length {max_length} leaves no room for the '
                          f'article in a context of {loaded.config.max_len}')
  return min(room, loaded.max_article_tokens or room)


def article_ids(loaded, text, max_length):
  """Returns the ids of an article that the model reads, and how many it has.

  Returns:
    (kept, total): the ids of the cleaned article cut to ``article_room``
    (EOS excluded), and the number of ids of the whole article.
  """
  ids = tokenize(clean_article(text), loaded.vocab_file)[:-1]
  return ids[:article_room(loaded, max_length)], len(ids)


class SummaryRun:
  """One article being summarised: iterate for the summary's token ids.

  Iterating yields the ids as they are generated (EOS excluded). Known
  before the first: how long the article is and how much of it was kept;
  known from the first on: its perplexity under the model and whether that
  is far outside what the model saw in training.

  Attributes:
    article_tokens: Tokens of the whole article (EOS excluded).
    kept_tokens: Of those, the tokens the model reads.
    article_perplexity: exp of the mean negative log-probability of the kept
      tokens, each given those before it (None until iterated).
    ids: The summary's token ids generated so far.
  """

  def __init__(self, loaded, text, max_length=MAX_SUMMARY_TOKENS, method='fast',
               temperature=0.0, top_k=None, seed=0, search=None, stream=True):
    search = search or beam.Search()
    _check_arguments(text, max_length, method, temperature, search)
    self._loaded = loaded
    kept, self.article_tokens = article_ids(loaded, text, max_length)
    self.kept_tokens = len(kept)
    self.prefix = kept + [EOS, SEP]
    self.article_perplexity = None
    self.ids = []
    self._tokens = self._generate(self.prefix, max_length, method,
                                  temperature, top_k, seed, search, stream)

  @property
  def cut(self):
    """Whether the article was cut to fit the model."""
    return self.kept_tokens < self.article_tokens

  @property
  def out_of_domain(self):
    """Whether the article's perplexity is far above the model's validation
    articles' (None when the model has no calibration or before iterating)."""
    if self.article_perplexity is None or not self._loaded.calibration:
      return None
    return self.article_perplexity > self._loaded.calibration['threshold']

  def _generate(self, prefix, max_length, method, temperature, top_k, seed,
                search, stream):
    decoder = self._loaded.decoder
    decoder.check_fits(len(prefix), max_length)
    started, mean_nll = decoder.start(prefix, n_scored=self.kept_tokens,
                                      max_length=max_length)
    self.article_perplexity = float(np.exp(mean_nll))
    if method == 'greedy':
      tokens = greedy_tokens(prefix, self._loaded.model, max_length)
    elif temperature > 0 or (stream and search.num_beams == 1):
      tokens = decoder.resume(started, max_length, temperature, top_k, seed,
                              min_length=search.min_length,
                              no_repeat_ngram_size=search.no_repeat_ngram_size)
    else:  # The whole loop in one compiled call (beams cannot stream).
      (tokens,) = decoder.decode_rows(started, max_length, search)
    for token in tokens:
      if token == EOS:
        return
      yield token

  def _decoded(self, ids, mean_nll):
    """Takes the summary ``ids`` (EOS included if reached) decoded in a batch."""
    self.article_perplexity = float(np.exp(mean_nll))
    self._tokens = iter(ids[:ids.index(EOS)] if EOS in ids else ids)

  def __iter__(self):
    return self

  def __next__(self):
    token = next(self._tokens)
    self.ids.append(token)
    return token

  def details(self):
    """Generates what is left and returns the summary with what is known of it.

    Returns:
      {'summary_text': str, 'article_perplexity': float, 'out_of_domain':
      bool or None, 'article_tokens': int, 'kept_tokens': int}.
    """
    for _ in self:
      pass
    return {
        'summary_text': detokenize(self.ids, self._loaded.vocab_file).strip(),
        'article_perplexity': self.article_perplexity,
        'out_of_domain': self.out_of_domain,
        'article_tokens': self.article_tokens,
        'kept_tokens': self.kept_tokens,
    }


def check_article(text):
  """Refuses what is not an article before any model loads.

  Raises:
    TypeError: ``text`` is not a string (naming its type: bytes must be
      decoded first, a list summarised with ``summarize_many``).
    SummarizerError: it is empty.
  """
  if not isinstance(text, str):
    hint = {bytes: ' (decode it first: text.decode("utf-8"))',
            list: ' (several articles: summarize_many)',
            tuple: ' (several articles: summarize_many)'}.get(type(text), '')
    raise TypeError(f'the article must be a str, not {type(text).__name__}{hint}')
  if not text.strip():
    raise SummarizerError('the article is empty')


def _check_arguments(text, max_length, method, temperature, search=beam.Search()):
  if method not in ('fast', 'greedy'):
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")
  check_article(text)
  if max_length < 1:
    raise SummarizerError('max_length must be at least 1')
  if not isinstance(temperature, (int, float)) or not 0 <= temperature < float('inf'):
    raise SummarizerError(f'temperature must be a number, 0 or more, not {temperature}')
  if method == 'greedy' and temperature > 0:
    raise SummarizerError("sampling (temperature > 0) needs method='fast'")
  search.check(max_length)
  if method == 'greedy' and search.constrained:
    raise SummarizerError("beams, min_length and no_repeat_ngram_size need method='fast'")
  if temperature > 0 and search.num_beams > 1:
    raise SummarizerError('sampling (temperature > 0) and beam search exclude each other')


def summarize_tokens(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                     method='fast', temperature=0.0, top_k=None, seed=0,
                     on_cut=None, vocab_file=None, n_heads=None, search=None,
                     stream=True):
  """Returns a ``SummaryRun``: the summary's token ids as they are generated.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method: 'fast' (cached) or 'greedy' (the course's decoder).
    temperature: 0 for greedy; above 0 samples (fast method only).
    top_k: Sample among the k most likely tokens.
    seed: Seed of the sampling.
    on_cut: Called with (kept, total) token counts if the article is cut.
    vocab_file: A vocabulary to use instead of the model's own.
    n_heads: Attention heads of a checkpoint without ``config.json``.
    search: A ``beam.Search``: beams and constraints (default: greedy).
    stream: Generate one token a call (True), or the whole summary in one
      compiled call when it is first asked for (faster; beams always do).
  """
  check_article(text)
  run = SummaryRun(load(model_dir, vocab_file, n_heads), text, max_length, method,
                   temperature, top_k, seed, search, stream)
  if run.cut and on_cut is not None:
    on_cut(run.kept_tokens, run.article_tokens)
  return run




def summarize_many(texts, model_dir=None, max_length=MAX_SUMMARY_TOKENS, method='fast',
                   search=None, batch_size=options.BATCH_SIZE, on_cut=None, vocab_file=None,
                   n_heads=None, on_batch=None):
  """Summarises several articles, decoding up to ``batch_size`` side by side.

  Each article gets exactly the summary it gets alone: the rows of a batch
  keep their own positions and caches (see ``FastDecoder``). Articles of
  similar lengths are batched together (less padding in the prefill), and
  a batch is made smaller if its caches would take more than
  ``beam.ROWS_MEMORY_BYTES``. The course's decoder (``method='greedy'``)
  decodes one at a time.

  Args:
    texts: The articles.
    model_dir, max_length, method, search, vocab_file, n_heads: As for
      ``summarize_tokens``.
    batch_size: Most articles decoded side by side.
    on_cut: Called with (index, kept, total) for each article cut to fit.
    on_batch: Called with the number of articles of each batch decoded.

  Returns:
    A list of finished ``SummaryRun``s, in the order of ``texts``.
  """
  if batch_size < 1:
    raise SummarizerError(f'batch_size must be at least 1, not {batch_size}')
  if isinstance(texts, (str, bytes)):
    raise TypeError(f'texts must be a list of articles, not one {type(texts).__name__}')
  texts = list(texts)
  for text in texts:
    check_article(text)
  search = search or beam.Search()
  loaded = load(model_dir, vocab_file, n_heads)
  runs = [SummaryRun(loaded, text, max_length, method, search=search, stream=False)
          for text in texts]
  for index, run in enumerate(runs):
    loaded.decoder.check_fits(len(run.prefix), max_length)
    if run.cut and on_cut is not None:
      on_cut(index, run.kept_tokens, run.article_tokens)
  if method == 'greedy':
    batch_size = 1  # The course's decoder reads one article at a time.
  batch_size = min(batch_size, loaded.decoder.rows_per_batch(search.num_beams))
  order = sorted(range(len(runs)), key=lambda i: len(runs[i].prefix))
  for first in range(0, len(order), batch_size):
    batch = [runs[i] for i in order[first:first + batch_size]]
    if method == 'greedy':
      batch[0].details()
    else:
      started, mean_nlls = loaded.decoder.start_rows(
          [run.prefix for run in batch], [run.kept_tokens for run in batch], max_length)
      summaries = loaded.decoder.decode_rows(started, max_length, search)
      for run, ids, mean_nll in zip(batch, summaries, mean_nlls):
        run._decoded(ids, mean_nll)  # pylint: disable=protected-access
    if on_batch is not None:
      on_batch(len(batch))
  return runs


class ArticleCutWarning(UserWarning):
  """An article was longer than the model reads, and its end was left out."""


def _warn_cut(kept, total):
  warnings.warn(f'article cut to its first {kept} of {total} tokens to fit the model',
                ArticleCutWarning, stacklevel=4)


def summarize_details(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                      method='fast', temperature=0.0, num_beams=1,
                      length_penalty=options.LENGTH_PENALTY, no_repeat_ngram_size=0,
                      min_length=0):
  """Summarises an article and says how familiar it was to the model.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method: 'fast' (cached decoder) or 'greedy' (the course's decoder).
    temperature: 0 for the most likely summary; above 0 samples.
    num_beams: 1 for greedy search (the course's way); more for beam search.
    length_penalty: Beam search ranks finished summaries by their
      log-probability / length ** length_penalty (Hugging Face's).
    no_repeat_ngram_size: Forbid any n-gram of this many tokens twice in the
      summary (0: allowed).
    min_length: Forbid the summary to end before this many tokens.

  Returns:
    A dict: ``summary_text``; ``article_perplexity``, the perplexity of the
    article under the model; ``out_of_domain``, True if that is far above
    the model's own validation articles' (the summary is then likely wrong),
    None if the model has no calibration; ``article_tokens`` and
    ``kept_tokens``, the article's length and what the model read of it;
    ``undertrained``, a warning line if the summary is mostly one token
    repeated (``summarizer.undertrained``), else None.
    An article cut to fit the model also raises an ``ArticleCutWarning``.
  """
  from summarizer import undertrained  # pylint: disable=g-import-not-at-top
  search = beam.Search(num_beams, length_penalty, no_repeat_ngram_size, min_length)
  run = summarize_tokens(text, model_dir, max_length, method, temperature,
                         on_cut=_warn_cut, search=search, stream=False)
  return dict(run.details(), undertrained=undertrained.undertrained_warning(run.ids, model_dir))


def summarize(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
              method='fast', temperature=0.0, num_beams=1,
              length_penalty=options.LENGTH_PENALTY, no_repeat_ngram_size=0,
              min_length=0):
  """Summarises an article; returns the summary as a string.

  The arguments are ``summarize_details``'s, which also tells how familiar
  the article was to the model. An article cut to fit the model raises an
  ``ArticleCutWarning``.
  """
  search = beam.Search(num_beams, length_penalty, no_repeat_ngram_size, min_length)
  run = summarize_tokens(text, model_dir, max_length, method, temperature,
                         on_cut=_warn_cut, search=search, stream=False)
  return run.details()['summary_text']
