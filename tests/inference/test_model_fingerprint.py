"""A model directory proves that its config.json describes its weights: the fingerprint an export
writes (inference.model_directory.fingerprint), the shapes, and no key given twice."""

import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

from summarizer.config import DEFAULT_MODEL_DIR, FINGERPRINT_KEY
from summarizer.errors import SummarizerError
from summarizer.inference import model_directory

from conftest import write_model_dir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, 'data', 'samples', 'sport.txt')


def edited(source, destination, change=None, text=None):
  """A copy of the model directory ``source`` whose config.json has ``change`` (or is ``text``)."""
  shutil.copytree(source, destination)
  path = os.path.join(destination, 'config.json')
  if text is None:
    with open(path, encoding='utf-8') as f:
      values = json.load(f)
    values.update(change)
    values = {k: v for k, v in values.items() if v is not _DROP}
    text = json.dumps(values, indent=2)
  with open(path, 'w', encoding='utf-8') as f:
    f.write(text)
  return str(destination)


_DROP = object()  # A change that removes the key.


def test_the_shipped_model_is_bound_to_its_weights(capsys):
  values = model_directory.read_values(DEFAULT_MODEL_DIR)
  record = values[FINGERPRINT_KEY]
  assert sorted(record['fields']) == sorted(model_directory.BOUND_FIELDS)
  assert {k: values[k] for k in model_directory.BOUND_FIELDS} == record['fields']
  directory = model_directory.read(DEFAULT_MODEL_DIR)
  assert model_directory.fingerprint(values, directory.weights) == record
  assert capsys.readouterr().err == ''  # Proven: nothing to warn about.


@pytest.mark.parametrize('field,value,recorded', [
    ('n_heads', 2, 4),     # The shapes cannot tell heads: the fingerprint does.
    ('n_heads', 1, 4),
    ('dropout', 0.5, 0.0),
    ('vocab_fingerprint', '0' * 32, None),
])
def test_a_value_other_than_the_weights_were_exported_with_is_named(
    random_model_dir, tmp_path, field, value, recorded):
  if recorded is None:
    recorded = model_directory.read_values(random_model_dir)[field]
  model_dir = edited(random_model_dir, tmp_path / 'model', {field: value})
  with pytest.raises(SummarizerError) as raised:
    model_directory.read(model_dir)
  message = str(raised.value)
  assert message.startswith(os.path.join(model_dir, 'config.json') + ': ')
  assert f'{field} is {json.dumps(value)}, but its weights were exported with {field} ' \
        f'{json.dumps(recorded)}' in message


def test_a_key_given_twice_is_refused_naming_it(random_model_dir, tmp_path):
  with open(os.path.join(random_model_dir, 'config.json'), encoding='utf-8') as f:
    text = f.read()
  twice = text.replace('"n_heads": 4,', '"n_heads": 4,\n  "n_heads": 1,', 1)
  assert twice != text
  model_dir = edited(random_model_dir, tmp_path / 'model', text=twice)
  with pytest.raises(SummarizerError, match=r'config.json: "n_heads" is given twice \(4, then 1\)'):
    model_directory.read(model_dir)


def test_weights_put_in_from_another_model_of_the_same_shapes_are_refused(
    random_model_dir, tmp_path):
  other = write_model_dir(tmp_path / 'other', seed=7)
  model_dir = edited(random_model_dir, tmp_path / 'model', {})
  for name in ('model.pkl.gz', 'model.weights.npy.gz'):
    shutil.copyfile(os.path.join(other, name), os.path.join(model_dir, name))
  with pytest.raises(SummarizerError, match='weights_fingerprint does not fit the weights beside'):
    model_directory.read(model_dir)


def test_an_edited_fingerprint_is_refused(random_model_dir, tmp_path):
  values = model_directory.read_values(random_model_dir)
  record = values[FINGERPRINT_KEY]
  record['fields']['n_heads'] = 2
  model_dir = edited(random_model_dir, tmp_path / 'model', {'n_heads': 2,
                                                            FINGERPRINT_KEY: record})
  with pytest.raises(SummarizerError, match='weights_fingerprint does not fit the weights'):
    model_directory.read(model_dir)


def test_a_directory_without_a_fingerprint_loads_its_sizes_checked_and_says_so(
    random_model_dir, tmp_path, capsys):
  model_dir = edited(random_model_dir, tmp_path / 'model', {FINGERPRINT_KEY: _DROP})
  assert model_directory.read(model_dir).config.n_heads == 4
  err = capsys.readouterr().err.splitlines()
  assert len(err) == 1 and err[0].startswith('warning: ') and 'n_heads 4' in err[0]
  # Its sizes are still proven by the shapes.
  wider = edited(random_model_dir, tmp_path / 'wider', {FINGERPRINT_KEY: _DROP, 'd_ff': 128})
  with pytest.raises(SummarizerError, match='config.json: d_ff is 128, but the weights beside it '
                                            'have d_ff 64'):
    model_directory.read(wider)


def _run(*argv, **kwargs):
  return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=600,
                        cwd=REPO, check=False, **kwargs)


@pytest.mark.slow
def test_every_command_that_loads_a_model_refuses_an_edited_config_in_one_line(tmp_path):
  model_dir = edited(DEFAULT_MODEL_DIR, tmp_path / 'model', {'n_heads': 2})
  before = sorted(os.listdir(model_dir))
  wanted = (f'error: {os.path.join(model_dir, "config.json")}: n_heads is 2, but its weights '
            'were exported with n_heads 4')
  commands = [
      ['-m', 'summarizer', '--model', model_dir, SAMPLE],
      ['-m', 'summarizer', '--model', model_dir, SAMPLE, '--explain', str(tmp_path / 'p.html')],
      ['-m', 'summarizer.evaluate', '--model', model_dir, '--limit', '1'],
      ['-m', 'summarizer.explorer', '--model', model_dir, '--agreement', '1'],
      ['-m', 'summarizer.explorer', '--model', model_dir, '--picture', SAMPLE,
       str(tmp_path / 'p.png')],
      ['-m', 'summarizer.train', '--init-from', model_dir, '--preset', 'quick',
       '--output-dir', str(tmp_path / 'run'), '--max-steps', '1'],
  ]
  for argv in commands:
    done = _run(*argv)
    assert (done.returncode, done.stderr.splitlines()) == (2, [done.stderr.splitlines()[0]]), \
        (argv, done.stderr)
    assert done.stderr.startswith(wanted), (argv, done.stderr)
    assert done.stdout == ''
  assert not (tmp_path / 'p.html').exists() and not (tmp_path / 'p.png').exists()
  assert sorted(os.listdir(model_dir)) == before  # The user's folder as it was.
  api = _run('-c', 'import summarizer, sys\n'
             'try:\n'
             f'  summarizer.summarize(open({SAMPLE!r}).read(), model_dir={model_dir!r})\n'
             'except summarizer.SummarizerError as e:\n'
             '  print(e)\n')
  assert api.stdout.startswith(wanted.removeprefix('error: ')), api.stdout + api.stderr


def test_an_export_writes_the_fingerprint_it_is_read_with(random_model_dir, tmp_path):
  from summarizer.runs import export  # pylint: disable=g-import-not-at-top
  values = model_directory.read_values(random_model_dir)
  assert export.bound_to_weights(random_model_dir, values) == values[FINGERPRINT_KEY]
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    model_directory.read(random_model_dir)
