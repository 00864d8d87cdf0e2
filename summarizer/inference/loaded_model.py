"""A model ready to decode: a ``ModelDirectory``'s weights on the device, its fast decoder.

``load(path)`` reads a model directory once per process (``model_directory.read``)
and returns a ``LoadedModel``; everything that decodes, warns or explains
takes that object.
"""

import functools

from jax import numpy as jnp

from summarizer import text
from summarizer.inference import model_directory
from summarizer.inference.model_directory import ModelDirectory
from summarizer.inference import layout
from summarizer.inference.fast_decoder import FastDecoder


class LoadedModel:
  """A model directory's model, ready to decode.

  Nothing is traced at load: the fast decoder builds a predict-mode model at
  each cache size it is asked for, and the eval-mode model that the course's
  greedy decoder needs is built on first use, from the same weights, so a
  command pays only for the models it runs.

  Args:
    source: The ``model_directory.ModelDirectory`` it was read from.

  Attributes:
    source: That ``ModelDirectory`` (its config.json's values, calibration, verdict).
    config: The model's ``Config``.
    vocab_file: The vocabulary it reads and writes.
    decoder: Its ``FastDecoder``.
  """

  def __init__(self, source):
    self.source = source
    self.config, self.vocab_file = source.config, source.vocab_file
    # On the device once: each model built from them shares them.
    self._weights = [jnp.asarray(array) for array in source.weights]
    self.decoder = FastDecoder(None, self.config.max_len, build=self._predict_model)

  @classmethod
  def from_weights(cls, weights, config, vocab_file, where='the model'):
    """A model held in memory, such as a run's as it trains, not read from a directory.

    Args:
      weights: Its flat list of weight arrays (a checkpoint's order).
      config: Its ``Config``.
      vocab_file: Its vocabulary.
      where: What errors name.
    """
    return cls(ModelDirectory(where, config, vocab_file, tuple(weights)))

  @property
  def calibration(self):
    """Its validation articles' perplexities (None: not calibrated, e.g. the course's)."""
    return self.source.calibration

  @property
  def max_article_tokens(self):
    """The longest article it trained on (None: unknown)."""
    return self.source.max_article_tokens

  def tokenize(self, article):
    """The article's ids in the model's vocabulary, ending in EOS."""
    return text.tokenize(article, self.vocab_file)

  def detokenize(self, ids):
    """The text of ids of the model's vocabulary."""
    return text.detokenize(ids, self.vocab_file)

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
    weights[layout.FLAT_POSITIONS] = weights[layout.FLAT_POSITIONS][:size]
    return weights

  def _predict_model(self, size):
    """A predict-mode model with caches of ``size`` positions, with the weights."""
    return layout.built(self.config, self._sized_weights(size), 'predict', self.source.path,
                        max_len=size)

  @functools.cached_property
  def model(self):
    """The eval-mode ``TransformerLM`` with the decoder's weights."""
    return layout.built(self.config, self._weights, 'eval', self.source.path)


def load(model_dir=None, vocab_file=None, n_heads=None):
  """Reads a model directory once per process; returns its ``LoadedModel``.

  A directory whose files have changed since (a run that trained on, a
  verdict written into its config.json) is read again.

  Args:
    model_dir: A model directory path; default: the shipped model.
    vocab_file: A vocabulary to use instead of the model's own.
    n_heads: Attention heads of a checkpoint without ``config.json``.
  """
  return _load(model_dir, vocab_file, n_heads, model_directory.stamp(model_dir))


@functools.lru_cache(maxsize=4)
def _load(path, vocab_file, n_heads, stamp):
  # Arguments always passed by position: ``load()`` and ``load(None, None)``
  # must share one entry (a cache keyed by how it was called loads twice).
  del stamp  # Only a key of the cache.
  return LoadedModel(model_directory.read(path, vocab_file, n_heads))
