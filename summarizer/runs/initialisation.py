"""A new run's random weights, reshaped by the initialisation levers.

``--tied-init`` starts the output projection as the embedding's transpose and
``--embedding-scale`` starts the embedding larger than Trax draws it; both
shape random weights only (a run from ``--init-from`` or ``--resume`` keeps
the weights it starts from). The weights are a ``TransformerLM``'s tree,
one entry a layer (``inference.layout`` says which layer is which).
"""

import numpy as np

from summarizer.inference.layout import EMBEDDING_LAYER, OUTPUT_LAYER


def reshaped(weights, tied_init=False, embedding_scale=1.0):
  """Returns a new run's random weights with the initialisation levers applied.

  Args:
    weights: The weights of a ``TransformerLM`` (one entry a layer).
    tied_init: ``--tied-init``: the output projection starts as the embedding's transpose.
    embedding_scale: ``--embedding-scale``: the embedding starts this many times larger.
  """
  if tied_init:  # Before the scaling: the projection keeps Trax's scale.
    weights = tied_output(weights)
  if embedding_scale != 1.0:
    weights = scaled_embedding(weights, embedding_scale)
  return weights


def scaled_embedding(weights, scale):
  """Returns a TransformerLM's weights with the embedding multiplied by ``scale``.

  Trax initialises embeddings at a norm about 1, under positional encodings
  of norm about sqrt(d_model / 2): scaled up, a token's identity is not
  drowned by its position at the start of training (the original
  Transformer multiplies its embeddings by sqrt(d_model) for this).
  """
  weights = list(weights)
  weights[EMBEDDING_LAYER] = weights[EMBEDDING_LAYER] * scale   # (V, d_model)
  return tuple(weights)


def tied_output(weights):
  """Returns a TransformerLM's weights with the output projection set to the embedding's transpose.

  An initialisation, not a tie: the two train apart afterwards. A model
  that starts so scores a token by how alike its embedding is to the
  residual stream, so attention that moves a token's embedding along
  (copying it) raises that token at once, for every token alike.

  Args:
    weights: The weights of a ``TransformerLM`` (one entry a layer).
  """
  weights = list(weights)
  embedding = weights[EMBEDDING_LAYER]                 # (V, d_model)
  kernel, bias = weights[OUTPUT_LAYER]                 # Dense: kernel (d_model, V), bias (V,)
  # At the kernel's own scale, so the first logits are as spread as Trax's.
  scale = float(np.std(kernel) / max(float(np.std(embedding)), 1e-12))
  weights[OUTPUT_LAYER] = (embedding.T * scale, bias)  # (d_model, V)
  return tuple(weights)
