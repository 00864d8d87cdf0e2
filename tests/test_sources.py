"""Data sources on fixtures the tests write: .story files, archives, JSONL, CSV, TFDS."""

import hashlib
import io
import itertools
import json
import tarfile

import pytest

from summarizer import sources
from summarizer.errors import SummarizerError

STORY = """Rain closed the coast road on Monday

Officials said it would reopen soon.
"We are working on it," a spokesman said.

@highlight

Coast road closed by rain

@highlight

It should reopen soon!
"""


def test_story_parsing_follows_tfds():
  article, highlights = sources.parse_story(STORY)
  assert article == ('Rain closed the coast road on Monday. Officials said it would '
                     'reopen soon. "We are working on it," a spokesman said.')
  assert highlights == 'Coast road closed by rain.\nIt should reopen soon!'
  assert sources.parse_story('only @highlight lines\n@highlight\n') == ('only @highlight lines.', '')


def write_stories(folder, n, empty=()):
  folder.mkdir(parents=True, exist_ok=True)
  names = []
  for i in range(n):
    name = hashlib.sha1(f'http://news.example/{i}'.encode()).hexdigest()
    text = '' if i in empty else STORY.replace('Monday', f'day {i}')
    (folder / f'{name}.story').write_text(text, encoding='utf-8')
    names.append(name)
  return names


def test_story_folder_split_by_hash_is_deterministic_and_disjoint(tmp_path):
  write_stories(tmp_path / 'cnn' / 'stories', 60)
  splits = {s: list(sources.examples(str(tmp_path), s)) for s in sources.SPLITS}
  assert sum(len(v) for v in splits.values()) == 60
  assert splits == {s: list(sources.examples(str(tmp_path), s)) for s in sources.SPLITS}
  articles = [{a for a, _ in v} for v in splits.values()]
  assert not (articles[0] & articles[1] or articles[0] & articles[2] or articles[1] & articles[2])


def test_url_lists_choose_the_split_and_empty_stories_are_counted(tmp_path, capsys):
  write_stories(tmp_path / 'stories', 6, empty={4})
  (tmp_path / 'url_lists').mkdir()
  urls = [f'http://news.example/{i}' for i in range(6)]
  (tmp_path / 'url_lists' / 'all_train.txt').write_text('\n'.join(urls[:5]))
  (tmp_path / 'url_lists' / 'all_val.txt').write_text(urls[5])
  (tmp_path / 'url_lists' / 'all_test.txt').write_text('')
  train = list(sources.examples(str(tmp_path), 'train'))
  assert len(train) == 4 and 'day 4' not in ' '.join(a for a, _ in train)
  assert capsys.readouterr().err == (
      f"warning: {tmp_path}: skipped 1 of 5 examples in 'train' (1 empty)\n")
  (article, _), = sources.examples(str(tmp_path), 'val')
  assert 'day 5' in article


def test_story_archive(tmp_path):
  names = write_stories(tmp_path / 'src', 40)
  archive = tmp_path / 'cnn_stories.tgz'
  with tarfile.open(archive, 'w:gz') as tar:
    for name in names:
      tar.add(tmp_path / 'src' / f'{name}.story', arcname=f'cnn/stories/{name}.story')
  from_archive = list(sources.examples(str(archive), 'train'))
  from_folder = list(sources.examples(str(tmp_path / 'src'), 'train'))
  assert sorted(from_archive) == sorted(from_folder) and from_archive


def test_jsonl_with_bad_rows(tmp_path, capsys):
  path = tmp_path / 'train.jsonl'
  rows = [json.dumps({'article': 'A story.', 'highlights': 'A.', 'id': '1'}),
          '{not json',
          json.dumps({'article': ' ', 'highlights': 'B.', 'id': '2'}),
          json.dumps({'article': 'Another story.', 'highlights': 'C.', 'id': '3'})]
  path.write_bytes(('\n'.join(rows) + '\n').encode() + b'\xff\xfe broken\n')
  assert list(sources.examples(str(tmp_path), 'train')) == [
      ('A story.', 'A.'), ('Another story.', 'C.')]
  err = capsys.readouterr().err
  assert err.count('\n') == 1
  assert 'skipped 3 of 5' in err and '1 malformed JSON' in err and '1 empty' in err
  assert '1 not UTF-8' in err


@pytest.mark.parametrize('header', [['article', 'highlights', 'id'],
                                    ['id', 'article', 'highlights']])
def test_csv_in_both_column_orders(tmp_path, header):
  import csv
  buffer = io.StringIO()
  writer = csv.writer(buffer)
  writer.writerow(header)
  for i in range(30):
    row = {'article': f'Story {i}, with a comma.', 'highlights': f'Line {i}.\nMore.', 'id': str(i)}
    writer.writerow([row[c] for c in header])
  path = tmp_path / 'all.csv'
  path.write_text(buffer.getvalue())
  pairs = {s: list(sources.examples(str(path), s)) for s in sources.SPLITS}
  assert sum(map(len, pairs.values())) == 30
  assert ('Story 0, with a comma.', 'Line 0.\nMore.') in itertools.chain(*pairs.values())


def test_missing_column_is_an_error(tmp_path):
  path = tmp_path / 'train.csv'
  path.write_text('id,story,summary\n1,a,b\n')
  with pytest.raises(SummarizerError, match='no article or highlights column'):
    list(sources.examples(str(tmp_path), 'train'))


def test_tfds_through_mock_data(tmp_path):
  import tensorflow_datasets as tfds
  with tfds.testing.mock_data(num_examples=3):
    pairs = list(sources.examples('tfds:cnn_dailymail', 'validation', data_dir=str(tmp_path)))
    assert len(pairs) == 3 and all(isinstance(a, str) and isinstance(h, str) for a, h in pairs)
    assert len(list(sources.examples('tfds:cnn_dailymail:3.4.0', 'test',
                                     data_dir=str(tmp_path)))) == 3


def test_tfds_offline_names_the_cause_and_the_alternatives(tmp_path):
  with pytest.raises(SummarizerError, match='cannot be downloaded here.*news'):
    sources.examples('tfds:cnn_dailymail', 'train', data_dir=str(tmp_path))


def test_unknown_source_and_split():
  with pytest.raises(SummarizerError, match='unknown data source .*tfds:NAME'):
    sources.examples('nowhere/at/all', 'train')
  with pytest.raises(SummarizerError, match="unknown split 'dev2'"):
    sources.examples('news', 'dev2')
