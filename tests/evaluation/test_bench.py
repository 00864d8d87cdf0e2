"""The benchmark command runs and reports; its numbers are not asserted here."""

import pytest

from summarizer import bench as bench_command
from summarizer.evaluation import benchmarks


@pytest.mark.slow
def test_decode_benchmark_checks_identical_output(random_model_dir):
  result = benchmarks.bench_decode(random_model_dir, article_tokens=128, summary_tokens=8)
  assert result['identical'] and result['greedy_s'] > 0 and result['fast_s'] > 0
  assert 'decoding 128+8 tokens' in benchmarks.table({'decode': result})


def test_table_states_each_goal():
  text = benchmarks.table({'import': {'summarizer_s': 5.0, 'trax_s': 20.0, 'ratio': 0.25},
                      'cli': {'memory_mb': 1300, 'seconds': 9.0}})
  assert 'meets goal ≤ 0.3' in text and 'MISSES goal ≤ 1200' in text
  assert 'meets goal ≤ 10' in text


def test_unknown_section_is_one_line(capsys):
  with pytest.raises(SystemExit) as exited:
    bench_command.main(['--only', 'import,warp'])
  assert exited.value.code == 2
  assert capsys.readouterr().err == ('error: unknown section(s) warp; choose from '
                                     'import, init, train, decode, data, cli, start, batch, '
                                     'beam, '
                                     'first-model, grading (see --help)\n')


def test_the_grading_rows_give_the_class_side_by_side_against_one_at_a_time():
  from summarizer.evaluation import class_grading
  result = {'submissions': 10, 'graders': 2, 'seconds_one': 300.0, 'seconds': 180.0,
            'seconds_per_submission': 18.0, 'goal_seconds': 20, 'scores': [20.0] * 20}
  [baseline, (measure, measured, ratio, goal)] = class_grading.rows(result)
  assert '10 submissions' in baseline[0] and baseline[1].startswith('300.0 s')
  assert '2 sandboxes at once' in measure and '18.0 s a submission' in measured
  assert ratio == '0.60' and goal.endswith('met')
  [_, (_, _, _, goal)] = class_grading.rows(dict(result, seconds_per_submission=25.0))
  assert goal.endswith('NOT MET')


@pytest.mark.slow
def test_training_benchmark_keeps_trax_loop_quiet(capfd):
  import numpy as np
  from summarizer._trax import tl
  from summarizer.model import TransformerLM
  x = np.ones((2, 8), np.int32)
  model = TransformerLM(vocab_size=16, d_model=8, d_ff=16, n_layers=1, n_heads=2,
                        dropout=0.0, max_len=16, mode='train')
  loop = benchmarks._warm_loop(model, tl.CrossEntropyLoss(),
                          [(x, x, np.ones_like(x, np.float32))])
  (seconds,) = benchmarks._seconds_per_pass([loop], 1, rounds=1)
  assert seconds > 0 and loop.step == 2  # One warm step, one timed.
  out, err = capfd.readouterr()
  assert out == '' and 'output_dir' not in err


@pytest.mark.slow
def test_stages_of_the_summarize_command_are_timed(random_model_dir, tmp_path):
  sample = tmp_path / 'story.txt'
  sample.write_text('Heavy rain closed the coast road on Monday, officials said.\n',
                    encoding='utf-8')
  stages = benchmarks.bench_stages(str(sample), random_model_dir)
  assert set(stages) == {'import_s', 'load_s', 'first_token_s', 'other_tokens_s',
                         'other_tokens'}
  assert all(stages[k] >= 0 for k in stages) and stages['import_s'] > 0
  assert 0 <= stages['other_tokens'] < 64  # The first token is counted apart.
  row = benchmarks.table({'cli': {'memory_mb': 900, 'seconds': 7.0, 'stages': stages}})
  assert f'import {stages["import_s"]} s' in row


@pytest.mark.slow
def test_batch_and_beam_benchmarks_report_side_by_side(random_model_dir):
  batch = benchmarks.bench_batch(random_model_dir, n_articles=5, batch_size=4, max_length=6)
  assert batch['identical'] and batch['articles'] == 5 and batch['ratio'] > 0
  searches = benchmarks.BEAM_SEARCHES[:1] + benchmarks.BEAM_SEARCHES[-1:]
  rows = benchmarks.bench_beam(random_model_dir, n_articles=3, joined=2, max_length=6,
                          batch_size=2, searches=searches)
  assert [(r['search'], r['join'], r['articles']) for r in rows] == [
      ('greedy', 1, 3), (searches[1][0], 1, 3), ('greedy', 2, 2), (searches[1][0], 2, 2)]
  assert all(0 <= r['trigram_repeats'] <= 1 and r['ms_per_article'] > 0 for r in rows)
  text = benchmarks.table({'batch': batch, 'beam': rows})
  assert 'batch 1 vs 4' in text and ('meets goal ≥ 4' in text or 'MISSES goal ≥ 4' in text)
  assert '3 test stories' in text and '2 joined test stories' in text


def test_a_trigram_repeat_is_three_words_twice():
  assert benchmarks.repeats_a_trigram('the cat sat . The cat sat down')
  assert not benchmarks.repeats_a_trigram('the cat sat on the cat')


def test_start_rows_state_the_goals_and_the_cache_saving():
  text = benchmarks.table({'start': {'sample': 'data/samples/sport.txt', 'command_s': 3.0,
                                'command_mb': 600, 'jax_s': 1.5, 'jax_mb': 200, 'ratio': 2.0,
                                'no_cache_s': 6.0, 'import_s': 1.2, 'repeats': 3}})
  assert 'meets goal ≤ 2.5' in text and 'MISSES goal ≤ 2' in text
  assert 'MISSES goal ≤ 500' in text and 'meets goal ≤ 1.5' in text
  assert '| 6.0 s ' in text and '4.00x' in text


def test_the_training_bench_feeds_each_preset_ids_its_model_has():
  # The quick preset's model has 1,024 ids: the 2k vocabulary's tokens would fall outside it.
  for name in ('tiny', 'quick'):
    config = benchmarks.get_preset(name)
    batches = benchmarks._fixed_batches(config, 2)  # pylint: disable=protected-access
    assert max(int(batch[0].max()) for batch in batches) < config.vocab_size
