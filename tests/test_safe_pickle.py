"""A model directory's pickle is read without running any code it names."""

import gzip
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

from summarizer.inference import model_directory
from summarizer.config import DEFAULT_MODEL_DIR, load_config
from summarizer.errors import SummarizerError
from summarizer import safe_pickle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _RunsCommand:
  """Pickles as a call of os.system: what a hostile checkpoint would hold."""

  def __init__(self, command):
    self.command = command

  def __reduce__(self):
    return (os.system, (self.command,))


def hostile_pickle(path, marker, keep=None):
  """Writes a gzip pickle that, unpickled with pickle.load, creates ``marker``.

  ``keep``: a checkpoint dict to put the payload into (default: the payload alone).
  """
  payload = _RunsCommand(f'touch {marker}')
  saved = dict(keep or {}, step=payload)
  with gzip.open(path, 'wb') as f:
    pickle.dump(saved, f)


def shipped_checkpoint():
  return safe_pickle.load(os.path.join(DEFAULT_MODEL_DIR, 'model.pkl.gz'))


def test_the_payload_does_run_under_plain_pickle(tmp_path):
  # The test's own check: the file below is hostile, so refusing it means something.
  marker = tmp_path / 'ran'
  hostile_pickle(tmp_path / 'model.pkl.gz', marker)
  with gzip.open(tmp_path / 'model.pkl.gz', 'rb') as f:
    pickle.load(f)
  assert marker.exists()


def test_the_shipped_checkpoint_reads_with_only_allowed_names():
  saved = shipped_checkpoint()
  assert saved['step'] > 0 and isinstance(saved['flat_weights'], int)
  assert all(isinstance(a, np.ndarray) for a in saved['flat_state'])
  (signature,) = saved['input_signature']
  config = load_config(DEFAULT_MODEL_DIR)[0]  # Its first bucket's batch: (B, L).
  assert signature.shape == (config.batch_sizes[0], config.boundaries[0])
  assert signature.dtype == np.int32


@pytest.mark.parametrize('protocol', [2, 4, 5])
def test_numpy_arrays_of_every_protocol_read(protocol):
  saved = {'a': np.arange(6, dtype=np.float32).reshape(2, 3), 'b': np.float32(2.5),
           'c': np.asfortranarray(np.ones((2, 3)))}
  read = safe_pickle.loads(pickle.dumps(saved, protocol=protocol))
  for key, value in saved.items():
    np.testing.assert_array_equal(read[key], value)


def test_a_reconstructed_jax_array_must_come_from_numpy():
  hostile = pickle.dumps(_RunsCommand('true'))
  with pytest.raises(safe_pickle.UnsafePickleError, match='posix.system'):
    safe_pickle.loads(hostile, 'x.pkl')
  # jax's array reconstruction calls a function the pickle names: only numpy's.
  class _Rebuilt:
    def __reduce__(self):
      return (safe_pickle._rebuild_array, (list, ((1,),), None, {}))
  data = pickle.dumps(_Rebuilt(), protocol=0).replace(  # Protocol 0: names as text.
      b'csummarizer.safe_pickle\n_rebuild_array\n',
      b'cjax._src.array\n_reconstruct_array\n')
  assert b'jax._src.array' in data
  with pytest.raises(pickle.UnpicklingError, match='not rebuilt from numpy'):
    safe_pickle.loads(data)


@pytest.mark.parametrize('layout', ['ours', 'course'])
def test_a_hostile_model_directory_is_refused_and_nothing_runs(tmp_path, layout):
  model_dir = tmp_path / 'model'
  model_dir.mkdir()
  if layout == 'ours':
    for name in ('config.json', 'vocab.subwords', 'model.weights.npy.gz'):
      shutil.copyfile(os.path.join(DEFAULT_MODEL_DIR, name), model_dir / name)
  marker = tmp_path / 'ran'
  hostile_pickle(model_dir / 'model.pkl.gz', marker, shipped_checkpoint())
  with pytest.raises(SummarizerError, match=r'model\.pkl\.gz: refused: it names posix\.system'):
    model_directory.read(str(model_dir))
  with pytest.raises(SummarizerError, match='refused'):
    model_directory.saved_step(str(model_dir))
  assert not marker.exists()


def test_the_command_refuses_it_in_one_line(tmp_path):
  model_dir = tmp_path / 'model'
  shutil.copytree(DEFAULT_MODEL_DIR, model_dir)
  marker = tmp_path / 'ran'
  hostile_pickle(model_dir / 'model.pkl.gz', marker, shipped_checkpoint())
  done = subprocess.run([sys.executable, '-m', 'summarizer', '--text', 'Rain fell.',
                         '--model', str(model_dir)], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
  assert done.returncode == 2, done.stderr
  assert done.stderr.count('\n') == 1 and 'refused: it names posix.system' in done.stderr
  assert str(model_dir / 'model.pkl.gz') in done.stderr
  assert not marker.exists()


def test_trax_reads_checkpoints_through_it(tmp_path):
  # Loop.load_checkpoint (resume, the course's training_loop) and
  # Layer.init_from_file (the course's loading) read the pickle via Trax.
  from summarizer._trax import training, trax  # pylint: disable=g-import-not-at-top
  from summarizer.model import TransformerLM  # pylint: disable=g-import-not-at-top
  marker = tmp_path / 'ran'
  hostile_pickle(tmp_path / 'model.pkl.gz', marker, shipped_checkpoint())
  with pytest.raises(SummarizerError, match='refused'):
    training.unpickle_from_file(str(tmp_path / 'model.pkl.gz'), gzip=True)
  model = TransformerLM(vocab_size=16, d_model=4, d_ff=8, n_layers=1, n_heads=2, mode='eval')
  with pytest.raises(SummarizerError, match='refused'):
    model.init_from_file(str(tmp_path / 'model.pkl.gz'), weights_only=True)
  assert not marker.exists()
  saved = training.unpickle_from_file(os.path.join(DEFAULT_MODEL_DIR, 'model.pkl.gz'),
                                      gzip=True)
  assert isinstance(saved['input_signature'][0], trax.shapes.ShapeDtype)


def test_a_truncated_array_file_raises_instead_of_giving_fewer_arrays(tmp_path):
  from summarizer._trax import tl  # pylint: disable=g-import-not-at-top
  path = tmp_path / 'a.npy.gz'
  tl.np_to_file([np.zeros((64, 64), np.float32)] * 3, str(path), compresslevel=2)
  assert len(tl.np_from_file(str(path), compresslevel=2)) == 3
  data = gzip.decompress(path.read_bytes())
  path.write_bytes(gzip.compress(data[:len(data) * 2 // 3 + 100]))
  with pytest.raises(Exception):
    tl.np_from_file(str(path), compresslevel=2)


def test_evaluate_init_from_and_the_api_refuse_it_too(tmp_path, capsys):
  from summarizer import evaluate, train  # pylint: disable=g-import-not-at-top
  from summarizer.inference import api  # pylint: disable=g-import-not-at-top
  model_dir = tmp_path / 'model'
  shutil.copytree(DEFAULT_MODEL_DIR, model_dir)
  marker = tmp_path / 'ran'
  hostile_pickle(model_dir / 'model.pkl.gz', marker, shipped_checkpoint())
  assert evaluate.main(['--model', str(model_dir), '--limit', '1', '--retrieval-pool', '5',
                        '--output-dir', str(tmp_path / 'eval')]) == 2
  assert train.main(['--init-from', str(model_dir), '--output-dir', str(tmp_path / 'run'),
                     '--max-steps', '1', '--no-progress']) == 2
  err = capsys.readouterr().err.splitlines()
  assert len(err) == 2 and all('refused: it names posix.system' in line for line in err)
  with pytest.raises(SummarizerError, match='refused'):
    api.summarize('Rain fell.', str(model_dir))
  assert not marker.exists()
