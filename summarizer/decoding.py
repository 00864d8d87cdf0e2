"""Writing a summary: the course's greedy decoder and a cached fast decoder.

The model reads ``article + [EOS, SEP]`` and each next token is the argmax of
its output. The course's ``greedy_decode`` re-runs the whole model over the
padded sequence for every token: easy to follow, but each token costs a full
forward pass. ``FastDecoder`` runs the same weights in predict mode, where
attention keeps the keys and values of earlier positions: the article goes
through once, then each new token is one small jitted call.
"""

import functools

import jax
import numpy as np

from summarizer import checkpoint
from summarizer import data
from summarizer._trax import fastmath
from summarizer.config import EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM

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


def greedy_decode(input_sentence, model, max_length=MAX_SUMMARY_TOKENS,
                  next_symbol=next_symbol, tokenize=data.tokenize,  # pylint: disable=redefined-outer-name
                  detokenize=data.detokenize, verbose=False):
  """Summarises ``input_sentence`` one argmax token at a time (the course's way).

  Args:
    input_sentence: The article text.
    model: An eval-mode ``TransformerLM``.
    max_length: Most summary tokens to generate (the course's loop has no
      bound; a model that never writes EOS would run forever).
    next_symbol: Function (tokens, model) -> next id.
    tokenize: Function text -> ids ending in EOS.
    detokenize: Function ids -> text.
    verbose: Print the summary as it grows, as the course does.

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

    def prefill(tokens, length, weights, state, rng):
      """Feeds tokens (1, P) of which ``length`` are real; returns the log-probs
      (V,) after the last real one and the state."""
      log_probs, state = forward(tokens, weights, state, rng)  # (1, P, V)
      # The pad slots of the caches will be overwritten by the tokens that
      # follow (until then, causal masking hides them): the position
      # counters go back to the real length.
      state = fastmath.nested_map(
          lambda s: length.astype(s.dtype) if s.ndim == 0 else s, state)
      return fastmath.dynamic_slice_in_dim(log_probs[0], length - 1, 1)[0], state

    def step(token, weights, state, rng):
      """Feeds one token (1, 1); returns the next log-probs (V,) and the state."""
      log_probs, state = forward(token, weights, state, rng)  # (1, 1, V)
      return log_probs[0, -1], state

    self._prefill = jax.jit(prefill)
    # The caches are updated in place: the state passed in is given up.
    self._step = jax.jit(step, donate_argnums=(2,))

  def _start(self, prefix):
    """Feeds the shifted prefix in one call; returns the next log-probs and state."""
    shifted = [0] + list(prefix)  # Predict mode does not shift by itself.
    length = len(shifted)
    padded_length = min(-(-length // PREFILL_BLOCK) * PREFILL_BLOCK, self._max_len)
    padded = np.zeros((1, padded_length), np.int32)  # (1, P)
    padded[0, :length] = shifted
    return self._prefill(padded, np.int32(length), self.weights,
                         self._empty_state, self._rng)

  def generate(self, prefix, max_length=MAX_SUMMARY_TOKENS, temperature=0.0,
               top_k=None, seed=0, stop_at_eos=True):
    """Yields the summary's token ids one by one, EOS included if reached.

    Args:
      prefix: Ids of ``article + [EOS, SEP]``.
      max_length: Most tokens to generate.
      temperature: 0 for greedy (argmax); above 0 samples from the softened
        distribution.
      top_k: When sampling, draw only among the k most likely tokens.
      seed: Seed of the sampling.
      stop_at_eos: Stop after EOS (False: always make ``max_length`` tokens,
        for benchmarks).
    """
    if len(prefix) + max_length + 1 > self._max_len:
      raise SummarizerError(
          f'{len(prefix)} article tokens + {max_length} summary tokens do not '
          f'fit the model context of {self._max_len}')
    rng = np.random.default_rng(seed)
    log_probs, state = self._start(prefix)
    for _ in range(max_length):
      token = _choose(np.asarray(log_probs), temperature, top_k, rng)
      yield token
      if token == EOS and stop_at_eos:
        return
      log_probs, state = self._step(np.array([[token]], np.int32), self.weights,
                                    state, self._rng)


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
  """

  def __init__(self, model_dir=None, vocab_file=None):
    predict_model, self.config, self.vocab_file = checkpoint.load_model(
        model_dir, mode='predict', vocab_file=vocab_file)
    self.decoder = FastDecoder(predict_model, self.config.max_len)

  @functools.cached_property
  def model(self):
    """The eval-mode ``TransformerLM`` with the decoder's weights."""
    model = TransformerLM(**self.config.model_kwargs(), mode='eval')
    checkpoint.set_weights(model, self.decoder.weights)
    return model

  def __iter__(self):
    return iter((self.model, self.decoder, self.config, self.vocab_file))


def load(model_dir=None, vocab_file=None):
  """Loads a model directory once per process; returns a ``LoadedModel``."""
  return _load(model_dir, vocab_file)


@functools.lru_cache(maxsize=4)
def _load(model_dir, vocab_file):
  # Arguments always passed by position: ``load()`` and ``load(None, None)``
  # must share one entry (a cache keyed by how it was called loads twice).
  return LoadedModel(model_dir, vocab_file)


def clean_article(text):
  """Returns the article as the model saw articles in training.

  A text file ends in a newline and may have Windows line ends; the training
  articles have neither. Left in, a final newline alone becomes a subword the
  model never saw before ``[EOS, SEP]``, enough to change the whole summary.
  """
  return text.replace('\r\n', '\n').replace('\r', '\n').strip()


def fit_article(article_ids, config, max_length):
  """Cuts article ids (EOS excluded) so article, EOS, SEP and summary fit.

  Returns:
    (ids, cut): the ids kept and whether any were cut.
  """
  room = config.max_len - max_length - 3
  if room < 1:
    raise SummarizerError(f'--max-length {max_length} leaves no room for the '
                          f'article in a context of {config.max_len}')
  return list(article_ids[:room]), len(article_ids) > room


def summarize_tokens(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
                     method='fast', temperature=0.0, top_k=None, seed=0,
                     on_cut=None, vocab_file=None):
  """Yields the summary's token ids (EOS excluded) as they are generated.

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
  """
  if method not in ('fast', 'greedy'):
    raise SummarizerError(f"unknown method {method!r}; choose 'fast' or 'greedy'")
  if not isinstance(text, str) or not text.strip():
    raise SummarizerError('the article is empty')
  if max_length < 1:
    raise SummarizerError('max_length must be at least 1')
  if method == 'greedy' and temperature > 0:
    raise SummarizerError("sampling (temperature > 0) needs method='fast'")
  loaded = load(model_dir, vocab_file)
  article_ids = data.tokenize(clean_article(text), loaded.vocab_file)[:-1]
  kept, cut = fit_article(article_ids, loaded.config, max_length)
  if cut and on_cut is not None:
    on_cut(len(kept), len(article_ids))
  prefix = kept + [EOS, SEP]
  if method == 'fast':
    tokens = loaded.decoder.generate(prefix, max_length, temperature, top_k, seed)
  else:
    tokens = greedy_tokens(prefix, loaded.model, max_length)
  for token in tokens:
    if token == EOS:
      return
    yield token


def summarize(text, model_dir=None, max_length=MAX_SUMMARY_TOKENS,
              method='fast', temperature=0.0):
  """Summarises an article.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method: 'fast' (cached decoder) or 'greedy' (the course's decoder).
    temperature: 0 for the most likely summary; above 0 samples.

  Returns:
    The summary as a string.
  """
  ids = list(summarize_tokens(text, model_dir, max_length, method, temperature))
  return data.detokenize(ids, load(model_dir).vocab_file).strip()
