"""What a pasted page carries is taken out of an article before it is read, and said in one line:
invisible characters, bidi controls, byte-order marks, unusual separators; then NFKC."""

import glob
import os
import subprocess
import sys
import unicodedata

import pytest

from summarizer.inference import article
from summarizer.inference.article import NORMAL_FORM, cleaned, cleaning_message

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = sorted(glob.glob(os.path.join(REPO, 'data', 'samples', '*.txt')))


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


def pasted(text):
  """``text`` as a careless paste carries it: what the issue saw, all at once."""
  first = text.split()[2]  # A word to wrap in bidi marks (the town).
  text = text.replace(first, f'\u2067{first}\u2069', 1).replace(' ', ' \u200b')
  text = text.replace('\n', '\u2028')
  middle = len(text) // 2
  return f'{text[:middle]}\ufeff{text[middle:]}\u202a\u200d\u00ad\u2060'


def test_the_normal_form_leaves_the_samples_and_the_news_stories_as_they_are():
  from summarizer.corpus import news  # pylint: disable=g-import-not-at-top
  texts = [read(path) for path in SAMPLES]
  texts += [t for s in news.stories('test', 200) for t in (s.article, s.highlights)]
  for text in texts:
    assert unicodedata.normalize(NORMAL_FORM, text) == text
    assert cleaned(text) == (text.strip(), {})


def test_a_pasted_sample_is_the_plain_sample_and_what_was_removed_is_counted():
  plain = read(SAMPLES[0])
  text, counts = cleaned(pasted(plain))
  assert text == plain.strip()
  assert counts == {'zero-width character': plain.count(' ') + 3,  # And the final three.
                    'bidi control': 3, 'byte-order mark': 1,
                    'line or paragraph separator': plain.count('\n')}
  line = cleaning_message(counts)
  assert '\n' not in line and f'{sum(counts.values())} characters' in line
  assert cleaning_message({}) is None


@pytest.mark.parametrize('raw,kept,kind', [
    ('Gar\u00a0zel', 'Gar zel', 'compatibility form'),    # A no-break space: a space.
    ('\uff21\uff22C 12', 'ABC 12', 'compatibility form'),  # Fullwidth letters.
    ('a\u1680b', 'a b', 'unusual space'),                  # NFKC keeps the ogham space mark.
    ('a\u2029b', 'a\nb', 'line or paragraph separator'),
    ('a\x85b\x0bc', 'a\nb\nc', 'line or paragraph separator'),
    ('a\x07b', 'ab', 'control character'),
    ('a\U000e0041b', 'ab', 'other format character'),      # A tag character.
    ('a\ufe0fb', 'ab', 'other format character'),          # A variation selector.
])
def test_each_kind_is_removed_or_mapped(raw, kept, kind):
  text, counts = cleaned(raw)
  assert text == kept and kind in counts


def test_tabs_line_ends_and_plain_text_are_kept():
  assert cleaned('a\tb\r\nc\rd\n\n') == ('a\tb\nc\nd', {})
  assert article.clean_article('Zürich, 5 °C, “quoted” — fine') == \
      'Zürich, 5 °C, “quoted” — fine'


@pytest.mark.slow
def test_pasted_samples_summarise_as_the_plain_ones_with_one_warning(tmp_path):
  dirty = []
  for path in SAMPLES:
    copy = tmp_path / os.path.basename(path)
    copy.write_text(pasted(read(path)), encoding='utf-8')
    dirty.append(str(copy))
  before = {path: (tmp_path / os.path.basename(path)).read_bytes() for path in SAMPLES}
  plain = subprocess.run([sys.executable, '-m', 'summarizer', '--json', *SAMPLES],
                         capture_output=True, text=True, cwd=REPO, timeout=600, check=True)
  pasted_run = subprocess.run([sys.executable, '-m', 'summarizer', '--json', *dirty],
                              capture_output=True, text=True, cwd=REPO, timeout=600, check=True)
  assert pasted_run.stdout == plain.stdout
  warnings = pasted_run.stderr.splitlines()
  assert len(warnings) == len(SAMPLES), pasted_run.stderr
  for path, line in zip(dirty, warnings):
    assert line.startswith(f'warning: {path}: the article held ') and 'bidi controls' in line
  assert plain.stderr == ''
  # The user's files are read, never changed.
  assert {path: (tmp_path / os.path.basename(path)).read_bytes() for path in SAMPLES} == before
  # The API and the explorer read through the same door.
  script = ('import sys, warnings, summarizer\n'
            'warnings.simplefilter("always")\n'
            'plain, dirty = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])\n'
            'with warnings.catch_warnings(record=True) as seen:\n'
            '  same = summarizer.summarize(dirty) == summarizer.summarize(plain)\n'
            '  page = summarizer.explain(dirty).summary == summarizer.explain(plain).summary\n'
            '  many = summarizer.summarize_many([dirty, plain]) == [summarizer.summarize(plain)] * 2\n'
            'print(same, page, many, sorted({type(w.message).__name__ for w in seen}))\n')
  api = subprocess.run([sys.executable, '-c', script, SAMPLES[1], dirty[1]], capture_output=True,
                       text=True, cwd=REPO, timeout=600, check=True)
  assert api.stdout.strip() == "True True True ['ArticleCleanedWarning']", api.stderr
