"""An article: read from a file, standard input or ``--text``; cleaned; as the model reads it.

Nothing here loads the model (or Trax): a bad file is reported at once, and
the article's ids come from the ``LoadedModel`` that reads them.
"""

import collections
import os
import sys
import unicodedata

from summarizer.config import MAX_ARTICLE_BYTES
from summarizer.errors import SummarizerError
from summarizer.files import read_at_most, read_file


def cut_message(kept, total):
  """The one line that says an article was cut to fit the model."""
  return (f'article cut to its first {kept} of {total} tokens '
          '(the most this model reads)')


# The normal form articles are read in (Unicode's UAX #15): compatibility forms
# (fullwidth letters, ligatures, no-break and other wide spaces) become the
# plain characters the vocabularies were built from; text already in it (the
# news corpus, the sample articles) is left exactly as it is.
NORMAL_FORM = 'NFKC'

# What a pasted page carries that no reader sees, by what the warning calls it:
# removed before the text is read. Default-ignorable and bidi controls (UAX #9,
# #44): zero-width space, joiners, word joiner, soft hyphen, byte-order marks,
# directional marks, embeddings, overrides and isolates, variation selectors, tags.
_INVISIBLE = {
    'zero-width character': '\u200b\u200c\u200d\u2060\u180e\u034f\u00ad',
    'byte-order mark': '\ufeff',
    'bidi control': ('\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e'
                     '\u2066\u2067\u2068\u2069'),
}
# Line and paragraph separators (U+2028, U+2029), the next-line control (U+0085), vertical tab
# and form feed: each a line break, as the text showed it.
_LINE_BREAKS = '\u2028\u2029\u0085\u000b\u000c'


def _kind(char):
  """What the warning calls a character the article is cleaned of (None: it is kept as it is)."""
  for kind, chars in _INVISIBLE.items():
    if char in chars:
      return kind
  if char in _LINE_BREAKS:
    return 'line or paragraph separator'
  category = unicodedata.category(char)
  if category == 'Cf' or 0xfe00 <= ord(char) <= 0xfe0f or 0xe0100 <= ord(char) <= 0xe01ef:
    return 'other format character'  # Invisible, as the named ones are.
  if category == 'Cc' and char not in '\n\t\r':
    return 'control character'
  if category == 'Zs' and char != ' ' and unicodedata.normalize(NORMAL_FORM, char) != ' ':
    return 'unusual space'  # Those NFKC leaves (the ogham space mark): a space.
  return None


def cleaned(text):
  """Returns the article as the model saw articles in training, and what was taken out.

  Line ends are Unix's and the ends are stripped (a final newline alone
  becomes a subword the model never saw before ``[EOS, SEP]``, enough to
  change the whole summary). Invisible characters (``_INVISIBLE``, other
  format characters, controls) are removed; line and paragraph separators
  become line breaks and unusual spaces spaces; then the text is put in
  ``NORMAL_FORM``.

  Returns:
    (text, counts): the cleaned article, and {what the warning calls a
    kind of character: how many the article held}, compatibility forms
    that the normal form changed among them.
  """
  counts = collections.Counter()
  out = []
  for char in text.replace('\r\n', '\n').replace('\r', '\n'):
    kind = _kind(char)
    if kind is None:
      out.append(char)
      if unicodedata.decomposition(char).startswith('<'):
        counts['compatibility form'] += 1
      continue
    counts[kind] += 1
    if kind == 'line or paragraph separator':
      out.append('\n')
    elif kind == 'unusual space':
      out.append(' ')
  text = unicodedata.normalize(NORMAL_FORM, ''.join(out)).strip()
  return text, dict(counts)


def clean_article(text):
  """Returns the article as the model reads it (``cleaned``'s text)."""
  return cleaned(text)[0]


def cleaning_message(counts):
  """The one warning line for what ``cleaned`` took out or changed (None: nothing)."""
  if not counts:
    return None
  parts = ', '.join(f'{n} {kind}{"s" if n > 1 else ""}'
                    for kind, n in sorted(counts.items(), key=lambda item: -item[1]))
  return (f'the article held {sum(counts.values())} characters no reader sees or that read '
          f'as others ({parts}); removed, or read as line breaks, spaces and their '
          f'{NORMAL_FORM} forms')


# What MAX_ARTICLE_BYTES bounds, for the error that names it.
_BOUND = 'an article may be'
_NO_ARTICLE = "no article: give a FILE, '-' for standard input, or --text"


def read_article(path=None, text=None, stdin=None):
  """Returns the article from ``--text``, a file, or standard input ('-').

  A file or standard input is read as UTF-8, with or without a byte-order
  mark (as Notepad saves it), and at most ``MAX_ARTICLE_BYTES``.

  Raises:
    SummarizerError: naming the problem (missing, a directory, not a regular
      file, too large, binary, not UTF-8, empty; standard input closed).
  """
  if text is not None and path is not None:
    raise SummarizerError('give a FILE or --text, not both')
  if text is not None:
    where = '--text'
  elif path is None or path == '-':
    where = 'standard input'
    text = _decoded(_standard_input(stdin, asked=path == '-'), where)
  else:
    where = path
    text = _decoded(_file(path), where)
  if not text.strip():
    raise SummarizerError(f'{where}: the article is empty')
  return text


def _standard_input(stdin, asked):
  """Reads standard input (``stdin``, or the process's), bytes or text; ``asked``: as '-'."""
  stream = stdin if stdin is not None else sys.stdin
  if stream is None:  # `<&-`: the process has no standard input at all.
    raise SummarizerError('standard input is closed: no article to read' if asked
                          else _NO_ARTICLE)
  if not asked and stream.isatty():
    raise SummarizerError(_NO_ARTICLE)
  return read_at_most(getattr(stream, 'buffer', stream), MAX_ARTICLE_BYTES,
                      'standard input', _BOUND)


def _file(path):
  """Reads the bytes of an article's file: a regular file, at most ``MAX_ARTICLE_BYTES``."""
  if not os.path.exists(path):
    raise SummarizerError(f'{path}: no such file')
  if os.path.isdir(path):
    raise SummarizerError(f'{path}: is a directory, not a text file')
  try:
    return read_file(path, MAX_ARTICLE_BYTES, _BOUND)
  except OSError as e:
    raise SummarizerError(f'{path}: cannot read ({e.strerror})') from None


def _wide_encoding(raw):
  """'UTF-16' or 'UTF-32' where bytes are text in one (by its byte-order mark, or UTF-16's
  zero bytes between ASCII letters); None otherwise."""
  if raw.startswith((b'\xff\xfe\x00\x00', b'\x00\x00\xfe\xff')):
    return 'UTF-32'
  if raw.startswith((b'\xff\xfe', b'\xfe\xff')):
    return 'UTF-16'
  sample = raw[:2000]
  for zeros, name in ((sample[1::2], 'UTF-16LE'), (sample[0::2], 'UTF-16BE')):
    if len(sample) >= 8 and zeros.count(0) == len(zeros) and sample.replace(b'\x00', b'').isascii():
      return name
  return None


def _decoded(raw, where):
  """Returns the article's text: bytes decoded as UTF-8; a leading byte-order mark dropped."""
  if isinstance(raw, str):  # A text stream (a test's, or one without a buffer).
    return raw.removeprefix('\ufeff')
  encoding = _wide_encoding(raw)
  if encoding:
    raise SummarizerError(f'{where}: {encoding} text; the summarizer reads UTF-8 (convert it: '
                          f'iconv -f {encoding} -t UTF-8)')
  if b'\x00' in raw:
    raise SummarizerError(f'{where}: binary data, not text')
  try:
    return raw.decode('utf-8-sig')
  except UnicodeDecodeError:
    raise SummarizerError(f'{where}: not UTF-8 text') from None


def article_room(loaded, max_length):
  """Returns how many article tokens a summary of ``max_length`` leaves room for.

  The context must hold article, EOS, SEP and summary; and past the longest
  article a model trained on, its summaries turn to word salad, so articles
  are cut there too.
  """
  room = loaded.config.max_len - max_length - 3
  if room < 1:
    raise SummarizerError(f'--max-length {max_length} leaves no room for the '
                          f'article in a context of {loaded.config.max_len}')
  return min(room, loaded.max_article_tokens or room)


def article_ids(loaded, text, max_length):
  """Returns the ids of an article that the model reads, and how many it has.

  Args:
    loaded: The ``LoadedModel`` that reads it.
    text: The article.
    max_length: The most summary tokens that will follow it.

  Returns:
    (kept, total): the ids of the cleaned article cut to ``article_room``
    (EOS excluded), and the number of ids of the whole article.
  """
  ids = loaded.tokenize(clean_article(text))[:-1]
  return ids[:article_room(loaded, max_length)], len(ids)
