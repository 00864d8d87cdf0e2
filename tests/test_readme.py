"""The README pages' commands run as written, in a copy of the checkout, and print what they say.

The pages are README.md and the pages it leads to (PAGES). Each fenced ``bash`` block of each page
is run in order, page after page, from the root of one copy of the checkout, except those after a
line ``<!-- readme-test: skip REASON -->`` (setup, training, the benchmarks: what takes minutes or
needs files the repository cannot hold) and the CI's test command, which README.md alone holds. A
``text`` block after ``<!-- readme-test: prints -->`` is the exact standard output of the ``bash``
block before it. A command with ``--json`` must print one JSON array, an object per file, in
order. A fence may be indented (a block inside a list item); its text is read without the indent.
The pages' relative links must lead to a file of the checkout, and their ``#`` anchors to a
heading of the page they name.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'README.md')
# The pages whose commands run, in the order they run: the front door first.
PAGES = ('README.md', 'data/README.md', 'data/model/README.md', 'notebooks/README.md',
         'summarizer/README.md')
MARKER = re.compile(r'^<!-- readme-test: (skip|prints)\b\s*(.*?)\s*-->$')
CI_MARKER = '<!-- ci: test command -->'
FENCE = re.compile(r'^( *)```')
# Under a minute on the project's 2 cores, as the README promises; more is a block to mark.
TIMEOUT = 120
# Not copied: environments and caches, anywhere; run outputs and what the commands write, at the
# checkout's root only (summarizer/runs/ and tests/runs/ are code).
IGNORED = ('.git', '.venv', 'venv', '.cache', '__pycache__', '*.egg-info', '.ipynb_checkpoints')
IGNORED_AT_ROOT = ('runs', 'output', 'transformer_summarizer_exercises.ipynb', 'my_stories.jsonl')


def ignored(folder, names):
  """What shutil.copytree leaves out of a folder of the checkout."""
  left_out = set(shutil.ignore_patterns(*IGNORED)(folder, names))
  if os.path.abspath(folder) == ROOT:
    left_out.update(name for name in names if name in IGNORED_AT_ROOT)
  return left_out


def blocks(page='README.md'):
  """Returns a page's fenced blocks: dicts of page, language, text, line, marker and reason."""
  found, marker, reason, fence = [], None, '', None
  with open(os.path.join(ROOT, page), encoding='utf-8') as f:
    lines = f.read().split('\n')
  for number, line in enumerate(lines, 1):
    if fence is not None:
      if line.strip().startswith('```'):
        fence['text'] = '\n'.join(fence['text'])
        found.append(fence)
        fence = None
      else:  # The fence's indent is not the block's.
        fence['text'].append(line[fence['indent']:] if line.startswith(' ' * fence['indent'])
                             else line.lstrip(' '))
      continue
    opening = FENCE.match(line)
    if opening:
      fence = dict(page=page, language=line.strip()[3:].strip(), text=[], line=number,
                   marker=marker, reason=reason, indent=len(opening.group(1)))
      marker, reason = None, ''
      continue
    matched = MARKER.match(line.strip())
    if matched:
      marker, reason = matched.groups()
    elif line.strip() == CI_MARKER:
      marker, reason = 'skip', "CI's test command"
    elif line.strip():  # A marker belongs to the block right after it (blank lines aside).
      marker, reason = None, ''
  assert fence is None, f'{page}: the block of line {fence["line"]} is not closed'
  return found


def commands(pages=PAGES):
  """Returns (block, expected output or None) for each bash block the test runs, page by page."""
  runs = []
  for page in pages:
    found = blocks(page)
    for i, block in enumerate(found):
      if block['language'] != 'bash' or block['marker'] == 'skip':
        continue
      following = found[i + 1] if i + 1 < len(found) else None
      expected = None
      if following and following['marker'] == 'prints':
        expected = following['text'] + '\n'
      runs.append((block, expected))
  return runs


def where(block):
  """A block's page and line, as the test ids and messages name it."""
  return f'{block["page"]}:{block["line"]}'


def markdown_pages():
  """The checkout's Markdown pages: git's, where it is a git checkout (what git ignores is not
  a page: build/lib/ of a wheel build), else every one outside the ignored folders."""
  listed = subprocess.run(['git', '-C', ROOT, 'ls-files', '--cached', '--others',
                           '--exclude-standard', '--', '*.md'],
                          capture_output=True, text=True, check=False)
  if listed.returncode == 0:
    return {page for page in listed.stdout.splitlines() if os.path.exists(os.path.join(ROOT, page))}
  pages = set()
  for folder, subfolders, files in os.walk(ROOT):
    left_out = ignored(folder, subfolders)
    subfolders[:] = [name for name in subfolders
                     if not name.startswith('.') and name not in left_out]
    pages.update(os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, '/')
                 for name in files if name.endswith('.md'))
  return pages


def test_every_page_is_run():
  # A Markdown page of the checkout is one of PAGES, so none is left unrun.
  assert markdown_pages() == set(PAGES)


def test_a_page_that_git_ignores_is_no_page_to_run(tmp_path):
  # A wheel build leaves build/lib/summarizer/README.md: git ignores it, and so does the test.
  built = os.path.join(ROOT, 'build', 'lib', 'summarizer')
  made = not os.path.exists(os.path.join(ROOT, 'build'))
  os.makedirs(built, exist_ok=True)
  page = os.path.join(built, 'README.md')
  try:
    with open(page, 'w', encoding='utf-8') as f:
      f.write('# a copy\n')
    assert 'build/lib/summarizer/README.md' not in markdown_pages()
  finally:
    os.remove(page)
    if made:
      shutil.rmtree(os.path.join(ROOT, 'build'))


@pytest.mark.parametrize('page', PAGES)
def test_markers_are_well_formed(page):
  found = blocks(page)
  for i, block in enumerate(found):
    if block['marker'] == 'skip':
      assert block['language'] == 'bash' and block['reason'], where(block)
    if block['marker'] == 'prints':
      assert block['language'] == 'text' and found[i - 1]['language'] == 'bash', where(block)
      assert found[i - 1]['marker'] != 'skip', where(block)
  ci_blocks = sum(block['marker'] == 'skip' and block['reason'] == "CI's test command"
                  for block in found)
  # The CI's test command is README.md's, once; the front door shows commands that run.
  assert ci_blocks == (1 if page == 'README.md' else 0)
  if page == 'README.md':
    assert len(commands([page])) >= 5


def anchor(heading):
  """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
  text = re.sub(r'[^\w\- ]', '', heading.strip().lower())
  return text.replace(' ', '-')


def anchors(page):
  """The anchors of a page's headings (those outside fenced blocks)."""
  found, fenced = set(), False
  with open(os.path.join(ROOT, page), encoding='utf-8') as f:
    for line in f:
      if line.strip().startswith('```'):
        fenced = not fenced
      elif not fenced and re.match(r'#{1,6} ', line):
        name = anchor(line.lstrip('#'))
        number = 1
        unique = name
        while unique in found:  # GitHub numbers a repeated heading's anchor.
          unique = f'{name}-{number}'
          number += 1
        found.add(unique)
  return found


LINK = re.compile(r'\]\(([^)\s]+)\)')


@pytest.mark.parametrize('page', PAGES)
def test_the_links_lead_somewhere(page):
  with open(os.path.join(ROOT, page), encoding='utf-8') as f:
    text = re.sub(r'```.*?```', '', f.read(), flags=re.S)  # Not the fenced blocks.
  broken = []
  for target in LINK.findall(text):
    if re.match(r'[a-z]+:', target):  # https:, mailto:
      continue
    path, _, fragment = target.partition('#')
    linked = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
    if not os.path.exists(os.path.join(ROOT, linked)):
      broken.append(target)
    elif fragment and (not linked.endswith('.md') or fragment not in anchors(linked)):
      broken.append(target)
  assert not broken, f'{page}: links that lead nowhere: {broken}'


def test_ci_reads_the_test_command_and_it_names_a_supported_python():
  done = subprocess.run(
      ['awk', '/<!-- ci: test command -->/{found=1; next} found && /^```/{if (inblock) exit; '
       'inblock=1; next} found && inblock {print}', README],
      capture_output=True, text=True, check=True)
  command = done.stdout.strip()
  # The whole suite (options only, no paths); on workers, a notebook's cells stay on one.
  pytest_command = command.split(' && ')[-1]
  assert re.fullmatch(r'\.venv/bin/python -m pytest(?: -[-\w]+(?: \w+)?)*', pytest_command)
  assert ' -n ' not in pytest_command or '--dist loadfile' in pytest_command
  # The set-up's own Python: the one `python3` starts, which must be one the package accepts.
  assert command.startswith('python3 -m venv .venv && ')
  with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as f:
    low, high = re.search(r'requires-python = ">=3\.(\d+),<3\.(\d+)"', f.read()).groups()
  minor = subprocess.run(['python3', '-c', 'import sys; print(sys.version_info[1])'],
                         capture_output=True, text=True, check=True).stdout.strip()
  assert int(low) <= int(minor) < int(high)


# Summaries printed by blocks that summarise one file: FILE -> standard output.
SUMMARIES = {}
ONE_FILE = re.compile(r'^\.venv/bin/python -m summarizer (\S+\.txt)$')


@pytest.fixture(scope='module')
def checkout(tmp_path_factory):
  """A copy of the checkout whose .venv is the environment running the tests."""
  copy = tmp_path_factory.mktemp('readme') / 'summarizer'
  shutil.copytree(ROOT, copy, ignore=ignored, symlinks=True)
  os.symlink(sys.prefix, copy / '.venv')
  return copy


@pytest.mark.parametrize('block,expected', [pytest.param(block, expected, id=where(block))
                                            for block, expected in commands()])
@pytest.mark.slow
def test_the_readme_command_runs_as_written(checkout, block, expected):
  env = dict(os.environ, PYTHONPATH=str(checkout))
  done = subprocess.run(['bash', '-euo', 'pipefail', '-c', block['text']], cwd=checkout,
                        capture_output=True, text=True, timeout=TIMEOUT, env=env, check=False)
  assert done.returncode == 0, f'{where(block)}:\n{done.stderr[-3000:]}'
  if expected is not None:
    assert done.stdout == expected, where(block)
  one_file = ONE_FILE.match(block['text'].strip())
  if one_file:
    SUMMARIES[one_file.group(1)] = done.stdout
  if '--json' in block['text']:
    files = [word for word in shlex.split(block['text']) if word.endswith('.txt')]
    printed = json.loads(done.stdout)  # One JSON document: the whole output.
    assert isinstance(printed, list) and len(printed) == len(files) >= 2
    assert all(set(item) == {'summary_text', 'article_perplexity', 'out_of_domain'}
               for item in printed)
    for item, path in zip(printed, files):  # In order: each file's own summary.
      if path not in SUMMARIES:
        SUMMARIES[path] = subprocess.run(
            [str(checkout / '.venv' / 'bin' / 'python'), '-m', 'summarizer', path],
            cwd=checkout, capture_output=True, text=True, timeout=TIMEOUT, env=env,
            check=True).stdout
      assert item['summary_text'] + '\n' == SUMMARIES[path]


@pytest.mark.slow
def test_the_commands_ran_in_the_copy(checkout):
  # What they made is in the copy, so nothing in the checkout was touched.
  assert str(checkout) != ROOT
  assert (checkout / 'transformer_summarizer_exercises.ipynb').exists()
  assert (checkout / 'runs' / 'eval-10' / 'eval_results.json').exists()
