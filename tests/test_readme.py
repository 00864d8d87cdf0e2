"""The README's commands run as written, in a copy of the checkout, and print what it says.

Each fenced ``bash`` block is run in order, except those after a line
``<!-- readme-test: skip REASON -->`` (setup, training, the benchmarks: what
takes minutes or needs files the repository cannot hold) and the CI's test
command. A ``text`` block after ``<!-- readme-test: prints -->`` is the exact
standard output of the ``bash`` block before it. A command with ``--json``
must print one JSON array, an object per file, in order.
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
MARKER = re.compile(r'^<!-- readme-test: (skip|prints)\b\s*(.*?)\s*-->$')
CI_MARKER = '<!-- ci: test command -->'
# Under a minute on the project's 2 cores, as the README promises; more is a block to mark.
TIMEOUT = 120
# Not copied: environments, run outputs, caches.
IGNORED = ('.git', '.venv', 'venv', 'runs', 'output', '.cache', '__pycache__', '*.egg-info',
           '.ipynb_checkpoints', 'transformer_summarizer_exercises.ipynb', 'my_stories.jsonl')


def blocks(path=README):
  """Returns the README's fenced blocks: dicts of language, text, line, marker and reason."""
  found, marker, reason, fence = [], None, '', None
  with open(path, encoding='utf-8') as f:
    lines = f.read().split('\n')
  for number, line in enumerate(lines, 1):
    if fence is not None:
      if line.startswith('```'):
        fence['text'] = '\n'.join(fence['text'])
        found.append(fence)
        fence = None
      else:
        fence['text'].append(line)
      continue
    if line.startswith('```'):
      fence = dict(language=line[3:].strip(), text=[], line=number, marker=marker, reason=reason)
      marker, reason = None, ''
      continue
    matched = MARKER.match(line.strip())
    if matched:
      marker, reason = matched.groups()
    elif line.strip() == CI_MARKER:
      marker, reason = 'skip', "CI's test command"
    elif line.strip():  # A marker belongs to the block right after it (blank lines aside).
      marker, reason = None, ''
  assert fence is None, f'README.md: the block of line {fence["line"]} is not closed'
  return found


def commands():
  """Returns (block, expected output or None) for each bash block the test runs."""
  found = blocks()
  runs = []
  for i, block in enumerate(found):
    if block['language'] != 'bash' or block['marker'] == 'skip':
      continue
    following = found[i + 1] if i + 1 < len(found) else None
    expected = None
    if following and following['marker'] == 'prints':
      expected = following['text'] + '\n'
    runs.append((block, expected))
  return runs


def test_markers_are_well_formed():
  found = blocks()
  for i, block in enumerate(found):
    if block['marker'] == 'skip':
      assert block['language'] == 'bash' and block['reason'], block
    if block['marker'] == 'prints':
      assert block['language'] == 'text' and found[i - 1]['language'] == 'bash', block
      assert found[i - 1]['marker'] != 'skip', block
  assert sum(block['marker'] == 'skip' and block['reason'] == "CI's test command"
             for block in found) == 1
  assert len(commands()) >= 5


def test_ci_reads_the_test_command_and_it_names_a_supported_python():
  done = subprocess.run(
      ['awk', '/<!-- ci: test command -->/{found=1; next} found && /^```/{if (inblock) exit; '
       'inblock=1; next} found && inblock {print}', README],
      capture_output=True, text=True, check=True)
  command = done.stdout.strip()
  assert command.endswith('.venv/bin/python -m pytest')
  version = re.match(r'python(3\.\d+) -m venv \.venv', command).group(1)
  with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as f:
    low, high = re.search(r'requires-python = ">=3\.(\d+),<3\.(\d+)"', f.read()).groups()
  assert int(low) <= int(version.split('.')[1]) < int(high)


# Summaries printed by README blocks that summarise one file: FILE -> standard output.
SUMMARIES = {}
ONE_FILE = re.compile(r'^\.venv/bin/python -m summarizer (\S+\.txt)$')


@pytest.fixture(scope='module')
def checkout(tmp_path_factory):
  """A copy of the checkout whose .venv is the environment running the tests."""
  copy = tmp_path_factory.mktemp('readme') / 'summarizer'
  shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)
  os.symlink(sys.prefix, copy / '.venv')
  return copy


@pytest.mark.parametrize('block,expected', commands(),
                         ids=lambda value: (f'line{value["line"]}' if isinstance(value, dict)
                                            else None))
def test_the_readme_command_runs_as_written(checkout, block, expected):
  env = dict(os.environ, PYTHONPATH=str(checkout))
  done = subprocess.run(['bash', '-euo', 'pipefail', '-c', block['text']], cwd=checkout,
                        capture_output=True, text=True, timeout=TIMEOUT, env=env, check=False)
  assert done.returncode == 0, f'README.md line {block["line"]}:\n{done.stderr[-3000:]}'
  if expected is not None:
    assert done.stdout == expected, f'README.md line {block["line"]}'
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


def test_the_commands_ran_in_the_copy(checkout):
  # What they made is in the copy, so nothing in the checkout was touched.
  assert str(checkout) != ROOT
  assert (checkout / 'transformer_summarizer_exercises.ipynb').exists()
  assert (checkout / 'runs' / 'eval-10' / 'eval_results.json').exists()
