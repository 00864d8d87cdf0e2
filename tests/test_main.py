"""`python -m summarizer`: output forms, and one-line errors for bad input."""

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import textwrap

import pytest

from summarizer.__main__ import main, parse_args
from summarizer.config import DEFAULT_MODEL_DIR

from conftest import SMALL_CONFIG, write_model_dir
from conftest import make_special, no_hang

ARTICLE = 'The mayor of the city opened a new library on Friday, officials said.'


def run_main(capsys, *argv):
  status = main(list(argv))
  captured = capsys.readouterr()
  return status, captured.out, captured.err


@pytest.mark.slow
def test_summary_text_json_and_stream_agree(capsys, random_model_dir, tmp_path):
  path = tmp_path / 'a.txt'
  path.write_text(ARTICLE, encoding='utf-8')
  common = ('--model', random_model_dir, '--max-length', '8')
  status, plain, err = run_main(capsys, str(path), *common)
  # A random model may well repeat itself: the one warning it may get is that.
  assert status == 0 and plain.strip()
  assert all('likely undertrained' in line for line in err.splitlines())
  status, as_json, _ = run_main(capsys, '--text', ARTICLE, *common, '--json')
  (result,) = json.loads(as_json)
  assert result['summary_text'] == plain.strip()
  assert result['out_of_domain'] is None and result['article_perplexity'] > 1
  # Streaming is greedy search: the summary of --num-beams 1.
  status, streamed, _ = run_main(capsys, str(path), *common, '--stream')
  status, greedy, _ = run_main(capsys, str(path), *common, '--num-beams', '1')
  assert streamed.strip() == greedy.strip()


def _model_with(tmp_path, name, **changes):
  return write_model_dir(tmp_path / name, dataclasses.replace(SMALL_CONFIG, **changes))


@pytest.fixture
def bad_inputs(tmp_path, random_model_dir):
  """Each case: argv and a fragment the one-line error must contain."""
  (tmp_path / 'blank.txt').write_text('  \n\t\n', encoding='utf-8')
  (tmp_path / 'binary.bin').write_bytes(b'\x89PNG\x00\x01\x02')
  (tmp_path / 'latin1.txt').write_bytes('caf\xe9 au lait'.encode('latin-1'))
  corrupt = tmp_path / 'corrupt_model'
  write_model_dir(corrupt)
  (corrupt / 'model.pkl.gz').write_bytes(b'not a gzip file')
  small_vocab_model = tmp_path / 'small_vocab_model'
  write_model_dir(small_vocab_model)
  config = json.loads((small_vocab_model / 'config.json').read_text())
  config['vocab_size'] = 100
  (small_vocab_model / 'config.json').write_text(json.dumps(config))
  model = ('--model', random_model_dir)
  return [
      (['--text', '   ', *model], 'empty'),
      ([str(tmp_path / 'blank.txt'), *model], 'empty'),
      ([str(tmp_path / 'missing.txt'), *model], 'no such file'),
      ([str(tmp_path), *model], 'is a directory'),
      ([str(tmp_path / 'binary.bin'), *model], 'binary'),
      ([str(tmp_path / 'latin1.txt'), *model], 'not UTF-8'),
      (['--text', ARTICLE, '--model', str(tmp_path / 'nowhere')], 'not found'),
      (['--text', ARTICLE, '--model', str(tmp_path)], 'no config.json'),
      (['--text', ARTICLE, '--model', str(corrupt)], 'cannot load the weights'),
      (['--text', ARTICLE, '--model', str(small_vocab_model)], 'do not match'),
      (['--text', ARTICLE, '--method', 'beam', *model], 'invalid choice'),
      (['--text', ARTICLE, '--max-length', '0', *model], 'at least 1'),
  ]


def test_bad_input_is_one_line_and_status_2(capsys, bad_inputs):
  for argv, fragment in bad_inputs:
    try:
      status = main(argv)
    except SystemExit as e:  # argparse's errors exit from inside.
      status = e.code
    out, err = capsys.readouterr()
    assert status == 2, argv
    assert out == '', argv
    assert err.count('\n') == 1 and err.startswith('error: '), (argv, err)
    assert fragment in err, (argv, err)


def test_real_process_help_and_error(tmp_path):
  env = dict(os.environ, PYTHONWARNINGS='ignore')
  shown = subprocess.run([sys.executable, '-m', 'summarizer', '--help'],
                         capture_output=True, text=True, env=env, check=False)
  assert shown.returncode == 0 and 'examples:' in shown.stdout
  failed = subprocess.run(
      [sys.executable, '-m', 'summarizer', str(tmp_path / 'nope.txt')],
      capture_output=True, text=True, env=env, check=False)
  assert failed.returncode == 2
  assert failed.stderr == f'error: {tmp_path / "nope.txt"}: no such file\n'


@pytest.mark.slow
def test_real_process_prints_the_summary_and_exits_0(random_model_dir, capsys):
  # The command leaves through os._exit: what it printed must still arrive.
  env = dict(os.environ, PYTHONWARNINGS='ignore')
  done = subprocess.run(
      [sys.executable, '-m', 'summarizer', '--text', ARTICLE, '--model', random_model_dir,
       '--max-length', '6', '--json'],
      capture_output=True, text=True, env=env, check=False)
  assert done.returncode == 0 and done.stderr == ''
  assert main(['--text', ARTICLE, '--model', random_model_dir, '--max-length', '6',
               '--json']) == 0
  assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)


def test_a_reader_that_leaves_is_not_an_error(random_model_dir, monkeypatch):
  class ClosedPipe:
    def write(self, text):
      raise BrokenPipeError(32, 'Broken pipe')

    def flush(self):
      pass

  monkeypatch.setattr(sys, 'stdout', ClosedPipe())
  assert main(['--text', ARTICLE, '--model', random_model_dir, '--max-length', '4',
               '--stream']) == 0


def test_help_version_and_argument_errors_answer_before_trax_is_imported():
  code = textwrap.dedent('''
      import sys
      from summarizer.__main__ import parse_args
      for argv in (['--help'], ['--version'], ['--max-length', '0']):
        try:
          parse_args(argv)
        except SystemExit as e:
          print(argv[0], e.code)
      print(sorted(m for m in ('trax', 'tensorflow', 'jax') if m in sys.modules))
  ''')
  done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                        check=True)
  lines = done.stdout.splitlines()
  assert {'--help 0', '--version 0', '--max-length 2'} <= set(lines)
  assert 'summarizer 0.' in done.stdout and lines[-1] == '[]'  # The version; no Trax.


@pytest.mark.slow
def test_an_article_with_a_byte_order_mark_is_summarised_as_without(capsys, random_model_dir,
                                                                      tmp_path):
  outputs = []
  for encoding in ('utf-8', 'utf-8-sig'):  # utf-8-sig: as Notepad and Excel save it.
    path = tmp_path / f'{encoding}.txt'
    path.write_text(ARTICLE, encoding=encoding)
    assert main([str(path), '--model', random_model_dir, '--max-length', '4', '--json']) == 0
    outputs.append(json.loads(capsys.readouterr().out))
  assert outputs[0] == outputs[1]


def test_an_article_that_is_no_regular_file_is_one_line_and_status_2(capsys, tmp_path,
                                                                      random_model_dir):
  for special in ('fifo', 'zero'):
    path = tmp_path / special
    kind = make_special(path, special)
    with no_hang():
      assert main([str(path), '--model', random_model_dir]) == 2
    assert capsys.readouterr() == ('', f'error: {path}: not a regular file ({kind})\n')


@pytest.mark.slow
def test_closed_or_full_output_and_closed_input_are_one_line_in_a_real_shell(random_model_dir,
                                                                             tmp_path):
  # `>&-` and `<&-` leave Python no stream at all; /dev/full fails the final flush.
  path = tmp_path / 'a.txt'
  path.write_text(ARTICLE, encoding='utf-8')
  command = shlex.join([sys.executable, '-m', 'summarizer', '--model', random_model_dir,
                        '--max-length', '4'])
  summarize = f'{command} {shlex.quote(str(path))}'
  script = f"""
      {summarize} >&-; echo "closed output: $?" >&2
      {summarize} >/dev/full; echo "full disk: $?" >&2
      {command} - <&-; echo "closed input: $?" >&2
      {summarize} | head -c 1 >/dev/null; echo "reader left: ${{PIPESTATUS[0]}}" >&2
  """
  done = subprocess.run(['bash', '-c', script], capture_output=True, text=True, timeout=300,
                        env=dict(os.environ, PYTHONWARNINGS='ignore'), check=False)
  # A random model's summary may repeat itself: the one warning it may get is that.
  said = [line for line in done.stderr.splitlines() if 'likely undertrained' not in line]
  assert said == [
      'error: standard output is closed: nowhere to write the summary', 'closed output: 2',
      'error: cannot write the output (No space left on device); it is lost', 'full disk: 2',
      'error: standard input is closed: no article to read', 'closed input: 2',
      'reader left: 0'], done.stderr


@pytest.mark.slow
def test_the_summary_reaches_stdout_whatever_stderr_is_and_an_unwritable_stdout_is_one_line(
    random_model_dir, tmp_path):
  # `2>&-` leaves Python no standard error (sys.stderr is None) and frees descriptor 2;
  # `1</dev/null` opens standard output for reading only.
  path = tmp_path / 'a.txt'
  path.write_text(ARTICLE, encoding='utf-8')
  summarize = shlex.join([sys.executable, '-m', 'summarizer', '--model', random_model_dir,
                          '--max-length', '4', str(path)])
  env = dict(os.environ, PYTHONWARNINGS='ignore')
  expected = subprocess.run(['bash', '-c', summarize], capture_output=True, text=True,
                            timeout=300, env=env, check=True).stdout
  closed_err = subprocess.run(['bash', '-c', f'{summarize} 2>&-; echo "status $?"'],
                              capture_output=True, text=True, timeout=300, env=env, check=False)
  assert closed_err.stdout == expected + 'status 0\n'
  script = f"""
      {summarize} 1</dev/null; echo "read-only output: $?" >&2
      ({summarize} 1</dev/null 2>&-); echo "and no stderr: $?" >&2
  """
  done = subprocess.run(['bash', '-c', script], capture_output=True, text=True, timeout=300,
                        env=env, check=False)
  said = [line for line in done.stderr.splitlines() if 'likely undertrained' not in line]
  assert said == ['error: standard output is not open for writing: nowhere to write the output',
                  'read-only output: 2', 'and no stderr: 2'], done.stderr


def test_a_temperature_that_underflows_is_one_line_and_status_2(capsys):
  with pytest.raises(SystemExit) as exited:
    parse_args(['--text', 'Rain fell.', '--temperature', '1e-320'])
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'too small to sample with' in err, err


def test_a_tilde_after_an_equals_sign_is_the_home_folder_in_every_commands_paths(
    monkeypatch, tmp_path):
  # The shell expands ~ only at the start of a word: --flag=~/x arrives as typed.
  # pylint: disable=g-import-not-at-top
  from summarizer import bench, evaluate, train, vocab
  from summarizer.explorer import __main__ as explorer_command
  from summarizer.evaluation import benchmarks
  monkeypatch.setenv('HOME', str(tmp_path))
  home = str(tmp_path)
  args = parse_args(['--model=~/m', '--vocab=~/v.subwords', '--explain=~/page.html', '~/a.txt'])
  assert (args.model, args.vocab, args.explain, args.files) == (
      f'{home}/m', f'{home}/v.subwords', f'{home}/page.html', [f'{home}/a.txt'])
  run = train.parse_args(['--output-dir=~/run', '--export-to=~/model', '--init-from=~/start',
                          '--vocab=~/v.subwords', '--data=~/stories.jsonl', '--data-dir=~/tfds'])
  assert (run.output_dir, run.export_to, run.init_from, run.vocab, run.data, run.data_dir) == (
      f'{home}/run', f'{home}/model', f'{home}/start', f'{home}/v.subwords',
      f'{home}/stories.jsonl', f'{home}/tfds')
  assert train.parse_args(['--data=tfds:cnn_dailymail']).data == 'tfds:cnn_dailymail'
  scored = evaluate.parse_args(['--model=~/m', '--data=~/s.jsonl', '--data-dir=~/tfds',
                                '--output-dir=~/eval'])
  assert (scored.model, scored.data, scored.data_dir, scored.output_dir) == (
      f'{home}/m', f'{home}/s.jsonl', f'{home}/tfds', f'{home}/eval')
  pictured = explorer_command.parse_args(['--picture', '~/a.txt', '~/a.png', '--model=~/m'])
  assert (pictured.picture, pictured.model) == ([f'{home}/a.txt', f'{home}/a.png'], f'{home}/m')
  assert explorer_command.parse_args(['--measure=~/p.html']).measure == f'{home}/p.html'
  seen = {}

  def fake_build_vocab(data, size, out, data_dir, *unused, **also_unused):
    seen['vocab'] = (data, out, data_dir)
    return dataclasses.make_dataclass('Encoder', ['vocab_size'])(size)

  monkeypatch.setattr(vocab, 'build_vocab', fake_build_vocab)
  assert vocab.main(['--data=~/s.jsonl', '--out=~/v.subwords', '--data-dir=~/tfds']) == 0
  assert seen['vocab'] == (f'{home}/s.jsonl', f'{home}/v.subwords', f'{home}/tfds')

  def fake_bench(sections, preset, model, *unused):
    seen['bench'] = model
    return {}

  monkeypatch.setattr(benchmarks, 'run', fake_bench)
  assert bench.main(['--only', 'import', '--model=~/m', '--json']) == 0
  assert seen['bench'] == f'{home}/m'


def test_a_tilde_that_names_no_user_is_refused_in_one_line(capsys):
  with pytest.raises(SystemExit) as refused:
    parse_args(['--model=~no_such_user_here/m', '--text', ARTICLE])
  assert refused.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: argument --model: ')
  assert 'no user named no_such_user_here' in err


def test_explain_force_keeps_the_mode_of_the_page_it_replaces(random_model_dir, tmp_path, capsys):
  page = tmp_path / 'private.html'
  page.write_text('mine')
  page.chmod(0o600)
  assert main(['--text', ARTICLE, '--model', random_model_dir, '--max-length', '4',
               '--explain', str(page), '--force']) == 0
  capsys.readouterr()
  assert page.read_text() != 'mine' and (page.stat().st_mode & 0o777) == 0o600


@pytest.mark.slow
def test_a_relative_explain_path_from_a_deleted_folder_is_one_line(tmp_path):
  gone = tmp_path / 'gone'
  gone.mkdir()
  script = (f'cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && '
            + shlex.join([sys.executable, '-m', 'summarizer', '--text', ARTICLE,
                          '--explain', 'rel.html']))
  done = subprocess.run(['bash', '-c', script], capture_output=True, text=True, timeout=300,
                        env=dict(os.environ, PYTHONWARNINGS='ignore'), check=False)
  assert done.returncode == 2
  assert done.stderr == ('error: rel.html: the current folder no longer exists; give the path '
                         'from /\n')


@pytest.mark.parametrize('encoding,name', [('utf-16', 'UTF-16'), ('utf-16-le', 'UTF-16LE'),
                                           ('utf-32', 'UTF-32')])
def test_an_article_in_a_wide_encoding_is_named_as_that_text(tmp_path, capsys, encoding, name):
  path = tmp_path / 'wide.txt'
  path.write_bytes(ARTICLE.encode(encoding))
  assert main([str(path)]) == 2
  assert capsys.readouterr().err == (f'error: {path}: {name} text; the summarizer reads UTF-8 '
                                     f'(convert it: iconv -f {name} -t UTF-8)\n')


def test_a_models_file_given_for_its_folder_says_so(capsys):
  config = os.path.join(DEFAULT_MODEL_DIR, 'config.json')
  assert main(['--text', ARTICLE, '--model', config]) == 2
  assert capsys.readouterr().err == (f'error: {config}: a file, not a folder; give the model '
                                     f'directory that holds it ({DEFAULT_MODEL_DIR})\n')


def test_an_undecodable_file_name_is_shown_by_its_bytes(tmp_path):
  done = subprocess.run([sys.executable, '-m', 'summarizer', os.fsdecode(b'\xff\xfe.txt')],
                        cwd=tmp_path, capture_output=True, timeout=300,
                        env=dict(os.environ, PYTHONWARNINGS='ignore'), check=False)
  assert done.returncode == 2
  assert done.stderr == b'error: \\xff\\xfe.txt: no such file\n'
