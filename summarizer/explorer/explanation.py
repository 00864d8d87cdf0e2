"""What the model read while it wrote a summary: ``explain`` and its ``Explanation``.

``explain(text)`` writes the summary with the package's fast decoder, then
runs the eval-mode model once over ``article + [EOS, SEP] + summary`` (the
same weights, the same tokens) and keeps, for every summary token, its
attention over the article's tokens in every block and head
(``attention_weights``). The model shifts its input right, so the query that
writes summary token i stands at position n + 2 + i of an article of n
tokens and sees article token j at position j + 1. Its names and numbers are
traced (``facts``).

An ``Explanation`` shows itself as a self-contained HTML page (``save``,
``to_html``, ``_repr_html_`` in Jupyter; ``page``) or a matplotlib heatmap
(``plot``).
"""

import dataclasses
import html
import os

import numpy as np

from summarizer import files
from summarizer.config import EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.explorer.attention_weights import attention_weights
from summarizer.explorer.facts import TRACE_BLOCK, token_pieces, trace_facts, vocabulary_words
from summarizer.explorer.page import render_page
from summarizer.inference import api
from summarizer.inference import beam
from summarizer.inference import search_options
from summarizer.inference import summaries
from summarizer.inference.loaded_model import load

# Suffixes ``save`` writes, and what each writes.
FORMATS = {'.html': 'the page', '.png': 'the heatmap'}
# Most article columns in ``plot``: the most attended ones, in article order.
PLOT_COLUMNS = 48


@dataclasses.dataclass(repr=False)
class Explanation:
  """A summary with the attention it was written with.

  Attributes:
    summary: The summary text (as ``summarize`` returns it).
    summary_ids: The summary's token ids (m, EOS excluded).
    article_ids: The ids of the article tokens the model read (n).
    summary_pieces: The text of each summary token; joined, the summary.
    article_pieces: The text of each article token the model read; joined,
      the article as it read it (cut to what fits).
    attention: Array (n_blocks, n_heads, m, n): summary token i's weight on
      article token j, in each block and head. A row sums to 1 over all the
      query sees; the rest went to [EOS, SEP], the start and the summary.
    facts: The summary's names and numbers, traced (``Fact``).
    article_tokens: Tokens of the whole article (more than n if it was cut).
    model_name: What wrote it (for the page's title).
    article_perplexity: The article's perplexity under the model.
    out_of_domain: Whether that is far above the model's validation
      articles' (None: the model has no calibration).
  """
  summary: str
  summary_ids: list
  article_ids: list
  summary_pieces: list
  article_pieces: list
  attention: np.ndarray
  facts: list
  article_tokens: int
  model_name: str = 'the shipped model'
  article_perplexity: float = None
  out_of_domain: bool = None

  def __repr__(self):
    blocks, heads, m, n = self.attention.shape
    made_up = [f.text for f in self.facts if not f.in_article]
    return (f'Explanation(summary={self.summary!r}, {m} summary tokens over {n} article '
            f'tokens, {blocks} blocks x {heads} heads, {len(self.facts)} names and numbers, '
            f'not in the article: {made_up})')

  @property
  def article(self):
    """The article text the model read."""
    return ''.join(self.article_pieces)

  def view(self, block=None, head=None):
    """Returns the (m, n) attention of one block and head, or their mean.

    Args:
      block: A block (from 0; negative from the end) or None for all.
      head: A head or None for the mean over heads.
    """
    weights = self.attention
    weights = weights if block is None else weights[[block]]
    weights = weights if head is None else weights[:, [head]]
    return weights.mean(axis=(0, 1))                      # (m, n)

  def to_html(self):
    """Returns the explorer page: one HTML file, no network access."""
    return render_page(self)

  def _repr_html_(self):
    """The page inline in Jupyter or Colab, in its own frame."""
    page = html.escape(self.to_html(), quote=True)
    return (f'<iframe srcdoc="{page}" sandbox="allow-scripts" '
            'style="width:100%;height:640px;border:1px solid #ccc"></iframe>')

  def plot(self, block=TRACE_BLOCK, head=None, ax=None, columns=PLOT_COLUMNS):
    """Draws the attention as a heatmap whose axes are words.

    Rows are the summary tokens; columns the ``columns`` article tokens that
    get the most attention (in article order), labelled with their text.
    The default view is the one that traces facts (the last block, mean of
    heads); ``block=None`` averages all blocks.

    Returns:
      The matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
    grid = self.view(block, head)                         # (m, n)
    shown = np.sort(np.argsort(-grid.max(axis=0, initial=0.0))[:columns])
    if ax is None:
      _, ax = plt.subplots(figsize=(max(6, 0.22 * len(shown) + 2),
                                    max(3, 0.2 * len(self.summary_pieces) + 1.5)))
    if grid.size:  # An empty summary (EOS first) leaves empty axes.
      ax.imshow(grid[:, shown], aspect='auto', cmap='viridis')
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([_label(self.article_pieces[j]) for j in shown],
                       rotation=90, fontsize=7)
    ax.set_yticks(range(len(self.summary_pieces)))
    ax.set_yticklabels([_label(p) for p in self.summary_pieces], fontsize=7)
    ax.set_xlabel(f'article (the {len(shown)} most attended of '
                  f'{len(self.article_pieces)} tokens, in order)')
    ax.set_ylabel('summary')
    ax.set_title(_view_name(block, head, self.attention.shape[0]))
    return ax

  def save(self, path, force=True):
    """Writes the page (.html) or the heatmap (.png) to ``path``, atomically.

    Args:
      path: Where to write, ending in .html or .png.
      force: Whether an existing file at ``path`` is replaced (as
        ``savefig`` does); the command passes its ``--force``.

    Raises:
      SummarizerError: for another suffix, a path that cannot be written,
        or an existing file without ``force``.
    """
    suffix = check_output_path(path, force)
    try:
      with files.replacing(path, force) as temporary, open(temporary, 'wb') as f:
        if suffix == '.html':
          f.write(self.to_html().encode('utf-8'))
        else:
          # A Figure of its own: no pyplot state, no window, any backend.
          from matplotlib.figure import Figure  # pylint: disable=g-import-not-at-top
          figure = Figure(figsize=(max(6, 0.22 * PLOT_COLUMNS + 2),
                                   max(3, 0.2 * len(self.summary_pieces) + 1.5)))
          self.plot(ax=figure.subplots())
          figure.tight_layout()
          figure.savefig(f, format='png', dpi=120)
    except OSError as e:
      raise SummarizerError(f'{path}: cannot write ({e.strerror})') from None


def _label(piece):
  """A token's text for an axis: visible even if it is white space."""
  return piece.strip() or repr(piece)


def _view_name(block, head, n_blocks):
  where = 'all blocks' if block is None else f'block {block % n_blocks}'
  return f'{where}, {"mean of heads" if head is None else f"head {head}"}'


def check_output_path(path, force=True):
  """Returns the suffix of a path ``save`` can write, or raises ``SummarizerError``.

  Args:
    path: The page or heatmap to write.
    force: Whether an existing file at ``path`` may be replaced.
  """
  suffix = os.path.splitext(str(path))[1].lower()
  if suffix not in FORMATS:
    raise SummarizerError(f'{path}: --explain writes .html (the page) or .png '
                          '(the heatmap); give a path ending in one of them')
  directory = os.path.dirname(files.absolute(path))
  if not os.path.isdir(directory):
    raise SummarizerError(f'{path}: cannot write, no folder {directory}')
  if not force and os.path.lexists(path):
    raise SummarizerError(files.exists_message(path))
  files.check_writable(path)  # Asked before the model's work, by writing: permissions can mislead.
  return suffix


def explain(text, model_dir=None, max_length=64, method='fast', temperature=0.0,
            top_k=None, seed=0, vocab_file=None, n_heads=None, on_cut='warn',
            search=None, on_clean='warn'):
  """Summarises an article and returns what the model attended to as it wrote.

  The summary comes from the decoder ``summarize`` uses (the same summary);
  its attention from one pass of the eval-mode model, with the same
  weights, over ``article + [EOS, SEP] + summary``.

  Args:
    text: The article.
    model_dir: A model directory; default: the shipped model.
    max_length: Most summary tokens.
    method, temperature, top_k, seed: As ``summarize_tokens`` takes them.
    vocab_file: A vocabulary to use instead of the model's own.
    n_heads: Attention heads of a checkpoint without ``config.json``.
    on_cut: Called with (kept, total) token counts if the article is cut;
      'warn' (default) raises an ``ArticleCutWarning``, as ``summarize`` does.
    search: A ``inference.beam.Search`` (beams and constraints); default:
      ``summarize``'s (beam search, or greedy search for the course's
      decoder or sampling).
    on_clean: As ``api.warn_cleaned`` takes it.

  Returns:
    An ``Explanation``.
  """
  summaries.check_article(text)
  search = search or beam.Search(*search_options.chosen(
      None, None, None, search_options.greedy_for(method, temperature)))
  loaded = load(model_dir, vocab_file, n_heads)
  run = summaries.summarize_tokens(
      text, loaded, max_length, method, temperature, top_k, seed,
      on_cut=api.warn_cut if on_cut == 'warn' else on_cut, search=search)
  api.warn_cleaned(run, stacklevel=3, on_clean=on_clean)
  details = run.details()
  kept = run.article_ids  # What the summary was written from.
  n, m = len(kept), len(run.ids)
  joint = np.array([kept + [EOS, SEP] + run.ids], np.int32)   # (1, n + 2 + m)
  if m:
    weights = attention_weights(loaded.model, joint, block=None,
                                rows=slice(n + 2, n + 2 + m))[0]  # (n_blocks, H, m, L)
  else:
    weights = np.zeros((loaded.config.n_layers, loaded.config.n_heads, 0, n + 2))
  attention = np.ascontiguousarray(weights[..., 1:n + 1], np.float32)  # (n_blocks, H, m, n)
  summary_pieces = token_pieces(run.ids, loaded.vocab_file)
  article_pieces = token_pieces(kept, loaded.vocab_file)
  trace_view = attention[TRACE_BLOCK].mean(axis=0)        # (m, n)
  return Explanation(
      summary=details['summary_text'], summary_ids=list(run.ids), article_ids=list(kept),
      summary_pieces=summary_pieces,
      article_pieces=article_pieces, attention=attention,
      facts=trace_facts(summary_pieces, article_pieces, trace_view,
                        vocabulary_words(loaded.vocab_file)),
      article_tokens=run.article_tokens,
      model_name=('the shipped model' if loaded.source.shipped
                  else os.path.basename(os.path.normpath(loaded.source.path))),
      article_perplexity=details['article_perplexity'], out_of_domain=details['out_of_domain'])

