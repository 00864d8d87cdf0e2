"""The vocabulary builder and its command."""

from summarizer import detokenize, tokenize
from summarizer import text
from summarizer import vocab as vocab_command


def test_vocab_builder_writes_a_loadable_vocabulary(tmp_path, capsys):
  out = tmp_path / 'small.subwords'
  assert vocab_command.main(['--data', 'news', '--size', '400', '--limit', '150',
                             '--out', str(out)]) == 0
  ids = tokenize('Rain fell in the town.', vocab_file=str(out))
  assert detokenize(ids[:-1], vocab_file=str(out)) == 'Rain fell in the town.'
  assert 300 < text.vocab_size(str(out)) < 600
  assert vocab_command.main(['--data', 'news', '--size', '10', '--out',
                             str(tmp_path / 'tiny.subwords')]) == 2
  assert 'too small' in capsys.readouterr().err


def test_an_existing_file_is_replaced_only_with_force(tmp_path, capsys):
  out = tmp_path / 'mine.subwords'
  out.write_text('my vocabulary\n')
  small = ['--data', 'news', '--size', '400', '--limit', '150', '--out', str(out)]
  assert vocab_command.main(small) == 2
  assert capsys.readouterr().err == f'error: {out} exists: pass --force to overwrite it\n'
  assert out.read_text() == 'my vocabulary\n'
  assert vocab_command.main(small + ['--force']) == 0
  assert 300 < text.vocab_size(str(out)) < 600


def test_the_help_example_writes_under_runs_not_over_the_shipped_vocabulary():
  example = [line.split() for line in vocab_command.__doc__.splitlines()
             if 'python -m summarizer.vocab' in line]
  assert example and all(words[words.index('--out') + 1].startswith('runs/')
                         for words in example)


def test_an_out_that_cannot_be_written_is_one_line_before_the_build(tmp_path, capsys):
  a_file = tmp_path / 'a_file'
  a_file.write_text('')
  long_name = 'n' * 241 + '.subwords'  # 250 characters: fits, a temporary name beside it too.
  for out, message in (
      (a_file / 'v.subwords', f'{a_file / "v.subwords"}: cannot be written ({a_file} is a file, '
                              'not a folder)'),
      ('/proc/v.subwords', '/proc/v.subwords: cannot be written in /proc'),
      (tmp_path / ('m' * 256), 'File name too long')):
    assert vocab_command.main(['--out', str(out), '--limit', '5']) == 2
    err = capsys.readouterr().err
    assert err.startswith('error: ') and err.count('\n') == 1 and message in err, err
  assert sorted(p.name for p in tmp_path.iterdir()) == ['a_file']
  assert vocab_command.main(['--out', str(tmp_path / long_name), '--limit', '5']) == 0
  assert (tmp_path / long_name).exists()


def _full_disk_store(self, path, add_single_quotes=True):
  """TensorFlow's file writer on a full disk: its ResourceExhaustedError, not an OSError."""
  del self, add_single_quotes
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  raise tf.errors.ResourceExhaustedError(None, None, f'{path}; No space left on device')


def test_a_full_disk_under_tensorflows_writer_is_one_line_and_the_old_file_kept(
    tmp_path, capsys, monkeypatch):
  from summarizer._trax import trax  # pylint: disable=g-import-not-at-top
  encoder = trax.data.text_encoder.SubwordTextEncoder
  monkeypatch.setattr(encoder, 'store_to_file', _full_disk_store)
  out = tmp_path / 'mine.subwords'
  out.write_text('my vocabulary\n')
  argv = ['--data', 'news', '--size', '400', '--limit', '150', '--out', str(out), '--force']
  assert vocab_command.main(argv) == 2
  err = capsys.readouterr().err.splitlines()  # The progress lines, then the error.
  assert err[-1] == (f'error: {out}: cannot write the vocabulary (No space left on device); '
                     'the earlier one is kept')
  assert not any(line.startswith(('Traceback', 'tensorflow')) for line in err)
  assert out.read_text() == 'my vocabulary\n'
  assert sorted(p.name for p in tmp_path.iterdir()) == ['mine.subwords']  # No temporary left.
  assert vocab_command.main(argv[:-3] + ['--out', str(tmp_path / 'new.subwords')]) == 2
  assert capsys.readouterr().err.endswith('nothing was written\n')
  assert sorted(p.name for p in tmp_path.iterdir()) == ['mine.subwords']
