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
  assert vocab_command.main(['--data', 'news', '--size', '10', '--out', str(out)]) == 2
  assert 'too small' in capsys.readouterr().err
