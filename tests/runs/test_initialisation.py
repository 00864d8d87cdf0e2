"""A new run's random weights, reshaped by the initialisation levers (--tied-init, --embedding-scale)."""

import numpy as np
import pytest

from summarizer._trax import trax
from summarizer.model import TransformerLM
from summarizer.runs import initialisation


@pytest.mark.slow
def test_initialisation_levers_tie_the_projection_and_scale_the_embedding():
  lm = TransformerLM(vocab_size=40, d_model=16, d_ff=32, n_layers=1, n_heads=2, mode='eval')
  lm.init(trax.shapes.ShapeDtype((1, 8), np.int32))
  embedding, (kernel, bias) = np.asarray(lm.weights[1]), lm.weights[-2]
  tied = initialisation.tied_output(lm.weights)
  tied_kernel, tied_bias = np.asarray(tied[-2][0]), np.asarray(tied[-2][1])
  # The projection is the embedding's transpose, at the projection's own scale.
  assert tied_kernel.shape == (16, 40)
  np.testing.assert_allclose(tied_kernel / tied_kernel[0, 0], embedding.T / embedding[0, 0],
                             rtol=1e-4)
  assert abs(np.std(tied_kernel) - np.std(np.asarray(kernel))) < 1e-3 * np.std(kernel) + 1e-6
  np.testing.assert_array_equal(tied_bias, np.asarray(bias))
  scaled = initialisation.scaled_embedding(tied, 4.0)
  np.testing.assert_allclose(np.asarray(scaled[1]), 4.0 * embedding, rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(scaled[-2][0]), tied_kernel)
  lm.weights = scaled  # Still the model's weight tree.
  assert lm(np.zeros((1, 8), np.int32)).shape == (1, 8, 40)
