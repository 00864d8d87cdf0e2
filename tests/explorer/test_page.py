"""The explorer's page: each row's largest weights, nothing fetched."""

import base64
import json
import re

import numpy as np

from summarizer.explorer import page as page_module

from .conftest import MADE_UP, blocks_and_heads


def test_the_page_holds_each_rows_largest_weights(court):
  page = court.to_html()
  data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                              page, re.S).group(1))
  labels = data['views']
  blocks, heads = blocks_and_heads()
  assert labels[0] == 'all blocks, mean of heads' and len(labels) == 1 + blocks * (1 + heads)
  assert labels[data['traceView']] == f'block {blocks - 1}, mean of heads'
  m = len(court.summary_pieces)
  rows, peaks = _unpack(data['rows'], len(labels), m)
  for v, (label, grid) in enumerate(page_module.views(court)):
    for i in range(m):
      positions, levels = rows[v * m + i]
      row = grid[i]
      assert 1 <= len(positions) <= page_module.TOP_K
      assert positions[0] == row.argmax() and levels[0] == 255
      np.testing.assert_allclose(peaks[v * m + i], row.max(), rtol=1e-6)
      np.testing.assert_allclose(levels / 255 * row.max(), row[positions], atol=row.max() / 500)
  assert data['article'] == court.article_pieces and data['summary'] == court.summary_pieces
  made_up = [f for f in data['facts'] if not f['inArticle']]
  assert [f['text'] for f in made_up] == [MADE_UP]


def test_the_page_fetches_nothing(court):
  page = court.to_html()
  assert 'Content-Security-Policy' in page and "default-src 'none'" in page
  assert not re.search(r'(?i)<(link|img|iframe)|\bsrc=|https?://|@import|url\(', page)
  assert '{{' not in page


def _unpack(rows, n_views, m):
  counts = np.frombuffer(base64.b64decode(rows['counts']), np.uint8)
  positions = np.frombuffer(base64.b64decode(rows['positions']), '<u2')
  levels = np.frombuffer(base64.b64decode(rows['levels']), np.uint8)
  peaks = np.frombuffer(base64.b64decode(rows['peaks']), '<f4')
  assert counts.size == n_views * m == peaks.size and positions.size == levels.size
  starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
  return [(positions[a:b], levels[a:b]) for a, b in zip(starts[:-1], starts[1:])], peaks
