"""The names and numbers of a text, by rules."""

from summarizer.corpus import entities

REFERENCE = 'Tavin Orsell opens 3 bridges in Dunsworth.\nThey cost $4.7 million.'


def test_entities_are_names_and_numbers():
  found = entities.entities(
      'Officials in Port Velmara said 1,200 homes lost power on Friday. '
      "Mayor Tavin Orsell's office put the cost at $4.7 million, up 12.5% on "
      'last year, with 30 per cent of roads shut. "We thank Camor Athletic," '
      'I said. The 21st flood hit 4 towns.')
  # Sentence openers (Officials, Mayor, The) and the one after the quote
  # (We) are capitalised anyway; "I" is never a name.
  assert found == {'Port Velmara', '1,200', 'Friday', 'Tavin Orsell',
                   '4.7 million', '12.5%', '30%', 'Camor Athletic', '21st', '4'}


def test_entities_of_highlights_treat_each_line_as_a_sentence():
  assert entities.entities(REFERENCE) == {'Orsell', '3', 'Dunsworth', '4.7 million'}
  assert entities.entities('') == set()


def test_occurs_matches_whole_words_and_whole_numbers():
  text = 'Port Velmara lost 4.7 million, 60% and 14 boats.'
  assert entities.occurs('Velmara', text)
  assert entities.occurs('4.7 million', text)
  assert entities.occurs('60%', 'down 60 per cent')
  for entity in ('Velm', '4', '60', '1', '4.7 billion'):
    assert not entities.occurs(entity, text), entity
