"""summarizer: the Transformer Summarizer of the Trax course, runnable offline.

The course's names are exported at the top level::

  from summarizer import TransformerLM, greedy_decode, tokenize, summarize

Nothing heavy happens on ``import summarizer``: each name loads its module
(and, for most, Trax, quietly and fast through ``summarizer._trax``) the
first time it is used, so ``python -m summarizer --help`` answers at once.
"""

import importlib
import sys

if sys.argv[:1] == ['-m']:
  # `python -m summarizer.X`: a command (Python names it '-m' while it finds the module). Ctrl-C
  # from here on, during jax's import too, ends in one line (errors.stop_cleanly_on_interrupt).
  from summarizer import errors as _errors  # pylint: disable=g-import-not-at-top
  _errors.stop_cleanly_on_interrupt()

__version__ = '0.2.0'

# Each top-level name and the module it comes from, loaded on first use.
_LAZY = {
    # The course's graded functions, in its order.
    'DotProductAttention': 'summarizer.attention',
    'compute_attention_heads_closure': 'summarizer.attention',
    'dot_product_self_attention': 'summarizer.attention',
    'compute_attention_output_closure': 'summarizer.attention',
    'CausalAttention': 'summarizer.attention',
    'DecoderBlock': 'summarizer.model',
    'TransformerLM': 'summarizer.model',
    'training_loop': 'summarizer.training',
    'next_symbol': 'summarizer.decoding',
    'greedy_decode': 'summarizer.decoding',
    # The rest of the model and the pipeline.
    'FeedForward': 'summarizer.model',
    'PositionalEncoder': 'summarizer.model',
    'tokenize': 'summarizer.text',
    'detokenize': 'summarizer.text',
    'summarize': 'summarizer.inference.api',
    'summarize_details': 'summarizer.inference.api',
    'summarize_many': 'summarizer.inference.api',
    'explain': 'summarizer.explorer.explanation',
    'Config': 'summarizer.config',
    'PRESETS': 'summarizer.config',
    'SummarizerError': 'summarizer.errors',
}

__all__ = list(_LAZY)


def __getattr__(name):
  if name in _LAZY:
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name]), name)
    return value  # Kept: a name is looked up here once.
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
  return sorted(set(globals()) | set(_LAZY))
