"""The course's own tests, as its notebook calls them, on the package's top-level names.

The course's test module is not ours to copy; these tests call the package's
functions the way it does and expect the course's values (facts of the
course): ``test_next_symbol(next_symbol, TransformerLM)`` gets token 23317
from ``TransformerLM()`` in eval mode initialised with ``PRNGKey(1234)``, and
``test_greedy_decode(greedy_decode)`` decodes with ``greedy_decode``'s
default ``tokenize``/``detokenize`` (the course's vocabulary, a 70-column
wrap) and a stand-in ``next_symbol`` that knows only the course's ids.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from summarizer import TransformerLM, _trax, greedy_decode, next_symbol
from summarizer import text
from summarizer._trax import trax
from summarizer.config import COURSE_VOCAB_NAME, DATA_DIR, DEFAULT_VOCAB_FILE

# The course's 10 tokens and the token its test expects after them.
COURSE_TOKENS = [13, 483, 320, 4219, 132, 213, 2775, 10, 1, 0]
COURSE_NEXT_TOKEN = 23317


def course_model():
  model = TransformerLM(mode='eval')
  model.init(trax.shapes.ShapeDtype((1, 1), np.int32),
             rng=trax.fastmath.random.get_prng(1234))
  return model


@pytest.mark.slow
def test_next_symbol_gives_the_courses_token_and_needs_the_courses_random_numbers(monkeypatch):
  assert next_symbol(list(COURSE_TOKENS), course_model()) == COURSE_NEXT_TOKEN
  # Trax's random functions as jax 0.10 draws them give other weights: the
  # adjustment (summarizer._trax) is still needed.
  for name, original in _trax.ORIGINAL['random'].items():
    monkeypatch.setitem(trax.fastmath.jax.JAX_BACKEND, name, original)
  assert next_symbol(list(COURSE_TOKENS), course_model()) != COURSE_NEXT_TOKEN


@pytest.mark.slow
def test_importing_the_package_leaves_a_learners_own_jax_random_as_it_was():
  # jax's own setting is untouched: the same key draws what it draws without the package.
  code = ('import jax, sys\n'
          'if len(sys.argv) > 1: import summarizer._trax\n'
          'key = jax.random.PRNGKey(7)\n'
          'print(jax.random.normal(key, (3,)).tolist(), jax.random.split(key).tolist())')
  alone, beside = (subprocess.run([sys.executable, '-c', code, *extra], capture_output=True,
                                  text=True, check=True).stdout for extra in ([], ['package']))
  assert alone == beside and alone.strip()


def course_ids(text_):
  """Ids as the course's notebook makes them: trax.data.tokenize, course vocabulary."""
  return list(next(trax.data.tokenize(iter([text_]), vocab_dir=DATA_DIR,
                                      vocab_file=COURSE_VOCAB_NAME)))


class CourseStandIn:
  """A next_symbol that writes ``summary`` after ``sentence``, knowing only course ids.

  Like the course's stand-in, it looks the tokens up in what it was given:
  ids of another vocabulary raise KeyError.
  """

  def __init__(self, sentence, summary):
    start = course_ids(sentence) + [1, 0]
    written = course_ids(summary) + [1]
    self.answers = {tuple(start + written[:n]): written[n] for n in range(len(written))}

  def __call__(self, cur_output_tokens, model):
    del model
    return self.answers[tuple(int(t) for t in cur_output_tokens)]


@pytest.mark.parametrize('sentence, summary, expected', [
    ('It was a sunny day when I went to the market to buy some flowers. But '
     'I only found roses, not tulips.',
     'I just found roses, not tulips.',
     'I just found roses, not tulips.<EOS>'),
    ('Tim Tebow kneels on the sideline in prayer.',
     'Tebowing has become a craze across the country since the quarterback '
     'first knelt in prayer on the sideline. Fans now strike the pose in '
     'front of landmarks, in classrooms and at weddings, and post the '
     'pictures online, where a website collects thousands of them from '
     'every state.',
     'Tebowing has become a craze across the country since the quarterback\n'
     'first knelt in prayer on the sideline. Fans now strike the pose in\n'
     'front of landmarks, in classrooms and at weddings, and post the\n'
     'pictures online, where a website collects thousands of them from every\n'
     'state.<EOS>'),
])
def test_greedy_decode_defaults_are_the_courses(sentence, summary, expected, capsys):
  # The course's call: the model is None, only next_symbol is given.
  assert greedy_decode(sentence, None, next_symbol=CourseStandIn(sentence, summary)) == expected
  assert capsys.readouterr().out == ''  # verbose is off unless asked for.


def test_the_shipped_models_own_vocabulary_stays_the_default_elsewhere():
  # summarize(), the summarize command and summarizer.tokenize use the model's
  # vocabulary; only the course's greedy_decode defaults to the course's.
  assert os.path.basename(text.vocab_path()) == os.path.basename(DEFAULT_VOCAB_FILE)
  sentence = 'Rain closed the coast road.'
  assert text.tokenize(sentence) != text.course_tokenize(sentence)
  assert text.course_tokenize(sentence) == course_ids(sentence) + [1]
