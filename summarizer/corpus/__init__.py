"""Corpus: where the text pairs come from, and what is made of them.

  sources     data sources: news, tfds:NAME, .story folders and archives, JSONL/CSV
  news        the generated news world (the default corpus, offline)
  sentences   sentences, split two ways
  entities    the names and numbers of a text, by rules
  lessons     training lessons: copying, short texts, long texts
  streams     a source's batches: its pairs, the lessons, the course's pipeline
  subwords    a subword vocabulary built from a source (python -m summarizer.vocab)
"""
