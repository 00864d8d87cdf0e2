"""Answers a learner might write: typical mistakes and correct answers written another way.

Each variant is a whole function as a learner writes it in the assignment
notebook. It is defined in a namespace like the notebook's (the setup cell,
then the package's solutions, then the variant in place of one of them), so
later functions use it as they use the learner's own. A mistake must fail
the check of its own function and of every function built on it that it
changes (``fails``); a correct variant must pass them all.

Run as a script to measure the catch rate of a checks module::

  python tests/assignment/learner_variants.py            # this checkout's checks
  python tests/assignment/learner_variants.py --checks OTHER/summarizer/checks.py
  python tests/assignment/learner_variants.py --grader   # the sandboxed grader
"""

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import linecache
import sys
import textwrap

from summarizer import text
from summarizer.contract import handout, probes
from summarizer.contract.recording import GRADED

# Exercise checks built on each function (the numbers of every later layer
# change when an earlier function is wrong).
BUILT_ON = {
    'DotProductAttention': ('dot_product_self_attention', 'CausalAttention',
                            'DecoderBlock', 'TransformerLM', 'training_loop'),
    'compute_attention_heads_closure': ('CausalAttention', 'DecoderBlock',
                                        'TransformerLM', 'training_loop'),
    'dot_product_self_attention': ('CausalAttention', 'DecoderBlock', 'TransformerLM',
                                   'training_loop'),
    'compute_attention_output_closure': ('CausalAttention', 'DecoderBlock',
                                         'TransformerLM', 'training_loop'),
    'CausalAttention': ('DecoderBlock', 'TransformerLM', 'training_loop'),
    'DecoderBlock': ('TransformerLM', 'training_loop'),
    'TransformerLM': ('training_loop',),
}


@dataclasses.dataclass(frozen=True)
class Variant:
  """A function as a learner writes it.

  Attributes:
    name: What it does, in a few words.
    function: The graded function it defines.
    source: Its code.
    fails: The checks it must fail, its own first (none for a correct one).
    why: The start of the why: line its own check must print (None: no
      cause named).
  """
  name: str
  function: str
  source: str
  fails: tuple = ()
  why: str = None

  @property
  def correct(self):
    return not self.fails


def _mistake(name, function, source, *also_fails, why=None):
  return Variant(name, function, textwrap.dedent(source), (function, *also_fails), why)


def _correct(name, function, source):
  return Variant(name, function, textwrap.dedent(source))


_LAYERS_AFTER_ATTENTION = ('CausalAttention', 'DecoderBlock', 'TransformerLM', 'training_loop')

VARIANTS = [
    # UNQ_C1
    _correct('softmax with jax.nn.softmax (fully masked rows differ, never graded)',
             'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          import jax
          depth = query.shape[-1]
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(depth)
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          return jnp.matmul(jax.nn.softmax(dots, axis=-1), value)
        '''),
    _mistake('scores not scaled by sqrt(depth)', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2))
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          dots = jnp.exp(dots - fastmath.logsumexp(dots, axis=-1, keepdims=True))
          return jnp.matmul(dots, value)
        ''', 'dot_product_self_attention', *_LAYERS_AFTER_ATTENTION,
             why='the scores were not scaled: divide the dot products of the queries and keys '
                 'by sqrt(d)'),
    _mistake('mask the wrong way round', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, jnp.full_like(dots, -1e9), dots)
          dots = jnp.exp(dots - fastmath.logsumexp(dots, axis=-1, keepdims=True))
          return jnp.matmul(dots, value)
        ''', 'dot_product_self_attention', *_LAYERS_AFTER_ATTENTION,
             why='the mask was used the wrong way round'),
    _mistake('weights normalised over the queries (axis -2)', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          dots = jnp.exp(dots - fastmath.logsumexp(dots, axis=-2, keepdims=True))
          return jnp.matmul(dots, value)
        ''', 'dot_product_self_attention', *_LAYERS_AFTER_ATTENTION,
             why='the weights were normalised over the queries (axis -2): each row of '
                 'weights must sum to 1 over the keys, the last axis'),
    _correct('operators instead of jnp calls', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = (query @ key.swapaxes(-1, -2)) / np.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, dots, -1e9)
          dots = jnp.exp(dots - fastmath.logsumexp(dots, axis=-1, keepdims=True))
          return dots @ value
        '''),
    _correct('einsum', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = jnp.einsum('...qd,...kd->...qk', query, key) / jnp.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          logsumexp = fastmath.logsumexp(dots, axis=-1, keepdims=True)
          return jnp.einsum('...qk,...kd->...qd', jnp.exp(dots - logsumexp), value)
        '''),
    # UNQ_C2
    _mistake('heads reshaped without the transpose', 'compute_attention_heads_closure', '''
        def compute_attention_heads_closure(n_heads, d_head):
          def compute_attention_heads(x):
            batch_size, seqlen = x.shape[0], x.shape[1]
            return jnp.reshape(x, (batch_size * n_heads, seqlen, d_head))
          return compute_attention_heads
        ''', *_LAYERS_AFTER_ATTENTION, why='the heads were split without the transpose'),
    _correct('swapaxes and -1 for the batch', 'compute_attention_heads_closure', '''
        def compute_attention_heads_closure(n_heads, d_head):
          def compute_attention_heads(x):
            x = x.reshape((x.shape[0], -1, n_heads, d_head))
            x = jnp.swapaxes(x, 1, 2)
            return x.reshape((-1, x.shape[2], d_head))
          return compute_attention_heads
        '''),
    # UNQ_C3
    _mistake('no causal mask', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          return DotProductAttention(q, k, v, None)
        ''', *_LAYERS_AFTER_ATTENTION,
             why='no causal mask: every position sees the later ones too'),
    _mistake('the mask above the diagonal (triu)', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          mask_size = q.shape[-2]
          mask = jnp.triu(jnp.ones((1, mask_size, mask_size), dtype=jnp.bool_), k=0)
          return DotProductAttention(q, k, v, mask)
        ''', *_LAYERS_AFTER_ATTENTION,
             why='the mask is the upper triangle (triu): position 0 may see only itself'),
    _mistake('the mask with k=-1', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          mask_size = q.shape[-2]
          mask = jnp.tril(jnp.ones((1, mask_size, mask_size), dtype=jnp.bool_), k=-1)
          return DotProductAttention(q, k, v, mask)
        ''', *_LAYERS_AFTER_ATTENTION,
             why='the mask is tril with k=-1, which hides each position from itself'),
    _mistake('an additive mask (0 and -1e9), not boolean', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          mask_size = q.shape[-2]
          mask = jnp.triu(jnp.full((1, mask_size, mask_size), -1e9), k=1)
          return DotProductAttention(q, k, v, mask)
        ''', *_LAYERS_AFTER_ATTENTION,
             why='the mask is the wrong way round, non-zero above the diagonal'),
    _correct('a float mask', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          mask_size = q.shape[-2]
          mask = jnp.tril(jnp.ones((1, mask_size, mask_size)))
          return DotProductAttention(q, k, v, mask)
        '''),
    _correct('a numpy mask', 'dot_product_self_attention', '''
        def dot_product_self_attention(q, k, v):
          mask = np.tril(np.ones((q.shape[1], q.shape[1]), dtype=bool))[None]
          return DotProductAttention(q, k, v, mask)
        '''),
    # UNQ_C4
    _mistake('left blank', 'compute_attention_output_closure', '''
        def compute_attention_output_closure(n_heads, d_head):
          def compute_attention_output(x):
            # YOUR CODE HERE
            raise NotImplementedError()
          return compute_attention_output
        ''', *_LAYERS_AFTER_ATTENTION),
    _mistake('heads joined without the transpose', 'compute_attention_output_closure', '''
        def compute_attention_output_closure(n_heads, d_head):
          def compute_attention_output(x):
            seqlen = x.shape[1]
            return jnp.reshape(x, (-1, seqlen, n_heads * d_head))
          return compute_attention_output
        ''', *_LAYERS_AFTER_ATTENTION, why='the heads were joined without the transpose'),
    _correct('swapaxes', 'compute_attention_output_closure', '''
        def compute_attention_output_closure(n_heads, d_head):
          def compute_attention_output(x):
            x = x.reshape((-1, n_heads, x.shape[1], d_head))
            return jnp.swapaxes(x, 1, 2).reshape((x.shape[0], x.shape[2], -1))
          return compute_attention_output
        '''),
    # UNQ_C5
    _mistake('d_head = n_heads', 'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          d_head = n_heads
          def AttnHeads():
            return tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head))
          return tl.Serial(
              tl.Branch([tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()]),
              tl.Fn('DotProductAttn', dot_product_self_attention),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head)),
              tl.Dense(d_feature))
        ''', 'DecoderBlock', 'TransformerLM'),
    _mistake('no last Dense', 'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          d_head = d_feature // n_heads
          def AttnHeads():
            return tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head))
          return tl.Serial(
              tl.Branch([tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()]),
              tl.Fn('DotProductAttn', dot_product_self_attention),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head)))
        ''', 'DecoderBlock', 'TransformerLM', 'training_loop',
             why='CausalAttention has no last tl.Dense(d_feature)'),
    _mistake('nothing raised when d_feature does not split into n_heads', 'CausalAttention',
             '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          d_head = d_feature // n_heads
          def AttnHeads():
            return tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head))
          return tl.Serial(
              tl.Branch([tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()],
                        [tl.Dense(d_feature), AttnHeads()]),
              tl.Fn('DotProductAttn', dot_product_self_attention),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head)),
              tl.Dense(d_feature))
        '''),
    _correct('the heads layer built three times, n_out given', 'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          if d_feature % n_heads:
            raise ValueError(f'{d_feature} features do not split into {n_heads} heads')
          d_head = d_feature // n_heads
          heads = compute_attention_heads_closure(n_heads, d_head)
          return tl.Serial(
              tl.Branch([tl.Dense(d_feature), tl.Fn('AttnHeads', heads, n_out=1)],
                        [tl.Dense(d_feature), tl.Fn('AttnHeads', heads, n_out=1)],
                        [tl.Dense(d_feature), tl.Fn('AttnHeads', heads, n_out=1)]),
              tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head),
                    n_out=1),
              tl.Dense(d_feature))
        '''),
    # UNQ_C6
    _mistake('feed-forward without its residual', 'DecoderBlock', '''
        def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation, max_len=4096):
          causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
          feed_forward = [tl.LayerNorm(), tl.Dense(d_ff), ff_activation(),
                          tl.Dropout(rate=dropout, mode=mode), tl.Dense(d_model),
                          tl.Dropout(rate=dropout, mode=mode)]
          return [tl.Residual(tl.LayerNorm(), causal_attention,
                              tl.Dropout(rate=dropout, mode=mode)),
                  tl.Serial(feed_forward)]
        ''', 'TransformerLM', 'training_loop'),
    _mistake('dropout not told the mode', 'DecoderBlock', '''
        def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation, max_len=4096):
          causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
          feed_forward = [tl.LayerNorm(), tl.Dense(d_ff), ff_activation(),
                          tl.Dropout(rate=dropout), tl.Dense(d_model),
                          tl.Dropout(rate=dropout)]
          return [tl.Residual(tl.LayerNorm(), causal_attention, tl.Dropout(rate=dropout)),
                  tl.Residual(feed_forward)]
        ''', 'TransformerLM'),
    _mistake('tl.Relu() written in, not ff_activation()', 'DecoderBlock', '''
        def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation, max_len=4096):
          causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
          feed_forward = [tl.LayerNorm(), tl.Dense(d_ff), tl.Relu(),
                          tl.Dropout(rate=dropout, mode=mode), tl.Dense(d_model),
                          tl.Dropout(rate=dropout, mode=mode)]
          return [tl.Residual(tl.LayerNorm(), causal_attention,
                              tl.Dropout(rate=dropout, mode=mode)),
                  tl.Residual(feed_forward)]
        ''', 'TransformerLM'),  # Its eval run hands it tl.FastGelu.
    _correct('residuals given lists', 'DecoderBlock', '''
        def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation, max_len=4096):
          attention = [tl.LayerNorm(), CausalAttention(d_model, n_heads, mode=mode),
                       tl.Dropout(rate=dropout, mode=mode)]
          feed_forward = [tl.LayerNorm(), tl.Dense(d_ff), ff_activation(),
                          tl.Dropout(rate=dropout, mode=mode), tl.Dense(d_model),
                          tl.Dropout(rate=dropout, mode=mode)]
          return [tl.Residual(attention), tl.Residual(feed_forward)]
        '''),
    # UNQ_C7
    _mistake('n_layers ignored', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation),
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', why='1 decoder block(s) where n_layers asks for 2'),
    _mistake('one block repeated', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          block = DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              [block] * n_layers,
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', why='one block object repeated ([DecoderBlock(...)] * n_layers): the blocks '
                'share one block\'s weights'),
    _mistake('no ShiftRight', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', 'training_loop'),
    _mistake('ShiftRight and PositionalEncoding not told the mode', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', why="PositionalEncoding and ShiftRight ignored mode='predict': "
                "ShiftRight and PositionalEncoding need mode"),
    _mistake('PositionalEncoding not told the mode', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', why="PositionalEncoding ignored mode='predict': ShiftRight and "
                "PositionalEncoding need mode"),
    _mistake('ShiftRight not told the mode', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', why="ShiftRight ignored mode='predict': ShiftRight and "
                "PositionalEncoding need mode"),
    _mistake('no LogSoftmax at the end', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.Dense(vocab_size))
        ''', 'training_loop', why='the model does not end with tl.LogSoftmax()'),
    _mistake('no Dense of vocab_size at the end', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
               for _ in range(n_layers)],
              tl.LayerNorm(), tl.LogSoftmax())
        ''', 'training_loop', why='the model has no tl.Dense(vocab_size) after its LayerNorm'),
    _correct('blocks appended in a for loop', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          blocks = []
          for _ in range(n_layers):
            blocks.append(DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation))
          encoder = [tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
                     tl.PositionalEncoding(max_len=max_len, mode=mode)]
          return tl.Serial(tl.ShiftRight(mode=mode), encoder, blocks, tl.LayerNorm(),
                           tl.Dense(vocab_size), tl.LogSoftmax())
        '''),
    # UNQ_C8
    _mistake('an eval-mode model', 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          output_dir = os.path.expanduser(output_dir)
          train_task = training.TrainTask(
              labeled_data=train_gen, loss_layer=tl.CrossEntropyLoss(),
              optimizer=trax.optimizers.Adam(0.01),
              lr_schedule=trax.lr.warmup_and_rsqrt_decay(1000, 0.01),
              n_steps_per_checkpoint=10)
          eval_task = training.EvalTask(labeled_data=eval_gen,
                                        metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          return training.Loop(TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2,
                                             mode='eval'),
                               train_task, eval_tasks=[eval_task], output_dir=output_dir)
        '''),
    # Trax's Loop expands '~' itself (trax/supervised/training.py): not a mistake.
    _correct('output_dir without expanduser', 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          train_task = training.TrainTask(
              labeled_data=train_gen, loss_layer=tl.CrossEntropyLoss(),
              optimizer=trax.optimizers.Adam(0.01),
              lr_schedule=trax.lr.warmup_and_rsqrt_decay(1000, 0.01),
              n_steps_per_checkpoint=10)
          eval_task = training.EvalTask(labeled_data=eval_gen,
                                        metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          return training.Loop(TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2,
                                             mode='train'),
                               train_task, eval_tasks=[eval_task], output_dir=output_dir)
        '''),
    _mistake('learning rate 0.001', 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          output_dir = os.path.expanduser(output_dir)
          train_task = training.TrainTask(
              labeled_data=train_gen, loss_layer=tl.CrossEntropyLoss(),
              optimizer=trax.optimizers.Adam(0.001),
              lr_schedule=trax.lr.warmup_and_rsqrt_decay(1000, 0.001),
              n_steps_per_checkpoint=10)
          eval_task = training.EvalTask(labeled_data=eval_gen,
                                        metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          return training.Loop(TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2,
                                             mode='train'),
                               train_task, eval_tasks=[eval_task], output_dir=output_dir)
        '''),
    _correct('trax.supervised.training spelled out, keyword arguments', 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          lr = 0.01
          train_task = trax.supervised.training.TrainTask(
              labeled_data=train_gen, loss_layer=tl.CrossEntropyLoss(),
              optimizer=trax.optimizers.Adam(learning_rate=lr),
              lr_schedule=trax.lr.warmup_and_rsqrt_decay(n_warmup_steps=1000, max_value=lr),
              n_steps_per_checkpoint=10)
          eval_task = trax.supervised.training.EvalTask(
              labeled_data=eval_gen, metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          model = TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train')
          return trax.supervised.training.Loop(
              model, train_task, eval_tasks=[eval_task],
              output_dir=os.path.expanduser(output_dir))
        '''),
    # UNQ_C9
    _mistake('reads position len - 1', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          token_length = len(cur_output_tokens)
          padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
          padded = cur_output_tokens + [0] * (padded_length - token_length)
          padded_with_batch = np.array(padded)[None, :]
          output, _ = model((padded_with_batch, padded_with_batch))
          return int(np.argmax(output[0, token_length - 1, :]))
        ''', why='it read position len(cur_output_tokens) - 1, which predicts the last token'),
    _mistake('reads the last position (-1)', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          token_length = len(cur_output_tokens)
          padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
          padded = cur_output_tokens + [0] * (padded_length - token_length)
          padded_with_batch = np.array(padded)[None, :]
          output, _ = model((padded_with_batch, padded_with_batch))
          return int(np.argmax(output[0, -1, :]))
        ''', why='it read the last position (-1), which is padding'),
    _mistake('pads to a power of two not above the length', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          token_length = len(cur_output_tokens)
          padded_length = 2 ** int(np.ceil(np.log2(token_length)))
          padded = cur_output_tokens + [0] * (padded_length - token_length)
          padded_with_batch = np.array(padded)[None, :]
          output, _ = model((padded_with_batch, padded_with_batch))
          return int(np.argmax(output[0, token_length, :]))
        ''', why='4 tokens padded to 4 positions, a power of two not above their number'),
    _mistake('returns a numpy integer', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          token_length = len(cur_output_tokens)
          padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
          padded = cur_output_tokens + [0] * (padded_length - token_length)
          padded_with_batch = np.array(padded)[None, :]
          output, _ = model((padded_with_batch, padded_with_batch))
          return np.argmax(output[0, token_length, :])
        '''),
    _correct('a while loop for the length, .item()', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          padded_length = 1
          while padded_length <= len(cur_output_tokens):
            padded_length *= 2
          padded = np.zeros((1, padded_length), dtype=np.int32)
          padded[0, :len(cur_output_tokens)] = cur_output_tokens
          log_probs, _ = model((padded, padded))
          return jnp.argmax(log_probs[0, len(cur_output_tokens)]).item()
        '''),
    # UNQ_C10
    _mistake('no separator after the article', 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence)
          generated_output = []
          for _ in range(max_length):
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if verbose:
              print(detokenize(generated_output))
            if cur_output == EOS:
              break
          return detokenize(generated_output)
        ''', why='decoding started without the separator'),
    _correct('prints whatever verbose says (printing is feedback)', 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          for _ in range(max_length):
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            print(detokenize(generated_output))
            if cur_output == EOS:
              break
          return detokenize(generated_output)
        '''),
    _mistake('does not stop at EOS', 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          for _ in range(max_length):
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if verbose:
              print(detokenize(generated_output))
          return detokenize(generated_output)
        ''', why='it went on after EOS'),
    _mistake('appends one token after EOS', 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          cur_output = last_output = 0
          while last_output != EOS:
            last_output = cur_output
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if verbose:
              print(detokenize(generated_output))
          return detokenize(generated_output)
        ''', why='it went on after EOS'),
    _mistake('stops before appending EOS', 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          for _ in range(max_length):
            cur_output = next_symbol(cur_output_tokens, model)
            if cur_output == EOS:
              break
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if verbose:
              print(detokenize(generated_output))
          return detokenize(generated_output)
        ''', why='it stopped before appending EOS'),
    _correct("the course's while loop", 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          cur_output = 0
          while cur_output != 1 and len(generated_output) < max_length:
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if verbose:
              print(detokenize(generated_output))
          return detokenize(generated_output)
        '''),
    # Added with the sandboxed grader: more correct forms, more mistakes.
    _correct('exp(log_softmax)', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          import jax
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          return jnp.matmul(jnp.exp(jax.nn.log_softmax(dots, axis=-1)), value)
        '''),
    _correct('max-subtracted softmax written out', 'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(query.shape[-1])
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          dots = jnp.exp(dots - jnp.max(dots, axis=-1, keepdims=True))
          return jnp.matmul(dots / jnp.sum(dots, axis=-1, keepdims=True), value)
        '''),
    _correct("the course's assert for the head split", 'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train'):
          assert d_feature % n_heads == 0
          d_head = d_feature // n_heads
          heads = tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head), n_out=1)
          return tl.Serial(
              tl.Branch([tl.Dense(d_feature), heads], [tl.Dense(d_feature), heads],
                        [tl.Dense(d_feature), heads]),
              tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head), n_out=1),
              tl.Dense(d_feature))
        '''),
    _mistake('a block too few', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          blocks = [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
                    for _ in range(n_layers - 1)]
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              blocks, tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        ''', 'training_loop', why='0 decoder block(s) where n_layers asks for 1'),
    _correct("the course's greedy_decode: prints as it goes, no verbose", 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          cur_output = 0
          while cur_output != 1:
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            print(detokenize(generated_output))
          return detokenize(generated_output)
        '''),
    _correct('a warning on stderr as it works', 'next_symbol', '''
        def next_symbol(cur_output_tokens, model):
          import sys
          import warnings
          warnings.warn("a learner's warning: nothing to worry about")
          print('a note on stderr', file=sys.stderr)
          length = len(cur_output_tokens)
          padded = cur_output_tokens + [0] * (2 ** int(np.ceil(np.log2(length + 1))) - length)
          log_probs, _ = model((np.array([padded]), np.array([padded])))
          return int(np.argmax(log_probs[0, length]))
        '''),
    # Inputs read from the notebook in place of the arguments (issue 64): the notebook's
    # globals (``notebook_globals``) where the function is handed its own.
    _mistake("trains on the notebook's train_batch_stream", 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          schedule = trax.lr.warmup_and_rsqrt_decay(1000, 0.01)
          train_task = training.TrainTask(labeled_data=train_batch_stream,
                                          loss_layer=tl.CrossEntropyLoss(),
                                          optimizer=trax.optimizers.Adam(0.01),
                                          lr_schedule=schedule, n_steps_per_checkpoint=10)
          eval_task = training.EvalTask(labeled_data=eval_gen,
                                        metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          model = TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train')
          return training.Loop(model, train_task, eval_tasks=[eval_task],
                               output_dir=os.path.expanduser(output_dir))
        ''', why='the TrainTask reads train_batch_stream, a global of the notebook, not the '
                 'argument train_gen'),
    _mistake("evaluates on the notebook's eval_batch_stream", 'training_loop', '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          schedule = trax.lr.warmup_and_rsqrt_decay(1000, 0.01)
          train_task = training.TrainTask(labeled_data=train_gen,
                                          loss_layer=tl.CrossEntropyLoss(),
                                          optimizer=trax.optimizers.Adam(0.01),
                                          lr_schedule=schedule, n_steps_per_checkpoint=10)
          eval_task = training.EvalTask(labeled_data=eval_batch_stream,
                                        metrics=[tl.CrossEntropyLoss(), tl.Accuracy()])
          model = TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2, mode='train')
          return training.Loop(model, train_task, eval_tasks=[eval_task],
                               output_dir=os.path.expanduser(output_dir))
        ''', why='the EvalTask reads eval_batch_stream, a global of the notebook, not the '
                 'argument eval_gen'),
    _mistake("the notebook's VOCAB_SIZE in place of vocab_size", 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          blocks = [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
                    for _ in range(n_layers)]
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(VOCAB_SIZE, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              blocks, tl.LayerNorm(), tl.Dense(VOCAB_SIZE), tl.LogSoftmax())
        '''),
    _mistake('ff_activation not handed to the blocks', 'TransformerLM', '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          blocks = [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, tl.Relu)
                    for _ in range(n_layers)]
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              tl.Embedding(vocab_size, d_model), tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode),
              blocks, tl.LayerNorm(), tl.Dense(vocab_size), tl.LogSoftmax())
        '''),
    _mistake("the notebook's MAX_SUMMARY_TOKENS in place of max_length", 'greedy_decode', '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize, verbose=False, max_length=64):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          for _ in range(MAX_SUMMARY_TOKENS):
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            if cur_output == EOS:
              break
          return detokenize(generated_output)
        '''),
]

# The extra arguments of each check, as the notebook calls it.
CHECK_ARGUMENTS = handout.CHECK_ARGUMENTS


def notebook_globals():
  """What the notebook's cells above the exercises leave in its namespace that a function might
  read in place of its arguments: the data cells' streams (stand-ins: batches of random ids)."""
  return {'train_batch_stream': probes.batches(5), 'eval_batch_stream': probes.batches(6)}


def namespace(variant=None):
  """The notebook's namespace: the setup, the package's solutions, then the variant."""
  names = {'tokenize': text.course_tokenize, 'detokenize': text.course_detokenize,
           **notebook_globals()}
  exec(handout.setup_source(), names)  # pylint: disable=exec-used
  for name in GRADED:
    exec(compile(handout.solution_source(name), f'<solution {name}>', 'exec'), names)  # pylint: disable=exec-used
  if variant is not None:
    # Kept where tracebacks find source lines, as Jupyter keeps its cells.
    filename = f'<learner {variant.function}>'
    linecache.cache[filename] = (len(variant.source), None,
                                 variant.source.splitlines(keepends=True), filename)
    exec(compile(variant.source, filename, 'exec'), names)  # pylint: disable=exec-used
  return names


def checks_to_run(variant):
  """The checks a variant is run through: its own and those built on it."""
  return (variant.function, *BUILT_ON.get(variant.function, ()))


def run_check(checks, name, names):
  """Runs one check in the namespace; returns (failed cases, what it printed)."""
  arguments = [names[argument] for argument in (name, *CHECK_ARGUMENTS.get(name, ()))]
  printed = io.StringIO()
  with contextlib.redirect_stdout(printed):
    failed = getattr(checks, f'test_{name}')(*arguments)
  return failed, printed.getvalue()


def run_checks(checks, variant):
  """{check name: (failed cases, what it printed)} for the checks a variant is run through."""
  names = namespace(variant)
  return {name: run_check(checks, name, names) for name in checks_to_run(variant)}


def outcome(checks, variant):
  """{check name: whether it failed} for the checks a variant is run through."""
  return {name: bool(failed) for name, (failed, _) in run_checks(checks, variant).items()}


def course_namespace(**replaced):
  """The notebook's namespace with the course's answers, some replaced (name -> code).

  Defined in the course's order, as a notebook runs its cells: a default
  argument bound to an earlier function (the course's ``CausalAttention``
  binds the closures) is the one defined above it.
  """
  names = {'tokenize': text.course_tokenize, 'detokenize': text.course_detokenize,
           **notebook_globals()}
  exec(handout.setup_source(), names)  # pylint: disable=exec-used
  for name in GRADED:
    source = replaced.get(name, COURSE_ANSWERS[name])
    exec(compile(source, f'<course {name}>', 'exec'), names)  # pylint: disable=exec-used
  return names


def caught(variant, failed):
  """Whether a check outcome is right for the variant: the mistake fails every
  check it must, a correct answer fails none."""
  if variant.correct:
    return not any(failed.values())
  return all(failed[name] for name in variant.fails)


def measure_grader(seed=5):
  """The sandboxed grader's catch rate: each variant graded with the package's earlier functions.

  A mistake must lose its own function's points, a correct variant none; every
  variant in one sandbox run (one author's notebooks).
  """
  from summarizer.grading import grader  # pylint: disable=g-import-not-at-top
  notebooks = [notebook_with(dict(COURSE_ANSWERS, **{v.function: v.source})) for v in VARIANTS]
  reports = grader.grade_batch(notebooks, seed=seed, functions={v.function for v in VARIANTS},
                               whole=False)
  caught = passed = 0
  for variant, report in zip(VARIANTS, reports):
    lost = {v.grade_id[len('test_'):] for v in report.verdicts if v.points < v.max_points}
    right = (not lost) if variant.correct else (lost == {variant.function})
    caught += right and not variant.correct
    passed += right and variant.correct
    print(f'{"ok  " if right else "MISS"} {"correct" if variant.correct else "mistake":7} '
          f'{variant.function}: {variant.name} (lost: {", ".join(sorted(lost)) or "none"})',
          flush=True)
  n_mistakes = sum(not v.correct for v in VARIANTS)
  print(f'grader: mistakes losing exactly their own points: {caught} of {n_mistakes}')
  print(f'grader: correct variants with full marks: {passed} of {len(VARIANTS) - n_mistakes}')
  return 0


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--checks', help='a checks.py to measure (default: this one)')
  parser.add_argument('--grader', action='store_true',
                      help="measure the sandboxed grader instead of the notebook's checks")
  args = parser.parse_args(argv)
  if args.grader:
    return measure_grader()
  if args.checks:
    spec = importlib.util.spec_from_file_location('measured_checks', args.checks)
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
  else:
    from summarizer.assignment import checks  # pylint: disable=g-import-not-at-top
  own_caught = caught_all = correct_passed = 0
  for variant in VARIANTS:
    failed = outcome(checks, variant)
    verdict = caught(variant, failed)
    if variant.correct:
      correct_passed += verdict
    else:
      own_caught += failed[variant.function]
      caught_all += verdict
    kind = 'correct' if variant.correct else 'mistake'
    print(f'{"ok  " if verdict else "MISS"} {kind:7} {variant.function}: {variant.name}'
          f' (failed: {", ".join(name for name, bad in failed.items() if bad) or "none"})',
          flush=True)
  n_mistakes = sum(not variant.correct for variant in VARIANTS)
  print(f'mistakes failing their own check: {own_caught} of {n_mistakes}')
  print(f'mistakes failing their own check and every check built on it that they '
        f'change: {caught_all} of {n_mistakes}')
  print(f'correct variants passing every check: {correct_passed} of '
        f'{len(VARIANTS) - n_mistakes}')
  return 0


if __name__ == '__main__':
  sys.exit(main())


# The course's answers: each graded function written in the course's manner (the
# course's `assert` for the head split, the same heads layer in three branches,
# a greedy_decode that prints as it goes and has no verbose), as a learner who
# followed the course's notebook writes them.
COURSE_ANSWERS = {name: textwrap.dedent(source) for name, source in {
    'DotProductAttention': '''
        def DotProductAttention(query, key, value, mask):
          assert query.shape[-1] == key.shape[-1] == value.shape[-1], 'widths differ'
          depth = query.shape[-1]
          dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) / jnp.sqrt(depth)
          if mask is not None:
            dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
          logsumexp = trax.fastmath.logsumexp(dots, axis=-1, keepdims=True)
          dots = jnp.exp(dots - logsumexp)
          attention = jnp.matmul(dots, value)
          return attention
        ''',
    'compute_attention_heads_closure': '''
        def compute_attention_heads_closure(n_heads, d_head):
          def compute_attention_heads(x):
            batch_size = x.shape[0]
            seqlen = x.shape[1]
            x = jnp.reshape(x, (batch_size, seqlen, n_heads, d_head))
            x = jnp.transpose(x, (0, 2, 1, 3))
            x = jnp.reshape(x, (-1, seqlen, d_head))
            return x
          return compute_attention_heads
        ''',
    'dot_product_self_attention': '''
        def dot_product_self_attention(q, k, v):
          mask_size = q.shape[-2]
          mask = jnp.tril(jnp.ones((1, mask_size, mask_size), dtype=jnp.bool_), k=0)
          return DotProductAttention(q, k, v, mask)
        ''',
    'compute_attention_output_closure': '''
        def compute_attention_output_closure(n_heads, d_head):
          def compute_attention_output(x):
            seqlen = x.shape[1]
            x = jnp.reshape(x, (-1, n_heads, seqlen, d_head))
            x = jnp.transpose(x, (0, 2, 1, 3))
            return jnp.reshape(x, (-1, seqlen, n_heads * d_head))
          return compute_attention_output
        ''',
    'CausalAttention': '''
        def CausalAttention(d_feature, n_heads,
                            compute_attention_heads_closure=compute_attention_heads_closure,
                            dot_product_self_attention=dot_product_self_attention,
                            compute_attention_output_closure=compute_attention_output_closure,
                            mode='train'):
          assert d_feature % n_heads == 0
          d_head = d_feature // n_heads
          ComputeAttentionHeads = tl.Fn('AttnHeads', compute_attention_heads_closure(n_heads, d_head), n_out=1)
          return tl.Serial(
              tl.Branch(
                  [tl.Dense(d_feature), ComputeAttentionHeads],
                  [tl.Dense(d_feature), ComputeAttentionHeads],
                  [tl.Dense(d_feature), ComputeAttentionHeads],
              ),
              tl.Fn('DotProductAttn', dot_product_self_attention, n_out=1),
              tl.Fn('AttnOutput', compute_attention_output_closure(n_heads, d_head), n_out=1),
              tl.Dense(d_feature),
          )
        ''',
    'DecoderBlock': '''
        def DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation):
          causal_attention = CausalAttention(d_model, n_heads=n_heads, mode=mode)
          feed_forward = [
              tl.LayerNorm(),
              tl.Dense(d_ff),
              ff_activation(),
              tl.Dropout(rate=dropout, mode=mode),
              tl.Dense(d_model),
              tl.Dropout(rate=dropout, mode=mode),
          ]
          return [
              tl.Residual(tl.LayerNorm(), causal_attention, tl.Dropout(rate=dropout, mode=mode)),
              tl.Residual(feed_forward),
          ]
        ''',
    'TransformerLM': '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          positional_encoder = [
              tl.Embedding(vocab_size, d_model),
              tl.Dropout(rate=dropout, mode=mode),
              tl.PositionalEncoding(max_len=max_len, mode=mode)]
          decoder_blocks = [DecoderBlock(d_model, d_ff, n_heads, dropout, mode, ff_activation)
                            for _ in range(n_layers)]
          return tl.Serial(
              tl.ShiftRight(mode=mode),
              positional_encoder,
              decoder_blocks,
              tl.LayerNorm(),
              tl.Dense(vocab_size),
              tl.LogSoftmax(),
          )
        ''',
    'training_loop': '''
        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/model'):
          output_dir = os.path.expanduser(output_dir)
          lr_schedule = trax.lr.warmup_and_rsqrt_decay(n_warmup_steps=1000, max_value=0.01)
          train_task = training.TrainTask(
              labeled_data=train_gen,
              loss_layer=tl.CrossEntropyLoss(),
              optimizer=trax.optimizers.Adam(0.01),
              lr_schedule=lr_schedule,
              n_steps_per_checkpoint=10,
          )
          eval_task = training.EvalTask(
              labeled_data=eval_gen,
              metrics=[tl.CrossEntropyLoss(), tl.Accuracy()],
          )
          loop = training.Loop(TransformerLM(d_model=4, d_ff=16, n_layers=1, n_heads=2,
                                             mode='train'),
                               train_task, eval_tasks=[eval_task], output_dir=output_dir)
          return loop
        ''',
    'next_symbol': '''
        def next_symbol(cur_output_tokens, model):
          token_length = len(cur_output_tokens)
          padded_length = 2**int(np.ceil(np.log2(token_length + 1)))
          padded = cur_output_tokens + [0] * (padded_length - token_length)
          padded_with_batch = np.array(padded)[None, :]
          output, _ = model((padded_with_batch, padded_with_batch))
          log_probs = output[0, token_length, :]
          return int(np.argmax(log_probs))
        ''',
    'greedy_decode': '''
        def greedy_decode(input_sentence, model, next_symbol=next_symbol, tokenize=tokenize,
                          detokenize=detokenize):
          cur_output_tokens = tokenize(input_sentence) + [0]
          generated_output = []
          cur_output = 0
          EOS = 1
          while cur_output != EOS:
            cur_output = next_symbol(cur_output_tokens, model)
            cur_output_tokens.append(cur_output)
            generated_output.append(cur_output)
            print(detokenize(generated_output))
          return detokenize(generated_output)
        ''',
}.items()}


def notebook_with(answers):
  """The learner's notebook with these answers (name -> code) in their cells."""
  notebook = handout.exercise_notebook()
  for cell in notebook.cells:
    grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
    if grade_id in answers:
      cell.source = answers[grade_id]
  return notebook


@dataclasses.dataclass(frozen=True)
class Cheat:
  """A way to earn points without the work, as a teaching assistant tried them.

  Attributes:
    name: What it does.
    family: The issue's family it belongs to.
    function: The cell it is written into (the rest of the notebook is blank).
    source: The cell's code.
    files: Files handed in beside the notebook (path -> content).
  """
  name: str
  family: str
  function: str
  source: str
  files: tuple = ()


def _cheat(name, family, function, source, files=()):
  return Cheat(name, family, function, textwrap.dedent(source), tuple(files))


_BLANK_ATTENTION = '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          raise NotImplementedError()
        '''
_PASSING_CHECKS = '''
def __getattr__(name):
  return lambda *args, **kwargs: 0

def _run(cases):
  print('All tests passed')
  return 0
'''

CHEATS = [
    _cheat('checks._run replaced', 'the checker patched', 'DotProductAttention', '''
        checks._run = lambda cases: 0
        def DotProductAttention(query, key, value, mask):
          raise NotImplementedError()
        '''),
    _cheat('checks rebound to an object whose test_* return 0', 'the checker patched',
           'DotProductAttention', '''
        class _AlwaysPasses:
          def __getattr__(self, name):
            return lambda *args, **kwargs: 0
        checks = _AlwaysPasses()
        def DotProductAttention(query, key, value, mask):
          raise NotImplementedError()
        '''),
    _cheat('an IPython AST transformer swallowing every error', 'the checker patched',
           'DotProductAttention', '''
        import ast
        class _Swallow(ast.NodeTransformer):
          def visit_Module(self, node):
            handler = ast.ExceptHandler(type=None, name=None, body=[ast.Pass()])
            node.body = [ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])]
            return ast.fix_missing_locations(node)
        get_ipython().ast_transformers.append(_Swallow())
        def DotProductAttention(query, key, value, mask):
          raise NotImplementedError()
        '''),
    _cheat('a summarizer/ folder handed in beside the notebook, its checks pass all',
           'files handed in', 'CausalAttention', '''
        import sys
        sys.path.insert(0, os.getcwd())
        for loaded in [m for m in sys.modules if m.startswith('summarizer')]:
          del sys.modules[loaded]
        from summarizer.assignment import checks
        ''' + _BLANK_ATTENTION, files=(('summarizer/__init__.py', ''),
                                       ('summarizer/assignment/__init__.py', ''),
                                       ('summarizer/assignment/checks.py', _PASSING_CHECKS))),
    _cheat("the expected value read from the checker's frames", 'the checker read',
           'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          import inspect
          for frame in inspect.stack():
            for local in frame.frame.f_locals.values():
              for expect in (local if isinstance(local, list) else [local]):
                if hasattr(expect, 'expected') and hasattr(expect, 'measure'):
                  return jnp.array(expect.expected)
          raise NotImplementedError()
        '''),
    _cheat("the package's function, only while the checker is on the stack", 'the checker read',
           'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train', max_len=4096):
          import inspect
          if any('checks' in frame.filename or 'probes' in frame.filename
                 for frame in inspect.stack()):
            import summarizer
            return summarizer.CausalAttention(d_feature, n_heads, mode=mode)
          raise NotImplementedError()
        '''),
    _cheat("appending to the installed checks.py", 'the package written', 'DotProductAttention', '''
        import summarizer
        with open(os.path.join(os.path.dirname(summarizer.__file__), 'assignment', 'checks.py'),
                  'a') as f:
          f.write('\\n_run = lambda cases: 0\\n')
        with open(os.path.join(os.path.dirname(summarizer.__file__), 'attention.py'), 'a') as f:
          f.write('\\n')
        def DotProductAttention(query, key, value, mask):
          raise NotImplementedError()
        '''),
    _cheat('from summarizer import CausalAttention', "the package's function", 'CausalAttention',
           '''
        from summarizer import CausalAttention
        '''),
    _cheat('a module alias', "the package's function", 'CausalAttention', '''
        import summarizer.attention as the_package
        CausalAttention = the_package.CausalAttention
        '''),
    _cheat('a lambda wrapper', "the package's function", 'CausalAttention', '''
        import summarizer
        CausalAttention = lambda *args, **kwargs: summarizer.CausalAttention(*args, **kwargs)
        '''),
    _cheat('a def wrapper', "the package's function", 'TransformerLM', '''
        def TransformerLM(*args, **kwargs):
          import summarizer
          return summarizer.TransformerLM(*args, **kwargs)
        '''),
    _cheat('a types.FunctionType copy', "the package's function", 'DecoderBlock', '''
        import types
        import summarizer
        _theirs = summarizer.DecoderBlock
        DecoderBlock = types.FunctionType(_theirs.__code__, _theirs.__globals__, 'DecoderBlock',
                                          _theirs.__defaults__, _theirs.__closure__)
        '''),
    _cheat('a copy.deepcopy', "the package's function", 'next_symbol', '''
        import copy
        import summarizer
        next_symbol = copy.deepcopy(summarizer.next_symbol)
        '''),
    _cheat('exec(inspect.getsource(...))', "the package's function", 'greedy_decode', '''
        import inspect
        import summarizer
        exec(inspect.getsource(summarizer.greedy_decode))
        '''),
    _cheat('checks._attention.CausalAttention, no import', "the package's function",
           'CausalAttention', '''
        CausalAttention = checks._attention.CausalAttention
        '''),
    _cheat("the package's source read from the disk", "the package's function",
           'CausalAttention', '''
        import summarizer
        _folder = os.path.dirname(summarizer.__file__)
        for _name in ('attention.py', '../notebooks/03_transformer_summarizer.ipynb'):
          try:
            exec(open(os.path.join(_folder, _name)).read())
          except Exception:
            pass
        ''' + _BLANK_ATTENTION),
    _cheat("the package's answers looked for in memory", 'the sandbox probed',
           'CausalAttention', '''
        import gc
        for _text in [o for o in gc.get_objects() if isinstance(o, str)]:
          if _text.lstrip().startswith('def CausalAttention('):
            exec(_text)
            break
        else:
          raise NotImplementedError()
        '''),
    _cheat("the probe replaced: the loop's settings written down, no loop", 'the sandbox probed',
           'training_loop', """
        import sys
        _probes = sys.modules['probes']

        def _written_down(function, seed, given, env):
          settings = {
              'loss layer': 'CrossEntropyLoss_in3', 'optimizer': 'Adam',
              'optimizer parameters': {'b1': 0.9, 'b2': 0.999, 'eps': 1e-05,
                                       'learning_rate': 0.01, 'weight_decay_rate': 1e-05},
              'learning rates at steps 1, 500, 1000, 1001, 4000': [
                  0.01 / 1001, 0.01 * 500 / 1001, 0.01 * 1000 / 1001, 0.01,
                  0.005002499375312305],
              'steps between checkpoints': 10,
              'evaluation metrics': ['CrossEntropyLoss', 'Accuracy'],
              'output directory, from the home folder': 'output',
              "modes of the model's layers": ['train']}
          ids = next(_probes.batches(seed + 2))[0]
          model = env['TransformerLM'](**_probes.EXERCISE_MODEL, mode='train')
          return [
              _probes.case('training_loop(TransformerLM, train_gen, eval_gen, output_dir)',
                           lambda: settings),
              _probes.case("the loop's model on a batch, with the weights given",
                           lambda: _probes.run_measures(model, ids, _probes.given_weights(
                               given, 'training_loop model')))]
        _probes.PROBES['training_loop'] = _written_down

        def training_loop(TransformerLM, train_gen, eval_gen, output_dir='~/output'):
          raise NotImplementedError()
        """),
    _cheat('the probe replaced: a report of another type', 'the sandbox probed',
           'next_symbol', """
        import sys
        sys.modules['probes'].PROBES['next_symbol'] = lambda *args: 'All tests passed'

        def next_symbol(cur_output_tokens, model):
          raise NotImplementedError()
        """),
    _cheat("Trax's own layer: tl.CausalAttention", "Trax's own answer", 'CausalAttention', '''
        def CausalAttention(d_feature, n_heads, mode='train'):
          return tl.CausalAttention(d_feature, n_heads, mode=mode)
        '''),
    _cheat("Trax's own model: trax.models.TransformerLM", "Trax's own answer", 'TransformerLM',
           '''
        def TransformerLM(vocab_size=33300, d_model=512, d_ff=2048, n_layers=6, n_heads=8,
                          dropout=0.1, max_len=4096, mode='train', ff_activation=tl.Relu):
          theirs = trax.models.TransformerLM(vocab_size, d_model, d_ff, n_layers, n_heads, max_len,
                                             dropout, mode=mode, ff_activation=ff_activation)
          return tl.Serial(theirs, tl.LogSoftmax())
        '''),
    _cheat("jax's own jax.nn.dot_product_attention", "Trax's own answer", 'DotProductAttention',
           '''
        import jax
        def DotProductAttention(query, key, value, mask):
          one_head = lambda x: x[:, :, None, :]  # (B, L, d) -> (B, L, 1, d)
          mask = jnp.broadcast_to(mask, query.shape[:1] + mask.shape[-2:])[:, None]
          return jax.nn.dot_product_attention(one_head(query), one_head(key), one_head(value),
                                              mask=mask)[:, :, 0, :]
        '''),
    _cheat("Trax's attention.py and its bytecode read from the disk", "Trax's own answer",
           'CausalAttention', '''
        import glob
        import marshal
        _folder, _theirs = os.path.dirname(tl.__file__), {}
        for _path in [os.path.join(_folder, 'attention.py'),
                      *glob.glob(os.path.join(_folder, '__pycache__', 'attention.*.pyc'))]:
          try:
            with open(_path, 'rb') as _file:
              _code = _file.read()
            exec(marshal.loads(_code[16:]) if _path.endswith('.pyc') else _code, _theirs)
          except Exception:
            pass
        def CausalAttention(d_feature, n_heads, mode='train'):
          # Trax's pieces, named as the course's tree prints its own.
          assert d_feature % n_heads == 0
          heads = lambda: tl.Fn('AttnHeads', lambda x: _theirs['SplitIntoHeads'](n_heads)(x))
          attend = _theirs['DotProductCausalAttention'](mode='eval')
          return tl.Serial(
              tl.Branch(*[[tl.Dense(d_feature), heads()] for _ in range(3)]),
              tl.Fn('DotProductAttn', lambda q, k, v: attend((q, k, v))),
              tl.Fn('AttnOutput', lambda x: _theirs['MergeHeads'](n_heads)(x)),
              tl.Dense(d_feature))
        '''),
    _cheat("fake results written to the grader's channel", 'the sandbox probed',
           'DotProductAttention', '''
        def DotProductAttention(query, key, value, mask):
          for fd in ('/proc/%d/fd/1' % os.getppid(), '/proc/1/fd/1'):
            try:
              with open(fd, 'wb') as channel:
                channel.write(b'\\0' * 64)
            except OSError:
              pass
          raise NotImplementedError()
        '''),
]


def cheat_notebook(cheat, directory):
  """Writes the blank notebook with the cheat in its cell, and the files beside it."""
  import os  # pylint: disable=g-import-not-at-top
  import nbformat  # pylint: disable=g-import-not-at-top
  os.makedirs(directory, exist_ok=True)
  for path, content in cheat.files:
    full = os.path.join(directory, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w', encoding='utf-8') as f:
      f.write(content)
  path = os.path.join(directory, handout.ASSIGNMENT + '.ipynb')
  nbformat.write(notebook_with({cheat.function: cheat.source}), path)
  return path
