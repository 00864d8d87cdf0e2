"""Every flag is range-checked at parse time: one line, status 2, before any model loads.
And a user's files are read only if they are regular files, never past a bound; a
command whose output cannot be written says so in one line."""

import errno
import io
import json
import os
import signal
import socket
import sys

import pytest

from summarizer import __main__ as summarize_command
from summarizer import errors, evaluate, files, train
from summarizer.errors import SummarizerError, json_text

from conftest import make_special, no_hang, sparse_file

CASES = [
    (train, ['--learning-rate', 'nan'], '--learning-rate: must be a finite number'),
    (train, ['--learning-rate', 'inf'], '--learning-rate: must be a finite number'),
    (train, ['--learning-rate', '-1'], '--learning-rate must be between 0 and 10'),
    (train, ['--article-loss-weight', 'nan'], '--article-loss-weight: must be a finite number'),
    (train, ['--article-loss-weight', '-1'], '--article-loss-weight must not be negative'),
    (train, ['--copy-fraction', 'nan'], '--copy-fraction: must be a finite number'),
    (train, ['--warmup-steps', '-5'], '--warmup-steps must be at least 1'),
    (train, ['--seed', '-1'], '--seed: must be between 0 and'),
    (summarize_command, ['--text', 'x', '--temperature', 'nan'],
     '--temperature: must be a finite number'),
    (summarize_command, ['--text', 'x', '--seed', '-5'], '--seed: must be between 0 and'),
    (summarize_command, ['--text', 'x', '--num-beams', '100000'],
     '--num-beams: must be between 1 and 64'),
    (summarize_command, ['--text', 'x', '--length-penalty', 'nan'],
     '--length-penalty: must be a finite number'),
    # A flag that would change nothing is refused, not ignored.
    (summarize_command, ['--text', 'x', '--top-k', '5'],
     '--top-k: only sampling (--temperature above 0) reads it'),
    (summarize_command, ['--text', 'x', '--force'], '--force: only --explain writes a file'),
    (evaluate, ['--num-beams', '100000'], '--num-beams: must be between 1 and 64'),
    (evaluate, ['--batch-size', '0'], '--batch-size: must be between 1 and 1024'),
]


@pytest.mark.parametrize('command,argv,message', CASES,
                         ids=[f'{c.__name__.split(".")[-1]} {" ".join(a)}' for c, a, _ in CASES])
def test_a_bad_flag_is_one_line_and_status_2(capsys, tmp_path, command, argv, message):
  if command is train:
    argv = argv + ['--output-dir', str(tmp_path / 'run')]
  with pytest.raises(SystemExit) as exited:
    command.parse_args(argv)
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err, err
  assert not (tmp_path / 'run').exists()


def test_json_text_writes_null_for_what_is_not_a_number():
  text = json_text([{'article_perplexity': float('nan'), 'summary_text': 'x'}])
  assert 'NaN' not in text
  assert json.loads(text) == [{'article_perplexity': None, 'summary_text': 'x'}]


@pytest.mark.parametrize('argv,message', [
    (['--out', '.'], '--out: . is a directory'),
    (['--out', 'x.subwords', '--limit', '-1'], '--limit: must be at least 1'),
])
def test_the_vocab_command_refuses_a_directory_and_a_negative_limit(capsys, argv, message):
  from summarizer import vocab  # pylint: disable=g-import-not-at-top
  with pytest.raises(SystemExit) as exited:
    vocab.main(argv)
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and message in err


def test_gins_note_on_an_error_is_left_out(capsys):
  import gin  # pylint: disable=g-import-not-at-top
  from summarizer.errors import SummarizerError, run_command  # pylint: disable=g-import-not-at-top

  @gin.configurable
  def configured():
    raise SummarizerError('data/x.jsonl: no highlights column')

  assert run_command(configured) == 2
  assert capsys.readouterr().err == 'error: data/x.jsonl: no highlights column\n'


def test_the_evaluate_commands_default_length_is_the_decoders():
  from summarizer import decoding  # pylint: disable=g-import-not-at-top
  assert evaluate.MAX_SUMMARY_TOKENS == decoding.MAX_SUMMARY_TOKENS
  assert evaluate.parse_args([]).max_length == decoding.MAX_SUMMARY_TOKENS


@pytest.mark.parametrize('command', ['summarizer', 'summarizer.train', 'summarizer.evaluate'])
def test_a_bad_flag_is_refused_before_jax_is_imported(command):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  probe = (f'import runpy, sys; sys.argv = ["x", "--num-beams", "0"]\n'
           f'try:\n  runpy.run_module("{command}", run_name="__main__")\n'
           'except SystemExit as e:\n  print(e.code, "jax" in sys.modules)')
  if command == 'summarizer.train':
    probe = probe.replace('"--num-beams", "0"', '"--learning-rate", "nan"')
  done = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.stdout.split() == ['2', 'False'], done.stderr


def test_a_file_that_is_no_regular_file_is_named_before_it_is_opened(tmp_path):
  kinds = {tmp_path / kind: make_special(tmp_path / kind, kind) for kind in ('fifo', 'zero')}
  with socket.socket(socket.AF_UNIX) as listening:
    listening.bind(str(tmp_path / 'sock'))
    kinds.update({tmp_path / 'sock': 'a socket', tmp_path: 'a directory'})
    for path, kind in kinds.items():
      with no_hang(), pytest.raises(SummarizerError) as raised:
        files.read_file(str(path), 100, 'a thing may be')
      assert str(raised.value) == f'{path}: not a regular file ({kind})'


def test_a_file_or_stream_over_its_bound_is_refused_before_it_is_read(tmp_path):
  big = sparse_file(tmp_path / 'big', 2 * 10**9)
  with pytest.raises(SummarizerError) as raised:
    files.read_file(str(big), 10**6, 'a thing may be')
  assert str(raised.value) == f'{big}: too large (over 1 MB, the most a thing may be)'
  # A pipe tells no size: what comes is read to one byte past the bound.
  assert files.read_at_most(io.BytesIO(b'x' * 10), 10, 'standard input', 'x') == b'x' * 10
  with pytest.raises(SummarizerError, match=r'^standard input: too large \(over 10 bytes'):
    files.read_at_most(io.BytesIO(b'x' * 11), 10, 'standard input', 'a thing may be')


class FullDisk(io.StringIO):
  """Standard output on a full disk: what is written waits in a buffer; flushing fails."""

  def flush(self):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_one_line_and_status_2_and_a_reader_that_left_no_error(
    capsys, monkeypatch):
  def write_fails():
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), 'run/model.pkl.gz')

  assert errors.run_command(write_fails) == 2
  assert capsys.readouterr().err == ('error: run/model.pkl.gz: cannot write (No space left '
                                     'on device)\n')
  monkeypatch.setattr(sys, 'stdout', FullDisk())
  assert errors.run_command(lambda: print('the summary') or 0) == 2  # Every command's way.
  assert capsys.readouterr().err == ('error: cannot write the output (No space left on '
                                     'device); it is lost\n')

  def reader_left():
    raise BrokenPipeError(errno.EPIPE, 'Broken pipe')

  assert errors.run_command(reader_left) == 0
  assert capsys.readouterr().err == ''

  def a_bug():
    raise OSError(errno.EINVAL, 'not a write that failed')

  with pytest.raises(OSError, match='not a write'):  # A bug keeps its traceback.
    errors.run_command(a_bug)


def test_a_failed_write_that_names_no_file_claims_nothing_lost(capsys):
  def write_fails():
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

  assert errors.run_command(write_fails) == 2
  assert capsys.readouterr().err == 'error: a write failed (No space left on device)\n'


def test_tensorflows_and_jaxs_own_io_errors_are_one_line():
  lookalike = {}
  for module, name in (('tensorflow.python.framework.errors_impl', 'ResourceExhaustedError'),
                       ('jaxlib.xla_extension', 'XlaRuntimeError'),
                       ('somewhere.else', 'ResourceExhaustedError')):
    kind = type(name, (Exception,), {'__module__': module})
    lookalike[module] = kind('/x/.v.tmp; No space left on device\nmore lines')
  assert errors.library_io_error(lookalike['tensorflow.python.framework.errors_impl']) == \
      '/x/.v.tmp; No space left on device'
  assert errors.library_io_error(lookalike['jaxlib.xla_extension']) == \
      '/x/.v.tmp; No space left on device'
  assert errors.library_io_error(lookalike['somewhere.else']) is None
  assert errors.library_io_error(ValueError('x')) is None

  def raises():
    raise lookalike['tensorflow.python.framework.errors_impl']

  assert errors.run_command(raises) == 2


def delivered_as_a_terminal_does():
  """In a child before it starts: Ctrl-C's signal handled by default and not blocked.

  A terminal delivers Ctrl-C; a child inherits SIGINT ignored or blocked from
  the test's process where something has left it so (an xdist worker once
  did), and the command then never sees it.
  """
  signal.signal(signal.SIGINT, signal.SIG_DFL)
  signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow
@pytest.mark.parametrize('command', [['summarizer.exercises', '--out', 'a.ipynb'],
                                     ['summarizer', 'ARTICLE']])
def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path, command):
  import signal  # pylint: disable=g-import-not-at-top
  import subprocess  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  article = tmp_path / 'article.txt'
  article.write_text('Heavy rain fell on Marmofield on Sunday. Roads were closed.\n')
  argv = [str(article) if word == 'ARTICLE' else word for word in command]
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=repo, PYTHONWARNINGS='ignore')
  for delay in (0.5, 1.0, 2.0, 3.5, 5.0, 8.0):
    process = subprocess.Popen([sys.executable, '-m', *argv], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=delivered_as_a_terminal_does)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    if process.returncode == 0:  # Finished before the signal came: nothing to stop.
      (tmp_path / 'a.ipynb').unlink(missing_ok=True)
      continue
    lines = err.splitlines()
    assert process.returncode == 130 and len(lines) == 1, (delay, err)
    assert 'Traceback' not in err and 'terminate called' not in err
    assert not (tmp_path / 'a.ipynb').exists(), delay  # Nothing half-written.
  assert sorted(p.name for p in tmp_path.iterdir()) == ['article.txt']


def test_ctrl_c_after_the_work_ended_keeps_the_commands_status_and_says_nothing(tmp_path):
  # Python's teardown (unloading TensorFlow) takes seconds after the work: Ctrl-C there
  # only cuts it short.
  import subprocess  # pylint: disable=g-import-not-at-top
  script = ('import os, signal, time\n'
            'from summarizer import errors\n'
            'errors.stop_cleanly_on_interrupt()\n'
            'status = errors.run_command(lambda: print("done") or 3)\n'
            'os.kill(os.getpid(), signal.SIGINT)\n'
            'time.sleep(30)\n')
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=repo), timeout=60,
                        check=False, preexec_fn=delivered_as_a_terminal_does)
  assert (done.returncode, done.stdout, done.stderr) == (3, 'done\n', '')
