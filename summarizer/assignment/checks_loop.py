"""The in-notebook checks of the functions that train and run a model.

``training_loop`` (UNQ_C8), ``next_symbol`` (UNQ_C9) and ``greedy_decode``
(UNQ_C10), with the probes' stand-ins for the model, the tokenizer and
``next_symbol``; then the trained model (Part 4) and its summary (Part 5).
"""

import contextlib
import functools
import io
import operator
import os
import tempfile

import numpy as np

from summarizer._trax import fastmath, tl, trax
from summarizer.model import TransformerLM as _package_transformer_lm
from summarizer.contract import measures, notebook_data, probes, probes_layers, recording
from summarizer.contract.exercise_code import SUMMARY, TRAINED_MODEL
from summarizer.contract.judge import reading
from summarizer.contract.mistakes import TOKENS, decoding_cause, padding_cause, power_above
from summarizer.assignment.checks_layers import (exercise_weights, ran_output,
                                                 run_beside_package)
from summarizer.assignment.runner import as_array, count_weights, run_cases, shape_of
from summarizer.config import EOS, SEP


def _built_loop(training_loop, TransformerLM, home, streams=None):  # pylint: disable=invalid-name
  """The loop a training_loop builds (no step run) over the probes' batches, in ``home``.

  It is handed '~/output', as a learner writes '~/model': a loop that does
  not expand '~' writes into a folder named '~', in the temporary ``home``
  too, as does a loop that ignores ``output_dir``.
  """
  streams = {} if streams is None else streams  # Which the loop's tasks read: kept.
  streams.update({recording.TRAIN_GEN: probes.batches(0),
                  recording.EVAL_GEN: probes.batches(1)})
  options = {'output_dir': '~/output'} if recording.accepts(training_loop, 'output_dir') else {}
  with probes.home_and_cwd(home):
    return training_loop(TransformerLM, streams[recording.TRAIN_GEN],
                         streams[recording.EVAL_GEN], **options)


# The package's loop, measured by the probe as the grader measures it: built once a process.
_PACKAGE_LOOP = {}


def _package_loop_measures():
  """``probes.loop_measures`` of the package's loop over the package's TransformerLM."""
  if not _PACKAGE_LOOP:
    # Imported here: Trax's training loop imports TensorFlow, which the other checks never need.
    from summarizer.training import training_loop  # pylint: disable=g-import-not-at-top
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
      streams = {}
      loop = _built_loop(training_loop, _package_transformer_lm, home, streams)
      _PACKAGE_LOOP.update(probes.loop_measures(loop, home))
      _PACKAGE_LOOP[measures.EVALUATION_DATA.name] = probes.evaluation_stream(loop, streams)
      _PACKAGE_LOOP[measures.TRAINING_DATA.name] = probes.training_stream(loop, streams)
  return _PACKAGE_LOOP


def test_training_loop(training_loop, TransformerLM=None):  # pylint: disable=invalid-name
  """Checks ``training_loop(TransformerLM, train_gen, eval_gen, output_dir)`` (UNQ_C8).

  The loop is built (no step is run) over small random batches, with
  ``output_dir`` in a temporary directory, and measured as the grader
  measures it (``probes.loop_measures``) beside the package's loop: the
  course's ``CrossEntropyLoss``, ``Adam(0.01)``, the learning-rate schedule
  ``warmup_and_rsqrt_decay(1000, 0.01)``, a checkpoint every 10 steps,
  ``[CrossEntropyLoss, Accuracy]`` on evaluation of ``eval_gen`` (never the
  training stream), training on ``train_gen`` (never a stream of the notebook's
  read in place of an argument), a model in 'train' mode, and that it writes where it is
  told. Then its model: the exercise's
  316,336 weights, and its output beside the package's model's.

  Args:
    training_loop: The function to check.
    TransformerLM: The model function to hand it (the course passes the
      learner's); by default, the package's.

  Returns:
    int: the number of failed cases.
  """
  given = {recording.TRANSFORMER_LM: TransformerLM or _package_transformer_lm}  # Read as it runs.
  ids = next(probes.batches(2))[0]  # (1, 16)
  with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
    package_loop = _package_loop_measures()
    expected = {measure: package_loop[measure.name]
                for measure in (*measures.LOOP, measures.TRAINING_DATA, measures.EVALUATION_DATA)}
    expected.update({measures.LOOP_MODEL_WEIGHTS: exercise_weights(),
                     measures.LOOP_MODEL_OUTPUT: None})  # Set as it runs, beside the package's.
    reads = {measure.name: functools.partial(_loop_measure, name=measure.name, home=home)
             for measure in measures.LOOP}
    streams = {}
    reads.update({
        measures.TRAINING_DATA.name: functools.partial(probes.training_stream, streams=streams,
                                                       function=training_loop),
        measures.EVALUATION_DATA.name: functools.partial(probes.evaluation_stream,
                                                           streams=streams, function=training_loop),
        measures.LOOP_MODEL_WEIGHTS.name: lambda loop: count_weights(loop.model.weights),
        measures.LOOP_MODEL_OUTPUT.name: functools.partial(_output_beside_package, ids=ids,
                                                           expected=expected)})
    call = reading(reads, lambda: _built_loop(training_loop, given[recording.TRANSFORMER_LM], home,
                                              streams))
    return run_cases([{'name': recording.LOOP_CASE, 'call': call, 'expected': expected}],
                     recording.TRAINING_LOOP, training_loop, given)


def _loop_measure(loop, name, home):
  """A measure of the loop (``probes.loop_measures``), judged as the grader judges it."""
  return probes.loop_measures(loop, home)[name]


def _output_beside_package(loop, ids, expected):
  """The loop's model's output on ``ids``; sets the package's as expected."""
  ran = run_beside_package(loop.model, functools.partial(
      _package_transformer_lm, **probes_layers.EXERCISE_MODEL, mode='train'), ids)
  expected[measures.LOOP_MODEL_OUTPUT] = np.asarray(ran.expected_output)
  return ran_output(ran)


def loss_remark(loop):
  """Says so when a cross-entropy a loop logged cannot be right (Part 3); returns the remark.

  A cross-entropy is never negative: the loss reads log-probabilities, which
  are never above 0. A negative one means the model's outputs are not
  log-probabilities (probabilities, from a last ``tl.Softmax``, give a loss
  between -1 and 0); one that is NaN, that the numbers overflowed.

  Args:
    loop: The ``training.Loop`` after ``loop.run(...)``.

  Returns:
    str: the remark printed, or None when every logged loss can be right.
  """
  for mode in ('train', 'eval'):
    try:
      values = [float(value) for _, value in loop.history.get(mode, 'metrics/CrossEntropyLoss')]
    except recording.CAUGHT:  # pylint: disable=broad-except
      values = []  # Not a Trax loop, or nothing logged: nothing to say.
    remark = _loss_remark(mode, values)
    if remark:
      print(remark)
      return remark
  return None


def _loss_remark(mode, values):
  """The remark on the losses a loop logged in one mode, or None."""
  if any(np.isnan(value) for value in values):
    return (f'Note: the {mode} CrossEntropyLoss is NaN: a number overflowed. Check that your '
            'model ends with tl.LogSoftmax() and that your attention scales its scores.')
  negative = [value for value in values if value < 0]
  if negative:
    return (f'Note: the {mode} CrossEntropyLoss is {negative[-1]:.8f}, below 0, which a '
            "cross-entropy never is: your model's outputs are not log-probabilities (a last "
            'tl.Softmax gives probabilities). End TransformerLM with tl.LogSoftmax(), as '
            "Exercise 7's steps say.")
  return None


def test_next_symbol(next_symbol, model=None):
  """Checks ``next_symbol(cur_output_tokens, model)`` (UNQ_C9).

  With a stand-in model, for token lists of 1, 4, 7 and 10 ids (the last
  is the course's): the model sees the tokens padded with zeros to the next
  power of two strictly greater than their number, as a batch of one; the
  answer is read at position ``len(cur_output_tokens)``; it is a Python int.

  Then the course's own case, when given the model function (its call form
  ``test_next_symbol(next_symbol, TransformerLM)``): ``TransformerLM()`` in
  eval mode, initialised with ``PRNGKey(1234)``, gives token 23317 after
  the course's 10 tokens (Trax's random numbers are drawn as the course's jax
  drew them: ``summarizer._trax``).

  Args:
    next_symbol: The function to check.
    model: The course passes ``TransformerLM`` (yours, in the assignment):
      its full-size model is built for the course's case. A model already
      built, or None, is not used: the stand-in takes its place.

  Returns:
    int: the number of failed cases.
  """
  token_lists = [list(tokens) for tokens in probes.FIRST_TOKEN_LISTS] + [_COURSE_TOKENS]
  cases = [_stand_in_case(next_symbol, tokens) for tokens in token_lists]
  given = {}
  if callable(model) and not isinstance(model, tl.Layer):
    given[recording.TRANSFORMER_LM] = model  # Read as the case runs.
    cases.append({
        'name': "next_symbol on the course's 10 tokens with TransformerLM(mode='eval') "
                'initialised with PRNGKey(1234)',
        'call': reading({measures.COURSE_NEXT_TOKEN.name: lambda token: token},
                        lambda: _course_next_symbol(next_symbol, given[recording.TRANSFORMER_LM])),
        'expected': {measures.COURSE_NEXT_TOKEN: _COURSE_NEXT_TOKEN}})
  return run_cases(cases, recording.NEXT_SYMBOL, next_symbol, given)


def _stand_in_case(next_symbol, tokens):  # pylint: disable=redefined-outer-name
  """The probe's next_symbol with the stand-in model: what it feeds the model, where it reads."""
  padded = tokens + [0] * (power_above(len(tokens)) - len(tokens))
  kept = []
  return {'name': probes.next_symbol_case(tokens),
          'call': reading(_STAND_IN_READS, functools.partial(
              probes.next_symbol_measures, next_symbol, tokens, kept)),
          'expected': {measures.READ_TOKEN: probes.StandInModel.FIRST + len(tokens),
                       measures.NEXT_TOKEN_TYPE: 'int', measures.MODEL_INPUTS: [[padded]]},
          'inputs': {TOKENS: tokens},
          'cause': lambda error: padding_cause(tokens, kept[0].inputs)}


# The stand-in case's measures, read from the probe's (which the why: lines read too).
_STAND_IN_READS = {
    measures.READ_TOKEN.name: operator.itemgetter(recording.NEXT_TOKEN),
    measures.NEXT_TOKEN_TYPE.name: operator.itemgetter(recording.NEXT_TOKEN_TYPE),
    recording.MODEL_INPUTS: operator.itemgetter(recording.MODEL_INPUTS),
}


# The course's case: its 10 tokens, and the token its randomly initialised
# full-size model gives after them.
_COURSE_TOKENS = [13, 483, 320, 4219, 132, 213, 2775, 10, 1, 0]


_COURSE_NEXT_TOKEN = 23317


def _course_next_symbol(next_symbol, TransformerLM):  # pylint: disable=invalid-name,redefined-outer-name
  """Builds the course's model as its test does and asks for the next token."""
  model = TransformerLM(mode='eval')
  model.init(trax.shapes.ShapeDtype((1, 1), np.int32), rng=fastmath.random.get_prng(1234))
  return next_symbol(list(_COURSE_TOKENS), model)


def test_greedy_decode(greedy_decode, model=None):
  """Checks ``greedy_decode(input_sentence, model, next_symbol, tokenize, detokenize)`` (UNQ_C10).

  With a stand-in ``next_symbol``, ``tokenize`` and ``detokenize``: decoding
  starts from ``tokenize(sentence) + [0]``, appends each token it gets,
  passes its model to ``next_symbol``, stops at EOS (1) even when more would
  come, and returns the detokenised summary with its '<EOS>'. What it prints
  (the course's version prints the summary as it grows, whatever ``verbose``
  says) is feedback: never a failure.

  Args:
    greedy_decode: The function to check; called with ``verbose=True`` when
      it takes that argument (the course's version always prints).
    model: Accepted for the course's call forms; not used: stand-ins take the
      place of the model and of ``next_symbol``.

  Returns:
    int: the number of failed cases.
  """
  del model
  # (sentence, what next_symbol would write: after EOS, what must not come)
  examples = [
      ('It was a sunny day when I went to the market to buy some flowers.',
       [20, 21, 22, 23, 24, EOS, 25]),
      (recording.SHORT_SENTENCE, [EOS, 25]),
  ]
  verbose = True if recording.accepts(greedy_decode, 'verbose') else None
  cases = [_decode_case(greedy_decode, sentence, script, verbose)
           for sentence, script in examples]
  if verbose:  # verbose=False: the summary is returned all the same.
    cases.append(_decode_case(greedy_decode, *examples[0], False))
  return run_cases(cases, recording.GREEDY_DECODE)


def _decode_case(greedy_decode, sentence, script, verbose):
  """The probe's greedy_decode with the stand-in next_symbol writing ``script``."""
  summary = script[:script.index(EOS) + 1]
  kept = []
  expected = {measures.DECODED_SUMMARY: probes.stand_in_detokenize(summary),
              measures.CALLS: [[SEP] + summary[:n] for n in range(len(summary))],
              measures.MODEL_GIVEN: [repr(probes.ModelArgument())]}
  name = (probes.decode_case(len(summary)) if verbose is not False
          else recording.QUIET_CASE)
  if verbose is False:  # What matters: the summary is returned all the same.
    expected = {measures.DECODED_SUMMARY: expected[measures.DECODED_SUMMARY]}
  # The probe's measures are named as these are: its call's are judged as they come.
  return {'name': name,
          'call': functools.partial(probes.decode_measures, greedy_decode, sentence, script,
                                    verbose, kept),
          'expected': expected, 'cause': lambda error: decoding_cause(kept[0].calls)}


def _article_ids():
  """The sample article's ids in the shipped model's vocabulary, then EOS and SEP, (1, L)."""
  from summarizer import text  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(notebook_data.VOCAB_DIR, notebook_data.VOCAB_FILE)
  ids = text.tokenize(notebook_data.sample_article(), vocab) + [SEP]
  return np.array([ids], np.int32)


def _traced_weight_shapes(TransformerLM):  # pylint: disable=invalid-name
  """The weight shapes of an eval-mode model of the shipped size, traced (no arithmetic)."""
  model = TransformerLM(**notebook_data.model_size(), mode='eval')
  weights, _ = fastmath.abstract_eval(model.init)(trax.shapes.ShapeDtype((1, 8), np.int32))
  return [tuple(leaf.shape) for leaf in tl.flatten_weights_and_state(weights, ())[0]]


def shipped_weights_fit(TransformerLM):  # pylint: disable=invalid-name
  """Raises AssertionError naming the first weight whose shape is not the shipped model's.

  Called before ``init_from_file``, whose own error ("shape expected ... got
  ...") names the file's shape as the one got.
  """
  yours = _traced_weight_shapes(TransformerLM)
  shipped = _traced_weight_shapes(_package_transformer_lm)
  for index, (mine, theirs) in enumerate(zip(yours, shipped)):
    if mine != theirs:
      raise AssertionError(
          f"weight #{index + 1} of your model is {mine}, the shipped model's is {theirs} "
          f'({len(shipped)} weights in the shipped model, {len(yours)} in yours): '
          'the shipped weights do not fit your TransformerLM; see Exercise 7')
  if len(yours) != len(shipped):
    raise AssertionError(f'your model has {len(yours)} weights, the shipped model '
                         f'{len(shipped)}: see Exercise 7')


def test_trained_model(model):
  """Checks your eval-mode TransformerLM, loaded with the shipped weights (Part 4).

  On the sample article (its ids, EOS and SEP, as a batch of one) it must
  give the log-probabilities that the package's model gives with the same
  weights.

  Args:
    model: Your ``TransformerLM(**notebook_data.model_size(), mode='eval')``
      after ``init_from_file``.

  Returns:
    int: the number of failed cases.
  """
  from summarizer.inference import model_directory  # pylint: disable=g-import-not-at-top
  ids = _article_ids()
  package_model = model_directory.read(notebook_data.MODEL_DIR).model('eval')
  expected = np.asarray(package_model(ids))
  output = measures.TRAINED_LOG_PROBABILITIES
  return run_cases([{
      'name': f'your model on the sample article, ids {ids.shape}',
      'call': reading({measures.SHAPE.name: shape_of, output.name: as_array},
                      functools.partial(model, ids)),
      'expected': {measures.SHAPE: tuple(expected.shape), output: expected}}], TRAINED_MODEL)


def _ids(tokens):
  """A detokenize that keeps the ids: the summary compared token for token."""
  return [int(token) for token in tokens]


def test_summary(greedy_decode, next_symbol, model, tokenize, detokenize):
  """Checks the summary your functions write of the sample article (Part 5).

  ``greedy_decode(article, model, next_symbol, tokenize, ...)`` must write
  the package's summary (``summarizer.summarize``'s), token for token. Your
  summary and the package's are printed, one under the other, with your
  ``detokenize``.

  Args:
    greedy_decode, next_symbol: Yours.
    model: Your trained model (Part 4).
    tokenize, detokenize: Part 1's, for the shipped model's vocabulary.

  Returns:
    int: the number of failed cases.
  """
  from summarizer.decoding import MAX_SUMMARY_TOKENS  # pylint: disable=g-import-not-at-top
  from summarizer.inference import loaded_model, summaries  # pylint: disable=g-import-not-at-top
  article = notebook_data.sample_article()
  run = summaries.summarize_tokens(article, loaded_model.load(notebook_data.MODEL_DIR))
  expected = list(run) + ([EOS] if len(run.ids) < MAX_SUMMARY_TOKENS else [])

  def summarise():
    with contextlib.redirect_stdout(io.StringIO()):  # The ids, were it to print them.
      ids = greedy_decode(article, model, next_symbol, tokenize, _ids)
    print('Your summary:')
    print(detokenize(ids))
    print("The package's summary:")
    print(detokenize(expected))
    return ids
  return run_cases([{'name': 'greedy_decode of the sample article with your next_symbol and model',
                     'call': reading({measures.SUMMARY_TOKENS.name: _ids}, summarise),
                     'expected': {measures.SUMMARY_TOKENS: expected}}],
                   SUMMARY, given={recording.NEXT_SYMBOL: next_symbol,
                                   recording.GREEDY_DECODE: greedy_decode})
