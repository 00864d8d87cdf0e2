"""Loading a model directory once per process, ready to decode."""

import functools

from jax import numpy as jnp

from summarizer import model as model_layout
from summarizer.config import CALIBRATION_KEY, DEFAULT_MODEL_DIR
from summarizer.inference import checkpoint
from summarizer.inference.fast_decoder import FastDecoder
from summarizer.model import TransformerLM


class LoadedModel:
  """A model directory ready to decode; unpacks as (model, decoder, config, vocab_file).

  Nothing is traced at load: the fast decoder builds a predict-mode model at
  each cache size it is asked for, and the eval-mode model that the course's
  greedy decoder needs is built on first use, from the same weights, so a
  command pays only for the models it runs.

  Attributes:
    config: The model's ``Config``.
    vocab_file: The vocabulary it reads and writes.
    decoder: Its ``FastDecoder``.
    max_article_tokens: The longest article it trained on (None: unknown).
    calibration: Its article perplexities on its validation split (None:
      not calibrated, e.g. the course's checkpoint).
  """

  def __init__(self, model_dir=None, vocab_file=None, n_heads=None):
    weights, config, vocab_file, values = checkpoint.read_model_weights(
        model_dir, vocab_file=vocab_file, n_heads=n_heads)
    self._start(weights, config, vocab_file, values, model_dir or DEFAULT_MODEL_DIR)

  @classmethod
  def from_weights(cls, weights, config, vocab_file, where='the model'):
    """A model held in memory, such as a run's as it trains, not read from a directory.

    Args:
      weights: Its flat list of weight arrays (a checkpoint's order).
      config: Its ``Config``.
      vocab_file: Its vocabulary.
      where: What errors name.
    """
    loaded = cls.__new__(cls)
    loaded._start(weights, config, vocab_file, {}, where)  # pylint: disable=protected-access
    return loaded

  def _start(self, weights, config, vocab_file, values, where):
    self.config, self.vocab_file, self._model_dir = config, vocab_file, where
    # On the device once: each model built from them shares them.
    self._weights = [jnp.asarray(array) for array in weights]
    self.decoder = FastDecoder(None, config.max_len, build=self._predict_model)
    self.max_article_tokens = values.get('max_article_tokens') or None
    self.calibration = values.get(CALIBRATION_KEY)

  def replace_weights(self, weights):
    """Gives the model new weights of the same shapes, keeping what is compiled.

    Args:
      weights: The flat list of weight arrays (a checkpoint's order).
    """
    self._weights = [jnp.asarray(array) for array in weights]
    self.decoder.reweigh(self._sized_weights)
    self.__dict__.pop('model', None)  # The eval-mode model is rebuilt when next asked for.

  def _sized_weights(self, size):
    """The weights of a model whose positions (and caches) stop at ``size``."""
    weights = list(self._weights)
    # The positional encodings (max_len, d_model) of the first ``size`` positions.
    weights[model_layout.FLAT_POSITIONS] = weights[model_layout.FLAT_POSITIONS][:size]
    return weights

  def _predict_model(self, size):
    """A predict-mode model with caches of ``size`` positions, with the weights."""
    weights = self._sized_weights(size)
    model = TransformerLM(**dict(self.config.model_kwargs(), max_len=size), mode='predict')
    checkpoint.give_weights(model, weights, self._model_dir)
    return model

  @functools.cached_property
  def model(self):
    """The eval-mode ``TransformerLM`` with the decoder's weights."""
    model = TransformerLM(**self.config.model_kwargs(), mode='eval')
    checkpoint.give_weights(model, self._weights, self._model_dir)
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
