"""How often attention points where the words are, counted."""

import pytest

from summarizer.explorer import agreement

from .conftest import blocks_and_heads


@pytest.mark.slow
def test_agreement_counts():
  result = agreement.agreement(limit=6, show_progress=False)
  assert result['stories'] == 6
  assert 0 <= result['agree'] <= result['in_article'] <= result['facts']
  assert result['share'] == result['agree'] / result['in_article'] > 0.8
  last = blocks_and_heads()[0] - 1
  assert result['by_view'][f'block {last}'] == result['share']  # The tracing view.
  assert result['by_view']['block 0'] < result['share']
