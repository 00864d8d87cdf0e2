"""How often a traced fact's attended place is where its words are, measured."""

from summarizer import progress
from summarizer.corpus import news
from summarizer.explorer.explanation import explain
from summarizer.explorer.facts import trace_facts


def agreement(limit=200, model_dir=None, split='test', show_progress=True):
  """Measures how often a traced fact's attended place is where its words are.

  Over the first ``limit`` stories of the ``news`` split, every name and
  number of every summary that occurs in its article is traced; it agrees
  when the article tokens it attends to most lie inside an occurrence of its
  words (string match). The same is counted for every block's mean over
  heads and for the mean of all blocks, beside the tracing view.

  Returns:
    A dict: ``stories``, ``facts`` (names and numbers traced), ``in_article``
    (of those, found by string match), ``agree`` (of those, attended where
    the words are), ``share`` (agree / in_article) and ``by_view`` ({view
    label: share}).
  """
  counts = {'stories': 0, 'facts': 0, 'in_article': 0, 'agree': 0}
  by_view = {}
  stories = news.stories(split, limit)
  stories = progress.bar(stories, total=min(limit, news.SPLITS[split]),
                         desc='tracing facts', unit='article', disable=not show_progress)
  for story in stories:
    explanation = explain(story.article, model_dir)
    counts['stories'] += 1
    counts['facts'] += len(explanation.facts)
    traced = [f for f in explanation.facts if f.in_article and f.occurrences]
    counts['in_article'] += len(traced)
    counts['agree'] += sum(f.agrees for f in traced)
    n_blocks = explanation.attention.shape[0]
    candidates = [('all blocks', None)] + [(f'block {b}', b) for b in range(n_blocks)]
    for label, block in candidates:
      again = trace_facts(explanation.summary_pieces, explanation.article_pieces,
                          explanation.view(block))
      by_view.setdefault(label, 0)
      by_view[label] += sum(f.agrees for f in again if f.in_article and f.occurrences)
  total = counts['in_article']
  counts['share'] = counts['agree'] / total if total else None
  counts['by_view'] = {k: v / total if total else None for k, v in by_view.items()}
  return counts
