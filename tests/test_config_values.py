"""Every value read from a model directory's config.json is checked, the field named."""

import json
import shutil

import pytest

from summarizer import __main__ as summarize_command
from summarizer import config
from summarizer.config import load_config
from summarizer.errors import SummarizerError

from conftest import make_special, no_hang, sparse_file

BAD = [
    ({'n_heads': 0}, '"n_heads" is 0; it must be a whole number, at least 1'),
    ({'d_model': 'wide'}, '"d_model" is "wide"; it must be a whole number'),
    ({'vocab_size': None}, '"vocab_size" is null; it must be a whole number'),
    ({'n_layers': 2.5}, '"n_layers" is 2.5'),
    ({'dropout': 1.5}, '"dropout" is 1.5; it must be a number from 0 to below 1'),
    ({'learning_rate': 'fast'}, '"learning_rate"'),
    ({'truncate': 'yes'}, '"truncate" is "yes"; it must be true or false'),
    ({'boundaries': [128, -1]}, '"boundaries"'),
    ({'batch_sizes': [1]}, '"batch_sizes" is [1]; it must be one more than the boundaries'),
    ({'n_heads': 3}, '"n_heads" is 3; it must be a divisor of d_model 32'),
    ({'perplexity_calibration': 'high'}, '"perplexity_calibration" is "high"'),
    ({'perplexity_calibration': {'max': 'x', 'p50': 1, 'threshold': 2}},
     '"perplexity_calibration.max" is "x"; it must be a number'),
    ({'verdict': 'good'}, '"verdict" is "good"; it must be a record or null'),
    ({'verdict': {'model': {'rouge1': '0.4'}}}, '"verdict.model.rouge1" is "0.4"; it must be a number'),
    ({'lineage': [{'steps': 'many'}]}, '"lineage[0].steps" is "many"; it must be a whole number or null'),
    ({'copy_fraction': [0.5]}, '"copy_fraction" is [0.5]; it must be a number or null'),
    ({'tied_init': 1}, '"tied_init" is 1; it must be true or false'),
    ({'vocab_file': '/etc/passwd'}, '"vocab_file" is "/etc/passwd"; it must be a file\'s name '
                                    'inside the model directory'),
    ({'vocab_file': '../../vocab.subwords'}, '"vocab_file"'),
    ({'lineage': 'none'}, '"lineage"'),
]


@pytest.mark.parametrize('change,message', BAD, ids=[json.dumps(c) for c, _ in BAD])
def test_a_bad_value_is_named(random_model_dir, tmp_path, change, message):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  values = json.loads((model_dir / 'config.json').read_text())
  values.update(change)
  (model_dir / 'config.json').write_text(json.dumps(values))
  with pytest.raises(SummarizerError) as raised:
    load_config(str(model_dir))
  assert str(raised.value) == f'{model_dir}/config.json: {message}' or message in str(raised.value)
  assert str(model_dir / 'config.json') in str(raised.value)


def test_the_command_says_it_in_one_line(random_model_dir, tmp_path, capsys):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  values = json.loads((model_dir / 'config.json').read_text())
  (model_dir / 'config.json').write_text(json.dumps(dict(values, n_heads=0)))
  assert summarize_command.main(['--text', 'Rain fell.', '--model', str(model_dir)]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and '"n_heads" is 0' in err


@pytest.mark.parametrize('depth', [65, 100_000])
def test_a_config_json_nested_too_deep_is_one_line_and_never_recursed_into(
    random_model_dir, tmp_path, capsys, depth):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  (model_dir / 'config.json').write_text('{"notes": ' + '[' * depth + ']' * depth + '}')
  assert summarize_command.main(['--text', 'Rain fell.', '--model', str(model_dir)]) == 2
  assert capsys.readouterr().err == (f'error: {model_dir}/config.json: nested more than 64 '
                                     'levels deep, deeper than any document the package writes\n')


def test_the_shipped_and_a_written_config_pass(random_model_dir):
  load_config(random_model_dir)
  load_config('data/model')


def test_a_config_json_that_is_no_regular_file_or_too_large_is_refused_unread(
    random_model_dir, tmp_path):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  path = model_dir / 'config.json'
  for special in ('fifo', 'zero'):
    path.unlink()
    kind = make_special(path, special)
    with no_hang(), pytest.raises(SummarizerError) as raised:
      load_config(str(model_dir))
    assert str(raised.value) == f'{path}: not a regular file ({kind})'
  path.unlink()
  sparse_file(path, config.MAX_CONFIG_BYTES + 1)
  with pytest.raises(SummarizerError) as raised:
    load_config(str(model_dir))
  assert str(raised.value) == (f"{path}: too large (over 1 MB, the most a model directory's "
                               'config.json may be)')


def test_a_config_json_saved_with_a_byte_order_mark_reads(random_model_dir, tmp_path):
  model_dir = tmp_path / 'model'
  shutil.copytree(random_model_dir, model_dir)
  values = json.loads((model_dir / 'config.json').read_text())
  (model_dir / 'config.json').write_text(json.dumps(values), encoding='utf-8-sig')
  assert load_config(str(model_dir)) == load_config(random_model_dir)
