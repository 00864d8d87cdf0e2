"""Part 5 of the course: writing a summary (C9-C10), one argmax token at a time.

The model reads ``article + [EOS, SEP]`` and each next token is the argmax of
its output. The course's ``greedy_decode`` re-runs the whole model over the
padded sequence for every token: easy to follow, but each token costs a full
forward pass. The package's fast decoder (``summarizer.inference``) runs the
same weights in predict mode, with a key/value cache, and gives the same
summary.
"""

import numpy as np

from summarizer.config import EOS, SEP
from summarizer.text import course_detokenize, course_tokenize

# Summary tokens generated at most when the caller does not say.
MAX_SUMMARY_TOKENS = 64


def next_symbol(cur_output_tokens, model):
  """Returns the model's most likely next token after ``cur_output_tokens``.

  As in the course: pad to the smallest power of two strictly greater than
  the length, run the eval-mode model on ``(padded, padded)`` and take the
  argmax of the log-probabilities at position ``len(cur_output_tokens)``.

  Args:
    cur_output_tokens: List of token ids so far (article, EOS, SEP, summary).
    model: An eval-mode ``TransformerLM`` with its weights.

  Returns:
    int: the next token id.
  """
  token_length = len(cur_output_tokens)
  padded_length = 2 ** int(np.ceil(np.log2(token_length + 1)))
  padded = list(cur_output_tokens) + [0] * (padded_length - token_length)
  padded_with_batch = np.array(padded, dtype=np.int32)[None, :]  # (1, P)
  output, _ = model((padded_with_batch, padded_with_batch))  # (1, P, V)
  log_probs = output[0, token_length, :]
  return int(np.argmax(log_probs))


def greedy_decode(input_sentence, model, next_symbol=next_symbol,  # pylint: disable=redefined-outer-name
                  tokenize=course_tokenize, detokenize=course_detokenize,
                  verbose=False, max_length=MAX_SUMMARY_TOKENS):
  """Summarises ``input_sentence`` one argmax token at a time (the course's way).

  The parameters come in the course's order, so the course's call
  ``greedy_decode(sentence, model, next_symbol, tokenize, detokenize)``
  works; ``max_length`` comes last. As in the course, ``tokenize`` and
  ``detokenize`` default to the course's vocabulary (``detokenize`` wraps at
  70 columns): a model of another vocabulary needs its own.

  Args:
    input_sentence: The article text.
    model: An eval-mode ``TransformerLM``.
    next_symbol: Function (tokens, model) -> next id.
    tokenize: Function text -> ids ending in EOS (default: the course's).
    detokenize: Function ids -> text (default: the course's).
    verbose: Print each new piece of the summary as it comes, on one growing
      text (the course reprints the whole summary at every step).
    max_length: Most summary tokens to generate (the course's loop has no
      bound; a model that never writes EOS would run forever).

  Returns:
    The detokenised summary, ending in '<EOS>' when the model ended it.
  """
  cur_output_tokens = list(tokenize(input_sentence)) + [SEP]  # article, EOS, SEP
  generated_output, shown = [], ''
  for _ in range(max_length):
    cur_output = next_symbol(cur_output_tokens, model)
    cur_output_tokens.append(cur_output)
    generated_output.append(cur_output)
    if verbose:  # Only the new text (the course reprints the summary at every step).
      text = detokenize(generated_output)
      # A detokeniser that wraps may move a growing word to the next line: a line break
      # and a space count as one. Where earlier text changed, the summary is shown anew.
      if not text.replace('\n', ' ').startswith(shown.replace('\n', ' ')):
        print()
        shown = ''
      print(text[len(shown):], end='', flush=True)
      shown = text
    if cur_output == EOS:
      break
  if verbose and generated_output:
    print()  # The summary's last line ends.
  return detokenize(generated_output)


def greedy_tokens(prefix, model, max_length=MAX_SUMMARY_TOKENS,
                  next_symbol=next_symbol, stop_at_eos=True):  # pylint: disable=redefined-outer-name
  """Yields the greedy continuation of ``prefix`` token by token, up to EOS."""
  tokens = list(prefix)
  for _ in range(max_length):
    token = next_symbol(tokens, model)
    tokens.append(token)
    yield token
    if token == EOS and stop_at_eos:
      return

