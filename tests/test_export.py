"""The export sits above checkpoint, decoding and calibration; a load reads a directory once."""

import ast
import os

from summarizer import checkpoint, decoding

PACKAGE = os.path.dirname(checkpoint.__file__)


def imported_modules(name):
  """The summarizer modules a module imports, at its top or inside functions."""
  with open(os.path.join(PACKAGE, name + '.py'), encoding='utf-8') as f:
    tree = ast.parse(f.read())
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module == 'summarizer':
      found.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and (node.module or '').startswith('summarizer.'):
      found.add(node.module.split('.')[1])
  return found


def test_no_circle_between_checkpoint_decoding_and_calibration():
  assert not imported_modules('checkpoint') & {'calibration', 'decoding', 'export'}
  assert not imported_modules('decoding') & {'calibration', 'export'}
  assert 'export' not in imported_modules('calibration')
  assert {'calibration', 'checkpoint'} <= imported_modules('export')


def test_a_load_reads_the_directory_once(random_model_dir, monkeypatch):
  reads = []
  for name in ('load_config', 'read_weights'):
    original = getattr(checkpoint, name)
    monkeypatch.setattr(checkpoint, name,
                        lambda *a, original=original, name=name: reads.append(name) or original(*a))
  loaded = decoding.LoadedModel(random_model_dir)
  assert sorted(reads) == ['load_config', 'read_weights']
  assert loaded.config.d_model == 32 and loaded.calibration is None
