"""The explorer's tests share the shipped model's explanation of the business sample."""

import os

import pytest

from summarizer.explorer import explanation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUSINESS = os.path.join(ROOT, 'data', 'samples', 'business.txt')


def read(path):
  with open(path, encoding='utf-8') as f:
    return f.read()


@pytest.fixture(scope='module')
def business():
  """The shipped model on the business sample (it writes 'Ulyar Group' for 'Ulyar Motors')."""
  return explanation.explain(read(BUSINESS))
