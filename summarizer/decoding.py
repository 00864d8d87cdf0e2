"""Writing a summary: the course's greedy decoder and a cached fast decoder.

The model reads ``article + [EOS, SEP]`` and each next token is the argmax of
its output. The course's ``greedy_decode`` re-runs the whole model over the
padded sequence for every token: easy to follow, but each token costs a full
forward pass. ``FastDecoder`` runs the same weights in predict mode, where
attention keeps the keys and values of earlier positions: the article goes
through once, then each new token is one small jitted call.
"""

import functools
import warnings

import jax
from jax import numpy as jnp
import numpy as np

from summarizer import checkpoint
from summarizer._trax import fastmath
from summarizer.config import CALIBRATION_KEY, EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM
from summarizer.text import detokenize, tokenize

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
                  tokenize=tokenize, detokenize=detokenize,
                  verbose=False, max_length=MAX_SUMMARY_TOKENS):
  """Summarises ``input_sentence`` one argmax token at a time (the course's way).

  The parameters come in the course's order, so the course's call
  ``greedy_decode(sentence, model, next_symbol, tokenize, detokenize)``
  works; ``max_length`` comes last.

  Args:
    input_sentence: The article text.
    model: An eval-mode ``TransformerLM``.
    next_symbol: Function (tokens, model) -> next id.
    tokenize: Function text -> ids ending in EOS.
    detokenize: Function ids -> text.
    verbose: Print the summary as it grows, as the course does.
    max_length: Most summary tokens to generate (the course's loop has no
      bound; a model that never writes EOS would run forever).

  Returns:
    The detokenised summary, ending in '<EOS>' when the model ended it.
  """
  cur_output_tokens = list(tokenize(input_sentence)) + [SEP]
  generated_output = []
  for cur_output in greedy_tokens(cur_output_tokens, model, max_length,
                                  next_symbol):
    generated_output.append(cur_output)
    if verbose:
      print(detokenize(generated_output))
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


class FastDecoder:
  """Greedy or sampled decoding with a key/value cache, one jitted call a token.

  Args:
    model: A predict-mode ``TransformerLM`` (batch of one) with its weights.
    max_len: The model's ``max_len`` (size of its caches).
  """

  def __init__(self, model, max_len):
    self._max_len = max_len
    self.weights = model.weights
    self._empty_state = model.state
    self._rng = fastmath.random.get_prng(0)  # Unused: no dropout in predict mode.
    forward = model.pure_fn

    def prefill(tokens, length, n_scored, weights, state, rng):
      """Feeds tokens (1, P) of which ``length`` are real.

      Returns the log-probs (V,) after the last real token, the mean negative
      log-probability of tokens 1..n_scored (each given those before it:
      the model reads the article anyway, so its perplexity costs nothing
      more) and the state.
      """
      log_probs, state = forward(tokens, weights, state, rng)  # (1, P, V)
      # Position i predicts token i + 1 of the shifted input.
      following = jnp.roll(tokens[0], -1)                                   # (P,)
      predicted = jnp.take_along_axis(log_probs[0], following[:, None], 1)  # (P, 1)
      scored = jnp.arange(tokens.shape[1]) < n_scored                       # (P,)
      mean_nll = -jnp.sum(jnp.where(scored, predicted[:, 0], 0.0)) / jnp.maximum(n_scored, 1)
      # The pad slots of the caches will be overwritten by the tokens that
      # follow (until then, causal masking hides them): the position
      # counters go back to the real length.
      state = fastmath.nested_map(
          lambda s: length.astype(s.dtype) if s.ndim == 0 else s, state)
      next_log_probs = fastmath.dynamic_slice_in_dim(log_probs[0], length - 1, 1)[0]
      return next_log_probs, mean_nll, state

    def step(token, weights, state, rng):
      """Feeds one token (1, 1); returns the next log-probs (V,) and the state."""
      log_probs, state = forward(token, weights, state, rng)  # (1, 1, V)
      return log_probs[0, -1], state

    self._prefill = jax.jit(prefill)
    # The caches are updated in place: the state passed in is given up.
    self._step = jax.jit(step, donate_argnums=(2,))

  def start(self, prefix, n_scored=0):
    """Reads the prefix in one call.

    Args:
      prefix: Ids of ``article + [EOS, SEP]``.
      n_scored: How many of the first ids to score (the article's).

    Returns:
      (started, mean_nll): what ``resume`` continues from (once), and the
      mean negative log-probability of the first ``n_scored`` ids.
    """
    shifted = [0] + list(prefix)  # Predict mode does not shift by itself.
    length = len(shifted)
    padded_length = min(-(-length // PREFILL_BLOCK) * PREFILL_BLOCK, self._max_len)
    padded = np.zeros((1, padded_length), np.int32)  # (1, P)
    padded[0, :length] = shifted
    log_probs, mean_nll, state = self._prefill(
        padded, np.int32(length), np.int32(n_scored), self.weights,
        self._empty_state, self._rng)
    return (log_probs, state), float(mean_nll)

  def resume(self, started, max_length=MAX_SUMMARY_TOKENS, temperature=0.0,
             top_k=None, seed=0, stop_at_eos=True):
    """Yields the token ids that follow a ``start``-ed prefix, EOS included if reached.

    Args:
      started: What ``start`` returned first.
      max_length: Most tokens to generate.
      temperature: 0 for greedy (argmax); above 0 samples from the softened
        distribution.
      top_k: When sampling, draw only among the k most likely tokens.
      seed: Seed of the sampling.
      stop_at_eos: Stop after EOS (False: always make ``max_length`` tokens,
        for benchmarks).
    """
    log_probs, state = started
    rng = np.random.default_rng(seed)
    for _ in range(max_length):
      token = _choose(np.asarray(log_probs), temperature, top_k, rng)
      yield token
      if token == EOS and stop_at_eos:
        return
      log_probs, state = self._step(np.array([[token]], np.int32), self.weights,
                                    state, self._rng)

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
    started, _ = self.start(prefix)
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
    predict_model, self.config, self.vocab_file = checkpoint.load_model(
        model_dir, mode='predict', vocab_file=vocab_file, n_heads=n_heads)
    self.decoder = FastDecoder(predict_model, self.config.max_len)
    values = checkpoint.model_values(model_dir)
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
               temperature=0.0, top_k=None, seed=0):
    _check_arguments(text, max_length, method, temperature)
    self._loaded = loaded
    kept, self.article_tokens = article_ids(loaded, text, max_length)
    self.kept_tokens = len(kept)
    self.article_perplexity = None
    self.ids = []
    self._tokens = self._generate(kept + [EOS, SEP], max_length, method,
                                  temperature, top_k, seed)

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

  def _generate(self, prefix, max_length, method, temperature, top_k, seed):
    decoder = self._loaded.decoder
    decoder.check_fits(len(prefix), max_length)
    started, mean_nll = decoder.start(prefix, n_scored=self.kept_tokens)
    self.article_perplexity = float(np.exp(mean_nll))
    if method == 'fast':
      tokens = decoder.resume(started, max_length, temperature, top_k, seed)
    else:
      tokens = greedy_tokens(prefix, self._loaded.model, max_length)
    for token in tokens:
      if token == EOS:
        return
      yield token

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


def _check_arguments(text, max_length, method, temperature):
  if method not in ('fast', 'greedy'):
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")
  if not isinstance(text, str) or not text.strip():
    raise SummarizerError('the article is empty')
  if max_length < 1:
    raise SummarizerError('max_length must be at least 1')
  if method == 'greedy' and temperature > 0:
    raise SummarizerError("sampling (temperature > 0) needs method='fast'")


def summarize_tokens(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                     method='fast', temperature=0.0, top_k=None, seed=0,
                     on_cut=None, vocab_file=None, n_heads=None):
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
  """
  run = SummaryRun(load(model_dir, vocab_file, n_heads), text, max_length, method,
                   temperature, top_k, seed)
  if run.cut and on_cut is not None:
    on_cut(run.kept_tokens, run.article_tokens)
  return run


class ArticleCutWarning(UserWarning):
  """An article was longer than the model reads, and its end was left out."""


def _warn_cut(kept, total):
  warnings.warn(f'article cut to its first {kept} of {total} tokens to fit the model',
                ArticleCutWarning, stacklevel=4)


def summarize_details(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                      method='fast', temperature=0.0):
  """Summarises an article and says how familiar it was to the model.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method: 'fast' (cached decoder) or 'greedy' (the course's decoder).
    temperature: 0 for the most likely summary; above 0 samples.

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
  run = summarize_tokens(text, model_dir, max_length, method, temperature,
                         on_cut=_warn_cut)
  return dict(run.details(), undertrained=undertrained.undertrained_warning(run.ids, model_dir))


def summarize(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
              method='fast', temperature=0.0):
  """Summarises an article; returns the summary as a string.

  The arguments are ``summarize_details``'s, which also tells how familiar
  the article was to the model. An article cut to fit the model raises an
  ``ArticleCutWarning``.
  """
  run = summarize_tokens(text, model_dir, max_length, method, temperature,
                         on_cut=_warn_cut)
  return run.details()['summary_text']
