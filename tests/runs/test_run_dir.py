"""What a run starts from and records: output directories, vocabularies, start weights."""

import builtins
import collections
import dataclasses
import json
import os
import shutil

import jax
import numpy as np
import pytest

from summarizer import config as config_module
from summarizer import data
from summarizer import text
from summarizer import train as train_command
from summarizer.corpus import news
from summarizer.errors import SummarizerError
from summarizer.inference import layout
from summarizer.inference import model_directory
from summarizer.runs import prepare as run_prepare
from summarizer.runs import run_dir

from conftest import COURSE_SHAPED, write_course_dir
from conftest import MICRO, micro_args
from conftest import train_run


@pytest.mark.slow
def test_init_from_starts_a_new_run_from_trained_weights(tmp_path):
  source = tmp_path / 'source'
  train_run(micro_args(source, max_steps=2))
  trained = model_directory.read(str(source)).model()
  # A zero learning rate keeps the weights as they were loaded (but for
  # Adam's weight decay, a factor 1 - 1e-5 a step).
  out = tmp_path / 'tuned'
  summary = train_run(micro_args(out, max_steps=2, learning_rate=0.0,
                                      init_from=str(source)))
  assert summary['step'] == 2  # A new run: steps count from 0.
  tuned = model_directory.read(str(out)).model()
  for a, b in zip(jax.tree_util.tree_leaves(trained.weights),
                  jax.tree_util.tree_leaves(tuned.weights)):
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=0)
  assert json.loads((out / 'config.json').read_text())['init_from'] == str(source)
  train_run(micro_args(out, max_steps=3, resume=True))
  assert json.loads((out / 'config.json').read_text())['init_from'] == str(source)
  # Without it, a fresh run does not start from those weights.
  fresh = tmp_path / 'fresh'
  train_run(micro_args(fresh, max_steps=2, learning_rate=0.0))
  first = jax.tree_util.tree_leaves(model_directory.read(str(fresh)).model().weights)[0]
  assert not np.allclose(np.asarray(first), rtol=1e-4, atol=0,
                         b=np.asarray(jax.tree_util.tree_leaves(trained.weights)[0]))
  other = dataclasses.replace(MICRO, d_model=64)
  config_module.PRESETS['other'] = other
  try:
    with pytest.raises(SummarizerError, match='d_model 32 in .*, 64 requested'):
      train_run(micro_args(tmp_path / 'x', preset='other', init_from=str(source)))
  finally:
    del config_module.PRESETS['other']
  with pytest.raises(SummarizerError, match='--init-from.*--resume'):
    train_run(micro_args(out, resume=True, init_from=str(source)))


@pytest.mark.slow
def test_output_dir_rules(tmp_path):
  out = tmp_path / 'run'
  train_run(micro_args(out, max_steps=2))
  with pytest.raises(SummarizerError, match='--resume.*--overwrite-output-dir'):
    train_run(micro_args(out))
  other = dataclasses.replace(MICRO, d_model=64)
  config_module.PRESETS['other'] = other
  try:
    with pytest.raises(SummarizerError, match=r'd_model 32 in the checkpoint \(its config.json and weights\), 64 requested'):
      train_run(micro_args(out, preset='other', resume=True))
  finally:
    del config_module.PRESETS['other']
  with pytest.raises(SummarizerError, match='no checkpoint'):
    train_run(micro_args(tmp_path / 'empty', resume=True))
  resumed = train_run(micro_args(out, resume=True, max_steps=4))
  assert resumed['step'] == 4
  (out / 'notes.txt').write_text('mine')
  fresh = train_run(micro_args(out, overwrite_output_dir=True, max_steps=2))
  assert fresh['step'] == 2
  assert (out / 'notes.txt').read_text() == 'mine'  # Not a run file: kept.


@pytest.mark.slow
def test_vocabulary_follows_the_preset_and_the_data(tmp_path, monkeypatch, capsys):
  args = micro_args(tmp_path / 'run')
  assert run_dir.chosen_vocab(args) == config_module.DEFAULT_VOCAB_FILE
  assert run_dir.chosen_vocab(dataclasses.replace(args, preset='course')) == \
      config_module.COURSE_VOCAB_FILE
  # The quick preset's 1,024 ids take the news corpus's 1k vocabulary, whose ids all fit;
  # tiny's 2,048 the 2k one.
  quick = run_dir.chosen_vocab(dataclasses.replace(args, preset='quick'))
  assert quick == config_module.NEWS_1K_VOCAB_FILE
  assert 900 < text.vocab_size(quick) <= config_module.PRESETS['quick'].vocab_size
  assert run_dir.chosen_vocab(dataclasses.replace(args, preset='tiny')) == \
      config_module.DEFAULT_VOCAB_FILE
  assert run_dir.chosen_vocab(dataclasses.replace(args, data='stories.jsonl')) is None
  # tiny on other data: a vocabulary of its own, built into the run directory.
  corpus = tmp_path / 'corpus.jsonl'
  rows = [{'article': s.article, 'highlights': s.highlights}
          for s in news.stories('train', 300)]
  corpus.write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')
  monkeypatch.setitem(config_module.PRESETS, 'micro-vocab',
                      dataclasses.replace(MICRO, vocab_size=512))
  train_run(micro_args(tmp_path / 'own', preset='micro-vocab', data=str(corpus),
                            max_steps=1, eval_steps=1, calibration_articles=0))
  assert 'building a 512-subword vocabulary from the training split' in capsys.readouterr().out
  built = tmp_path / 'own' / 'vocab.subwords'
  assert 300 < text.vocab_size(str(built)) <= 640
  assert text.vocab_fingerprint(str(built)) != text.vocab_fingerprint()


@pytest.mark.slow
def test_init_from_the_courses_checkpoint(tmp_path, monkeypatch):
  course_dir = write_course_dir(tmp_path)
  shaped = dataclasses.replace(config_module.PRESETS['course'], preset='course-shaped',
                               max_joint_length=256, boundaries=(256,), batch_sizes=(2, 1),
                               **COURSE_SHAPED)
  monkeypatch.setitem(config_module.PRESETS, 'course-shaped', shaped)
  # The course's 33k subwords tokenize in Python, slowly: one step needs no queue of 1,024 stories.
  monkeypatch.setattr(data, 'SHUFFLE_QUEUE', 16)
  out = tmp_path / 'tuned'
  train_run(micro_args(out, preset='course-shaped', init_from=course_dir, max_steps=1,
                            eval_steps=1, learning_rate=0.0, calibration_articles=0))
  # The course's vocabulary comes with it, and its weights are the start.
  assert text.vocab_fingerprint(str(out / 'vocab.subwords')) == \
      text.vocab_fingerprint(config_module.COURSE_VOCAB_FILE)
  start = jax.tree_util.tree_leaves(model_directory.read(course_dir).model().weights)
  tuned = jax.tree_util.tree_leaves(model_directory.read(str(out)).model().weights)
  for a, b in zip(start, tuned):
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-7)
  lineage = json.loads((out / 'config.json').read_text())['lineage']
  assert lineage[0]['steps'] == 500000 and lineage[1]['init_from'] == course_dir


def fingerprint(directory):
  """Every entry of a directory: a file's bytes, a link's target."""
  return {p.name: str(os.readlink(p)) if p.is_symlink() else p.read_bytes()
          for p in sorted(directory.iterdir())}


@pytest.mark.parametrize('marked', [True, False], ids=['a marked save', 'a partial save'])
@pytest.mark.parametrize('flags', [[], ['--resume'], ['--overwrite-output-dir']])
def test_a_folder_that_holds_no_run_is_refused_before_anything_in_it_is_touched(
    tmp_path, capsys, flags, marked):
  # A user's folder whose files happen to bear the names of an interrupted save:
  # recovering it would publish (marked) or delete (partial) the user's files.
  folder = tmp_path / 'book'
  folder.mkdir()
  (folder / 'chapter1.md').write_text('It was a dark night.\n')
  (folder / 'chapter1.md._tmp_').write_text('It was a dark and stormy night.\n')
  (folder / 'model.pkl.gz').write_bytes(b'my model')
  (folder / 'model.staged.pkl.gz').write_bytes(b'my other model')
  (folder / 'model.weights.npy.gz._tmp_').write_bytes(b'my weights')
  if marked:
    (folder / 'model.staged.done').write_text('my notes\n')
  (folder / 'config.json').write_text('{"mine": true}\n')
  before = fingerprint(folder)
  status = train_command.main(['--output-dir', str(folder), '--preset', 'micro',
                               '--no-progress', '--max-steps', '1', *flags])
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and str(folder) in err
  assert 'holds no run of ours' in err or 'is not empty' in err, err
  assert fingerprint(folder) == before


def test_a_run_record_that_is_a_link_is_not_taken_as_a_run_of_ours(tmp_path, capsys):
  # A link at the manifest's name, to a record that names the user's files.
  record = tmp_path / 'record.json'
  record.write_text(json.dumps({'files': ['chapter1.md', 'config.json']}))
  folder = tmp_path / 'book'
  folder.mkdir()
  (folder / 'chapter1.md').write_text('It was a dark night.\n')
  (folder / 'config.json').write_text('{"mine": true}\n')
  (folder / '.summarizer-run.json').symlink_to(record)
  before = fingerprint(folder)
  status = train_command.main(['--output-dir', str(folder), '--preset', 'micro', '--no-progress',
                               '--max-steps', '1', '--overwrite-output-dir'])
  assert status == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'is a link or not a regular file' in err
  assert fingerprint(folder) == before


@pytest.fixture(scope='module')
def resumable(tmp_path_factory):
  """A two-step micro run, a checkpoint at each step, copied by each test that resumes it."""
  out = tmp_path_factory.mktemp('resumable') / 'run'
  config_module.PRESETS['micro'] = MICRO
  try:
    train_run(micro_args(out, max_steps=2, save_steps=1, eval_steps=1,
                              calibration_articles=0))
  finally:
    del config_module.PRESETS['micro']
  return out


@pytest.fixture
def opened(monkeypatch):
  """Counts the files opened from now on, by name (gzip and json readers alike use ``open``)."""
  counts = collections.Counter()
  real_open = builtins.open

  def counting_open(file, *args, **kwargs):
    counts[os.path.basename(os.fspath(file)) if not isinstance(file, int) else file] += 1
    return real_open(file, *args, **kwargs)

  monkeypatch.setattr(builtins, 'open', counting_open)
  return counts


CHECKPOINT = ('model.pkl.gz', 'model.weights.npy.gz', 'model.opt_slots0.npy.gz')


def test_a_run_to_resume_is_read_whole_each_file_once(resumable, tmp_path, opened):
  out = tmp_path / 'run'
  shutil.copytree(resumable, out)
  opened.clear()
  found = run_dir.RunDirectory.read(str(out), resume=True)
  assert dict(opened) == dict.fromkeys(('.summarizer-run.json', 'config.json') + CHECKPOINT, 1)
  values = json.loads((out / 'config.json').read_text())
  assert found.values == values and found.config == config_module.Config.from_dict(values)
  assert found.step == 2 == values['total_steps']
  assert found.checkpoint and not found.staged
  assert found.vocab_file == str(out / 'vocab.subwords')
  assert found.entries == tuple(sorted(os.listdir(out)))
  assert {'config.json', 'vocab.subwords', *CHECKPOINT} <= found.recorded
  # Only the shapes of the arrays are kept: those of the config's model, Adam's two moments each.
  shapes = tuple(tuple(shape) for shape in layout.weight_shapes(found.config))
  assert found.weight_shapes == shapes
  assert found.slot_shapes == tuple(shape for shape in shapes for _ in (0, 1))


def test_a_resumed_run_takes_its_record_from_the_directory_read_once(resumable, tmp_path,
                                                                      opened):
  out = tmp_path / 'run'
  shutil.copytree(resumable, out)
  values = json.loads((out / 'config.json').read_text())
  opened.clear()
  run = run_prepare.prepare(micro_args(out, resume=True, max_steps=4))
  # Before, config.json was read three times and the checkpoint's pickle twice.
  assert {name: opened[name] for name in ('config.json',) + CHECKPOINT} == \
      dict.fromkeys(('config.json',) + CHECKPOINT, 1)
  assert run.resuming and run.directory.path == str(out) and run.directory.step == 2
  assert run.vocab_file == run.directory.vocab_file
  assert run.earlier_runs == values['lineage'][:-1] == []
  assert run.counter['longest_article'] == values['max_article_tokens'] > 0
  assert run.args.init_from == values['init_from']
  assert run.vocab_fingerprint == values['vocab_fingerprint']


def test_a_fresh_directory_is_made_and_nothing_in_it_read(tmp_path, opened):
  out = tmp_path / 'new' / 'run'
  found = run_dir.RunDirectory.read(str(out), resume=True)
  assert out.is_dir() and not opened
  assert (found.path, found.recorded, found.entries, found.checkpoint, found.staged,
          found.vocab_file, found.values, found.config, found.step, found.slot_shapes) == \
      (str(out), None, (), False, False, None, {}, None, None, None)
  run = run_prepare.prepare(micro_args(out))
  assert not run.resuming and run.directory.recorded is None
  assert run.earlier_runs == [] and run.counter['longest_article'] == 0


def test_a_run_not_resumed_reads_only_the_run_record(resumable, tmp_path, opened):
  out = tmp_path / 'run'
  shutil.copytree(resumable, out)
  opened.clear()
  found = run_dir.RunDirectory.read(str(out))
  assert dict(opened) == {'.summarizer-run.json': 1}  # Not its config.json, not its checkpoint.
  assert found.checkpoint and found.recorded and found.vocab_file
  assert (found.values, found.config, found.step, found.weight_shapes) == ({}, None, None, ())


@pytest.mark.slow
def test_resuming_after_config_json_was_edited_names_config_json_against_the_weights(tmp_path):
  out = tmp_path / 'run'
  train_run(micro_args(out, max_steps=2))
  path = out / 'config.json'
  values = json.loads(path.read_text())
  assert values['d_model'] == 32
  values['d_model'], values['d_ff'] = 64, values['d_ff']
  path.write_text(json.dumps(values))
  before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
  with pytest.raises(SummarizerError) as raised:
    train_run(micro_args(out, resume=True, max_steps=4))
  assert str(raised.value) == (
      f"--resume: {path}: d_model is 64, but the checkpoint's weights have d_model 32; "
      'config.json no longer describes them (set it back); the checkpoint is left as it was')
  assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
