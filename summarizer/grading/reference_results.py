"""The grader's side of a grading: the arrays handed to the sandbox and the expected results.

Everything here runs in the trusted grader with the package's own functions.
``given_arrays(seed)`` draws what the sandbox cannot draw itself: the
package's layers' random weights for each layer run, the ids of Part 4 and
the article of Part 5. ``expected_results`` runs the same probes as the
sandbox, on the package's functions, and leaves what jax compiled for them
in a folder (``compilation_cache``) that the sandbox reads but never writes:
the learner's functions, run on the same shapes, find most of their
programs compiled (a submission's items take about a third of the time).
"""

import contextlib
import json

import jax
import numpy as np

from summarizer import text
from summarizer.contract import notebook_data, probes, probes_layers, recording
from summarizer.config import SEP


def package(name):
  return recording.graded_function(name)


def _layer_weights(given, runs, build):
  """Each run's package layer, initialised as the probe initialises it: its weights."""
  for name, kwargs, inputs in runs:
    for index, weight in enumerate(probes_layers.initial_weights(build(**kwargs), inputs)):
      given[f'{probes_layers.weights_key(name)}/{index}'] = np.asarray(weight)


def _shipped_model():
  from summarizer.inference import model_directory  # pylint: disable=g-import-not-at-top
  return model_directory.read(notebook_data.MODEL_DIR).model('eval')


def _part_5_article(seed):
  """One validation story, drawn by the seed, short enough to decode in seconds."""
  vocab = f'{notebook_data.VOCAB_DIR}/{notebook_data.VOCAB_FILE}'
  candidates = []
  for article, _ in notebook_data.stories('validation'):
    ids = text.tokenize(article, vocab)
    if len(ids) <= 250:
      candidates.append(ids)
    if len(candidates) == 12:
      break
  return candidates[int(np.random.default_rng([seed, 5]).integers(len(candidates)))]


def given_arrays(seed):
  """The arrays the sandbox is handed, and the shipped model's weight shapes (JSON)."""
  given = {}
  _layer_weights(given, probes_layers.causal_attention_runs(seed), package(recording.CAUSAL_ATTENTION))
  _layer_weights(given, probes_layers.decoder_block_runs(seed), package(recording.DECODER_BLOCK))
  _layer_weights(given, probes_layers.transformer_runs(seed), package(recording.TRANSFORMER_LM))
  ids = next(probes.batches(seed + 2))[0]
  model = package(recording.TRANSFORMER_LM)(**probes_layers.EXERCISE_MODEL, mode='train')
  _layer_weights(given, [(recording.LOOP_MODEL, {}, ids)], lambda: model)
  shipped = _shipped_model()
  shapes = [list(np.shape(w)) for w in probes_layers.flat_weights(shipped)]
  rng = np.random.default_rng([seed, 4])
  vocab_size = notebook_data.model_size()['vocab_size']
  length = int(rng.integers(24, 80))
  part_4 = rng.integers(2, vocab_size, size=(1, length)).astype(np.int32)
  part_4[0, length // 2] = SEP
  given['part 4 ids'] = part_4
  given['part 5 ids'] = np.array(_part_5_article(seed), np.int32)
  return given, shapes


def _plain(value):
  """A measure as it comes back from the sandbox: JSON types, arrays kept."""
  if isinstance(value, np.ndarray):
    return value
  if isinstance(value, dict):
    return {str(k): _plain(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_plain(v) for v in value]
  return json.loads(json.dumps(value, default=repr))


def expected_results(seed, given, json_given):
  """name -> the package's cases (and 'whole' -> Parts 4 and 5)."""
  given = dict(given, **json_given)
  env = {recording.TRANSFORMER_LM: package(recording.TRANSFORMER_LM)}
  expected = {name: probes.graded_cases(name, package(name), seed, given, env)
              for name in probes.PROBES}
  names = {name: package(name) for name in (recording.TRANSFORMER_LM, recording.GREEDY_DECODE,
                                                     recording.NEXT_SYMBOL)}
  expected['whole'] = probes.probe_whole(names, given, notebook_data.model_size(),
                                         notebook_data.MODEL_FILE)
  for cases in expected.values():
    for case in cases:
      case['measures'] = _plain(case['measures'])
      if case['error']:
        raise RuntimeError(f"the package's own {case['name']} raised {case['error']}")
  return expected


# jax's settings of its persistent compilation cache, as the sandbox's items set them.
CACHE_SETTINGS = ('jax_compilation_cache_dir', 'jax_persistent_cache_min_compile_time_secs',
                  'jax_persistent_cache_min_entry_size_bytes')


@contextlib.contextmanager
def compilation_cache(folder):
  """Writes every program jax compiles meanwhile to ``folder``; the settings restored after."""
  from jax._src import compilation_cache as cache  # pylint: disable=g-import-not-at-top
  saved = {name: getattr(jax.config, name) for name in CACHE_SETTINGS}
  for name, value in zip(CACHE_SETTINGS, (folder, 0.0, 0)):
    jax.config.update(name, value)
  cache.reset_cache()  # Set up anew at the next compile, in this folder.
  # Programs this process compiled before (an earlier seed's, a test's) would be
  # taken from memory and never written: each is compiled, or read, again.
  jax.clear_caches()
  try:
    yield folder
  finally:
    for name, value in saved.items():
      jax.config.update(name, value)
    cache.reset_cache()
