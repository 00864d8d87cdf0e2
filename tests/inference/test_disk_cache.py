"""The summarize command's compilation cache on disk (``summarizer.inference.disk_cache``)."""

import os
import pathlib
import subprocess
import sys

import jax
from jax._src.compilation_cache import compress_executable, decompress_executable
import pytest

from summarizer.config import DATA_DIR
from summarizer.inference import disk_cache

SAMPLE = os.path.join(DATA_DIR, 'samples', 'sport.txt')
# jax's settings that turning the cache on changes, for the whole process.
JAX_SETTINGS = ('jax_compilation_cache_dir', 'jax_persistent_cache_min_compile_time_secs')
# The cache's own folder in the one a user names, and the file that marks it as the cache's.
CACHE_FOLDER, TAG = 'summarizer-jax-cache', 'CACHEDIR.TAG'
# A name as jax gives an entry: the program's, a hash, and '-cache'.
ENTRY = 'jit_greedy-' + 'ab' * 32 + '-cache'


@pytest.fixture
def jax_settings_kept():
  """Puts jax's cache settings back after a test turned the cache on (nothing compiles between)."""
  kept = {name: getattr(jax.config, name) for name in JAX_SETTINGS}
  jax.config.update('jax_compilation_cache_dir', None)
  yield
  for name, value in kept.items():
    jax.config.update(name, value)


def whole_entry(payload=b'a compiled program'):
  """An entry as jax writes it: compressed, 4 bytes of compile time then the program."""
  return compress_executable((1).to_bytes(4, 'big') + payload * 50)


def files_of(folder):
  return {p.relative_to(folder).as_posix(): p.read_bytes()
          for p in sorted(folder.rglob('*')) if p.is_file() and not p.is_symlink()}


def test_compilation_cache_place_and_switch(monkeypatch, tmp_path):
  monkeypatch.delenv(disk_cache.COMPILATION_CACHE_ENV, raising=False)
  monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
  assert disk_cache.compilation_cache_dir() == str(tmp_path / 'summarizer' / 'jax')
  for off in ('0', 'off', 'OFF', ''):
    monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, off)
    assert disk_cache.compilation_cache_dir() is None
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(tmp_path / 'here'))
  assert disk_cache.compilation_cache_dir() == str(tmp_path / 'here')


def test_trim_keeps_the_most_recently_used_entries_and_nothing_else_goes(tmp_path):
  outside = tmp_path / 'thesis.pdf'
  outside.write_bytes(b'x' * 1000)
  folder = tmp_path / 'cache'
  folder.mkdir()
  for i, name in enumerate(['jit_old', 'jit_mid', 'jit_new', 'notes.txt']):
    path = folder / (f'{name}-{i:064x}-cache' if name.startswith('jit') else name)
    path.write_bytes(b'x' * 100)
    os.utime(path, (1000 + i, 1000 + i))
  (folder / f'jit_link-{9:064x}-cache').symlink_to(outside)  # Never followed, never removed.
  disk_cache._trim(str(folder), 250)  # pylint: disable=protected-access
  assert sorted(p.name.split('-')[0] for p in folder.iterdir()) == [
      'jit_link', 'jit_mid', 'jit_new', 'notes.txt']
  assert outside.read_bytes() == b'x' * 1000


def test_a_users_folder_named_as_the_cache_loses_nothing(tmp_path, monkeypatch,
                                                         jax_settings_kept):
  del jax_settings_kept
  videos = tmp_path / 'videos'
  videos.mkdir()
  (videos / 'thesis.tex').write_text('chapter 1')
  (videos / 'holiday.mp4').write_bytes(b'v' * 5000)
  (videos / ENTRY).write_bytes(b'named like an entry, but the user\'s')
  for path in videos.iterdir():
    os.utime(path, (1000, 1000))  # Old: the first a trim would take.
  before = files_of(videos)
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(videos))
  monkeypatch.setattr(disk_cache, 'COMPILATION_CACHE_MAX_MB', 0)
  folder = disk_cache.use_compilation_cache()
  after = files_of(videos)
  assert {name: after.get(name) for name in before} == before  # All there, unchanged.
  assert folder == str(videos / CACHE_FOLDER)
  assert sorted(after) == sorted([*before, f'{CACHE_FOLDER}/{TAG}'])
  # The tag of the Cache Directory Tagging convention (backup tools skip the folder).
  assert (videos / CACHE_FOLDER / TAG).read_text().startswith(
      'Signature: 8a477f597d28d172789f06886806bc55\n')
  assert jax.config.jax_compilation_cache_dir == folder


@pytest.mark.parametrize('taken', ['a folder of the user', 'a link', 'a file'])
def test_a_name_of_the_caches_folder_taken_by_something_else_turns_the_cache_off(
    tmp_path, monkeypatch, jax_settings_kept, taken):
  del jax_settings_kept
  place, elsewhere = tmp_path / 'place', tmp_path / 'elsewhere'
  place.mkdir()
  elsewhere.mkdir()
  (elsewhere / ENTRY).write_bytes(b'')
  name = place / CACHE_FOLDER
  if taken == 'a folder of the user':
    name.mkdir()
    (name / ENTRY).write_bytes(b'')
  elif taken == 'a link':
    name.symlink_to(elsewhere)
  else:
    name.write_bytes(b'')
  before = files_of(tmp_path)
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(place))
  assert disk_cache.use_compilation_cache() is None
  assert files_of(tmp_path) == before
  assert jax.config.jax_compilation_cache_dir is None


def test_entries_that_do_not_read_whole_are_removed_so_jax_writes_them_again(
    tmp_path, monkeypatch, jax_settings_kept):
  del jax_settings_kept
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(tmp_path))
  folder = pathlib.Path(disk_cache.use_compilation_cache())
  whole = whole_entry()
  entries = {'jit_whole': whole, 'jit_empty': b'', 'jit_cut': whole[:len(whole) // 2],
             'jit_short': whole[:3]}
  for name, data in entries.items():
    (folder / f'{name}-{0:064x}-cache').write_bytes(data)
  jax.config.update('jax_compilation_cache_dir', None)
  assert disk_cache.use_compilation_cache() == str(folder)
  assert sorted(p.name.split('-')[0] for p in folder.glob('*-cache')) == ['jit_whole']


@pytest.mark.slow
def test_the_command_gives_the_same_summary_with_the_cache_cold_warm_and_off(tmp_path):
  # jax's own cache setting (the test session's, conftest.py) would turn this one off.
  env = {name: value for name, value in os.environ.items() if not name.startswith('JAX_')}

  def command(cache):
    return subprocess.run([sys.executable, '-m', 'summarizer', SAMPLE, '--max-length', '16'],
                          capture_output=True, text=True, check=True,
                          env=dict(env, SUMMARIZER_COMPILATION_CACHE=cache))
  cache = tmp_path / 'jax'
  cold = command(str(cache))
  entries = sorted(cache.rglob('*-cache'))
  assert entries  # Compiled programs were written.
  cut = max(entries, key=lambda p: p.stat().st_size)
  whole = cut.read_bytes()
  cut.write_bytes(whole[:len(whole) // 2])  # As a kill or a full disk leaves it.
  warm = command(str(cache))
  # Found cut short, removed, compiled and written again, whole.
  # (The program's bytes vary a little from one compile to the next.)
  assert len(decompress_executable(cut.read_bytes())) == len(decompress_executable(whole))
  off = command('off')
  assert cold.stdout == warm.stdout == off.stdout and cold.stdout.strip()
  assert cold.stderr == warm.stderr == off.stderr == ''


def test_a_folder_tagged_by_another_tool_is_never_taken_for_the_cache_nor_trimmed(
    tmp_path, monkeypatch, jax_settings_kept):
  # The Cache Directory Tagging signature line is the same for every tool that tags.
  del jax_settings_kept
  place = tmp_path / 'caches'
  folder = place / CACHE_FOLDER
  folder.mkdir(parents=True)
  (folder / TAG).write_text('Signature: 8a477f597d28d172789f06886806bc55\n'
                            '# This file is a cache directory tag created by sometool.\n')
  (folder / ENTRY).write_bytes(b'not a compiled program of ours')
  before = files_of(tmp_path)
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(place))
  assert disk_cache.use_compilation_cache() is None
  assert files_of(tmp_path) == before


def test_the_cache_tags_its_folder_with_an_identity_of_its_own_and_knows_it_again(
    tmp_path, monkeypatch, jax_settings_kept):
  del jax_settings_kept
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(tmp_path))
  folder = pathlib.Path(disk_cache.use_compilation_cache())
  tag = (folder / TAG).read_text()
  assert tag.startswith('Signature: 8a477f597d28d172789f06886806bc55\n')
  assert tag != disk_cache.tag_text()  # Each folder its own identity.
  jax.config.update('jax_compilation_cache_dir', None)
  assert disk_cache.use_compilation_cache() == str(folder)
  assert (folder / TAG).read_text() == tag  # Known again, not rewritten.


def test_a_tag_of_an_earlier_version_is_ours_and_gets_an_identity(
    tmp_path, monkeypatch, jax_settings_kept):
  del jax_settings_kept
  folder = tmp_path / CACHE_FOLDER
  folder.mkdir()
  (folder / TAG).write_text(disk_cache.TAG_COMMENT)
  (folder / ENTRY).write_bytes(whole_entry())
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(tmp_path))
  assert disk_cache.use_compilation_cache() == str(folder)
  assert disk_cache.IDENTITY_LINE.fullmatch(
      (folder / TAG).read_text()[len(disk_cache.TAG_COMMENT):])
  assert (folder / ENTRY).read_bytes() == whole_entry()


@pytest.mark.slow
@pytest.mark.parametrize('setting', ['XDG_CACHE_HOME=relative/cache',
                                     'SUMMARIZER_COMPILATION_CACHE=~nosuchuser4821/c'])
def test_a_relative_or_unknown_user_setting_makes_no_folder_here_and_says_so(tmp_path, setting):
  name, value = setting.split('=', 1)
  env = dict(os.environ, HOME=str(tmp_path / 'home'), PYTHONWARNINGS='ignore', **{name: value})
  env.pop('SUMMARIZER_COMPILATION_CACHE' if name != 'SUMMARIZER_COMPILATION_CACHE' else 'XDG_CACHE_HOME', None)
  work = tmp_path / 'work'
  work.mkdir()
  done = subprocess.run([sys.executable, '-m', 'summarizer', SAMPLE, '--max-length', '8'],
                        capture_output=True, text=True, cwd=work, env=env, check=False)
  assert done.returncode == 0, done.stderr
  assert list(work.iterdir()) == []
  warnings = [line for line in done.stderr.splitlines() if value in line]
  assert len(warnings) == 1 and warnings[0].startswith('warning: '), done.stderr


@pytest.mark.slow
def test_a_home_folder_that_does_not_exist_is_not_made_for_the_cache(tmp_path):
  home = tmp_path / 'no-such-home'
  env = dict(os.environ, HOME=str(home), PYTHONWARNINGS='ignore')
  for name in ('XDG_CACHE_HOME', disk_cache.COMPILATION_CACHE_ENV):
    env.pop(name, None)
  done = subprocess.run([sys.executable, '-m', 'summarizer', SAMPLE, '--max-length', '8'],
                        capture_output=True, text=True, cwd=tmp_path, env=env, check=False)
  assert done.returncode == 0, done.stderr
  assert not home.exists()
  assert [line for line in done.stderr.splitlines() if 'cache' in line] == [
      f'warning: the home folder {home} does not exist: the compilation cache is off']
