"""The course's model as a learner saved it: two checkpoint files, no config.json."""

import gzip
import json
import os
import shutil

import numpy as np
import pytest

from summarizer import decoding
from summarizer.__main__ import main as summarize_main
from summarizer._trax import trax
from summarizer.config import COURSE_VOCAB_FILE, PRESETS
from summarizer.errors import SummarizerError
from summarizer.evaluation import evaluate
from summarizer.inference import checkpoint
from summarizer.inference import loading
from summarizer.inference import summaries
from summarizer.model import TransformerLM

from conftest import COURSE_SHAPED, write_course_dir

ARTICLE = ('It was a sunny day when I went to the market to buy some flowers. '
           'But I only found roses, not tulips.')


def course_loaded(model_dir):
  """The model as the course's notebook loads it: random init, then the file."""
  model = TransformerLM(**COURSE_SHAPED, mode='eval')
  model.init_from_file(os.path.join(model_dir, 'model.pkl.gz'), weights_only=True,
                       input_signature=trax.shapes.ShapeDtype((1, 1), np.int32))
  return model


def test_architecture_and_vocabulary_come_from_the_files(course_model_dir):
  loaded = loading.load(course_model_dir)
  expected = {k: v for k, v in COURSE_SHAPED.items()}
  assert {k: getattr(loaded.config, k) for k in expected} == expected
  assert loaded.config.dropout == PRESETS['course'].dropout
  # No vocab_dir/ beside it: the copy of the course's vocabulary in data/.
  assert loaded.vocab_file == COURSE_VOCAB_FILE
  assert loaded.calibration is None and loaded.max_article_tokens is None


def test_vocab_dir_beside_the_model_is_the_courses_layout(tmp_path):
  model_dir = write_course_dir(tmp_path)
  vocab_dir = tmp_path / 'vocab_dir'
  vocab_dir.mkdir()
  shutil.copyfile(COURSE_VOCAB_FILE, vocab_dir / 'summarize32k.subword.subwords')
  assert checkpoint.load_model(model_dir)[2] == str(vocab_dir / 'summarize32k.subword.subwords')


@pytest.mark.parametrize('method', ['fast', 'greedy'])
def test_summaries_are_the_courses_greedy_summary(course_model_dir, method):
  from summarizer import text  # pylint: disable=import-outside-toplevel
  prefix = text.tokenize(ARTICLE, COURSE_VOCAB_FILE) + [0]  # The course's start.
  course = list(decoding.greedy_tokens(prefix, course_loaded(course_model_dir), 12))
  course = course[:course.index(1)] if 1 in course else course
  ours = list(summaries.summarize_tokens(ARTICLE, course_model_dir, 12, method))
  assert ours == course and len(course) > 3


def test_commands_take_the_course_directory(course_model_dir, capsys, tmp_path):
  assert summarize_main(['--text', ARTICLE, '--model', course_model_dir,
                         '--max-length', '4', '--json']) == 0
  (result,) = json.loads(capsys.readouterr().out)
  assert result['out_of_domain'] is None and result['article_perplexity'] > 0
  scores = evaluate.evaluate(course_model_dir, limit=2, max_length=4,
                             retrieval_pool=5)
  assert scores['n'] == 2


def test_n_heads_must_divide_the_width(course_model_dir, capsys):
  assert summarize_main(['--text', ARTICLE, '--model', course_model_dir,
                         '--n-heads', '5']) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and '--n-heads 5 does not divide the model width 32' in err
  loaded = loading.load(course_model_dir, None, 4)  # 4 divides 32: another model.
  assert loaded.config.n_heads == 4


def _broken(tmp_path, how):
  model_dir = write_course_dir(tmp_path)
  weights = os.path.join(model_dir, 'model.weights.npy.gz')
  if how == 'missing weights':
    os.remove(weights)
  elif how == 'truncated':
    with open(weights, 'rb') as f:
      head = f.read(os.path.getsize(weights) // 2)
    with open(weights, 'wb') as f:
      f.write(head)
  elif how == 'not a TransformerLM':
    arrays = [np.zeros((7, 3), np.float32)] * 5
    with gzip.open(weights, 'wb') as f:
      for array in arrays:
        np.save(f, array)
  return model_dir


@pytest.mark.parametrize('how,fragment', [
    ('missing weights', 'model.weights.npy.gz missing'),
    ('truncated', 'cannot load the weights'),
    ('not a TransformerLM', 'fit no TransformerLM'),
])
def test_a_broken_checkpoint_is_one_line_and_exit_2(tmp_path, capsys, how, fragment):
  model_dir = _broken(tmp_path, how)
  assert summarize_main(['--text', ARTICLE, '--model', model_dir]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and fragment in err, err
  with pytest.raises(SummarizerError, match=fragment):
    checkpoint.load_model(model_dir)


def test_a_directory_with_neither_config_nor_checkpoint_is_named(tmp_path):
  with pytest.raises(SummarizerError, match='not a model directory'):
    checkpoint.load_model(str(tmp_path))
