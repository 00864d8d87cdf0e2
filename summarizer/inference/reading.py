"""Reading an article: from a file, standard input or ``--text``, cleaned.

Nothing here loads the model (or Trax): a bad file is reported at once.
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
