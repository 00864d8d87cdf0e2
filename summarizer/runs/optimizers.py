"""The train command's optimizers: Trax's Adam, or orthogonalised momentum for the hidden matrices.

``for_config`` builds a run's optimizer from its ``Config``: ``optimizer='adam'``
is Trax's ``Adam`` (the course's); ``optimizer='muon'`` is ``Muon``, which
steps each hidden weight matrix (the attention's and the feed-forward layer's
``Dense`` kernels) along its momentum made orthogonal, and every other weight
(embedding, output layer, biases, layer norms) as Adam does. Orthogonalised
updates move every direction of a matrix by the same amount, where Adam's
follow the few directions its gradient is largest in; in nanoGPT's speedruns
they reached a target loss in fewer tokens (Muon, K. Jordan et al., 2024).
Here, in a token budget of 1.25 million tokens, the repeat lessons ended in
about 860 steps where Adam took about 1,500 (data/model/README.md, half the
tokens).
"""

import jax.numpy as jnp

from summarizer._trax import trax

# The quintic Newton-Schulz iteration's coefficients (Muon's): five steps take
# each singular value of a matrix scaled to norm 1 to between about 0.7 and 1.2.
NEWTON_SCHULZ = (3.4445, -4.7750, 2.0315)
NEWTON_SCHULZ_STEPS = 5


def orthogonalised(matrix, steps=NEWTON_SCHULZ_STEPS):
  """Returns ``matrix`` with its singular values brought near 1, its singular vectors kept.

  Args:
    matrix: A 2-D array, shape (m, n).
    steps: Newton-Schulz steps.

  Returns:
    An array of shape (m, n): about ``U @ V.T`` for ``matrix = U @ S @ V.T``.
  """
  a, b, c = NEWTON_SCHULZ
  x = matrix / (jnp.linalg.norm(matrix) + 1e-7)  # Every singular value at most 1.
  tall = x.shape[0] > x.shape[1]
  if tall:
    x = x.T  # (n, m): the Gram matrix below is the smaller one.
  for _ in range(steps):
    gram = x @ x.T  # (rows, rows)
    x = a * x + (b * gram + c * gram @ gram) @ x
  return x.T if tall else x


class Muon(trax.optimizers.adam.Adam):
  """Orthogonalised Nesterov momentum for hidden matrices; Adam for every other weight.

  A weight is a hidden matrix when it is 2-D and neither side is the
  vocabulary's: the embedding (vocab_size, d_model) and the output layer
  (d_model, vocab_size) stay with Adam, as in Muon's own recipe.
  """

  def __init__(self, learning_rate, vocab_size, matrix_scale=2.0, momentum=0.95, b2=0.999,
               clip_grad_norm=None):
    """Creates the optimizer.

    Args:
      learning_rate: Adam's learning rate (the schedule replaces it at each step).
      vocab_size: The model's vocabulary: matrices with a side this long are Adam's.
      matrix_scale: A hidden matrix's step, as a multiple of the learning rate,
        before the scale by its shape.
      momentum: The matrices' momentum.
      b2: Adam's decay of its squared-gradient average.
      clip_grad_norm: Scale each step's whole gradient down to at most this norm.
    """
    # No weight decay (Trax's Adam takes 1e-5 of each weight a step): the runs that
    # screened Muon had none.
    super().__init__(learning_rate=learning_rate, weight_decay_rate=0.0, b2=b2,
                     clip_grad_norm=clip_grad_norm)
    self._init_opt_params['matrix_scale'] = jnp.array(matrix_scale)
    self._init_opt_params['momentum'] = jnp.array(momentum)
    self._vocab_size = vocab_size

  def is_hidden_matrix(self, weights):
    return weights.ndim == 2 and self._vocab_size not in weights.shape

  def update(self, step, grads, weights, slots, opt_params):
    if not self.is_hidden_matrix(weights):
      return super().update(step, grads, weights, slots, opt_params)
    velocity, unused = slots  # Adam's two slots, kept: the first is the momentum here.
    momentum = opt_params['momentum']
    velocity = momentum * velocity + grads
    direction = orthogonalised(grads + momentum * velocity)  # Nesterov's look-ahead.
    # A Dense kernel is (d_in, d_out): a wider output takes a larger step.
    shape_scale = max(1.0, weights.shape[1] / weights.shape[0]) ** 0.5
    size = opt_params['learning_rate'] * opt_params['matrix_scale'] * shape_scale
    return (weights - (size * direction).astype(weights.dtype)), (velocity, unused)


def for_config(config):
  """The optimizer of a run with this ``Config``."""
  if config.optimizer == 'muon':
    return Muon(config.learning_rate, config.vocab_size, matrix_scale=config.matrix_scale,
                b2=config.adam_b2, clip_grad_norm=config.clip_grad_norm)
  return trax.optimizers.Adam(config.learning_rate, b2=config.adam_b2,
                              clip_grad_norm=config.clip_grad_norm)
