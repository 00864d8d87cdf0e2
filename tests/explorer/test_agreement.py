"""How often attention points where the words are, counted."""

from summarizer.explorer import agreement


def test_agreement_counts():
  result = agreement.agreement(limit=6, show_progress=False)
  assert result['stories'] == 6
  assert 0 <= result['agree'] <= result['in_article'] <= result['facts']
  assert result['share'] == result['agree'] / result['in_article'] > 0.8
  assert result['by_view']['block 2'] == result['share']      # The tracing view.
  assert result['by_view']['block 0'] < result['share']
