"""A model directory's pickle is read without running any code it names."""

import gzip
import io
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

from summarizer import config
from summarizer.inference import model_directory
from summarizer.config import DEFAULT_MODEL_DIR, load_config
from summarizer.errors import SummarizerError
from summarizer import safe_pickle

from conftest import make_special, no_hang

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


def npy_header(shape, dtype=np.float32):
  """What ``np.save`` writes before an array's data: its magic and header."""
  f = io.BytesIO()
  np.lib.format.write_array_header_1_0(
      f, {'descr': np.lib.format.dtype_to_descr(np.dtype(dtype)), 'fortran_order': False,
          'shape': shape})
  return f.getvalue()


def test_arrays_read_as_np_load_reads_them(tmp_path):
  arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.asfortranarray(np.eye(3)),
            np.zeros((0, 5), np.int64), np.array(7, np.int32), np.array([True, False]),
            np.arange(4, dtype='>f4')]
  with gzip.open(tmp_path / 'a.npy.gz', 'wb') as f:
    for array in arrays:
      np.save(f, array)
  read = safe_pickle.load_arrays(str(tmp_path / 'a.npy.gz'))
  assert len(read) == len(arrays)
  for mine, saved in zip(read, arrays):
    assert mine.dtype == saved.dtype and mine.shape == saved.shape
    np.testing.assert_array_equal(mine, saved)
  read[0][0, 0] = 1  # Writable, as np.load's are.


def test_a_small_gzip_of_huge_arrays_is_refused_before_they_are_unpacked(tmp_path):
  # Its header says 1 GB and a float more; the file is a few KB.
  path = tmp_path / 'model.weights.npy.gz'
  path.write_bytes(gzip.compress(npy_header((config.MAX_WEIGHTS_BYTES // 4 + 1,))
                                 + bytes(10**6)))
  assert path.stat().st_size < 10**4
  with pytest.raises(SummarizerError) as raised:
    safe_pickle.load_arrays(str(path))
  assert str(raised.value) == (f'{path}: too large (over 1 GB, the most the arrays of a '
                               'checkpoint file may hold unpacked)')


def test_the_bound_counts_all_the_arrays_of_a_file(tmp_path, monkeypatch):
  monkeypatch.setattr(safe_pickle, 'MAX_WEIGHTS_BYTES', 1000)
  for count, fits in ((2, True), (3, False)):
    path = tmp_path / f'{count}.npy.gz'
    with gzip.open(path, 'wb') as f:
      for _ in range(count):
        np.save(f, np.zeros(100, np.float32))  # 400 bytes each.
    if fits:
      assert len(safe_pickle.load_arrays(str(path))) == count
    else:
      with pytest.raises(SummarizerError, match='too large'):
        safe_pickle.load_arrays(str(path))


@pytest.mark.parametrize('held', ['bytes', 'str'])
def test_a_pickle_that_unpacks_past_its_bound_is_refused_before_it_is_read(tmp_path, held):
  model_dir = tmp_path / 'model'
  shutil.copytree(DEFAULT_MODEL_DIR, model_dir)
  big = b'x' * (config.MAX_PICKLE_BYTES + 1)  # 64 MB of one letter: 64 KB packed.
  pkl = model_dir / 'model.pkl.gz'
  pkl.write_bytes(gzip.compress(pickle.dumps(big if held == 'bytes' else big.decode()), 1))
  assert pkl.stat().st_size < 10**6
  message = (f"{pkl}: too large (over 64 MB, the most a checkpoint's pickle may hold "
             'unpacked)')
  with pytest.raises(SummarizerError) as raised:
    safe_pickle.load(str(pkl))
  assert str(raised.value) == message
  with pytest.raises(SummarizerError) as raised:
    model_directory.read(str(model_dir))
  assert str(raised.value) == message


def test_an_old_trax_pickle_holds_its_weights_and_may_be_as_large(tmp_path, monkeypatch):
  # Trax before 1.3.8 pickled the weights: with no weights file beside, the
  # pickle's bound is the arrays' own.
  monkeypatch.setattr(safe_pickle, 'MAX_PICKLE_BYTES', 1000)
  pkl = tmp_path / 'model.pkl.gz'
  with gzip.open(pkl, 'wb') as f:
    pickle.dump({'step': 5, 'flat_weights': [np.zeros(1000, np.float32)]}, f)
  step, weights = model_directory.read_checkpoint(str(pkl))
  assert step == 5 and weights[0].shape == (1000,)
  shutil.copyfile(os.path.join(DEFAULT_MODEL_DIR, 'model.weights.npy.gz'),
                  tmp_path / 'model.weights.npy.gz')
  with pytest.raises(SummarizerError, match='too large'):
    model_directory.read_checkpoint(str(pkl))


@pytest.mark.parametrize('special', ['fifo', 'zero'])
def test_trax_init_from_file_refuses_a_file_that_is_no_regular_file(tmp_path, special):
  from summarizer.model import TransformerLM  # pylint: disable=g-import-not-at-top
  pkl = tmp_path / 'model.pkl.gz'
  kind = make_special(pkl, special)
  model = TransformerLM(vocab_size=16, d_model=4, d_ff=8, n_layers=1, n_heads=2, mode='eval')
  with no_hang(), pytest.raises(SummarizerError) as raised:
    model.init_from_file(str(pkl), weights_only=True)
  assert str(raised.value) == f'{pkl}: not a regular file ({kind})'
