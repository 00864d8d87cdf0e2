"""The compiled functions of a predict-mode model whose caches hold a given size.

The state is a batch of articles (leading axis B), each of K rows (its
beams, or one row) sharing the article's position: ``jax.vmap`` maps the
model's pure function over the articles, so each keeps its own caches and
position counters.
"""

import jax
from jax import numpy as jnp

from summarizer._trax import fastmath
from summarizer.inference import beam


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


class SizedDecoder:
  """The jitted functions of a predict-mode model whose caches hold ``size`` positions.

  The state is a batch of articles (leading axis B), each of K rows (its
  beams, or one row) sharing the article's position.
  """

  def __init__(self, model):
    self.weights = model.weights
    self._treedef = jax.tree_util.tree_structure(model.weights)
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
    expand = lambda state, k: _per_article(beam.expand_rows, (0, None))(state, k)
    reorder = _per_article(beam.reorder_rows, (0, 0))
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

  def weights_tree(self, flat):
    """The model's weights from a flat list (a checkpoint's order, which is the tree's)."""
    return jax.tree_util.tree_unflatten(self._treedef, list(flat))

  def articles_state(self, batch):
    """Returns the state of ``batch`` articles before any token."""
    return jax.tree_util.tree_map(
        lambda s: jnp.broadcast_to(jnp.asarray(s), (batch,) + jnp.shape(s)),
        self.empty_state)
