"""Lessons: training examples reshaped to teach what a small model learns last.

Each is a stream function over (article, highlights) text pairs, placed
before tokenizing in ``data.batches``, with the share of examples it
changes as its lever (``--copy-fraction``, ``--short-fraction``,
``--long-fraction``):

* copy lessons: the summary is a sentence or two of the article, which
  rewards copying names and numbers;
* extract lessons: the summary is the article's sentences that hold its
  highlights' facts, which rewards finding the facts and copying them;
* short lessons: the article cut down to the sentences with its
  highlights' facts, so short texts are summarised, not continued;
* long lessons: two or three stories joined, so long texts do not turn the
  summary into word salad;
* repeat lessons (a run's first steps, ``--repeat-steps``): a story's names
  and numbers as a list, then the same list again, which only copying
  predicts.
"""

import itertools
import random

from summarizer.corpus import entities
from summarizer.corpus.sentences import sentences


def MixCopyExamples(fraction, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that turns some examples into copy lessons.

  With probability ``fraction`` an example's highlights are replaced by one
  or two sentences taken verbatim from its article. A small model learns
  the highlights' phrasing long before it learns to copy names and numbers
  from the article; these examples reward copying alone, which is the skill
  that gets a summary's facts right.
  """
  rng = random.Random(seed)

  def mix(stream):
    for article, highlights in stream:
      if fraction > 0 and rng.random() < fraction:
        spans = [s for s in sentences(article) if len(s) > 20]
        if spans:
          start = rng.randrange(len(spans))
          highlights = '\n'.join(spans[start:start + rng.randint(1, 2)])
      yield article, highlights
  return mix


def MixExtractExamples(fraction, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that turns some examples into extract lessons.

  With probability ``fraction`` an example's highlights are replaced by the
  sentences of its article that name something the highlights name (a
  name or a number), in the article's order, at most three. Where a copy
  lesson copies any sentence, these copy the ones a summary is made of: a
  small model learns where the facts are and how to copy them before it
  learns the highlights' wordings.
  """
  rng = random.Random(seed + 3)  # Not the draws of the other lessons.

  def mix(stream):
    for article, highlights in stream:
      if fraction > 0 and rng.random() < fraction:
        keys = entities.entities(highlights, context=article)
        facts = [s for s in sentences(article) if any(entities.occurs(k, s) for k in keys)]
        if facts:
          highlights = '\n'.join(facts[:3])
      yield article, highlights
  return mix


def MixShortExamples(fraction, keep_other=0.15, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that shortens some articles to their facts.

  With probability ``fraction`` an article keeps only the sentences that name
  something its highlights name (a name or a number) and, with probability
  ``keep_other`` each, some of the others; the highlights stay. Trained only
  on full-length stories, a model takes a short text for the start of an
  article and goes on writing one instead of a summary.
  """
  rng = random.Random(seed)

  def mix(stream):
    for article, highlights in stream:
      if fraction > 0 and rng.random() < fraction:
        # The highlights' names and numbers, as the entity scores define them.
        keys = entities.entities(highlights, context=article)
        spans = sentences(article)
        facts = [any(entities.occurs(k, s) for k in keys) for s in spans]
        if any(facts):
          article = ' '.join(s for s, fact in zip(spans, facts)
                             if fact or rng.random() < keep_other)
      yield article, highlights
  return mix


def join_stories(pairs):
  """Joins consecutive stories into one longer article, as a news round-up.

  The articles follow one another as paragraphs. The highlights cover every
  part: the first story's first two and the first of each later one, so a
  summary of a longer text still names what each part is about and stays
  short.

  Args:
    pairs: (article, highlights) pairs, two or more.

  Returns:
    (article, highlights) of the joined story.
  """
  articles = [article for article, _ in pairs]
  lines = [highlights.split('\n') for _, highlights in pairs]
  kept = lines[0][:2] + [part[0] for part in lines[1:]]
  return '\n\n'.join(articles), '\n'.join(kept)


def MixLongExamples(fraction, max_parts=3, seed=0):  # pylint: disable=invalid-name
  """Returns a stream function that joins some examples into long ones.

  With probability ``fraction`` an example is joined with the next one or
  two of the stream (``join_stories``). A model that has read only
  single stories of about 200 tokens writes word salad after that many
  tokens; these examples teach it articles two or three times as long.
  """
  rng = random.Random(seed + 2)  # Not the draws of the other lessons.

  def mix(stream):
    stream = iter(stream)
    for pair in stream:
      if fraction > 0 and rng.random() < fraction:
        parts = [pair] + list(itertools.islice(stream, rng.randint(1, max_parts - 1)))
        if len(parts) > 1:
          pair = join_stories(parts)
      yield pair
  return mix


# A repeat lesson's list, in characters: about 20 subwords, so that the
# list twice (with EOS, SEP and EOS) fits a row of 64, which the bucketing
# pads to. The copy forms after about as many steps whatever the lists'
# length (800 to 1,000 for the quick preset), so the shortest lists that
# still hold several names and numbers make those steps the cheapest: rows
# a quarter of a story's, steps (twice the rows) half a story step's tokens,
# where lists of 150 characters made rows of 128 and steps as large as a
# story's; on one shared core that took the lessons from more than the
# whole ten minutes to under five.
REPEAT_CHARS = 60


def repeat_lesson(articles, rng, max_chars=REPEAT_CHARS):
  """Returns a repeat lesson: (the articles' names and numbers listed, the same list).

  The list is in an order of ``rng``'s, so nothing but the first half tells
  the second, and stops before ``max_chars`` characters. None for articles
  with no name or number.

  Args:
    articles: One article or more (two give enough names to fill a list).
    rng: A ``random.Random``.
    max_chars: The longest list (its first item is kept whatever its length).
  """
  items = sorted(set().union(*(entities.entities(article) for article in articles)))
  if not items:
    return None
  rng.shuffle(items)
  kept = items[:1]
  for item in items[1:]:
    if len(', '.join(kept + [item])) + 1 > max_chars:
      break
    kept.append(item)
  listed = ', '.join(kept) + '.'
  return listed, listed


def RepeatLessons(seed=0, per_lesson=2):  # pylint: disable=invalid-name
  """Returns a stream function that turns the examples into repeat lessons.

  A model that has not learned to copy writes a summary's names and numbers
  from the highlights it has seen, not from the article, and on the news
  stories it takes thousands of steps to learn otherwise. Here copying is
  all there is to learn (the loss counts the second list only), and a
  small model learns it in a few hundred steps (an induction head: find
  where the current token stood before, write what followed it). Used for
  a run's first steps only (``--repeat-steps``).

  Args:
    seed: Seed of the lists' orders.
    per_lesson: Articles whose names and numbers make one lesson.
  """
  rng = random.Random(seed + 5)  # Not the draws of the other lessons.

  def lessons(stream):
    stream = iter(stream)
    while True:
      articles = [article for article, _ in itertools.islice(stream, per_lesson)]
      if not articles:
        return
      pair = repeat_lesson(articles, rng)
      if pair is not None:
        yield pair
  return lessons
