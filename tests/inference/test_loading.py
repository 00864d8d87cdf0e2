"""The model that ships in data/model: loads by default, decodes consistently."""

import glob
import itertools
import os
import re

from summarizer import decoding
from summarizer import summarize
from summarizer import text
from summarizer.config import DATA_DIR, DEFAULT_MODEL_DIR, EOS, SEP, load_config
from summarizer.corpus import news
from summarizer.inference import checkpoint
from summarizer.inference import loading


def test_shipped_model_is_the_default_and_self_describing():
  config, values = load_config(DEFAULT_MODEL_DIR)
  assert config.preset == 'quick' and values['data'] == 'news'
  model, decoder, loaded, vocab = loading.load()
  assert loaded == config
  assert text.vocab_size(vocab) <= config.vocab_size
  summary = summarize(news.story('test', 0).article)
  assert isinstance(summary, str) and summary and '<EOS>' not in summary


def test_fast_decoder_matches_greedy_decode_on_twenty_test_articles():
  model, decoder, _, vocab = loading.load()
  for story in itertools.islice(news.stories('test'), 20):
    prefix = text.tokenize(story.article, vocab)[:-1] + [EOS, SEP]
    greedy = list(decoding.greedy_tokens(prefix, model, max_length=40))
    fast = list(decoder.generate(prefix, max_length=40))
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
  for name in ('load_config', 'read_weights'):
    original = getattr(checkpoint, name)
    monkeypatch.setattr(checkpoint, name,
                        lambda *a, original=original, name=name: reads.append(name) or original(*a))
  loaded = loading.LoadedModel(random_model_dir)
  assert sorted(reads) == ['load_config', 'read_weights']
  assert loaded.config.d_model == 32 and loaded.calibration is None
