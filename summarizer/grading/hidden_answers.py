"""Trax's own answers to the exercises, hidden while grading as the package's are.

Trax ships its versions of what the graded exercises ask for (``tl.CausalAttention``,
``trax.models.TransformerLM``, its per-head attention, its head split and
merge, its samplers), and jax has ``jax.nn.dot_product_attention``: a cell
that calls them gets the right outputs without the work. ``HIDDEN`` names
them in one place, file by file (a path under site-packages); the test
``tests/grading/test_hidden_answers.py`` fails when an upgrade moves one.

``write_stubs`` writes, for a grading, a copy of each file in which every
named function (and every method of a named class) raises
``NotImplementedError`` at once; every other line stays as it was, on the
same line number. ``sandbox.py`` binds each copy over its original (and an
empty file over the original's bytecode), so the hidden code can be neither
called nor read in the sandbox; ``worker.py`` imports the copies in both
modes (``--sandbox process`` hides nothing on disk). Only named definitions
go: ``tl.PositionalEncoding`` and ``tl.ShiftRight``, which a correct answer
uses, live in ``attention.py`` too. What Trax builds on a hidden definition
(its other attentions and models) fails with it; nothing a correct answer
or the probes use does.
"""

import ast
import functools
import glob
import importlib.util
import os

from summarizer.contract import recording
from summarizer.errors import SummarizerError
from summarizer.contract.recording import GRADED

# Path under site-packages -> {top-level function or class there: the exercise
# (1-10, the course's UNQ_C numbers) it answers}. Where Trax's name is the exercise's
# (the course named its exercises after Trax's layers), it is the probes' name of it.
HIDDEN = {
    'trax/layers/attention.py': {
        '_per_head_attention': 1,        # softmax(QK^T / sqrt(d) + mask) V
        recording.DOT_PRODUCT_ATTENTION: 1,  # the same, as a layer of (q, k, v, mask)
        'SplitIntoHeads': 2,             # (B, L, H * Dh) -> (B * H, L, Dh)
        '_causal_mask': 3,               # the causal mask
        'DotProductCausalAttention': 3,  # the causal mask, then Exercise 1
        'MergeHeads': 4,                 # (B * H, L, Dh) -> (B, L, H * Dh)
        'PureAttention': 5,              # split, attend, merge
        'AttentionQKV': 5,               # Dense q k v, PureAttention, Dense
        'Attention': 5,                  # the same on one input and a mask
        'ConfigurableAttention': 5,      # Exercise 5 with its layers handed in
        recording.CAUSAL_ATTENTION: 5,      # Exercise 5 itself
    },
    'trax/layers/research/efficient_attention.py': {
        'attend': 1,                     # masked attention (a causal mask_fn: Exercise 3)
    },
    'trax/layers/research/rel_attention.py': {
        recording.DOT_PRODUCT_ATTENTION: 1,  # Exercise 1 with zero position terms (tl's name)
    },
    'trax/models/transformer.py': {
        '_FeedForwardBlock': 6,          # the block's feed-forward layers
        '_DecoderBlock': 6,              # Exercise 6 itself
        'TransformerDecoder': 7,         # the model without ShiftRight and its head
        recording.TRANSFORMER_LM: 7,        # Exercise 7 but the last LogSoftmax
    },
    'trax/models/research/configurable_transformer.py': {
        '_FeedForward': 6,               # the block's feed-forward layers
        'FeedForwardWithOptions': 6,     # the same, with a layer norm
        recording.DECODER_BLOCK: 6,         # Exercise 6 with options
        'ConfigurableTransformerLM': 7,  # Exercise 7 with options
    },
    'trax/supervised/decoding.py': {
        'autoregressive_sample_stream': 10,  # greedy decoding at temperature 0 (eval_mode too)
        'autoregressive_sample': 10,         # the same, collected
        'beam_search': 10,                   # one beam: greedy decoding
    },
    'jax/_src/nn/functions.py': {
        'dot_product_attention': 1,          # jax.nn.dot_product_attention (and is_causal: 3)
        '_dot_product_attention_xla': 1,     # its implementation on CPU
        '_dot_product_attention_core': 1,    # its core, one head group
    },
}
STUBS_DIR = 'hidden'  # The stubs' folder in a grading's job folder.
EMPTY = os.path.join(STUBS_DIR, 'empty')  # An empty file there, bound over bytecode.


def module_name(path):
  """'trax/layers/attention.py' -> 'trax.layers.attention'."""
  return path[:-len('.py')].replace('/', '.')


def installed(path):
  """The installed file of a path under site-packages (found without importing it)."""
  spec = importlib.util.find_spec(path.split('/')[0])
  if spec is None or not spec.submodule_search_locations:
    raise SummarizerError(f'{path}: its library is not installed')
  root = os.path.dirname(list(spec.submodule_search_locations)[0])
  return os.path.realpath(os.path.join(root, *path.split('/')))


def message(name, path, exercise):
  """What a hidden function raises: whose answer it is, to which exercise."""
  library = {'trax': 'Trax', 'jax': 'jax'}.get(path.split('/')[0], path.split('/')[0])
  return (f"{name} is {library}'s own answer to Exercise {exercise} "
          f'({GRADED[exercise - 1]}): hidden while grading; write your own')


def hidden_functions(tree, names):
  """The named top-level definitions' functions (a class's: its methods), and the names found."""
  functions, found = [], set()
  kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
  for node in tree.body:
    if not isinstance(node, kinds) or node.name not in names:
      continue
    found.add(node.name)
    pending = [(node.name, node)]
    while pending:
      name, current = pending.pop()
      if isinstance(current, ast.ClassDef):
        pending += [(name, n) for n in current.body if isinstance(n, kinds)]
      else:
        functions.append((name, current))
  return functions, found


def stubbed_source(source, names, path):
  """The file's source with each named definition's body one ``raise`` (line numbers kept).

  ``names``: name -> exercise, as in ``HIDDEN``.

  A docstring stays (``help`` still tells what the function was); the body's
  other lines become blank lines.
  """
  tree = ast.parse(source)
  functions, found = hidden_functions(tree, names)
  missing = sorted(set(names) - found)
  if missing:
    raise SummarizerError(f'{path} no longer defines {", ".join(missing)}: the installed '
                          'library changed; update summarizer/grading/hidden_answers.py')
  lines = source.split('\n')  # As ast counts lines (splitlines also splits at form feeds).
  for name, function in sorted(functions, key=lambda f: -f[1].lineno):
    body = function.body
    docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                 and isinstance(body[0].value.value, str))
    first = body[1] if docstring and len(body) > 1 else body[0]
    start, end = first.lineno - 1, body[-1].end_lineno
    head = lines[start].encode('utf-8')[:first.col_offset].decode('utf-8')
    statement = f'raise NotImplementedError({message(name, path, names[name])!r})'
    lines[start:end] = [head + statement] + [''] * (end - start - 1)
  stubbed = '\n'.join(lines)
  compile(stubbed, path, 'exec')
  return stubbed


@functools.lru_cache(maxsize=None)
def _stub(path, stamp):
  del stamp  # The cache's key: a stub is written again when its original changes.
  with open(installed(path), encoding='utf-8') as f:
    return stubbed_source(f.read(), HIDDEN[path], path)


def write_stubs(directory):
  """Writes the stubs (and an empty file) under ``directory/hidden``; returns one dict a file.

  Returns:
    list of {'module': its module's name, 'stub': the stub's path relative to
    ``directory``, 'original': the installed file, 'bytecode': the
    original's compiled caches}.
  """
  written = []
  os.makedirs(os.path.join(directory, STUBS_DIR), exist_ok=True)
  with open(os.path.join(directory, EMPTY), 'wb'):
    pass
  for path in HIDDEN:
    original = installed(path)
    status = os.stat(original)
    stub = os.path.join(STUBS_DIR, *path.split('/'))
    os.makedirs(os.path.dirname(os.path.join(directory, stub)), exist_ok=True)
    with open(os.path.join(directory, stub), 'w', encoding='utf-8') as f:
      f.write(_stub(path, (status.st_mtime_ns, status.st_size)))
    stem = os.path.splitext(os.path.basename(original))[0]
    bytecode = sorted(glob.glob(os.path.join(os.path.dirname(original), '__pycache__',
                                             glob.escape(stem) + '.*.pyc')))
    written.append({'module': module_name(path), 'stub': stub, 'original': original,
                    'bytecode': bytecode})
  return written
