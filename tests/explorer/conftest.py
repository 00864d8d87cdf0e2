"""The explorer's tests share the shipped model's explanation of the court sample."""

import os

import pytest

from summarizer.explorer import explanation
from summarizer.inference import loaded_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUSINESS = os.path.join(ROOT, 'data', 'samples', 'business.txt')
COURT = os.path.join(ROOT, 'data', 'samples', 'court.txt')
# What the shipped model writes in the court sample for Judge Samoren Uldunman.
MADE_UP = 'Judge Samorman'


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


def blocks_and_heads():
  """The shipped model's (layers, heads): the attention's leading axes."""
  config = loaded_model.load().config
  return config.n_layers, config.n_heads


@pytest.fixture(scope='module')
def court():
  """The shipped model on the court sample (it makes up 'Judge Samorman')."""
  return explanation.explain(read(COURT))
