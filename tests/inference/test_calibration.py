"""Article perplexity: what it is, how a model is calibrated, who gets flagged."""

import glob
import json
import os
import warnings

import numpy as np
import pytest

from summarizer import config as config_module
from summarizer import text
from summarizer.__main__ import main
from summarizer.config import EOS, SEP
from summarizer.corpus import news
from summarizer.errors import SummarizerError
from summarizer.inference import api
from summarizer.inference import calibration
from summarizer.inference import loaded_model
from summarizer.inference import model_directory
from summarizer.inference import summaries

from conftest import write_model_dir

# Real-world English written for these tests: nothing like the generated news.
REAL_TEXTS = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(__file__)), 'texts', '*.txt')))


@pytest.mark.slow
def test_perplexity_is_that_of_the_article_tokens_under_the_eval_model(random_model_dir):
  loaded = loaded_model.load(random_model_dir)
  article = 'The council voted 7 to 2 to build a new bridge over the river.'
  ids = text.tokenize(article, loaded.vocab_file)[:-1]
  joint = np.array([ids + [EOS, SEP]], np.int32)               # (1, L)
  log_probs = np.asarray(loaded.model(joint))[0]               # (L, V); shifted inside
  expected = np.exp(-np.mean([log_probs[i, t] for i, t in enumerate(ids)]))
  assert calibration.article_perplexity(loaded, article) == pytest.approx(expected, rel=1e-4)
  run = summaries.summarize_tokens(article, loaded, 3)
  assert run.article_perplexity is None  # Known once the model has read it.
  list(run)
  assert run.article_perplexity == pytest.approx(expected, rel=1e-4)


def test_calibration_record_from_perplexities():
  record = calibration.summarize_perplexities([1.0, 2.0, 3.0, 4.0, 10.0], 'validation')
  assert record == {'split': 'validation', 'n': 5, 'p50': 3.0, 'p90': 7.6, 'p99': 9.76,
                    'max': 10.0, 'threshold': 10.0 * calibration.THRESHOLD_FACTOR}


@pytest.mark.slow
def test_a_calibrated_model_judges_articles(tmp_path):
  model_dir = write_model_dir(tmp_path / 'model')
  loaded = loaded_model.LoadedModel(model_directory.read(model_dir))
  record = calibration.calibrate(loaded, 'news', limit=4)
  assert record['n'] == 4 and record['split'] == 'validation'
  perplexities = [calibration.article_perplexity(loaded, s.article)
                  for s in news.stories('validation', 4)]
  assert record['max'] == pytest.approx(max(perplexities), abs=1e-3)
  calibration.save_calibration(model_dir, record)
  values = json.loads((tmp_path / 'model' / 'config.json').read_text())
  assert values['perplexity_calibration'] == record and values['d_model'] == 32
  # Judged against the threshold the record holds.
  record['threshold'] = 0.0
  calibration.save_calibration(model_dir, record)
  details = loaded_model.LoadedModel(model_directory.read(model_dir))
  run = summaries.SummaryRun(details, 'Heavy rain closed the coast road.', 2)
  list(run)
  assert run.out_of_domain is True


@pytest.mark.slow
def test_shipped_model_flags_real_text_not_its_own_news():
  loaded = loaded_model.load()
  assert loaded.calibration and loaded.calibration['n'] >= 100  # As a run's end calibrates.
  assert len(REAL_TEXTS) >= 4
  for path in REAL_TEXTS:
    with open(path, encoding='utf-8') as f:
      text = f.read()
    assert calibration.article_perplexity(loaded, text) > loaded.calibration['threshold'], path
  flagged = [i for i, story in enumerate(news.stories('test', 100))
             if calibration.article_perplexity(loaded, story.article)
             > loaded.calibration['threshold']]
  assert len(flagged) <= 1, flagged


@pytest.mark.slow
def test_command_warns_once_per_unknown_text_and_prints_every_summary(capsys, tmp_path):
  sample = os.path.join(config_module.DEFAULT_MODEL_DIR, '..', 'samples', 'sport.txt')
  status = main([sample, REAL_TEXTS[0], '--json', '--max-length', '8'])
  out, err = capsys.readouterr()
  assert status == 0
  first, second = json.loads(out)
  assert set(first) == {'summary_text', 'article_perplexity', 'out_of_domain'}
  assert first['out_of_domain'] is False and second['out_of_domain'] is True
  assert second['article_perplexity'] > 100 * first['article_perplexity']
  assert first['summary_text'] and second['summary_text']
  # Judged in one line (after one more if it had to be cut to what the model reads).
  *cut, line = err.splitlines()
  assert all(c.startswith(f'warning: {REAL_TEXTS[0]}: article cut to its first ')
             for c in cut) and len(cut) <= 1
  assert line.startswith(f'warning: {REAL_TEXTS[0]}: perplexity ')
  assert 'Train on your kind of text' in line and "course's model" in line
  # Plain output: one summary per file, each under its name, in order.
  assert main([sample, REAL_TEXTS[0], '--max-length', '8']) == 0
  out, _ = capsys.readouterr()
  assert out.splitlines()[0] == f'==> {sample} <=='
  assert out.splitlines()[1] == first['summary_text']
  assert f'==> {REAL_TEXTS[0]} <==' in out


def test_a_model_without_calibration_says_null(random_model_dir, capsys):
  assert main(['--text', 'The mayor opened a library.', '--model', random_model_dir,
               '--json', '--max-length', '3']) == 0
  out, err = capsys.readouterr()
  (result,) = json.loads(out)
  assert result['out_of_domain'] is None and result['article_perplexity'] > 1
  assert err == ''


@pytest.mark.slow
def test_articles_are_cut_at_the_longest_the_model_trained_on(tmp_path, capsys):
  model_dir = write_model_dir(tmp_path / 'model')
  config, values = config_module.load_config(model_dir)
  extra = {k: v for k, v in values.items() if k not in config.to_dict()}
  config_module.save_config(config, model_dir, max_article_tokens=20, **extra)
  article = news.story('test', 0).article
  with pytest.warns(api.ArticleCutWarning, match='first 20 of'):
    details = api.summarize_details(article, model_dir, max_length=3)
  assert details['kept_tokens'] == 20 and details['article_tokens'] > 100
  assert main(['--text', article, '--model', model_dir, '--max-length', '3']) == 0
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and 'article cut to its first 20 of' in err


def test_summarize_is_unchanged_and_quiet_on_articles_that_fit(random_model_dir):
  article = 'Heavy rain closed the coast road on Monday, officials said.'
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    summary = api.summarize(article, random_model_dir, max_length=5)
    details = api.summarize_details(article, random_model_dir, max_length=5)
  assert isinstance(summary, str) and details['summary_text'] == summary
  assert details['kept_tokens'] == details['article_tokens']


def test_several_files_read_standard_input_once(capsys):
  with pytest.raises(SystemExit) as exited:
    main(['-', '-'])
  assert exited.value.code == 2
  assert "standard input ('-') can be read once" in capsys.readouterr().err
  with pytest.raises(SummarizerError, match='not both'):
    from summarizer.__main__ import parse_args, read_articles  # pylint: disable=import-outside-toplevel
    read_articles(parse_args(['a.txt', '--text', 'x']))
