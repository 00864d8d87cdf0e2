"""The explorer's page: one self-contained HTML file, quick at 2,048 tokens.

The page holds, per summary token and per view (every block and head, each
block's mean over heads, and the mean of all), only the article tokens that
get a visible share of attention (at most ``TOP_K``, relative to the row's
largest, quantised to 0..255), so it stays small. Its template is
``page.html``.
"""

import base64
import html
import json
import os
import re

import numpy as np

from summarizer.explorer.facts import TRACE_BLOCK, overlaps, spans_of, word_number


# Article tokens kept per summary token and view: the most attended ones
# whose weight is at least 1/255 of the row's largest (all a page can shade).
TOP_K = 32


_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'page.html')


def views(explanation):
  """The page's views: [(label, (m, n) array)], the mean of all first."""
  n_blocks, n_heads = explanation.attention.shape[:2]
  found = [('all blocks, mean of heads', explanation.view())]
  for block in range(n_blocks):
    found.append((f'block {block}, mean of heads', explanation.view(block)))
    for head in range(n_heads):
      found.append((f'block {block}, head {head}', explanation.view(block, head)))
  return found


def pack_rows(grids, top_k=TOP_K):
  """Packs attention rows compactly for the page.

  For each row of each (m, n) grid: the article tokens with the ``top_k``
  largest weights among those at least 1/255 of the row's largest, each as
  its position (uint16) and its weight relative to the largest, 0..255
  (uint8).

  Returns:
    A dict of base64 strings: ``counts`` (uint8, one per row, grid by grid),
    ``positions`` (uint16 little-endian), ``levels`` (uint8), ``peaks``
    (float32: each row's largest weight) and ``shares`` (float32: each
    row's total weight on the article).
  """
  counts, positions, levels, peaks, shares = [], [], [], [], []
  for grid in grids:
    for row in grid:
      peak = float(row.max(initial=0.0))
      order = np.argsort(-row, kind='stable')[:top_k]
      relative = np.rint(255 * row[order] / peak) if peak > 0 else np.zeros(len(order))
      keep = order[relative >= 1]
      counts.append(len(keep))
      positions.extend(keep.tolist())
      levels.extend(relative[relative >= 1].astype(int).tolist())
      peaks.append(peak)
      shares.append(float(row.sum()))

  def b64(values, dtype):
    return base64.b64encode(np.asarray(values, dtype).tobytes()).decode('ascii')

  return {'counts': b64(counts, np.uint8), 'positions': b64(positions, '<u2'),
          'levels': b64(levels, np.uint8), 'peaks': b64(peaks, '<f4'),
          'shares': b64(shares, '<f4')}


def page_data(explanation):
  """Everything the page's script needs, as a JSON-ready dict."""
  labels, grids = zip(*views(explanation))
  article = explanation.article
  article_spans = spans_of(explanation.article_pieces)
  facts = []
  for fact in explanation.facts:
    where = None
    if fact.occurrences:  # The occurrence attended to, else the first.
      start = next((a for a, b in fact.occurrences
                    if fact.agrees and overlaps(article_spans[fact.peak], (a, b))),
                   fact.occurrences[0][0])
      where = word_number(article, start)
    facts.append({'text': fact.text, 'tokens': fact.summary_tokens,
                  'inArticle': fact.in_article, 'word': where,
                  'attended': fact.attended, 'attendedText': fact.attended_text,
                  'agrees': fact.agrees})
  return {
      'model': explanation.model_name,
      'summary': explanation.summary_pieces,
      'article': explanation.article_pieces,
      'articleTokens': explanation.article_tokens,
      'views': list(labels),
      'traceView': 1 + (TRACE_BLOCK % explanation.attention.shape[0]) * (
          1 + explanation.attention.shape[1]),
      'facts': facts,
      'rows': pack_rows(grids),
  }


def render_page(explanation):
  """Fills the page template with the explanation's data."""
  with open(_TEMPLATE, encoding='utf-8') as f:
    template = f.read()
  data = json.dumps(page_data(explanation), ensure_ascii=True, separators=(',', ':'))
  # Inside <script>, no '</script' or '<!--' may end or change the element:
  # '<' occurs only inside the JSON's strings, where \u003c means the same.
  data = data.replace('<', '\\u003c')
  fill = {'TITLE': html.escape(explanation.summary.split('\n')[0][:80]), 'DATA': data}
  return re.sub(r'\{\{(TITLE|DATA)\}\}', lambda match: fill[match.group(1)], template)
