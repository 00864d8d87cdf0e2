"""Scores of a summary: ROUGE, and the names and numbers it gets right.

Scores:

* rouge1, rouge2, rougeL: F1 of ``rouge_score`` with the Porter stemmer,
  averaged over articles. rougeL is computed on the texts with their line
  breaks turned into spaces (not rougeLsum, which splits at line breaks):
  the model writes one running text, and one rule for every system keeps
  them comparable.
* entity_precision: the share of the names and numbers in the summaries
  that occur in their articles, i.e. 1 minus the hallucination rate (after
  Nan et al. 2021, "Entity-level Factual Consistency of Abstractive Text
  Summarization").
* entity_recall: the share of the names and numbers in the reference
  highlights that the summaries contain.

Both entity scores are micro-averaged: the counts are pooled over all
articles before dividing, so a summary without entities adds nothing to
precision instead of counting as perfect or as zero. A score with nothing
to count (no entity in any summary, or in any reference) is None (JSON
null).

Entities are found by rules, not a tagger:

* Sentences are split by ``text.split_sentences``; each line of a text
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
lessons (``summarizer.lessons``) and scores the summaries.
"""

import collections
import functools
import re

from summarizer.text import NOT_NAMES, split_sentences

ROUGE_TYPES = ('rouge1', 'rouge2', 'rougeL')
METRICS = ROUGE_TYPES + ('entity_precision', 'entity_recall')

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


def entity_counts(summary, article, reference):
  """Counts what the entity scores of one summary are made of.

  Returns:
    A Counter: ``found`` (entities in the summary), ``supported`` (of those,
    the ones that occur in the article), ``wanted`` (entities in the
    reference) and ``recalled`` (of those, the ones the summary contains).
  """
  mine, theirs = entities(summary), entities(reference)
  return collections.Counter(
      found=len(mine),
      supported=sum(occurs(e, article) for e in mine),
      wanted=len(theirs),
      recalled=sum(occurs(e, summary) for e in theirs))


def entity_ratios(counts):
  """Turns (pooled) ``entity_counts`` into precision and recall, None if undefined."""
  return {
      'entity_precision': counts['supported'] / counts['found'] if counts['found'] else None,
      'entity_recall': counts['recalled'] / counts['wanted'] if counts['wanted'] else None,
  }


def entity_scores(summary, article, reference):
  """Returns entity precision and recall of one summary (None where undefined).

  Args:
    summary: The summary to check.
    article: The article it summarises (what precision checks against).
    reference: The reference highlights (what recall looks for).

  Returns:
    {'entity_precision': float or None, 'entity_recall': float or None}.
  """
  return entity_ratios(entity_counts(summary, article, reference))


@functools.lru_cache(maxsize=1)
def _rouge_scorer():
  # Imported here: building the stemmer costs time that --help should not pay.
  from rouge_score import rouge_scorer  # pylint: disable=g-import-not-at-top
  return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge_scores(prediction, reference):
  """Returns ROUGE-1, ROUGE-2 and ROUGE-L F1 of a prediction, line breaks as spaces.

  Returns:
    {'rouge1': float, 'rouge2': float, 'rougeL': float}, each in [0, 1].
  """
  scores = _rouge_scorer().score(reference.replace('\n', ' '),
                                 prediction.replace('\n', ' '))
  return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


def score_system(predictions, articles, references):
  """Scores one system: ROUGE averaged over articles, entities micro-averaged.

  Args:
    predictions: The system's summaries.
    articles: The articles, in the same order.
    references: The reference highlights, in the same order.

  Returns:
    A dict with the five ``METRICS``.
  """
  if not len(predictions) == len(articles) == len(references) > 0:
    raise ValueError('predictions, articles and references must be equally '
                     'many, and not none')
  rouge = collections.Counter()
  counts = collections.Counter()
  for prediction, article, reference in zip(predictions, articles, references):
    rouge.update(rouge_scores(prediction, reference))
    counts.update(entity_counts(prediction, article, reference))
  result = {name: rouge[name] / len(predictions) for name in ROUGE_TYPES}
  result.update(entity_ratios(counts))
  return result
