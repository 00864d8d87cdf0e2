"""Training: the course's Loop, resume rules, Ctrl-C, kills, two devices."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest

from summarizer import checkpoint, config as config_module, data, news, runs, text, train
from summarizer._trax import quiet_loop_log, training
from summarizer.errors import SummarizerError
from summarizer.model import TransformerLM
from conftest import COURSE_SHAPED, SMALL_CONFIG, write_course_dir

MICRO = dataclasses.replace(SMALL_CONFIG, preset='micro', max_len=256,
                            max_joint_length=256, truncate=True, boundaries=(256,),
                            batch_sizes=(2, 1))


@pytest.fixture(autouse=True)
def micro_preset(monkeypatch):
  monkeypatch.setitem(config_module.PRESETS, 'micro', MICRO)


def micro_args(output_dir, **changes):
  base = train.TrainArgs(preset='micro', max_steps=4, eval_steps=2, save_steps=2,
                         eval_batches=1, output_dir=str(output_dir), progress=False,
                         calibration_articles=3)
  return dataclasses.replace(base, **changes)


def test_train_writes_a_self_describing_run(tmp_path):
  out = tmp_path / 'run'
  summary = train.train(micro_args(out))
  assert summary['step'] == 4 and not summary['interrupted']
  assert summary['eval_loss'] is not None and summary['tokens_per_second'] > 0
  for name in ('config.json', 'vocab.subwords', 'model.pkl.gz',
               'model.weights.npy.gz', 'model.opt_slots0.npy.gz', 'loss.png',
               'train.log'):
    assert (out / name).exists(), name
  values = json.loads((out / 'config.json').read_text())
  assert values['preset'] == 'micro' and values['d_model'] == 32
  assert values['data'] == 'news' and values['vocab_file'] == 'vocab.subwords'
  assert 'step 4: train loss' in (out / 'train.log').read_text()
  model, config, _ = checkpoint.load_model(str(out))
  assert config == MICRO
  resumed = train.train(micro_args(out, resume=True, max_steps=4,
                                   export_to=str(tmp_path / 'shipped')))
  assert resumed['exported_to'] == str(tmp_path / 'shipped')
  assert sorted(p.name for p in (tmp_path / 'shipped').iterdir()) == [
      '.summarizer-export.json', 'config.json', 'model.pkl.gz', 'model.weights.npy.gz',
      'vocab.subwords']
  exported = json.loads((tmp_path / 'shipped' / 'config.json').read_text())
  assert exported['trained_steps'] == 4 and exported['d_model'] == 32
  assert checkpoint.load_model(str(tmp_path / 'shipped'))[1] == MICRO


def test_init_from_starts_a_new_run_from_trained_weights(tmp_path):
  source = tmp_path / 'source'
  train.train(micro_args(source, max_steps=2))
  trained, _, _ = checkpoint.load_model(str(source))
  # A zero learning rate keeps the weights as they were loaded (but for
  # Adam's weight decay, a factor 1 - 1e-5 a step).
  out = tmp_path / 'tuned'
  summary = train.train(micro_args(out, max_steps=2, learning_rate=0.0,
                                   init_from=str(source)))
  assert summary['step'] == 2  # A new run: steps count from 0.
  tuned, _, _ = checkpoint.load_model(str(out))
  for a, b in zip(jax.tree_util.tree_leaves(trained.weights),
                  jax.tree_util.tree_leaves(tuned.weights)):
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=0)
  assert json.loads((out / 'config.json').read_text())['init_from'] == str(source)
  train.train(micro_args(out, max_steps=3, resume=True))
  assert json.loads((out / 'config.json').read_text())['init_from'] == str(source)
  # Without it, a fresh run does not start from those weights.
  fresh = tmp_path / 'fresh'
  train.train(micro_args(fresh, max_steps=2, learning_rate=0.0))
  first = jax.tree_util.tree_leaves(checkpoint.load_model(str(fresh))[0].weights)[0]
  assert not np.allclose(np.asarray(first), rtol=1e-4, atol=0,
                         b=np.asarray(jax.tree_util.tree_leaves(trained.weights)[0]))
  other = dataclasses.replace(MICRO, d_model=64)
  config_module.PRESETS['other'] = other
  try:
    with pytest.raises(SummarizerError, match='d_model 32 in .*, 64 requested'):
      train.train(micro_args(tmp_path / 'x', preset='other', init_from=str(source)))
  finally:
    del config_module.PRESETS['other']
  with pytest.raises(SummarizerError, match='--init-from.*--resume'):
    train.train(micro_args(out, resume=True, init_from=str(source)))


def test_output_dir_rules(tmp_path):
  out = tmp_path / 'run'
  train.train(micro_args(out, max_steps=2))
  with pytest.raises(SummarizerError, match='--resume.*--overwrite-output-dir'):
    train.train(micro_args(out))
  other = dataclasses.replace(MICRO, d_model=64)
  config_module.PRESETS['other'] = other
  try:
    with pytest.raises(SummarizerError, match='d_model 32 in the checkpoint, 64 requested'):
      train.train(micro_args(out, preset='other', resume=True))
  finally:
    del config_module.PRESETS['other']
  with pytest.raises(SummarizerError, match='no checkpoint'):
    train.train(micro_args(tmp_path / 'empty', resume=True))
  resumed = train.train(micro_args(out, resume=True, max_steps=4))
  assert resumed['step'] == 4
  (out / 'notes.txt').write_text('mine')
  fresh = train.train(micro_args(out, overwrite_output_dir=True, max_steps=2))
  assert fresh['step'] == 2
  assert (out / 'notes.txt').read_text() == 'mine'  # Not a run file: kept.


def test_cli_refuses_with_one_line(tmp_path, capsys):
  (tmp_path / 'x').write_text('x')
  assert train.main(['--output-dir', str(tmp_path), '--preset', 'micro',
                     '--no-progress']) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'not empty' in err


@pytest.mark.parametrize('flag', ['--copy-fraction', '--short-fraction'])
def test_lesson_fractions_outside_0_to_1_are_refused(tmp_path, capsys, flag):
  with pytest.raises(SystemExit) as exited:
    train.main(['--output-dir', str(tmp_path / 'run'), flag, '1.5'])
  assert exited.value.code == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and f'{flag} must be between 0 and 1' in err
  assert not (tmp_path / 'run').exists()


def test_interrupted_save_is_finished_or_discarded(tmp_path):
  out = tmp_path / 'run'
  train.train(micro_args(out, max_steps=2))
  before = [(out / f).read_bytes() for f in ('model.pkl.gz', 'model.weights.npy.gz')]

  def dies_while_writing(basename):
    (out / f'{basename}.weights.npy.gz').write_bytes(b'half a file')
    raise KeyboardInterrupt

  with pytest.raises(KeyboardInterrupt):
    checkpoint.save_atomically(dies_while_writing, str(out))
  checkpoint.recover(str(out))
  after = [(out / f).read_bytes() for f in ('model.pkl.gz', 'model.weights.npy.gz')]
  assert after == before and not list(out.glob('model.staged*'))
  # A save marked complete but only half renamed is finished on recovery.
  for name in ('pkl.gz', 'weights.npy.gz', 'opt_slots0.npy.gz'):
    (out / f'model.staged.{name}').write_bytes((out / f'model.{name}').read_bytes())
  (out / 'model.staged.done').write_text('complete\n')
  os.replace(out / 'model.staged.opt_slots0.npy.gz', out / 'model.opt_slots0.npy.gz')
  checkpoint.recover(str(out))
  assert not list(out.glob('model.staged*'))
  checkpoint.load_model(str(out))


RUNNER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {tests!r})
    from conftest import SMALL_CONFIG
    import dataclasses
    from summarizer import config, train
    config.PRESETS['micro'] = dataclasses.replace(
        SMALL_CONFIG, preset='micro', max_len=256, max_joint_length=256,
        truncate=True, boundaries=(256,), batch_sizes=(2, 1))
    sys.exit(train.main(sys.argv[1:]))
''')


def start_training(out, *extra, env=None):
  code = RUNNER.format(tests=os.path.dirname(__file__))
  argv = [sys.executable, '-c', code, '--preset', 'micro', '--output-dir',
          str(out), '--eval-batches', '1', '--no-progress',
          '--calibration-articles', '3', *extra]
  return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env)


def wait_for(path, process, timeout=120):
  deadline = time.time() + timeout
  while not os.path.exists(path):
    assert process.poll() is None, process.communicate()
    assert time.time() < deadline, 'timed out'
    time.sleep(0.05)


@pytest.mark.parametrize('stop,status', [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_saves_and_exits_then_the_run_resumes(tmp_path, stop, status):
  # Ctrl-C, and the SIGTERM a job scheduler sends before it stops a job.
  out = tmp_path / 'run'
  process = start_training(out, '--max-steps', '100000', '--save-steps', '100000',
                           '--eval-steps', '100000')
  wait_for(out / 'train.log', process)
  time.sleep(3)
  process.send_signal(stop)
  stdout, err = process.communicate(timeout=120)
  assert process.returncode == status, err
  assert f'{stop.name}: stopping after this step' in err
  assert 'interrupted: checkpoint of step' in err and f'stopped_by={stop.name}' in stdout
  checkpoint.load_model(str(out))
  step = _saved_step(out)
  assert step > 0
  resumed = start_training(out, '--resume', '--max-steps', str(step + 2),
                           '--eval-steps', '1000')
  stdout, err = resumed.communicate(timeout=180)
  assert resumed.returncode == 0, err
  assert f'from step {step} to {step + 2}' in stdout


def _saved_step(out):
  return checkpoint.saved_step(str(out))


def test_killed_while_saving_every_step_still_resumes(tmp_path):
  out = tmp_path / 'run'
  process = start_training(out, '--max-steps', '100000', '--save-steps', '1',
                           '--eval-steps', '100000')
  wait_for(out / 'model.pkl.gz', process)
  time.sleep(2.5)  # Saving every step: a kill now most likely lands mid-save.
  process.kill()
  process.communicate()
  resumed = start_training(out, '--resume', '--max-steps', '1',
                           '--eval-steps', '1000')
  stdout, err = resumed.communicate(timeout=180)
  assert resumed.returncode == 0, err
  assert not list(out.glob('model.staged*'))
  checkpoint.load_model(str(out))


def test_data_parallel_over_two_cpu_devices(tmp_path):
  env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=2')
  process = start_training(tmp_path / 'run', '--max-steps', '2',
                           '--eval-steps', '2', env=env)
  stdout, err = process.communicate(timeout=180)
  assert process.returncode == 0, err
  assert '2 device(s)' in stdout
  assert 'step 2: train loss' in stdout


def test_lineage_longest_article_and_calibration_are_recorded(tmp_path):
  source = tmp_path / 'source'
  train.train(micro_args(source, max_steps=2))
  values = json.loads((source / 'config.json').read_text())
  assert [run['steps'] for run in values['lineage']] == [2]
  assert values['lineage'][0]['init_from'] is None and values['total_steps'] == 2
  # The longest article read: the news articles that fit micro's 256 tokens
  # (longer ones are cut to fit, as the tiny preset does).
  assert 150 < values['max_article_tokens'] <= 256
  assert values['perplexity_calibration']['n'] == 3
  tuned = tmp_path / 'tuned'
  train.train(micro_args(tuned, max_steps=3, init_from=str(source),
                         long_fraction=1.0, export_to=str(tmp_path / 'shipped')))
  values = json.loads((tuned / 'config.json').read_text())
  assert [run['steps'] for run in values['lineage']] == [2, 3]
  assert values['lineage'][1]['init_from'] == str(source)
  assert values['lineage'][1]['long_fraction'] == 1.0 and values['total_steps'] == 5
  exported = json.loads((tmp_path / 'shipped' / 'config.json').read_text())
  # An exported model names its lineage, not a directory that may be itself.
  assert 'init_from' not in exported and exported['lineage'] == values['lineage']
  assert exported['perplexity_calibration'] == values['perplexity_calibration']


def test_evaluation_weighs_the_summary_only(tmp_path):
  # With a zero learning rate both runs keep their (same) initial weights:
  # the article's weight in training must not change the eval metric.
  losses = [train.train(micro_args(tmp_path / str(weight), max_steps=2, learning_rate=0.0,
                                   article_loss_weight=weight))['eval_loss']
            for weight in (0.0, 1.0)]
  assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_vocabulary_follows_the_preset_and_the_data(tmp_path, monkeypatch, capsys):
  args = micro_args(tmp_path / 'run')
  assert runs.chosen_vocab(args) == config_module.DEFAULT_VOCAB_FILE
  assert runs.chosen_vocab(dataclasses.replace(args, preset='course')) == \
      config_module.COURSE_VOCAB_FILE
  assert runs.chosen_vocab(dataclasses.replace(args, data='stories.jsonl')) is None
  # tiny on other data: a vocabulary of its own, built into the run directory.
  corpus = tmp_path / 'corpus.jsonl'
  rows = [{'article': s.article, 'highlights': s.highlights}
          for s in news.stories('train', 300)]
  corpus.write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')
  monkeypatch.setitem(config_module.PRESETS, 'micro-vocab',
                      dataclasses.replace(MICRO, vocab_size=512))
  train.train(micro_args(tmp_path / 'own', preset='micro-vocab', data=str(corpus),
                         max_steps=1, eval_steps=1, calibration_articles=0))
  assert 'building a 512-subword vocabulary from the training split' in capsys.readouterr().out
  built = tmp_path / 'own' / 'vocab.subwords'
  assert 300 < text.vocab_size(str(built)) <= 640
  assert text.vocab_fingerprint(str(built)) != text.vocab_fingerprint()


def test_init_from_the_courses_checkpoint(tmp_path, monkeypatch):
  course_dir = write_course_dir(tmp_path)
  shaped = dataclasses.replace(config_module.PRESETS['course'], preset='course-shaped',
                               max_joint_length=256, boundaries=(256,), batch_sizes=(2, 1),
                               **COURSE_SHAPED)
  monkeypatch.setitem(config_module.PRESETS, 'course-shaped', shaped)
  out = tmp_path / 'tuned'
  train.train(micro_args(out, preset='course-shaped', init_from=course_dir, max_steps=1,
                         eval_steps=1, learning_rate=0.0, calibration_articles=0))
  # The course's vocabulary comes with it, and its weights are the start.
  assert text.vocab_fingerprint(str(out / 'vocab.subwords')) == \
      text.vocab_fingerprint(config_module.COURSE_VOCAB_FILE)
  start = jax.tree_util.tree_leaves(checkpoint.load_model(course_dir)[0].weights)
  tuned = jax.tree_util.tree_leaves(checkpoint.load_model(str(out))[0].weights)
  for a, b in zip(start, tuned):
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-7)
  lineage = json.loads((out / 'config.json').read_text())['lineage']
  assert lineage[0]['steps'] == 500000 and lineage[1]['init_from'] == course_dir


def test_the_courses_training_loop_trains_on_the_courses_streams(tmp_path):
  # The course's streams: (inputs, targets, weights) batches, bucketed by length.
  def stream(split):
    return data.batches('news', split, boundaries=(128, 256, 512), batch_sizes=(8, 4, 2, 1),
                        repeat=True, n_devices=1)

  loop = train.training_loop(TransformerLM, stream('train'), stream('validation'),
                             output_dir=str(tmp_path / 'model'))
  assert isinstance(loop, training.Loop)
  with quiet_loop_log():
    loop.run(10)
  assert loop.step == 10
  assert checkpoint.saved_step(str(tmp_path / 'model')) == 10  # A checkpoint every 10 steps.
  (step, loss), = loop.history.get('eval', 'metrics/CrossEntropyLoss')[-1:]
  assert step == 10 and 0 < loss < 20


def test_the_course_preset_drops_over_long_examples_and_tiny_cuts_them():
  course, tiny = micro_args('x', preset='course'), micro_args('x', preset='tiny')
  assert runs.resolve_config(course).truncate is False  # The course's FilterByLength.
  assert runs.resolve_config(tiny).truncate is True
  assert runs.resolve_config(dataclasses.replace(course, truncate=True)).truncate is True
  assert train.parse_args(['--no-truncate']).truncate is False
  assert train.parse_args([]).truncate is None  # The preset decides.
