"""The model that ships in data/model: loads by default, decodes consistently."""

import glob
import itertools
import os
import re

import pytest

from summarizer import decoding
from summarizer import summarize
from summarizer import text
from summarizer.config import DATA_DIR, DEFAULT_MODEL_DIR, EOS, PRESETS, SEP, load_config
from summarizer.corpus import news
from summarizer.inference import loaded_model
from summarizer.inference import model_directory


@pytest.mark.slow
def test_shipped_model_is_the_default_and_self_describing():
  config, values = load_config(DEFAULT_MODEL_DIR)
  assert config.preset in PRESETS and values['data'] == 'news'
  loaded = loaded_model.load()
  assert loaded.config == config and loaded.source.shipped
  assert text.vocab_size(loaded.vocab_file) <= config.vocab_size
  summary = summarize(news.story('test', 0).article)
  assert isinstance(summary, str) and summary and '<EOS>' not in summary


@pytest.mark.slow
def test_fast_decoder_matches_greedy_decode_on_twenty_test_articles():
  loaded = loaded_model.load()
  for story in itertools.islice(news.stories('test'), 20):
    prefix = loaded.tokenize(story.article)[:-1] + [EOS, SEP]
    greedy = list(decoding.greedy_tokens(prefix, loaded.model, max_length=40))
    fast = list(loaded.decoder.generate(prefix, max_length=40))
    assert fast == greedy, story.article[:60]


def test_sample_files_are_summarised_not_copied():
  # The README's first command. A file's final newline once made the model
  # answer two of the three samples with one filler sentence of the article.
  samples = sorted(glob.glob(os.path.join(DATA_DIR, 'samples', '*.txt')))
  assert len(samples) == len(news.SAMPLES)
  for path in samples:
    with open(path, encoding='utf-8') as f:
      text = f.read()
    summary = summarize(text)
    assert summary == summarize(text.strip()), path
    assert summary not in text, (path, summary)
    numbers = set(re.findall(r'\d[\d,.]*\d|\d', text))
    assert any(n in summary for n in numbers), (path, summary)


def test_a_load_reads_the_directory_once(random_model_dir, monkeypatch):
  reads = []
  for name in ('load_config', 'read_checkpoint'):
    original = getattr(model_directory, name)
    monkeypatch.setattr(model_directory, name,
                        lambda *a, original=original, name=name: reads.append(name) or original(*a))
  loaded = loaded_model.LoadedModel(model_directory.read(random_model_dir))
  assert sorted(reads) == ['load_config', 'read_checkpoint']
  assert loaded.config.d_model == 32 and loaded.calibration is None
