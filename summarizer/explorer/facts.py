"""Where a summary's names and numbers come from: traced through attention.

Every name and number of the summary (``corpus.entities``) is traced: the
article tokens its summary tokens attend to most, and whether its words
occur in the article ("from the article", with where) or not ("not in the
article": the model made it up).
"""

import dataclasses
import functools
import os
import re

import numpy as np

from summarizer.corpus import entities
from summarizer.text import encoder, vocab_path


# The view that traces facts: the last block's mean over heads, where
# copying shows most clearly (see ``agreement`` for the others).
TRACE_BLOCK = -1


@dataclasses.dataclass
class Fact:
  """One name or number of a summary and where it came from.

  Attributes:
    text: The entity, as ``entities.entities`` finds it ("Ulyar Motors").
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


def token_pieces(ids, vocab_file=None):
  """Returns the text of each token such that, joined, they are the decoded text.

  A subword's text depends on its neighbours (the decoder puts a space
  between two words), so each is the difference between decoding a few
  tokens with and without it.
  """
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


def spans_of(pieces):
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


def vocabulary_words(vocab_file=None):
  """The words a vocabulary holds whole, as one subword each, in lower case.

  A model's vocabulary is built from the text it read, so a word it keeps
  whole is a word that text used often ("Delays", "Scientists"); a name the
  model makes up by joining pieces ("Samorman") is not one.
  """
  return _vocabulary_words(vocab_path(vocab_file))


@functools.lru_cache(maxsize=8)
def _vocabulary_words(path):
  return frozenset(s[:-1].lower() for s in encoder(path).all_subtoken_strings
                   if s.endswith('_') and s[:-1].isalpha())


def trace_facts(summary_pieces, article_pieces, view, common_words=frozenset()):
  """Traces every name and number of a summary to the article.

  The entities are ``entities.entities`` of the summary, with the article as
  context (so "Ulyar Group" opening a sentence is a name; see
  ``_summary_entities``), less a sentence's lone first word that is in
  ``common_words`` and not in the article. The place an
  entity was read from is the article token its summary tokens' attention
  rows, summed, weigh most (the peak); the attended words are those of each
  token's own most attended article token near that peak.

  Args:
    summary_pieces: Text of each summary token (m).
    article_pieces: Text of each article token (n).
    view: Array (m, n), the attention that traces (one row per summary token).
    common_words: Lower-case words that are not names when they open a
      sentence ("Delays expected to cost ..."): ``vocabulary_words`` of the
      model's vocabulary.

  Returns:
    A list of ``Fact``, in the order the summary writes them (an entity
    written twice is traced twice).
  """
  summary, article = ''.join(summary_pieces), ''.join(article_pieces)
  summary_spans, article_spans = spans_of(summary_pieces), spans_of(article_pieces)
  found = []
  for entity in _summary_entities(summary, article, common_words):
    occurrences = _find(entity, article)
    in_article = bool(occurrences) or entities.occurs(entity, article)
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
              overlaps(article_spans[peak], occurrence) for occurrence in occurrences))))
  return [fact for _, fact in sorted(found, key=lambda pair: pair[0])]


def _summary_entities(summary, article, common_words=frozenset()):
  """The names and numbers of a summary, a sentence's first word counted if needed.

  ``entities.entities`` with the article as context counts a first word the
  article never writes in lower case ("Ulyar Group makes..."), but also a
  headline word such as "Striker": when the entity is not in the article
  and it is without that first word, the shorter one is the fact. A first
  word standing alone ("Delays expected to cost ...") that is not in the
  article is a name only if it is not one of ``common_words``.
  """
  found = set()
  without_context = entities.entities(summary)
  for entity in entities.entities(summary, context=article):
    rest = entity.split(' ', 1)[-1]
    if (rest != entity and not entities.occurs(entity, article)
        and entities.occurs(rest, article) and rest in without_context):
      entity = rest
    elif (rest == entity and entity not in without_context
          and entity.lower() in common_words and not entities.occurs(entity, article)):
      continue                       # A common word opening a sentence.
    found.add(entity)
  return found


def overlaps(span, other):
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
