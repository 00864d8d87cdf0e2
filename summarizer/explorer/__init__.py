"""The explorer: what the model read while it wrote a summary; attention, traced facts, a page.

``explain(text)`` writes the summary with the package's fast decoder, then
runs the eval-mode model once over ``article + [EOS, SEP] + summary`` (the
same weights, the same tokens) and keeps, for every summary token, its
attention over the article's tokens in every block and head
(``explorer.attention_weights``). The model shifts its input right, so the
query that writes summary token i stands at position n + 2 + i of an
article of n tokens and sees article token j at position j + 1.

Every name and number of the summary (``corpus.entities``) is traced: the
article tokens its summary tokens attend to most, and whether its words
occur in the article ("from the article", with where) or not ("not in the
article": the model made it up). ``agreement`` measures, over news test
stories, how often the attended place holds the very words the string match
finds.

An ``Explanation`` shows itself as a self-contained HTML page (``save``,
``to_html``, ``_repr_html_`` in Jupyter) or a matplotlib heatmap (``plot``).
The page holds, per summary token and per view (every block and head, each
block's mean over heads, and the mean of all), only the article tokens that
get a visible share of attention (at most ``TOP_K``, relative to the row's
largest, quantised to 0..255), so it stays small and quick at 2,048 tokens.

  python -m summarizer.explorer --agreement 200      # where names come from, measured
  python -m summarizer.explorer --measure page.html  # size, load time in Chromium
  python -m summarizer.explorer --picture data/samples/court.txt data/explorer.png --force

``summarizer.explain`` is ``explanation.explain``; the page is ``page``, the
traced facts ``facts``, the attention ``attention_weights``.
"""
