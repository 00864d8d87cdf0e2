"""The names and numbers of a text: found by rules, not a tagger.

Entities are found by rules, not a tagger:

* Sentences are split by ``sentences.split_sentences``; each line of a text
  is one or more sentences.
* A name is a run of consecutive capitalised words ("Port Velmara"),
  possessive 's dropped. The first word of a sentence, or after an
  opening quote or a colon, is capitalised anyway, so it never counts:
  "Striker Kaev Darviski scored" gives "Kaev Darviski", "Officials said"
  gives nothing. "I" and titles are not names. Given a context (the
  article of highlights), a first word counts too if the context never
  writes it in lower case: "Zelvalon Athletic lose" then gives "Zelvalon
  Athletic" and "The agency" still nothing. The scores use no context.
* A number is digits with inner commas or points ("1,200", "4.7"), and a
  following %, ordinal ending or scale word ("12.5%", "21st", "4.7
  million"); "per cent" and "percent" are written "%". A currency sign is
  not part of it.
* An entity "occurs" in a text if it appears there as whole words (a
  number not inside a longer number), case-sensitively: the article's
  "Port Velmara" supports a summary's "Velmara", but "4" is not in "4.7".

The same definition of names and numbers picks the facts of the training
lessons (``summarizer.corpus.lessons``) and scores the summaries.
"""

import re

from summarizer.corpus.sentences import NOT_NAMES, split_sentences


_PER_CENT = re.compile(r'(\d)\s*(?:per\s?cent|percent)\b', re.IGNORECASE)


_TOKEN = re.compile(r"""
    (?P<number>(?<![^\W\d_])\d+(?:[.,]\d+)*(?:%|st\b|nd\b|rd\b|th\b)?
               (?:\s(?:thousand|million|billion|trillion)\b)?)
  | (?P<initials>(?:[A-Z]\.)+(?!\w))
  | (?P<word>[^\W\d_][\w'\u2019-]*)
  | (?P<opener>["\u201c\u2018'(\[](?=\S))
  | (?P<other>\S)
""", re.VERBOSE)


_POSSESSIVE = re.compile(r"(?:['\u2019]s|['\u2019])$")


def _canonical(text):
  """Writes "per cent" as % and collapses white space, for extraction and search."""
  return ' '.join(_PER_CENT.sub(r'\1%', text).split())


def _sentence_entities(sentence, lower_case_words=None):
  """Yields the names and numbers of one sentence.

  Args:
    sentence: The sentence.
    lower_case_words: Words a context writes in lower case; a first word
      not among them is a name (None: a first word never is).
  """
  run = []
  opens_sentence = True  # The next word stands first: capitalised anyway.
  for match in _TOKEN.finditer(sentence):
    kind, token = match.lastgroup, match.group()
    is_word = kind in ('word', 'initials')
    known_as_name = (not opens_sentence or (lower_case_words is not None
                                            and token.lower() not in lower_case_words))
    if is_word and token[0].isupper() and known_as_name and token not in NOT_NAMES:
      run.append(_POSSESSIVE.sub('', token))
      opens_sentence = False
      continue
    if run:
      yield ' '.join(run)
      run = []
    if kind == 'number':
      yield token
    if is_word or kind == 'number':
      opens_sentence = False
    elif kind == 'opener' or token == ':':
      opens_sentence = True
  if run:
    yield ' '.join(run)


def entities(text, context=None):
  """Returns the set of names and numbers in ``text`` (rules in the module docstring).

  Args:
    text: A summary, an article or highlights (one sentence a line is fine).
    context: A text that tells names from common words at the start of a
      sentence (the article of highlights), or None.

  Returns:
    A set of strings such as {'Port Velmara', '1,200', '12.5%'}.
  """
  lower_case_words = None if context is None else set(re.findall(r'[a-z]\w*', context))
  found = set()
  for sentence in split_sentences(text):
    found.update(_sentence_entities(_canonical(sentence), lower_case_words))
  return found


def occurs(entity, text):
  """Tells whether ``entity`` appears in ``text`` as whole words.

  A number must not be part of a longer one: '4' is not in '4.7' or '14',
  '60' is not in '60%'.
  """
  pattern = (r'(?<!\w)(?<!\d[.,])' + re.escape(entity) + r'(?![\w%])(?![.,]\d)')
  return re.search(pattern, _canonical(text)) is not None
