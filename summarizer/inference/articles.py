"""An article as the model reads it: cleaned, tokenized and cut to fit."""

from summarizer.errors import SummarizerError
from summarizer.inference.reading import clean_article
from summarizer.text import tokenize


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

  Returns:
    (kept, total): the ids of the cleaned article cut to ``article_room``
    (EOS excluded), and the number of ids of the whole article.
  """
  ids = tokenize(clean_article(text), loaded.vocab_file)[:-1]
  return ids[:article_room(loaded, max_length)], len(ids)

