"""What the model read while it wrote a summary: attention, traced facts, a page.

``explain(text)`` writes the summary with the package's fast decoder, then
runs the eval-mode model once over ``article + [EOS, SEP] + summary`` (the
same weights, the same tokens) and keeps, for every summary token, its
attention over the article's tokens in every block and head
(``model.attention_weights``). The model shifts its input right, so the
query that writes summary token i stands at position n + 2 + i of an
article of n tokens and sees article token j at position j + 1.

Every name and number of the summary (``scoring.entities``) is traced: the
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
  python -m summarizer.explorer --picture data/samples/business.txt data/explorer.png
"""

import base64
import dataclasses
import html
import json
import os
import re
import sys
import tempfile

import numpy as np

from summarizer.errors import OneLineParser, SummarizerError, run_command

# Article tokens kept per summary token and view: the most attended ones
# whose weight is at least 1/255 of the row's largest (all a page can shade).
TOP_K = 32
# The view that traces facts: the last block's mean over heads, where
# copying shows most clearly (see ``agreement`` for the others).
TRACE_BLOCK = -1
# Suffixes ``save`` writes, and what each writes.
FORMATS = {'.html': 'the page', '.png': 'the heatmap'}
# Most article columns in ``plot``: the most attended ones, in article order.
PLOT_COLUMNS = 48

_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'explorer.html')


@dataclasses.dataclass
class Fact:
  """One name or number of a summary and where it came from.

  Attributes:
    text: The entity, as ``scoring.entities`` finds it ("Ulyar Motors").
    summary_tokens: Indices of the summary tokens that write it.
    in_article: Whether its words occur in the article (string match).
    occurrences: Where, as (start, end) characters of the article text.
    peak: The article token its summary tokens attend to most, together
      (their rows summed, in the tracing view); None for an empty article.
    attended: The article tokens its summary tokens each attend to most
      (for a fact from the article, those near the peak), in article order.
    attended_text: The article's words at those tokens.
    agrees: Whether the peak lies inside one of ``occurrences``: the place
      attended holds the words the string match finds.
  """
  text: str
  summary_tokens: list
  in_article: bool
  occurrences: list
  peak: int
  attended: list
  attended_text: str
  agrees: bool

  @property
  def status(self):
    """'from the article' or 'not in the article'."""
    return 'from the article' if self.in_article else 'not in the article'


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

  def save(self, path):
    """Writes the page (.html) or the heatmap (.png) to ``path``, atomically.

    Raises:
      SummarizerError: for another suffix or a path that cannot be written.
    """
    suffix = check_output_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    # Written beside and renamed: an existing file is never left half-written.
    try:
      handle, temporary = tempfile.mkstemp(suffix=suffix, dir=directory, prefix='.explain-')
    except OSError as e:
      raise SummarizerError(f'{path}: cannot write there ({e.strerror})') from None
    try:
      # mkstemp makes the file private; the page gets the usual mode.
      os.chmod(temporary, (os.stat(path).st_mode & 0o777) if os.path.exists(path)
               else 0o666 & ~_umask())
      with os.fdopen(handle, 'wb') as f:
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
      os.replace(temporary, path)
    except BaseException as e:
      if os.path.exists(temporary):
        os.remove(temporary)
      if isinstance(e, OSError):
        raise SummarizerError(f'{path}: cannot write ({e.strerror})') from None
      raise


def _umask():
  mask = os.umask(0)
  os.umask(mask)
  return mask


def _label(piece):
  """A token's text for an axis: visible even if it is white space."""
  return piece.strip() or repr(piece)


def _view_name(block, head, n_blocks):
  where = 'all blocks' if block is None else f'block {block % n_blocks}'
  return f'{where}, {"mean of heads" if head is None else f"head {head}"}'


def check_output_path(path):
  """Returns the suffix of a path ``save`` can write, or raises ``SummarizerError``."""
  suffix = os.path.splitext(str(path))[1].lower()
  if suffix not in FORMATS:
    raise SummarizerError(f'{path}: --explain writes .html (the page) or .png '
                          '(the heatmap); give a path ending in one of them')
  directory = os.path.dirname(os.path.abspath(path))
  if not os.path.isdir(directory):
    raise SummarizerError(f'{path}: cannot write, no folder {directory}')
  if os.path.isdir(path):
    raise SummarizerError(f'{path}: is a directory')
  if os.path.exists(path) and not os.access(path, os.W_OK):
    raise SummarizerError(f'{path}: cannot write (permission denied)')
  try:  # Asked before the model's work, by writing: permissions alone can mislead.
    handle, probe = tempfile.mkstemp(suffix=suffix, dir=directory, prefix='.explain-')
    os.close(handle)
    os.remove(probe)
  except OSError as e:
    raise SummarizerError(f'{path}: cannot write there ({e.strerror})') from None
  return suffix


def token_pieces(ids, vocab_file=None):
  """Returns the text of each token such that, joined, they are the decoded text.

  A subword's text depends on its neighbours (the decoder puts a space
  between two words), so each is the difference between decoding a few
  tokens with and without it.
  """
  from summarizer.text import encoder  # pylint: disable=g-import-not-at-top
  decode = encoder(vocab_file).decode
  ids = [int(i) for i in ids]
  pieces = []
  for i in range(len(ids)):
    start = max(0, i - 8)
    before, after = decode(ids[start:i]), decode(ids[start:i + 1])
    if not after.startswith(before):
      break
    pieces.append(after[len(before):])
  else:
    if ''.join(pieces) == decode(ids):
      return pieces
  # A character outside the vocabulary is escaped over several tokens
  # ("\\8217;" for ’): each token gets what its prefix adds to the part
  # of the text that is settled (a common prefix with the whole).
  text, pieces, settled = decode(ids), [], 0
  for i in range(len(ids)):
    now = len(os.path.commonprefix([decode(ids[:i + 1]), text]))
    now = max(now, settled) if i < len(ids) - 1 else len(text)
    pieces.append(text[settled:now])
    settled = now
  return pieces


def _spans(pieces):
  """(start, end) characters of each piece in their join, white space trimmed."""
  spans, position = [], 0
  for piece in pieces:
    stripped = piece.lstrip()
    start = position + len(piece) - len(stripped)
    spans.append((start, start + len(stripped.rstrip())))
    position += len(piece)
  return spans


def _find(entity, text):
  """(start, end) of every whole-word occurrence of ``entity`` in ``text``."""
  words = r'\s+'.join(re.escape(w) for w in entity.split())
  pattern = r'(?<!\w)(?<!\d[.,])' + words + r'(?![\w%])(?![.,]\d)'
  return [m.span() for m in re.finditer(pattern, text)]


def _tokens_in(spans, start, end):
  """Indices of the tokens whose text overlaps characters [start, end)."""
  return [i for i, (a, b) in enumerate(spans) if a < end and b > start and b > a]


def trace_facts(summary_pieces, article_pieces, view):
  """Traces every name and number of a summary to the article.

  The entities are ``scoring.entities`` of the summary, with the article as
  context (so "Ulyar Group" opening a sentence is a name; see
  ``_summary_entities``). The place an
  entity was read from is the article token its summary tokens' attention
  rows, summed, weigh most (the peak); the attended words are those of each
  token's own most attended article token near that peak.

  Args:
    summary_pieces: Text of each summary token (m).
    article_pieces: Text of each article token (n).
    view: Array (m, n), the attention that traces (one row per summary token).

  Returns:
    A list of ``Fact``, in the order the summary writes them (an entity
    written twice is traced twice).
  """
  from summarizer import scoring  # pylint: disable=g-import-not-at-top
  summary, article = ''.join(summary_pieces), ''.join(article_pieces)
  summary_spans, article_spans = _spans(summary_pieces), _spans(article_pieces)
  found = []
  for entity in _summary_entities(summary, article):
    occurrences = _find(entity, article)
    in_article = bool(occurrences) or scoring.occurs(entity, article)
    for start, end in _find(entity, summary):
      tokens = _tokens_in(summary_spans, start, end)
      peak, attended = None, []
      if tokens and view.shape[1]:
        peak = int(np.argmax(view[tokens].sum(axis=0)))
        # Copied words are read side by side: near the peak. What a made-up
        # one read may be anywhere.
        reach = len(tokens) + 2 if in_article else len(article_pieces)
        attended = sorted({j for j in (int(np.argmax(view[i])) for i in tokens)
                           if abs(j - peak) <= reach} | {peak})
      found.append((start, Fact(
          text=entity, summary_tokens=tokens, in_article=in_article,
          occurrences=occurrences, peak=peak, attended=attended,
          attended_text=_words_at(article, article_spans, attended),
          agrees=peak is not None and any(
              _overlaps(article_spans[peak], occurrence) for occurrence in occurrences))))
  return [fact for _, fact in sorted(found, key=lambda pair: pair[0])]


def _summary_entities(summary, article):
  """The names and numbers of a summary, a sentence's first word counted if needed.

  ``scoring.entities`` with the article as context counts a first word the
  article never writes in lower case ("Ulyar Group makes..."), but also a
  headline word such as "Striker": when the entity is not in the article
  and it is without that first word, the shorter one is the fact.
  """
  from summarizer import scoring  # pylint: disable=g-import-not-at-top
  found = set()
  for entity in scoring.entities(summary, context=article):
    rest = entity.split(' ', 1)[-1]
    if (rest != entity and not scoring.occurs(entity, article)
        and scoring.occurs(rest, article) and rest in scoring.entities(summary)):
      entity = rest
    found.add(entity)
  return found


def _overlaps(span, other):
  return span[0] < other[1] and span[1] > other[0]


def _words_at(article, spans, tokens):
  """The article's whole words around the given tokens ('...' between gaps)."""
  if not tokens:
    return ''
  parts, last_end = [], None
  for j in tokens:
    start, end = spans[j]
    while start > 0 and not article[start - 1].isspace():
      start -= 1
    while end < len(article) and not article[end].isspace():
      end += 1
    if last_end is not None and not article[last_end:start].strip():
      parts[-1] = (parts[-1][0], max(end, parts[-1][1]))
    else:
      parts.append((start, end))
    last_end = parts[-1][1]
  return ' ... '.join(article[a:b].strip('.,;:"\'()') for a, b in parts)


def word_number(text, position):
  """The 1-based number of the word at character ``position`` of ``text``."""
  return len(text[:position].split()) + (0 if text[position:position + 1].isspace() else 1)


def explain(text, model_dir=None, max_length=64, method='fast', temperature=0.0,
            top_k=None, seed=0, vocab_file=None, n_heads=None, on_cut='warn',
            search=None):
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
    search: A ``beam.Search`` (beams and constraints; default: greedy).

  Returns:
    An ``Explanation``.
  """
  from summarizer import decoding  # pylint: disable=g-import-not-at-top
  from summarizer.config import EOS, SEP  # pylint: disable=g-import-not-at-top
  from summarizer.model import attention_weights  # pylint: disable=g-import-not-at-top
  run = decoding.summarize_tokens(
      text, model_dir, max_length, method, temperature, top_k, seed,
      on_cut=decoding._warn_cut if on_cut == 'warn' else on_cut,  # pylint: disable=protected-access
      vocab_file=vocab_file, n_heads=n_heads, search=search)
  details = run.details()
  loaded = decoding.load(model_dir, vocab_file, n_heads)
  kept, _ = decoding.article_ids(loaded, text, max_length)
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
      facts=trace_facts(summary_pieces, article_pieces, trace_view),
      article_tokens=run.article_tokens,
      model_name=('the shipped model' if model_dir is None
                  else os.path.basename(os.path.normpath(model_dir))),
      article_perplexity=details['article_perplexity'], out_of_domain=details['out_of_domain'])


# ---------------------------------------------------------------- the page


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
  article_spans = _spans(explanation.article_pieces)
  facts = []
  for fact in explanation.facts:
    where = None
    if fact.occurrences:  # The occurrence attended to, else the first.
      start = next((a for a, b in fact.occurrences
                    if fact.agrees and _overlaps(article_spans[fact.peak], (a, b))),
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


# ------------------------------------------------------- where facts come from


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
  from summarizer import news  # pylint: disable=g-import-not-at-top
  from summarizer import progress  # pylint: disable=g-import-not-at-top
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


# Each summary token pointed at in turn, in the page: the mean time to shade.
_HOVER_EVERY_TOKEN = """
const spans = document.querySelectorAll('#summary span');
const start = performance.now();
spans.forEach(function (span) {
  span.dispatchEvent(new PointerEvent('pointerover', {bubbles: true}));
});
return spans.length ? (performance.now() - start) / spans.length : 0;
"""


def measure_page(path, loads=5):
  """Loads a page in headless Chromium (offline) and times it.

  Returns:
    A dict: ``bytes`` (file size), ``load_ms`` (median time to the load
    event), ``ready_ms`` (median time until the script has built the page),
    ``hover_ms`` (mean time to shade the article for one summary token),
    ``article_spans`` and ``summary_spans``.
  """
  from summarizer import browser  # pylint: disable=g-import-not-at-top
  load, ready, hover = [], [], []
  with browser.Chromium(offline=True) as chrome:
    for _ in range(loads):
      chrome.open(browser.file_url(path))
      load.append(chrome.run('return performance.getEntriesByType("navigation")[0]'
                             '.loadEventEnd;'))
      ready.append(chrome.run('return window.explorerReady;'))
      hover.append(chrome.run(_HOVER_EVERY_TOKEN))
    spans = chrome.run('return [document.querySelectorAll("#article span").length,'
                       ' document.querySelectorAll("#summary span").length];')
  return {'bytes': os.path.getsize(path), 'load_ms': float(np.median(load)),
          'ready_ms': float(np.median(ready)), 'hover_ms': float(np.mean(hover)),
          'article_spans': spans[0], 'summary_spans': spans[1]}


def picture(text, path, width=1280, height=740):
  """Writes a screenshot of the page for ``text``, its first made-up name pointed at.

  The page is opened from a file in headless Chromium with ``#token=K`` (its
  own way to open with token K pinned). K is a token of the first name or
  number not in the article (else of the first traced one): the first
  whose most attended article token is a piece of the name itself (a
  copied piece), else its last.
  """
  from summarizer import browser  # pylint: disable=g-import-not-at-top
  explanation = explain(text)
  facts = sorted(explanation.facts, key=lambda f: f.in_article)
  token = 0
  if facts:
    view, fact = explanation.view(TRACE_BLOCK), facts[0]
    copied = [i for i in fact.summary_tokens
              if explanation.article_pieces[int(np.argmax(view[i]))].strip() in fact.text]
    token = (copied or fact.summary_tokens[-1:])[0]
  token += 1  # The page counts from 1.
  with tempfile.TemporaryDirectory() as directory:
    page = os.path.join(directory, 'page.html')
    explanation.save(page)
    with browser.Chromium(width=width, height=height, offline=True) as chrome:
      chrome.open(browser.file_url(page) + f'#token={token}')
      chrome.screenshot(path)
  return explanation


def parse_args(argv=None):
  p = OneLineParser(prog='python -m summarizer.explorer',
                    description=__doc__.split('\n')[0])
  what = p.add_mutually_exclusive_group(required=True)
  what.add_argument('--agreement', type=int, metavar='N',
                    help='trace the facts of the first N news test stories and print '
                         'how often attention points where string matching finds them')
  what.add_argument('--measure', metavar='PAGE',
                    help="print a page's size and its load and hover times in "
                         'headless Chromium')
  what.add_argument('--picture', nargs=2, metavar=('ARTICLE', 'PNG'),
                    help='screenshot the page of an article in headless Chromium')
  p.add_argument('--model', default=None, help='a model directory (default: shipped)')
  args = p.parse_args(argv)
  if args.agreement is not None and args.agreement < 1:
    p.error('argument --agreement: must be at least 1')
  return args


def main(argv=None):
  args = parse_args(argv)

  def work():
    if args.measure:
      if not os.path.isfile(args.measure):
        raise SummarizerError(f'{args.measure}: no such file')
      r = measure_page(args.measure)
      print(f"{args.measure}: {r['bytes'] / 1024:.0f} KiB, {r['article_spans']} article and "
            f"{r['summary_spans']} summary tokens; loaded in {r['load_ms']:.0f} ms, "
            f"built by {r['ready_ms']:.0f} ms; shading for one token "
            f"{r['hover_ms']:.2f} ms (headless Chromium, median of 5 loads)")
      return 0
    if args.picture:
      from summarizer.__main__ import read_article  # pylint: disable=g-import-not-at-top
      article, png = args.picture
      if not png.lower().endswith('.png'):
        raise SummarizerError(f'{png}: --picture writes a .png')
      picture(read_article(article), png)
      print(f'wrote {png}', file=sys.stderr)
      return 0
    result = agreement(args.agreement, args.model)
    print(f"{result['stories']} stories, {result['facts']} names and numbers in the "
          f"summaries, {result['in_article']} found in their articles; attention "
          f"points at them for {result['agree']} ({_percent(result['share'])}, "
          'last block, mean of heads)')
    for label, share in result['by_view'].items():
      print(f'  {label}, mean of heads: {_percent(share)}')
    return 0

  return run_command(work, interrupted='stopped')


def _percent(share):
  return 'n/a' if share is None else f'{100 * share:.1f}%'


def run_explain(articles, args, out, err, warn=None):
  """The ``--explain PATH`` of ``python -m summarizer``: writes the page or plot.

  ``warn``, if given, is called with the ``Explanation`` to print the
  warnings the plain command prints (out of domain, undertrained).
  """
  from summarizer import beam  # pylint: disable=g-import-not-at-top
  if len(articles) != 1:
    raise SummarizerError('--explain takes one article')
  check_output_path(args.explain)

  def warn_cut(kept, total):
    print(f'warning: article cut to its first {kept} of {total} tokens '
          '(the most this model reads)', file=err)

  explanation = explain(articles[0][1], args.model, args.max_length, args.method,
                        args.temperature, args.top_k, args.seed, args.vocab,
                        args.n_heads, on_cut=warn_cut, search=beam.Search.from_args(args))
  explanation.save(args.explain)
  if warn is not None:
    warn(explanation)
  out.write(explanation.summary + '\n')
  made_up = [f.text for f in explanation.facts if not f.in_article]
  print(f'wrote {args.explain}' + (f' (not in the article: {", ".join(made_up)})'
                                   if made_up else ''), file=err)
  return 0


if __name__ == '__main__':
  sys.exit(main())
