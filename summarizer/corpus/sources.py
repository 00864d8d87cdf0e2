"""Data sources: where (article, highlights) pairs come from.

A source is one string, the ``--data`` flag of every command:

  news                        the embedded generated corpus (default, offline)
  tfds:cnn_dailymail[:3.4.0]  TensorFlow Datasets in --data-dir, downloaded
                              and prepared there by TFDS where missing
  PATH                        .story files (a folder, searched recursively) or
                              the cnn_stories.tgz / dailymail_stories.tgz
                              archives; or .jsonl / .csv files with 'article'
                              and 'highlights' columns (one file, or a folder
                              with train/validation/test files)

Highlights are sentences joined with newlines, as TFDS gives them. Bad rows
(empty, undecodable, malformed, or over ``MAX_ARTICLE_BYTES``: a .story
file, a JSONL line or a CSV row) are skipped and counted, with one warning
per pass over a split. A file that is not a regular file (a FIFO, a device,
a link to one) is refused before it is opened. Files are read as UTF-8,
with or without a byte-order mark (as Excel and Notepad save it).
"""

import collections
import csv
import functools
import hashlib
import itertools
import json
import os
import re
import sys
import tarfile
import threading
import zlib

from summarizer.config import MAX_ARTICLE_BYTES, MAX_URL_LIST_BYTES
from summarizer.errors import SummarizerError
from summarizer.files import MAX_JSON_DEPTH, amount, json_depth, read_file, regular_file

SPLITS = ('train', 'validation', 'test')
_SPLIT_ALIASES = {'val': 'validation', 'eval': 'validation', 'dev': 'validation'}
ACCEPTED = ("news, tfds:NAME[:VERSION] (e.g. tfds:cnn_dailymail), a folder of "
            ".story files or cnn/dailymail_stories.tgz archives, or .jsonl/.csv "
            "files with article and highlights columns")
# Lines that end like this keep their ending; others get a full stop (TFDS's rule).
END_TOKENS = ('.', '!', '?', '...', "'", '`', '"', '\u2019', '\u201d', ')')
# Without published url lists, files are split by a hash: 90% / 5% / 5%.
_HASH_SPLITS = (('train', 90), ('validation', 5), ('test', 5))
_URL_LISTS = {'train': 'all_train.txt', 'validation': 'all_val.txt', 'test': 'all_test.txt'}
_SPLIT_FILE_NAMES = {'train': ('train',), 'validation': ('validation', 'val', 'valid', 'dev'),
                     'test': ('test',)}
# Why an example over MAX_ARTICLE_BYTES is skipped, as the warning counts it.
_TOO_LARGE = f'over {amount(MAX_ARTICLE_BYTES)}'


def canonical_split(split):
  """Returns 'train', 'validation' or 'test' for a split name or alias."""
  split = _SPLIT_ALIASES.get(split, split)
  if split not in SPLITS:
    raise SummarizerError(f'unknown split {split!r}; choose one of: ' + ', '.join(SPLITS))
  return split


def hash_split(key):
  """Assigns a string to a split by a stable hash (90/5/5)."""
  bucket = int(hashlib.sha1(key.encode('utf-8')).hexdigest()[:8], 16) % 100
  for split, share in _HASH_SPLITS:
    if bucket < share:
      return split
    bucket -= share
  return 'test'


class _Skips:
  """Counts skipped examples by reason and warns once per pass."""

  def __init__(self, source, split):
    self.source, self.split = source, split
    self.reasons = collections.Counter()
    self.kept = 0

  def check(self, article, highlights):
    """Returns the pair if both texts are non-empty, else counts it."""
    if not isinstance(article, str) or not isinstance(highlights, str):
      self.reasons['missing field'] += 1
    elif not article.strip() or not highlights.strip():
      self.reasons['empty'] += 1
    else:
      self.kept += 1
      return article, highlights
    return None

  def report(self):
    skipped = sum(self.reasons.values())
    if skipped:
      why = ', '.join(f'{n} {reason}' for reason, n in self.reasons.most_common())
      print(f'warning: {self.source}: skipped {skipped} of {skipped + self.kept} '
            f'examples in {self.split!r} ({why})', file=sys.stderr)


# --- .story files -------------------------------------------------------


def parse_story(text):
  """Splits a CNN/DailyMail ``.story`` text into (article, highlights).

  As TFDS does: a line without a final punctuation mark gets a full stop;
  every non-empty line after the first ``@highlight`` is a highlight; the
  article's lines are joined with spaces and the highlights with newlines.
  """
  article, highlights, in_highlights = [], [], False
  for line in text.splitlines():
    line = line.strip()
    if not line:
      continue
    if line.startswith('@highlight'):
      in_highlights = True
      continue
    if not line.endswith(END_TOKENS):
      line += '.'
    (highlights if in_highlights else article).append(line)
  return ' '.join(article), '\n'.join(highlights)


def _url_hashes(directory, split):
  """The SHA-1 names of a split's stories from the published url lists, if any."""
  name = _URL_LISTS[split]
  for folder in (directory, os.path.join(directory, 'url_lists')):
    path = os.path.join(folder, name)
    if os.path.exists(path):
      try:
        urls = read_file(path, MAX_URL_LIST_BYTES, 'a url list may be').decode('utf-8-sig')
      except (OSError, UnicodeDecodeError) as e:
        raise SummarizerError(f'{path}: not a readable url list ({e})') from None
      return {hashlib.sha1(u.strip().encode('utf-8')).hexdigest()
              for u in urls.splitlines() if u.strip()}
  return None


def _story_bytes(path):
  """A .story file's bytes; None if it holds more than an example may (skipped, counted)."""
  if regular_file(path) > MAX_ARTICLE_BYTES:
    return None
  with open(path, 'rb') as f:
    data = f.read(MAX_ARTICLE_BYTES + 1)
  return data if len(data) <= MAX_ARTICLE_BYTES else None


def _story_files(path):
  """Yields (name, bytes reader) for every .story file in a folder or archive.

  A reader gives None for a story over ``MAX_ARTICLE_BYTES``. An archive cut
  short (a download stopped) gives the stories before the cut, then one
  warning; one that gives none is one error.
  """
  if not os.path.isdir(path):
    archives, folders = [path], []
  else:
    archives = sorted(os.path.join(path, n) for n in os.listdir(path)
                      if n.endswith(('.tgz', '.tar.gz')))
    folders = [path]
  for folder in folders:
    for root, dirs, files in os.walk(folder):
      dirs.sort()
      for name in sorted(files):
        if name.endswith('.story'):
          yield name, functools.partial(_story_bytes, os.path.join(root, name))
  for archive in archives:
    yield from _archived_stories(archive)


def _archived_stories(archive):
  """Yields (name, bytes reader) for the .story members of a tar archive, to a cut if any."""
  regular_file(archive)
  found = 0
  try:
    with tarfile.open(archive, 'r:*') as tar:
      for member in tar:
        if member.isfile() and member.name.endswith('.story'):
          data = (tar.extractfile(member).read() if member.size <= MAX_ARTICLE_BYTES
                  else None)
          found += 1
          yield os.path.basename(member.name), lambda data=data: data
  except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
    if not found:
      raise SummarizerError(f'{archive}: not a readable archive ({e})') from None
    print(f'warning: {archive}: cut short after {found} stories ({e}); the rest is '
          'skipped', file=sys.stderr)


def _stories(path, split, skips):
  directory = path if os.path.isdir(path) else os.path.dirname(path)
  wanted = _url_hashes(directory, split)
  for name, read in _story_files(path):
    key = name[:-len('.story')]
    if (key not in wanted) if wanted is not None else hash_split(key) != split:
      continue
    try:
      data = read()
    except OSError:  # A link to nothing, a file without permission: skipped, counted.
      skips.reasons['unreadable'] += 1
      continue
    if data is None:
      skips.reasons[_TOO_LARGE] += 1
      continue
    try:
      text = data.decode('utf-8-sig')
    except UnicodeDecodeError:
      skips.reasons['not UTF-8'] += 1
      continue
    pair = skips.check(*parse_story(text))
    if pair:
      yield pair


# --- JSON Lines and CSV -------------------------------------------------------


def _table_files(path, split):
  """Returns [(file, split_by_hash)] for a table file or a folder of them."""
  if not os.path.isdir(path):
    return [(path, True)]
  found = []
  for name in sorted(os.listdir(path)):
    stem, ext = os.path.splitext(name)
    if ext in ('.jsonl', '.json', '.csv') and stem.lower() in _SPLIT_FILE_NAMES[split]:
      found.append((os.path.join(path, name), False))
  return found


def _rows(path, skips):
  """Yields dict rows of a .jsonl/.json or .csv file, skipping broken ones."""
  regular_file(path)
  with open(path, 'rb') as f:
    if path.endswith('.csv'):
      csv.field_size_limit(MAX_ARTICLE_BYTES)  # News articles are long; not that long.
      lines = _decoded_lines(f, skips)
      reader = csv.DictReader(lines)
      columns = reader.fieldnames or []
      _require_columns(path, columns)
      while True:
        try:
          row = next(reader)
        except StopIteration:
          return
        except csv.Error:
          skips.reasons['malformed CSV'] += 1
          continue
        if None in row or None in row.values():
          skips.reasons['malformed CSV'] += 1
          continue
        yield row
    else:
      # A row without a field is skipped and counted (``Skips``); the file is
      # refused only if no row has both (a JSONL file has no header).
      keys, whole = {}, False
      for line in _decoded_lines(f, skips):
        if not line.strip():
          continue
        if json_depth(line) > MAX_JSON_DEPTH:  # Python's parser would recurse to its limit.
          skips.reasons['nested too deep'] += 1
          continue
        try:
          row = json.loads(line)
        except json.JSONDecodeError:
          skips.reasons['malformed JSON'] += 1
          continue
        if not isinstance(row, dict):
          skips.reasons['malformed JSON'] += 1
          continue
        keys.update(dict.fromkeys(row))
        whole = whole or ('article' in row and 'highlights' in row)
        yield row
      if keys and not whole:
        _require_columns(path, list(keys))
        raise SummarizerError(f'{path}: no row has both an article and highlights')


def _decoded_lines(binary, skips):
  """Yields the file's lines as text, the first without a byte-order mark.

  A line over ``MAX_ARTICLE_BYTES`` (read no further than that) or not
  UTF-8 is skipped and counted.
  """
  codec = 'utf-8-sig'  # Only a file's start may hold a byte-order mark.
  while raw := binary.readline(MAX_ARTICLE_BYTES + 1):
    if len(raw) > MAX_ARTICLE_BYTES:
      while raw and not raw.endswith(b'\n'):  # The rest of the line, a chunk at a time.
        raw = binary.readline(1 << 20)
      skips.reasons[_TOO_LARGE] += 1
    else:
      try:
        yield raw.decode(codec)
      except UnicodeDecodeError:
        skips.reasons['not UTF-8'] += 1
    codec = 'utf-8'


def _require_columns(path, columns):
  missing = [c for c in ('article', 'highlights') if c not in columns]
  if missing:
    raise SummarizerError(f'{path}: no {" or ".join(missing)} column (it has: '
                          f'{", ".join(map(str, columns)) or "none"})')


def _table(path, split, skips):
  files = _table_files(path, split)
  if not files:
    raise SummarizerError(f'{path}: no {split} file (.jsonl or .csv named '
                          f'{"/".join(_SPLIT_FILE_NAMES[split])})')
  for file, by_hash in files:
    for row in _rows(file, skips):
      if by_hash and hash_split(str(row.get('id') or row.get('article'))) != split:
        continue
      pair = skips.check(row.get('article'), row.get('highlights'))
      if pair:
        yield pair


# --- TensorFlow Datasets -------------------------------------------------------

DEFAULT_TFDS_DIR = '~/tensorflow_datasets'
# Long enough for a slow proxy to answer, short enough that an offline user
# hears so at once instead of after TFDS's 200 s of retries.
_PROBE_SECONDS = 5
# What a user without network can do instead (every TFDS error names it).
_OFFLINE_WAYS = ('pass --data-dir with the dataset already prepared, or --data '
                 'PATH to the CNN/DailyMail .story archives cnn_stories.tgz and '
                 'dailymail_stories.tgz')


def _tfds(spec, split, data_dir, download, skips):
  """Reads one pass over a TFDS split, downloading and preparing it if missing.

  The course reads CNN/DailyMail with ``trax.data.TFDS``, which shuffles,
  repeats forever and offers no test split; evaluation needs one ordered
  pass over any split, and training repeats and shuffles by itself, so the
  builder is read directly, with the same keys. A dataset that is not
  prepared in ``data_dir`` is downloaded and prepared there as Trax does it:
  by TFDS's own ``download_and_prepare``, with TFDS's progress bars.
  """
  # TensorFlow Datasets (and TensorFlow) imported here, quietly, on first use.
  from summarizer._trax import tfds  # pylint: disable=g-import-not-at-top
  name = spec[len('tfds:'):]  # TFDS reads 'name:version' itself.
  if not name:
    raise SummarizerError('tfds: needs a dataset name, e.g. tfds:cnn_dailymail')
  data_dir = os.path.expanduser(data_dir or DEFAULT_TFDS_DIR)
  try:
    # Building writes nothing under data_dir and uses no network (checked on
    # TFDS 4.9.10), so --no-download leaves no trace there.
    builder = tfds.builder(name, data_dir=data_dir)
  except Exception as e:  # pylint: disable=broad-except
    raise SummarizerError(f'{spec}: not a TFDS dataset ({_short(e)})') from None
  # Read first and prepare only on failure, as tfds.load does; this also
  # keeps tfds.testing.mock_data working, which fakes reading, not preparing.
  try:
    dataset = _tfds_split(builder, spec, split, data_dir)
  except SummarizerError:
    if builder.is_prepared():
      raise
    _download_and_prepare(builder, spec, data_dir, download)
    dataset = _tfds_split(builder, spec, split, data_dir)
  for example in tfds.as_numpy(dataset):
    try:
      pair = skips.check(_text(example.get('article')), _text(example.get('highlights')))
    except UnicodeDecodeError:
      skips.reasons['not UTF-8'] += 1
      continue
    if pair:
      yield pair


def _tfds_split(builder, spec, split, data_dir):
  """Returns the builder's split as a ``tf.data.Dataset`` in file order."""
  try:
    return builder.as_dataset(split=split, shuffle_files=False)
  except Exception as e:  # pylint: disable=broad-except
    raise SummarizerError(f'{spec}: cannot read split {split!r} from {data_dir} '
                          f'({_short(e)})') from None


def _download_and_prepare(builder, spec, data_dir, download):
  """Downloads and prepares a dataset in ``data_dir``, or says why it cannot."""
  if not download:
    raise SummarizerError(f'{spec}: not prepared in {data_dir}, and downloading '
                          f'is off (--no-download); {_OFFLINE_WAYS}')
  # The first file TFDS will fetch, from the checksums TFDS ships with the
  # dataset (cnn_dailymail: its Google Drive archives). Without any, TFDS is
  # left to find out by itself.
  try:
    urls = list(builder.url_infos or ())
  except Exception:  # pylint: disable=broad-except
    urls = []  # download_and_prepare fails the same way, and says so below.
  failure = _probe(urls[0]) if urls else None
  if failure:
    raise SummarizerError(f'{spec}: no network ({failure}), so it cannot be '
                          f'downloaded; {_OFFLINE_WAYS}')
  try:
    # Trax's download folder, so a download started by the course is reused.
    builder.download_and_prepare(download_dir=os.path.join(data_dir, 'download'))
  except Exception as e:  # pylint: disable=broad-except
    import requests  # pylint: disable=g-import-not-at-top
    cause = _network_cause(e) if isinstance(e, requests.RequestException) else _short(e)
    raise SummarizerError(f'{spec}: downloading and preparing it in {data_dir} '
                          f'failed ({cause}); {_OFFLINE_WAYS}') from None


def _probe(url, seconds=_PROBE_SECONDS):
  """Makes one quick request to ``url`` the way TFDS downloads.

  TFDS downloads with ``requests``, which takes proxies (``HTTPS_PROXY``,
  ``HTTP_PROXY``, ``NO_PROXY``) and CA bundles from the environment; so
  does this request. Any HTTP answer, even an error status, shows that the
  network works; what TFDS then makes of it is TFDS's business.

  Args:
    url: A URL the download will fetch.
    seconds: How long to wait for an answer.

  Returns:
    None if the server (or proxy) answered, else a few words on why not.
  """
  import requests  # pylint: disable=g-import-not-at-top
  failures = []

  def request():
    try:
      # HEAD without redirects: the status line is all it needs to read.
      requests.head(url, timeout=seconds, allow_redirects=False).close()
    except requests.Timeout:
      failures.append(f'no answer in {seconds} s')
    except Exception as e:  # pylint: disable=broad-except
      failures.append(_network_cause(e))

  # A thread, because requests' timeout does not cover the name lookup, which
  # can hang for a long time where the DNS server is unreachable.
  thread = threading.Thread(target=request, daemon=True)
  thread.start()
  thread.join(seconds)
  if thread.is_alive():
    return f'no answer in {seconds} s'
  return failures[0] if failures else None


def _network_cause(error):
  """A few words on why a request failed, from inside requests' wrapping.

  requests wraps urllib3's error, which wraps the cause (for a proxy, once
  more). Gives e.g. "failed to resolve 'drive.google.com' (Name or service
  not known)" or "proxy: tunnel connection failed: 403 Forbidden".
  """
  import requests  # pylint: disable=g-import-not-at-top
  inner = error
  while True:
    nested = getattr(inner, 'reason', None)
    if not isinstance(nested, BaseException) and inner.args:
      nested = inner.args[-1]
    if not isinstance(nested, BaseException) or nested is inner:
      break
    inner = nested
  text = re.sub(r'^\w*Connection\(host=.*?\): ', '', str(inner))  # urllib3's prefix.
  text = re.sub(r'\[Errno -?\d+\] ', '', text)
  where = 'proxy: ' if isinstance(error, requests.exceptions.ProxyError) else ''
  return where + (_short(text[:1].lower() + text[1:]) if text else type(inner).__name__)


def _short(error):
  """The first line of an error's message (or a text), cut short; else its type."""
  text = str(error).strip()
  if not text:
    return type(error).__name__
  text = ' '.join(text.splitlines()[0].split())
  return text if len(text) <= 120 else text[:117] + '...'


def _text(value):
  if value is None:
    return None
  return value.decode('utf-8') if isinstance(value, bytes) else str(value)


# --- The one entry point -----------------------------------------------------------


# The files a source names by their suffix: stories (one, or archives of them) and tables.
_STORY_SUFFIXES = ('.tgz', '.tar.gz', '.story')
_TABLE_SUFFIXES = ('.jsonl', '.json', '.csv')


def _news(split, skips):
  from summarizer.corpus import news  # pylint: disable=g-import-not-at-top
  for item in news.stories(split):
    pair = skips.check(item.article, item.highlights)
    if pair:
      yield pair


def _reader(source, split, data_dir, download, skips):
  """Returns the generator of pairs for a source string."""
  if source == 'news':
    return _news(split, skips)
  if source.startswith('tfds:'):
    return _tfds(source, split, data_dir, download, skips)
  path = os.path.expanduser(source)
  if os.path.exists(path):
    if path.endswith(_STORY_SUFFIXES):
      return _stories(path, split, skips)
    if path.endswith(_TABLE_SUFFIXES):
      return _table(path, split, skips)
    if os.path.isdir(path):
      if _table_files(path, split):
        return _table(path, split, skips)
      return _stories(path, split, skips)
  check_source(source)
  raise SummarizerError(f'unknown data source {source!r}; use {ACCEPTED}')


def check_source(source):
  """Refuses, before any work, a source that names a file or folder that is not there.

  A source with a data file's suffix is a path: missing, it is said to be
  missing, not an unknown kind of source.
  """
  if source == 'news' or source.startswith('tfds:'):
    return
  path = os.path.expanduser(source)
  if os.path.islink(path) and not os.path.exists(path):
    raise SummarizerError(f'{source}: a link to {os.path.realpath(path)}, which is not there')
  if not os.path.exists(path):
    if path.endswith(_STORY_SUFFIXES + _TABLE_SUFFIXES):
      raise SummarizerError(f'{source}: no such file or folder')
    raise SummarizerError(f'unknown data source {source!r}; use {ACCEPTED}')


def examples(source='news', split='train', data_dir=None, download=True):
  """Yields (article, highlights) string pairs of one split of a source.

  Args:
    source: A source string (see the module docstring).
    split: 'train', 'validation' (or 'val', 'eval') or 'test'.
    data_dir: Where TFDS keeps prepared datasets (``tfds:`` only; default
      ``~/tensorflow_datasets``).
    download: Whether a TFDS dataset that is not prepared in ``data_dir`` is
      downloaded and prepared there (``tfds:`` only). If False, such a
      dataset is an error, with no network request and nothing written.

  Raises:
    SummarizerError: for an unknown source or split, a missing column, a
      TFDS dataset that is not prepared when ``download`` is False, no
      network, or a failed download.
  """
  split = canonical_split(split)
  skips = _Skips(source, split)
  pairs = _reader(source, split, data_dir, download, skips)
  first = next(pairs, None)  # Open the source now, so errors come at once.
  if first is None:
    skips.report()
    return iter(())
  return _with_report(itertools.chain([first], pairs), skips)


def _with_report(pairs, skips):
  yield from pairs
  skips.report()
