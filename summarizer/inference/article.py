"""An article: read from a file, standard input or ``--text``; cleaned; as the model reads it.

Nothing here loads the model (or Trax): a bad file is reported at once, and
the article's ids come from the ``LoadedModel`` that reads them.
"""

import os
import sys

from summarizer.errors import SummarizerError


def cut_message(kept, total):
  """The one line that says an article was cut to fit the model."""
  return (f'article cut to its first {kept} of {total} tokens '
          '(the most this model reads)')


def clean_article(text):
  """Returns the article as the model saw articles in training.

  A text file ends in a newline and may have Windows line ends; the training
  articles have neither. Left in, a final newline alone becomes a subword the
  model never saw before ``[EOS, SEP]``, enough to change the whole summary.
  """
  return text.replace('\r\n', '\n').replace('\r', '\n').strip()


def read_article(path=None, text=None, stdin=None):
  """Returns the article from ``--text``, a file, or standard input ('-').

  Raises:
    SummarizerError: naming the problem (missing, a directory, binary, not
      UTF-8, empty).
  """
  if text is not None and path is not None:
    raise SummarizerError('give a FILE or --text, not both')
  if text is None:
    if path is None or path == '-':
      stream = stdin if stdin is not None else sys.stdin
      if path is None and stream.isatty():
        raise SummarizerError("no article: give a FILE, '-' for standard input, or --text")
      raw = stream.buffer.read() if hasattr(stream, 'buffer') else stream.read()
      where = 'standard input'
    else:
      if not os.path.exists(path):
        raise SummarizerError(f'{path}: no such file')
      if os.path.isdir(path):
        raise SummarizerError(f'{path}: is a directory, not a text file')
      try:
        with open(path, 'rb') as f:
          raw = f.read()
      except OSError as e:
        raise SummarizerError(f'{path}: cannot read ({e.strerror})') from None
      where = path
    if isinstance(raw, bytes):
      if b'\x00' in raw:
        raise SummarizerError(f'{where}: binary data, not text')
      try:
        raw = raw.decode('utf-8')
      except UnicodeDecodeError:
        raise SummarizerError(f'{where}: not UTF-8 text') from None
    text = raw
  else:
    where = '--text'
  if not text.strip():
    raise SummarizerError(f'{where}: the article is empty')
  return text


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
