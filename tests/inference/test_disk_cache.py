"""The summarize command's compilation cache on disk (``summarizer.inference.disk_cache``)."""

import os
import subprocess
import sys

from summarizer.config import DATA_DIR
from summarizer.inference import disk_cache

SAMPLE = os.path.join(DATA_DIR, 'samples', 'sport.txt')


def test_compilation_cache_place_and_switch(monkeypatch, tmp_path):
  monkeypatch.delenv(disk_cache.COMPILATION_CACHE_ENV, raising=False)
  monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
  assert disk_cache.compilation_cache_dir() == str(tmp_path / 'summarizer' / 'jax')
  for off in ('0', 'off', 'OFF', ''):
    monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, off)
    assert disk_cache.compilation_cache_dir() is None
  monkeypatch.setenv(disk_cache.COMPILATION_CACHE_ENV, str(tmp_path / 'here'))
  assert disk_cache.compilation_cache_dir() == str(tmp_path / 'here')


def test_trim_keeps_the_most_recently_used(tmp_path):
  for i, name in enumerate(['old', 'mid', 'new']):
    path = tmp_path / name
    path.write_bytes(b'x' * 100)
    os.utime(path, (1000 + i, 1000 + i))
  disk_cache._trim(str(tmp_path), 250)  # pylint: disable=protected-access
  assert sorted(p.name for p in tmp_path.iterdir()) == ['mid', 'new']


def test_the_command_gives_the_same_summary_with_the_cache_cold_warm_and_off(tmp_path):
  def command(cache):
    return subprocess.run([sys.executable, '-m', 'summarizer', SAMPLE, '--max-length', '16'],
                          capture_output=True, text=True, check=True,
                          env=dict(os.environ, SUMMARIZER_COMPILATION_CACHE=cache))
  cache = tmp_path / 'jax'
  cold = command(str(cache))
  assert any(cache.iterdir())  # Compiled programs were written.
  warm = command(str(cache))
  off = command('off')
  assert cold.stdout == warm.stdout == off.stdout and cold.stdout.strip()
  assert cold.stderr == warm.stderr == off.stderr == ''
