"""Data sources on fixtures the tests write: .story files, archives, JSONL, CSV, TFDS."""

import hashlib
import importlib
import io
import itertools
import json
import os
import re
import socket
import socketserver
import tarfile
import threading
import urllib.parse

import pytest

from summarizer import config
from summarizer.corpus import sources
from summarizer.errors import SummarizerError

from conftest import make_special, no_hang, sparse_file

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


def test_a_jsonl_row_without_highlights_is_skipped_not_the_file(tmp_path, capsys):
  rows = [{'article': 'First story.'}] + [
      {'article': f'Story {i}.', 'highlights': f'Line {i}.'} for i in range(3)]
  (tmp_path / 'train.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
  assert len(list(sources.examples(str(tmp_path), 'train'))) == 3
  (tmp_path / 'train.jsonl').write_text('{"story": "a", "summary": "b"}\n')
  with pytest.raises(SummarizerError, match='no article or highlights column'):
    list(sources.examples(str(tmp_path), 'train'))
  (tmp_path / 'train.jsonl').write_text('{"article": "a"}\n{"highlights": "b"}\n')
  with pytest.raises(SummarizerError, match='no row has both'):
    list(sources.examples(str(tmp_path), 'train'))


def train_story_name(start=0):
  """A .story name that the hash puts in the train split."""
  return next(f'{i:040x}' for i in itertools.count(start) if sources.hash_split(f'{i:040x}')
              == 'train')


@pytest.mark.parametrize('special', ['fifo', 'zero'])
def test_a_story_or_table_that_is_no_regular_file_is_refused_unopened(tmp_path, special):
  folder = tmp_path / 'stories'
  write_stories(folder, 3)
  story = folder / f'{train_story_name()}.story'
  table = tmp_path / f'train.{"jsonl" if special == "fifo" else "csv"}'
  for path, source in ((story, folder), (table, table)):
    kind = make_special(path, special)
    with no_hang(), pytest.raises(SummarizerError) as raised:
      list(sources.examples(str(source), 'train'))
    assert str(raised.value) == f'{path}: not a regular file ({kind})'


def test_a_story_over_the_bound_is_skipped_unread_and_counted(tmp_path, capsys):
  folder = tmp_path / 'stories'
  write_stories(folder, 20)
  sparse_file(folder / f'{train_story_name()}.story', config.MAX_ARTICLE_BYTES + 1)
  archive = tmp_path / 'cnn_stories.tgz'
  with tarfile.open(archive, 'w:gz') as tar:
    tar.add(folder, arcname='cnn/stories')
  from_folder = sorted(sources.examples(str(folder), 'train'))
  warned = [capsys.readouterr().err]
  assert sorted(sources.examples(str(archive), 'train')) == from_folder and from_folder
  warned.append(capsys.readouterr().err)
  assert warned == [f"warning: {source}: skipped 1 of {len(from_folder) + 1} examples in "
                    "'train' (1 over 10 MB)\n" for source in (folder, archive)]


def test_a_table_row_over_the_bound_is_skipped_and_counted(tmp_path, capsys):
  huge = 'x' * config.MAX_ARTICLE_BYTES
  (tmp_path / 'train.jsonl').write_text(''.join(json.dumps(row) + '\n' for row in [
      {'article': 'A story.', 'highlights': 'A.'}, {'article': huge, 'highlights': 'B.'},
      {'article': 'Another story.', 'highlights': 'C.'}]))
  (tmp_path / 'test.csv').write_text(f'article,highlights\nA story.,A.\n{huge},B.\n'
                                     'Another story.,C.\n')
  for split in ('train', 'test'):
    assert list(sources.examples(str(tmp_path), split)) == [('A story.', 'A.'),
                                                            ('Another story.', 'C.')]
    assert capsys.readouterr().err == (f"warning: {tmp_path}: skipped 1 of 3 examples in "
                                       f"'{split}' (1 over 10 MB)\n")


@pytest.mark.parametrize('name', ['train.jsonl', 'train.csv', 'story'])
def test_a_byte_order_mark_is_read_as_utf8(tmp_path, name):
  # As Excel and Notepad save UTF-8; the mark was the first column's name, or the
  # first row's ruin.
  if name == 'story':
    name = f'stories/{train_story_name()}.story'
    (tmp_path / 'stories').mkdir()
    text = 'A story\n\n@highlight\n\nA'
  elif name.endswith('.csv'):
    text = 'article,highlights\nA story.,A.\n'
  else:
    text = json.dumps({'article': 'A story.', 'highlights': 'A.'}) + '\n'
  (tmp_path / name).write_text(text, encoding='utf-8-sig')
  source = tmp_path / 'stories' if name.startswith('stories') else tmp_path
  assert list(sources.examples(str(source), 'train')) == [('A story.', 'A.')]


def test_tfds_through_mock_data(tmp_path):
  import tensorflow_datasets as tfds
  with tfds.testing.mock_data(num_examples=3):
    pairs = list(sources.examples('tfds:cnn_dailymail', 'validation', data_dir=str(tmp_path)))
    assert len(pairs) == 3 and all(isinstance(a, str) and isinstance(h, str) for a, h in pairs)
    assert len(list(sources.examples('tfds:cnn_dailymail:3.4.0', 'test',
                                     data_dir=str(tmp_path)))) == 3


# --- tfds: downloads, without ever touching the real network -----------------------

OFFLINE_WAYS = ('pass --data-dir with the dataset already prepared, or --data PATH to the '
                'CNN/DailyMail .story archives cnn_stories.tgz and dailymail_stories.tgz')


@pytest.fixture
def proxy(monkeypatch):
  """Returns a function that sends every request through one proxy URL."""
  for name in ('HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'):
    monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(name.lower(), raising=False)  # Lower case wins in requests.

  def use(url):
    monkeypatch.setenv('HTTPS_PROXY', url)
    monkeypatch.setenv('HTTP_PROXY', url)
  return use


@pytest.fixture
def prepare_calls(monkeypatch):
  """Records TFDS's download_and_prepare calls instead of making them."""
  import tensorflow_datasets as tfds
  calls = []
  monkeypatch.setattr(tfds.core.DatasetBuilder, 'download_and_prepare',
                      lambda self, **kwargs: calls.append(kwargs))
  return calls


@pytest.fixture
def connections(monkeypatch):
  """Records (and refuses) every name lookup and connection Python makes."""
  attempts = []

  def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError('the test forbids the network')
  monkeypatch.setattr(socket, 'getaddrinfo', refuse)
  monkeypatch.setattr(socket.socket, 'connect', refuse)
  monkeypatch.setattr(socket.socket, 'connect_ex', refuse)
  return attempts


def closed_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


@pytest.fixture
def refusing_proxy():
  """A local HTTP proxy that records each request line and answers 403."""
  request_lines = []

  class Handler(socketserver.StreamRequestHandler):
    def handle(self):
      request_lines.append(self.rfile.readline().decode('latin-1').strip())
      self.wfile.write(b'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n')

  server = socketserver.ThreadingTCPServer(('127.0.0.1', 0), Handler)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  yield f'http://127.0.0.1:{server.server_address[1]}', request_lines
  server.shutdown()
  server.server_close()


def test_tfds_no_download_refuses_without_network_or_writing(tmp_path, connections,
                                                             prepare_calls):
  data_dir = tmp_path / 'tfds'
  with pytest.raises(SummarizerError) as raised:
    sources.examples('tfds:cnn_dailymail', 'train', data_dir=str(data_dir), download=False)
  assert str(raised.value) == (f'tfds:cnn_dailymail: not prepared in {data_dir}, and '
                               f'downloading is off (--no-download); {OFFLINE_WAYS}')
  assert connections == [] and prepare_calls == []
  assert not data_dir.exists()


@pytest.mark.parametrize('command', ['evaluate', 'vocab'])
def test_no_download_flag(command, tmp_path, capsys, connections, prepare_calls):
  data_dir = tmp_path / 'tfds'
  argv = ['--data', 'tfds:cnn_dailymail', '--data-dir', str(data_dir), '--no-download']
  if command == 'vocab':
    argv += ['--out', str(tmp_path / 'cnn.subwords')]
  else:  # Not the default runs/eval, which an evaluation in the checkout may have left.
    argv += ['--output-dir', str(tmp_path / 'eval')]
  assert importlib.import_module(f'summarizer.{command}').main(argv) == 2
  assert capsys.readouterr().err == (f'error: tfds:cnn_dailymail: not prepared in {data_dir}, '
                                     f'and downloading is off (--no-download); {OFFLINE_WAYS}\n')
  assert connections == [] and prepare_calls == []
  assert os.listdir(tmp_path) == []


def test_tfds_offline_names_the_cause_and_the_alternatives(tmp_path, proxy, prepare_calls):
  proxy(f'http://127.0.0.1:{closed_port()}')  # No network, as far as requests can tell.
  data_dir = tmp_path / 'tfds'
  with pytest.raises(SummarizerError) as raised:
    sources.examples('tfds:cnn_dailymail', 'train', data_dir=str(data_dir))
  assert re.fullmatch(r'tfds:cnn_dailymail: no network \(proxy: [^\n]*refused\), so it '
                      r'cannot be downloaded; ' + re.escape(OFFLINE_WAYS), str(raised.value))
  assert prepare_calls == []  # TFDS never started (it would retry for minutes).
  assert not data_dir.exists()


def test_tfds_probe_goes_through_the_users_proxy(tmp_path, proxy, refusing_proxy,
                                                 prepare_calls):
  url, request_lines = refusing_proxy
  proxy(url)
  with pytest.raises(SummarizerError) as raised:
    sources.examples('tfds:cnn_dailymail', 'train', data_dir=str(tmp_path / 'tfds'))
  assert str(raised.value).startswith(
      'tfds:cnn_dailymail: no network (proxy: tunnel connection failed: 403 Forbidden), ')
  # One request, for the host of cnn_dailymail's first download.
  assert [line.split()[:2] for line in request_lines] == [['CONNECT', 'drive.google.com:443']]
  assert prepare_calls == []


def test_tfds_downloads_and_prepares_into_the_data_dir_then_reads(tmp_path, monkeypatch):
  import tensorflow_datasets as tfds
  # The network, replaced: TFDS's download step gives back cnn_dailymail's
  # files as TFDS would have downloaded and extracted them.
  downloaded = tmp_path / 'downloaded'
  write_stories(downloaded / 'cnn' / 'cnn' / 'stories', 6)
  (downloaded / 'dm' / 'dailymail' / 'stories').mkdir(parents=True)
  urls = [f'http://news.example/{i}' for i in range(6)]
  for name, part in (('train', urls[:4]), ('val', urls[4:5]), ('test', urls[5:])):
    (downloaded / f'all_{name}.txt').write_text('\n'.join(part))
  files = {'cnn_stories': 'cnn', 'dm_stories': 'dm', 'train_urls': 'all_train.txt',
           'val_urls': 'all_val.txt', 'test_urls': 'all_test.txt'}
  monkeypatch.setattr(tfds.download.DownloadManager, 'download_and_extract',
                      lambda self, url_dict: {k: str(downloaded / v) for k, v in files.items()})
  probed = []
  monkeypatch.setattr(sources, '_probe', probed.append)  # None: the network answered.
  calls = []
  real_download_and_prepare = tfds.core.DatasetBuilder.download_and_prepare

  def recording(self, **kwargs):
    calls.append(kwargs)
    return real_download_and_prepare(self, **kwargs)
  monkeypatch.setattr(tfds.core.DatasetBuilder, 'download_and_prepare', recording)
  data_dir = tmp_path / 'tfds'

  pairs = list(sources.examples('tfds:cnn_dailymail', 'validation', data_dir=str(data_dir)))
  assert pairs == [sources.parse_story(STORY.replace('Monday', 'day 4'))]
  assert calls == [{'download_dir': str(data_dir / 'download')}]
  assert [urllib.parse.urlsplit(url).hostname for url in probed] == ['drive.google.com']
  assert (data_dir / 'cnn_dailymail' / '3.4.0' / 'dataset_info.json').is_file()
  # Prepared now: read again without downloading, even where downloads are off.
  train = list(sources.examples('tfds:cnn_dailymail', 'train', data_dir=str(data_dir),
                                download=False))
  assert len(train) == 4 and len(calls) == 1


def test_unknown_source_and_split():
  with pytest.raises(SummarizerError, match='unknown data source .*tfds:NAME'):
    sources.examples('nowhere/at/all', 'train')
  with pytest.raises(SummarizerError, match="unknown split 'dev2'"):
    sources.examples('news', 'dev2')


def test_a_story_link_to_nothing_is_skipped_and_counted(tmp_path, capsys):
  folder = tmp_path / 'stories'
  write_stories(folder, 3)
  (folder / f'{train_story_name()}.story').symlink_to(tmp_path / 'gone.story')
  listed = [name for name in os.listdir(folder)
            if sources.hash_split(name[:-len('.story')]) == 'train']
  train = list(sources.examples(str(folder), 'train'))
  assert len(train) == len(listed) - 1
  assert capsys.readouterr().err == (
      f"warning: {folder}: skipped 1 of {len(listed)} examples in 'train' (1 unreadable)\n")


def test_an_archive_cut_short_gives_its_stories_before_the_cut_and_one_warning(tmp_path, capsys):
  names = write_stories(tmp_path / 'src', 60)
  whole = tmp_path / 'whole' / 'cnn_stories.tgz'
  whole.parent.mkdir()
  with tarfile.open(whole, 'w:gz') as tar:
    for name in names:
      tar.add(tmp_path / 'src' / f'{name}.story', arcname=f'cnn/stories/{name}.story')
  cut = tmp_path / 'cut' / 'cnn_stories.tgz'
  cut.parent.mkdir()
  data = whole.read_bytes()
  cut.write_bytes(data[:len(data) * 2 // 3])
  everything = list(sources.examples(str(whole), 'train'))
  before_cut = list(sources.examples(str(cut), 'train'))
  assert before_cut and before_cut == everything[:len(before_cut)] and len(before_cut) < len(everything)
  lines = capsys.readouterr().err.splitlines()
  assert len(lines) == 1 and lines[0].startswith(f'warning: {cut}: cut short after '), lines
  assert lines[0].endswith('the rest is skipped')
  cut.write_bytes(data[:20])  # Nothing readable at all: one error.
  with pytest.raises(SummarizerError, match='not a readable archive'):
    list(sources.examples(str(cut), 'train'))


def test_a_jsonl_row_nested_too_deep_is_skipped_and_counted_never_parsed(tmp_path, capsys):
  path = tmp_path / 'train.jsonl'
  good = json.dumps({'article': 'Rain fell on the town.', 'highlights': 'Rain fell.'})
  deep = '{"article": ' + '[' * 100_000 + ']' * 100_000 + ', "highlights": "x"}'
  path.write_text('\n'.join([good, deep, good]) + '\n')
  assert len(list(sources.examples(str(path), 'train'))) == 2
  assert capsys.readouterr().err == (
      f"warning: {path}: skipped 1 of 3 examples in 'train' (1 nested too deep)\n")
