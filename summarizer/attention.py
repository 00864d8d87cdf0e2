"""Causal multi-head attention as the course builds it, from functions up.

The pieces, smallest first:

* ``DotProductAttention``: softmax(Q K^T / sqrt(d)) V with a boolean mask.
* ``dot_product_self_attention``: the same under the causal mask.
* ``compute_attention_heads_closure`` / ``compute_attention_output_closure``:
  fold the heads into the batch axis and back, so one batched matmul serves
  every head.
* ``CausalAttention``: the layer, wired with ``tl.Branch`` and ``tl.Fn``.

In ``'predict'`` mode the attention core keeps the keys and values it has
seen (``CachedDotProductAttention``), so decoding feeds one new token at a
time instead of re-reading the whole sequence. Its weights are the same as
the other modes', so one set of trained weights serves all three.
"""

from summarizer._trax import fastmath, jnp, tl

# Score given to masked positions before the softmax (the course's value).
MASK_SCORE = -1e9


def DotProductAttention(query, key, value, mask):
  """Scaled dot-product attention.

  Args:
    query: Array (..., L_q, d).
    key: Array (..., L_k, d).
    value: Array (..., L_k, d_v).
    mask: Boolean array broadcastable to (..., L_q, L_k); True = may attend.
      ``None`` attends everywhere.

  Returns:
    Array (..., L_q, d_v): each query's weighted average of the values.
  """
  depth = query.shape[-1]
  scores = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(depth)
  scores = scores.astype(jnp.float32)  # (..., L_q, L_k)
  if mask is not None:
    scores = jnp.where(mask, scores, jnp.full_like(scores, MASK_SCORE))
  # Softmax written as exp(x - logsumexp(x)), as the course does. In float32
  # a fully masked row then gets weight 1 at every position (-1e9 swallows
  # log(n)), which the course's expected outputs rely on.
  weights = jnp.exp(scores - fastmath.logsumexp(scores, axis=-1, keepdims=True))
  return jnp.matmul(weights, value)


def causal_mask(length):
  """Returns the (1, length, length) boolean mask: position i sees j <= i."""
  return jnp.tril(jnp.ones((1, length, length), dtype=jnp.bool_), k=0)


def dot_product_self_attention(q, k, v):
  """Causal self-attention: each position attends to itself and the past.

  Args:
    q, k, v: Arrays (B, L, d) (in the layer, B is batch x heads).

  Returns:
    Array (B, L, d).
  """
  length = q.shape[-2]
  mask = jnp.tril(jnp.ones((1, length, length), dtype=jnp.bool_), k=0)  # (1, L, L)
  return DotProductAttention(q, k, v, mask)


def compute_attention_heads_closure(n_heads, d_head):
  """Returns a function that splits features into heads folded into the batch.

  Args:
    n_heads: Number of attention heads H.
    d_head: Features per head Dh.

  Returns:
    A function mapping x (B, L, H * Dh) to (B * H, L, Dh).
  """
  def compute_attention_heads(x):
    batch, length = x.shape[0], x.shape[1]
    x = jnp.reshape(x, (batch, length, n_heads, d_head))  # (B, L, H, Dh)
    x = jnp.transpose(x, (0, 2, 1, 3))                    # (B, H, L, Dh)
    return jnp.reshape(x, (batch * n_heads, length, d_head))  # (B*H, L, Dh)
  return compute_attention_heads


def compute_attention_output_closure(n_heads, d_head):
  """Returns the inverse of ``compute_attention_heads_closure``'s function.

  Args:
    n_heads: Number of attention heads H.
    d_head: Features per head Dh.

  Returns:
    A function mapping x (B * H, L, Dh) to (B, L, H * Dh).
  """
  def compute_attention_output(x):
    length = x.shape[1]
    x = jnp.reshape(x, (-1, n_heads, length, d_head))      # (B, H, L, Dh)
    x = jnp.transpose(x, (0, 2, 1, 3))                    # (B, L, H, Dh)
    return jnp.reshape(x, (-1, length, n_heads * d_head))  # (B, L, H*Dh)
  return compute_attention_output


class CachedDotProductAttention(tl.Layer):
  """Causal attention over every key and value seen so far (predict mode).

  The state holds keys and values (B*H, max_len, Dh) and the next position.
  A call with L new queries writes their keys and values at that position,
  attends causally over the cache and moves the position on by L, so the
  article can be fed in one call and each summary token in one more.
  """

  def __init__(self, max_len):
    super().__init__(n_in=3, n_out=1, name='DotProductAttn')
    self._max_len = max_len  # Positions the cache holds.

  def hold(self, max_len):
    """Makes the cache hold ``max_len`` positions (before the layer is initialised)."""
    self._max_len = max_len

  def forward(self, inputs):
    """Attends the new queries (B*H, L, Dh) over the cache; returns (B*H, L, Dh)."""
    query, key, value = inputs
    keys, values, position = self.state
    keys = fastmath.dynamic_update_slice_in_dim(keys, key, position, axis=1)
    values = fastmath.dynamic_update_slice_in_dim(values, value, position, axis=1)
    query_position = position + jnp.arange(query.shape[1])[:, None]  # (L, 1)
    key_position = jnp.arange(self._max_len)[None, :]              # (1, max_len)
    mask = (key_position <= query_position)[None]                  # (1, L, max_len)
    self.state = (keys, values, position + query.shape[1])
    return DotProductAttention(query, keys, values, mask)

  def init_weights_and_state(self, input_signature):
    """Starts with an empty cache sized from the keys' signature."""
    key_signature = input_signature[1]
    batch, d_head = key_signature.shape[0], key_signature.shape[-1]
    empty = jnp.zeros((batch, self._max_len, d_head), dtype=jnp.float32)
    self.state = (empty, empty, jnp.zeros((), dtype=jnp.int32))


def set_cache_length(layers, max_len):
  """Makes the predict-mode caches among ``layers`` hold ``max_len`` positions.

  For a block built with the course's call (which names no length), before
  its weights are initialised; layers without a cache are left alone.

  Args:
    layers: A layer or a list of layers (searched with their sublayers).
    max_len: Positions each ``CachedDotProductAttention`` keeps.
  """
  pending = list(layers) if isinstance(layers, (list, tuple)) else [layers]
  while pending:
    layer = pending.pop()
    if isinstance(layer, (list, tuple)):
      pending += layer
    elif isinstance(layer, CachedDotProductAttention):
      layer.hold(max_len)
    else:
      pending += layer.sublayers


def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
  """Multi-head causal self-attention.

  Args:
    d_feature: Width of the input and output features, n_heads * d_head.
    n_heads: Number of attention heads.
    mode: 'train' or 'eval' compute over a whole sequence; 'predict' caches
      keys and values between calls (same weights).
    max_len: Longest sequence the predict-mode cache holds.

  Returns:
    A layer mapping activations (B, L, d_feature) to (B, L, d_feature).
  """
  assert d_feature % n_heads == 0, (
      f'd_feature ({d_feature}) is not a multiple of n_heads ({n_heads})')
  d_head = d_feature // n_heads

  def AttnHeads():
    return tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head))

  attention_core = tl.Fn('DotProductAttn', dot_product_self_attention)
  # Not in the exercise (beyond the course): in predict mode, a key/value cache.
  if mode == 'predict':
    attention_core = CachedDotProductAttention(max_len)

  return tl.Serial(
      tl.Branch(                             # x -- q k v
          [tl.Dense(d_feature), AttnHeads()],  # queries (B*H, L, Dh)
          [tl.Dense(d_feature), AttnHeads()],  # keys    (B*H, L, Dh)
          [tl.Dense(d_feature), AttnHeads()],  # values  (B*H, L, Dh)
      ),
      attention_core,                        # q k v -- heads (B*H, L, Dh)
      tl.Fn('AttnOutput',                    # heads -- (B, L, d_feature)
            compute_attention_output_closure(n_heads, d_head)),
      tl.Dense(d_feature),
  )
