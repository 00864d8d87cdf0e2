"""Loading a model directory once per process, ready to decode."""

import functools

from summarizer.config import CALIBRATION_KEY
from summarizer.inference import checkpoint
from summarizer.inference.fast_decoder import FastDecoder
from summarizer.model import TransformerLM


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
