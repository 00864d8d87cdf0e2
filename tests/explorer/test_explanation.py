"""summarizer.explain: attention values, traced facts, the page, the heatmap, the command."""

import os

import numpy as np
import pytest

import summarizer
from summarizer.config import EOS, SEP
from summarizer.errors import SummarizerError
from summarizer.explorer import explanation
from summarizer.explorer import facts
from summarizer.inference import article
from summarizer.inference import beam
from summarizer.inference import loaded_model

from .conftest import COURT, blocks_and_heads, read


# ------------------------------------------------------------ attention values


# ------------------------------------------------------------------- explain


@pytest.mark.slow
def test_explain_keeps_the_summary_and_its_tokens(court):
  text = read(COURT)
  assert court.summary == summarizer.summarize(text)
  loaded = loaded_model.load()
  ids, _ = article.article_ids(loaded, text, 64)
  assert court.article == article.clean_article(text)     # Read whole, not cut.
  assert len(court.article_pieces) == len(ids)
  assert ''.join(court.summary_pieces).strip() == court.summary
  n, m = len(ids), len(court.summary_pieces)
  assert court.attention.shape == (*blocks_and_heads(), m, n)
  assert court.article_ids == ids
  assert facts.token_pieces(court.summary_ids) == court.summary_pieces
  # The eval-mode pass over article + [EOS, SEP] + summary is the model that wrote
  # it: greedy search's summary is its argmax at every position.
  greedy = explanation.explain(text, search=beam.Search())
  joint = np.array([ids + [EOS, SEP] + greedy.summary_ids], np.int32)
  log_probs = np.asarray(loaded.model(joint))[0]               # (L, V)
  assert log_probs[n + 2:].argmax(-1).tolist() == greedy.summary_ids
  # On the article: at most what the query sees in all, and most of it.
  shares = court.attention.sum(-1)
  assert np.all(shares <= 1 + 1e-5) and shares.mean() > 0.3


def test_view_is_the_mean_of_blocks_and_heads(court):
  a = court.attention
  np.testing.assert_allclose(court.view(), a.mean((0, 1)), rtol=1e-6)
  np.testing.assert_allclose(court.view(-1), a[-1].mean(0), rtol=1e-6)
  np.testing.assert_allclose(court.view(1, 2), a[1, 2], rtol=1e-6)


def test_empty_article_is_a_summarizer_error():
  with pytest.raises(SummarizerError, match='empty'):
    explanation.explain('  \n')


# --------------------------------------------------------------- fact tracing


# ------------------------------------------------------------------ the page


def test_repr_html_is_the_page_in_a_frame(court):
  shown = court._repr_html_()                                # pylint: disable=protected-access
  assert shown.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in shown
  assert '&lt;script' in shown and '<script' not in shown


def test_plot_has_words_on_its_axes(court):
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  ax = court.plot()
  x_labels = [t.get_text() for t in ax.get_xticklabels()]
  y_labels = [t.get_text() for t in ax.get_yticklabels()]
  assert y_labels == [p.strip() or repr(p) for p in court.summary_pieces]
  assert len(x_labels) == explanation.PLOT_COLUMNS and {'Samo', 'Uld', 'man', 'Holm'} <= set(x_labels)
  grid = ax.images[0].get_array()
  assert grid.shape == (len(y_labels), len(x_labels))
  assert ax.get_title() == f'block {blocks_and_heads()[0] - 1}, mean of heads'


def test_save_writes_html_and_png_and_refuses_other_paths(court, tmp_path):
  court.save(tmp_path / 'page.html')
  assert (tmp_path / 'page.html').read_text(encoding='utf-8') == court.to_html()
  court.save(str(tmp_path / 'map.PNG'))
  assert (tmp_path / 'map.PNG').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
  with pytest.raises(SummarizerError, match=r'\.html \(the page\) or \.png'):
    court.save(tmp_path / 'page.pdf')
  (tmp_path / 'a_file').write_text('x')
  with pytest.raises(SummarizerError, match='cannot write'):
    court.save(tmp_path / 'a_file' / 'page.html')
  assert sorted(os.listdir(tmp_path)) == ['a_file', 'map.PNG', 'page.html']  # No leftovers.


# --------------------------------------------------------------- the command


def test_explain_is_exported_lazily():
  assert summarizer.explain is explanation.explain
  assert 'explain' in summarizer.__all__
