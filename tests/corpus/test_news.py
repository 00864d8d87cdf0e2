"""The embedded news corpus: deterministic, varied, and fair to the test split."""

import collections
import os
import re
import subprocess
import sys

import pytest

from summarizer.config import DATA_DIR
from summarizer.corpus import news


def test_same_story_every_time_and_in_a_fresh_process():
  story = news.story('train', 123)
  assert story == news.story('train', 123)
  code = ('from summarizer.corpus import news; s = news.story("train", 123); '
          'print(repr(s.article + s.highlights))')
  fresh = subprocess.run([sys.executable, '-c', code], capture_output=True,
                         text=True, check=True).stdout.strip()
  assert fresh == repr(story.article + story.highlights)


def test_split_sizes_and_bounds():
  assert news.SPLITS == {'train': 20000, 'validation': 500, 'test': 500}
  assert len(list(news.stories('test'))) == 500
  with pytest.raises(ValueError, match='unknown split'):
    news.story('dev', 0)
  with pytest.raises(ValueError, match='0 to 499'):
    news.story('test', 500)


def test_shape_of_stories():
  sample = list(news.stories('train', 300))
  words = [len(s.article.split()) for s in sample]
  assert 120 <= min(words) and max(words) <= 400
  for story in sample:
    lines = story.highlights.split('\n')
    assert 2 <= len(lines) <= 4
    assert all(line.endswith('.') for line in lines)
  assert len({s.facts['topic'] for s in sample}) >= 8


def test_highlighted_facts_occur_in_the_article():
  for story in news.stories('validation', 200):
    for name in story.facts['entities']:
      if name in story.highlights:
        assert name in story.article
    for number in re.findall(r'\$?\d[\d,.]*(?: million)?%?', story.highlights):
      assert number.rstrip('.') in story.article, (number, story)


def test_test_names_never_occur_in_training():
  train = {n for s in news.stories('train', 3000) for n in s.facts['entities']}
  test = {n for s in news.stories('test') for n in s.facts['entities']}
  assert len(test) > 1000
  assert not train & test


def test_no_highlight_template_dominates():
  templates = collections.Counter()
  for story in news.stories('train', 500):
    for line in story.highlights.split('\n'):
      masked = line
      for name in story.facts['entities']:
        masked = masked.replace(name, 'NAME')
      templates[re.sub(r'\$?\d[\d,.]*(?: million)?%?', 'N', masked)] += 1
  total = sum(templates.values())
  assert len(templates) > 100
  assert templates.most_common(1)[0][1] / total < 0.05


def test_lead3_is_not_the_summary():
  overlaps = []
  for story in news.stories('validation', 100):
    lead = set(' '.join(story.article.split('. ')[:3]).lower().split())
    summary = set(story.highlights.lower().split())
    overlaps.append(len(lead & summary) / len(summary))
  assert sum(overlaps) / len(overlaps) < 0.6


def test_samples_are_written(tmp_path):
  indices = news.write_samples(tmp_path)
  for topic, index in indices.items():
    assert (tmp_path / f'{topic}.txt').read_text() == news.story('test', index).article + '\n'
  assert indices == {'weather': 4, 'sport': 1, 'business': 0, 'court': 142}
  assert news.story('test', 142).facts['topic'] == 'courts'
  shipped = os.path.join(DATA_DIR, 'samples')
  for name in indices:                                  # The shipped files are these.
    with open(os.path.join(shipped, f'{name}.txt'), encoding='utf-8') as f:
      assert f.read() == (tmp_path / f'{name}.txt').read_text()
