"""summarizer: the Transformer Summarizer of the Trax course, runnable offline.

The course's names are exported at the top level::

  from summarizer import TransformerLM, greedy_decode, tokenize, summarize

The layers import Trax (quietly and fast, through ``summarizer._trax``);
the rest is loaded the first time it is used.
"""

import importlib

from summarizer.attention import (CausalAttention, DotProductAttention,
                                  compute_attention_heads_closure,
                                  compute_attention_output_closure,
                                  dot_product_self_attention)
from summarizer.config import PRESETS, Config
from summarizer.errors import SummarizerError
from summarizer.model import DecoderBlock, FeedForward, PositionalEncoder, TransformerLM

# Names served from modules that load on first use.
_LAZY = {
    'next_symbol': 'summarizer.decoding',
    'greedy_decode': 'summarizer.decoding',
    'summarize': 'summarizer.decoding',
    'tokenize': 'summarizer.data',
    'detokenize': 'summarizer.data',
}

__all__ = [
    'CausalAttention', 'Config', 'DecoderBlock', 'DotProductAttention',
    'FeedForward', 'PRESETS', 'PositionalEncoder', 'SummarizerError',
    'TransformerLM', 'compute_attention_heads_closure',
    'compute_attention_output_closure', 'dot_product_self_attention',
    *_LAZY,
]


def __getattr__(name):
  if name in _LAZY:
    return getattr(importlib.import_module(_LAZY[name]), name)
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
