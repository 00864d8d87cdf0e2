"""The benchmark command runs and reports; its numbers are not asserted here."""

import pytest

from summarizer import bench


def test_decode_benchmark_checks_identical_output(random_model_dir):
  result = bench.bench_decode(random_model_dir, article_tokens=128, summary_tokens=8)
  assert result['identical'] and result['greedy_s'] > 0 and result['fast_s'] > 0
  assert 'decoding 128+8 tokens' in bench.table({'decode': result})


def test_table_states_each_goal():
  text = bench.table({'import': {'summarizer_s': 5.0, 'trax_s': 20.0, 'ratio': 0.25},
                      'cli': {'memory_mb': 1300, 'seconds': 9.0}})
  assert 'meets goal ≤ 0.3' in text and 'MISSES goal ≤ 1200' in text
  assert 'meets goal ≤ 10' in text


def test_unknown_section_is_one_line(capsys):
  with pytest.raises(SystemExit) as exited:
    bench.main(['--only', 'import,warp'])
  assert exited.value.code == 2
  assert capsys.readouterr().err == ('error: unknown section(s) warp; choose from '
                                     'import, train, decode, data, cli (see --help)\n')


def test_training_benchmark_keeps_trax_loop_quiet(capfd):
  import numpy as np
  from summarizer._trax import tl
  from summarizer.model import TransformerLM
  x = np.ones((2, 8), np.int32)
  model = TransformerLM(vocab_size=16, d_model=8, d_ff=16, n_layers=1, n_heads=2,
                        dropout=0.0, max_len=16, mode='train')
  loop = bench._warm_loop(model, tl.CrossEntropyLoss(),
                          [(x, x, np.ones_like(x, np.float32))])
  (seconds,) = bench._seconds_per_pass([loop], 1, rounds=1)
  assert seconds > 0 and loop.step == 2  # One warm step, one timed.
  out, err = capfd.readouterr()
  assert out == '' and 'output_dir' not in err


def test_stages_of_the_summarize_command_are_timed(random_model_dir, tmp_path):
  sample = tmp_path / 'story.txt'
  sample.write_text('Heavy rain closed the coast road on Monday, officials said.\n',
                    encoding='utf-8')
  stages = bench.bench_stages(str(sample), random_model_dir)
  assert set(stages) == {'import_s', 'load_s', 'first_token_s', 'other_tokens_s',
                         'other_tokens'}
  assert all(stages[k] >= 0 for k in stages) and stages['import_s'] > 0
  assert 0 <= stages['other_tokens'] < 64  # The first token is counted apart.
  row = bench.table({'cli': {'memory_mb': 900, 'seconds': 7.0, 'stages': stages}})
  assert f'import {stages["import_s"]} s' in row
