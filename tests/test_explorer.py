"""summarizer.explain: attention values, traced facts, the page, the heatmap, the command."""

import base64
import json
import os
import re

import numpy as np
import pytest

import summarizer
from summarizer import decoding, explorer, news
from summarizer._trax import trax
from summarizer.__main__ import main
from summarizer.config import EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM, attention_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUSINESS = os.path.join(ROOT, 'data', 'samples', 'business.txt')


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


@pytest.fixture(scope='module')
def business():
  """The shipped model on the business sample (it writes 'Ulyar Group' for 'Ulyar Motors')."""
  return explorer.explain(read(BUSINESS))


# ------------------------------------------------------------ attention values


def _walk(layer):
  yield layer
  for sublayer in layer.sublayers:
    yield from _walk(sublayer)


def _of_type(layer, name):
  return [l for l in _walk(layer) if type(l).__name__ == name]


def _layer_norm(x, layer):
  scale, bias = (np.asarray(w) for w in layer.weights)
  mean = x.mean(-1, keepdims=True)
  variance = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(variance + 1e-6) * scale + bias


def _dense(x, layer):
  w, b = (np.asarray(v) for v in layer.weights)
  return x @ w + b


def numpy_attention(model, tokens, n_heads):
  """Every block's attention (B, n_blocks, H, L, L), computed in NumPy from the weights."""
  layers = model.sublayers
  batch, length = tokens.shape
  shifted = np.pad(tokens, ((0, 0), (1, 0)))[:, :-1]          # ShiftRight
  x = np.asarray(layers[1].weights)[shifted]                  # Embedding (B, L, d)
  x = x + np.asarray(layers[3].weights).reshape(-1, x.shape[-1])[:length]  # positions
  blocks = []
  for attention_residual, feed_forward in zip(layers[4:-3:2], layers[5:-3:2]):
    norm, = _of_type(attention_residual, 'LayerNorm')
    dense_q, dense_k, dense_v, dense_out = _of_type(attention_residual, 'Dense')
    h = _layer_norm(x, norm)

    def heads(y):
      return y.reshape(batch, length, n_heads, -1).transpose(0, 2, 1, 3)  # (B, H, L, Dh)

    q, k, v = heads(_dense(h, dense_q)), heads(_dense(h, dense_k)), heads(_dense(h, dense_v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])  # (B, H, L, L)
    scores = np.where(np.tril(np.ones((length, length), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    blocks.append(weights)
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)  # (B, L, d)
    x = x + _dense(mixed, dense_out)
    norm, = _of_type(feed_forward, 'LayerNorm')
    dense_in, dense_back = _of_type(feed_forward, 'Dense')
    x = x + _dense(np.maximum(_dense(_layer_norm(x, norm), dense_in), 0), dense_back)
  return np.stack(blocks, axis=1)


def test_every_block_and_head_equals_a_numpy_computation():
  model = TransformerLM(vocab_size=50, d_model=16, d_ff=32, n_layers=3, n_heads=4,
                        max_len=128, mode='eval')
  tokens = np.random.default_rng(0).integers(2, 50, size=(2, 70)).astype(np.int32)
  model.init(trax.shapes.signature(tokens))
  expected = numpy_attention(model, tokens, n_heads=4)         # (2, 3, 4, 70, 70)
  every = attention_weights(model, tokens, block=None)
  assert every.shape == (2, 3, 4, 70, 70)
  np.testing.assert_allclose(every, expected, atol=2e-5)
  rows = attention_weights(model, tokens, block=None, rows=slice(60, 67))
  np.testing.assert_allclose(rows, expected[:, :, :, 60:67], atol=2e-5)
  np.testing.assert_allclose(attention_weights(model, tokens, block=-2, rows=[3, 9]),
                             expected[:, 1][:, :, [3, 9]], atol=2e-5)
  assert not np.allclose(expected[:, 0], expected[:, 1], atol=1e-3)  # Blocks differ.


def test_rows_sum_to_one_over_what_the_query_sees_in_the_shipped_model():
  loaded = decoding.load()
  ids, _ = decoding.article_ids(loaded, read(BUSINESS), 64)
  tokens = np.array([ids[:100] + [EOS, SEP] + ids[:20]], np.int32)  # (1, 122)
  weights = attention_weights(loaded.model, tokens, block=None, rows=slice(100, 122))[0]
  assert weights.shape == (3, 4, 22, 122)
  np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
  for r, position in enumerate(range(100, 122)):
    assert np.all(weights[:, :, r, position + 1:] == 0)       # Nothing from the future.
    assert np.all(weights[:, :, r, :position + 1] > 0)


# ------------------------------------------------------------------- explain


def test_explain_keeps_the_summary_and_its_tokens(business):
  text = read(BUSINESS)
  assert business.summary == summarizer.summarize(text)
  loaded = decoding.load()
  ids, _ = decoding.article_ids(loaded, text, 64)
  assert business.article == decoding.clean_article(text)     # Read whole, not cut.
  assert len(business.article_pieces) == len(ids)
  assert ''.join(business.summary_pieces).strip() == business.summary
  n, m = len(ids), len(business.summary_pieces)
  assert business.attention.shape == (3, 4, m, n)
  assert business.article_ids == ids
  assert explorer.token_pieces(business.summary_ids) == business.summary_pieces
  # The eval-mode pass over article + [EOS, SEP] + summary writes the same summary.
  joint = np.array([ids + [EOS, SEP] + business.summary_ids], np.int32)
  log_probs = np.asarray(loaded.model(joint))[0]               # (L, V)
  assert log_probs[n + 2:].argmax(-1).tolist() == business.summary_ids
  # On the article: at most what the query sees in all, and most of it.
  shares = business.attention.sum(-1)
  assert np.all(shares <= 1 + 1e-5) and shares.mean() > 0.3


def test_view_is_the_mean_of_blocks_and_heads(business):
  a = business.attention
  np.testing.assert_allclose(business.view(), a.mean((0, 1)), rtol=1e-6)
  np.testing.assert_allclose(business.view(-1), a[-1].mean(0), rtol=1e-6)
  np.testing.assert_allclose(business.view(1, 2), a[1, 2], rtol=1e-6)


def test_token_pieces_join_to_the_text():
  from summarizer.text import tokenize  # pylint: disable=g-import-not-at-top
  text = 'Port Velmara\u2019s 12.5% rise: "odd"  spacing\n\nand a new line.'
  pieces = explorer.token_pieces(tokenize(text)[:-1])
  assert ''.join(pieces) == text and len(pieces) > 10


def test_empty_article_is_a_summarizer_error():
  with pytest.raises(SummarizerError, match='empty'):
    explorer.explain('  \n')


# --------------------------------------------------------------- fact tracing


def test_trace_facts_on_a_hand_made_attention():
  article = ['Port', ' Vel', 'mara', ' won', ' 3', '-', '1', ' on', ' Sunday', '.']
  summary = ['Vel', 'mara', ' won', ' 4', '-', '1', ' at', ' Kel', 'ton', '.']
  view = np.full((10, 10), 0.01)
  for i, j in {0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 7: 1, 8: 8}.items():
    view[i, j] = 0.5                   # 'Vel' reads ' Vel', ' 4' reads ' 3', ...
  facts = explorer.trace_facts(summary, article, view)
  got = [(f.text, f.status, f.summary_tokens, f.attended, f.attended_text, f.agrees)
         for f in facts]
  assert got == [
      ('Velmara', 'from the article', [0, 1], [1, 2], 'Velmara', True),
      ('4', 'not in the article', [3], [4], '3-1', False),
      ('1', 'from the article', [5], [6], '3-1', True),
      ('Kelton', 'not in the article', [7, 8], [1, 8], 'Velmara ... Sunday', False),
  ]
  assert facts[0].occurrences == [(5, 12)] and facts[0].peak in (1, 2)


def test_the_made_up_name_is_marked_and_the_copied_ones_traced(business):
  facts = {f.text: f for f in business.facts}
  assert facts['Ulyar Group'].status == 'not in the article'
  assert 'Ulyar Motors' in read(BUSINESS) and not facts['Ulyar Group'].agrees
  for name in ('Riltao Eldarova', 'Lake Belkelford'):       # The story's own names.
    assert facts[name].status == 'from the article' and facts[name].agrees
    assert name in facts[name].attended_text


def test_known_names_of_test_stories_are_traced_to_where_they_stand():
  traced = agree = 0
  for index in range(8):
    story = news.story('test', index)
    explanation = explorer.explain(story.article)
    for fact in explanation.facts:
      if fact.text in story.facts['entities']:                 # A name the story made.
        assert fact.status == 'from the article'
        traced += 1
        if fact.agrees:
          agree += 1
          assert fact.text in fact.attended_text
          start, end = explorer._spans(explanation.article_pieces)[fact.peak]  # pylint: disable=protected-access
          assert any(a <= start and end <= b for a, b in fact.occurrences)
  assert traced >= 10 and agree >= 0.9 * traced, (traced, agree)


def test_agreement_counts():
  result = explorer.agreement(limit=6, show_progress=False)
  assert result['stories'] == 6
  assert 0 <= result['agree'] <= result['in_article'] <= result['facts']
  assert result['share'] == result['agree'] / result['in_article'] > 0.8
  assert result['by_view']['block 2'] == result['share']      # The tracing view.
  assert result['by_view']['block 0'] < result['share']


# ------------------------------------------------------------------ the page


def _unpack(rows, n_views, m):
  counts = np.frombuffer(base64.b64decode(rows['counts']), np.uint8)
  positions = np.frombuffer(base64.b64decode(rows['positions']), '<u2')
  levels = np.frombuffer(base64.b64decode(rows['levels']), np.uint8)
  peaks = np.frombuffer(base64.b64decode(rows['peaks']), '<f4')
  assert counts.size == n_views * m == peaks.size and positions.size == levels.size
  starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
  return [(positions[a:b], levels[a:b]) for a, b in zip(starts[:-1], starts[1:])], peaks


def test_the_page_holds_each_rows_largest_weights(business):
  page = business.to_html()
  data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                              page, re.S).group(1))
  labels = data['views']
  assert labels[0] == 'all blocks, mean of heads' and len(labels) == 1 + 3 * (1 + 4)
  assert labels[data['traceView']] == 'block 2, mean of heads'
  m = len(business.summary_pieces)
  rows, peaks = _unpack(data['rows'], len(labels), m)
  for v, (label, grid) in enumerate(explorer.views(business)):
    for i in range(m):
      positions, levels = rows[v * m + i]
      row = grid[i]
      assert 1 <= len(positions) <= explorer.TOP_K
      assert positions[0] == row.argmax() and levels[0] == 255
      np.testing.assert_allclose(peaks[v * m + i], row.max(), rtol=1e-6)
      np.testing.assert_allclose(levels / 255 * row.max(), row[positions], atol=row.max() / 500)
  assert data['article'] == business.article_pieces and data['summary'] == business.summary_pieces
  made_up = [f for f in data['facts'] if not f['inArticle']]
  assert [f['text'] for f in made_up] == ['Ulyar Group']


def test_the_page_fetches_nothing(business):
  page = business.to_html()
  assert 'Content-Security-Policy' in page and "default-src 'none'" in page
  assert not re.search(r'(?i)<(link|img|iframe)|\bsrc=|https?://|@import|url\(', page)
  assert '{{' not in page


def test_repr_html_is_the_page_in_a_frame(business):
  shown = business._repr_html_()                                # pylint: disable=protected-access
  assert shown.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in shown
  assert '&lt;script' in shown and '<script' not in shown


def test_plot_has_words_on_its_axes(business):
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  ax = business.plot()
  x_labels = [t.get_text() for t in ax.get_xticklabels()]
  y_labels = [t.get_text() for t in ax.get_yticklabels()]
  assert y_labels == [p.strip() or repr(p) for p in business.summary_pieces]
  assert len(x_labels) == explorer.PLOT_COLUMNS and {'yar', 'Lake', 'Bel', 'kel'} <= set(x_labels)
  grid = ax.images[0].get_array()
  assert grid.shape == (len(y_labels), len(x_labels))
  assert ax.get_title() == 'block 2, mean of heads'


def test_save_writes_html_and_png_and_refuses_other_paths(business, tmp_path):
  business.save(tmp_path / 'page.html')
  assert (tmp_path / 'page.html').read_text(encoding='utf-8') == business.to_html()
  business.save(str(tmp_path / 'map.PNG'))
  assert (tmp_path / 'map.PNG').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
  with pytest.raises(SummarizerError, match=r'\.html \(the page\) or \.png'):
    business.save(tmp_path / 'page.pdf')
  (tmp_path / 'a_file').write_text('x')
  with pytest.raises(SummarizerError, match='cannot write'):
    business.save(tmp_path / 'a_file' / 'page.html')
  assert sorted(os.listdir(tmp_path)) == ['a_file', 'map.PNG', 'page.html']  # No leftovers.


# --------------------------------------------------------------- the command


def run_main(capsys, *argv):
  try:
    status = main(list(argv))
  except SystemExit as e:                                      # argparse's errors.
    status = e.code
  captured = capsys.readouterr()
  return status, captured.out, captured.err


def test_explain_option_writes_the_page(capsys, tmp_path):
  status, out, err = run_main(capsys, BUSINESS, '--explain', str(tmp_path / 'b.html'))
  assert status == 0
  assert out.strip() == summarizer.summarize(read(BUSINESS))
  assert err == f'wrote {tmp_path / "b.html"} (not in the article: Ulyar Group)\n'
  page = (tmp_path / 'b.html').read_text(encoding='utf-8')
  assert '<title>What the model read: Ulyar Group makes a profit of $67.9 million.</title>' in page


@pytest.mark.parametrize('argv, message', [
    (['--text', ' ', '--explain', 'x.html'], 'error: --text: the article is empty'),
    ([BUSINESS, '--explain', 'x.txt'],
     'error: argument --explain: x.txt ends in neither .html (the page) nor .png (the heatmap)'),
    ([BUSINESS, BUSINESS, '--explain', 'x.html'], 'error: --explain takes one article'),
    ([BUSINESS, '--explain', 'x.html', '--json'], 'error: --explain prints the summary itself'),
    ([BUSINESS, '--explain', 'a_file/x.html'], 'error: a_file/x.html: cannot write, no folder'),
])
def test_bad_explain_input_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message):
  monkeypatch.chdir(tmp_path)
  (tmp_path / 'a_file').write_text('x')
  status, out, err = run_main(capsys, *argv)
  assert status == 2 and out == ''
  assert err.startswith(message) and err.count('\n') == 1, err
  assert sorted(os.listdir(tmp_path)) == ['a_file']


@pytest.mark.skipif(hasattr(os, 'geteuid') and os.geteuid() == 0,
                    reason='root writes through permissions')
def test_unwritable_folder_is_one_line(capsys, tmp_path):
  locked = tmp_path / 'locked'
  locked.mkdir(mode=0o500)
  status, _, err = run_main(capsys, BUSINESS, '--explain', str(locked / 'x.html'))
  assert status == 2 and err.startswith(f'error: {locked / "x.html"}: cannot write')


def test_explain_is_exported_lazily():
  assert summarizer.explain is explorer.explain
  assert 'explain' in summarizer.__all__


def test_explain_prints_the_warnings_of_the_plain_command(random_model_dir, tmp_path, capsys):
  import shutil  # pylint: disable=g-import-not-at-top
  from summarizer import __main__ as summarize_command  # pylint: disable=g-import-not-at-top
  from summarizer.config import CALIBRATION_KEY, update_config  # pylint: disable=g-import-not-at-top
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  # Calibrated so that any article is out of its domain.
  update_config(str(model_dir), **{CALIBRATION_KEY: {
      'split': 'validation', 'n': 1, 'p50': 1.0, 'max': 1.0, 'threshold': 1.0}})
  article = ['--text', 'Heavy rain closed roads in Paris on Monday.', '--model', str(model_dir),
             '--max-length', '4']

  def warnings(argv):
    assert summarize_command.main(argv) == 0
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith('warning:')]

  plain = warnings(article)
  assert any('unlike anything it was trained on' in line for line in plain)
  assert warnings(article + ['--explain', str(tmp_path / 'page.html')]) == plain
