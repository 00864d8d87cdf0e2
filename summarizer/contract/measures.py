"""Every measure of a graded function, each defined once: its name, its comparison, its text.

A ``Measure`` (``judge.py``) is what the in-notebook checks and the teacher's
grader both hand the judge: the name a failure is printed with, how what
came is held against what was expected (the judge's comparisons), how their
difference is printed (``failure_text.py``) and the mistake it may show
(``mistakes.py``). The names of what the probes record are the probes'
(``probes.py`` runs alone in the sandbox, so it holds them); the grader reads
a function's measures from ``of``, and judges a sandbox's report by them
(``judge_cases``). Where the notebook and the grader judge
one measure differently (the notebook names more mistakes), they are two
measures of one name.
"""

from summarizer.contract import (failure_text, judge, mistakes, probes, probes_layers, recording,
                                 signature)
from summarizer.contract.judge import Measure


def _kept(name):
  return Measure(name, compared=False)


# What the probes record, as the grader judges it (and the checks, where they judge alike).
INPUTS = {name: _kept(name) for name in (recording.INPUT_Q, recording.INPUT_K, recording.INPUT_V,
                                          recording.INPUT_MASK, recording.INPUT_X,
                                          recording.INPUT_TOKENS)}
ATTENTION_OUTPUT = Measure(recording.OUTPUT, judge.arrays_agree, why=mistakes.attention_why)
SELF_ATTENTION_OUTPUT = Measure(recording.OUTPUT, judge.arrays_agree, why=mistakes.mask_why)
HEADS_OUTPUT = Measure(recording.OUTPUT, judge.arrays_agree, why=mistakes.split_heads_why)
JOINED_OUTPUT = Measure(recording.OUTPUT, judge.arrays_agree, why=mistakes.join_heads_why)
OUTPUT_TYPE = Measure(recording.OUTPUT_TYPE)
LAYER_TREE = Measure(recording.TREE, judge.same_tree)
MODEL_TREE = Measure(recording.TREE, judge.same_tree, why=mistakes.blocks_why)
LAYER_TYPE = Measure(recording.TYPE)
PARTS = Measure(recording.PARTS)
THEIR_SUBLAYERS = Measure(recording.THEIR_SUBLAYERS)
WEIGHT_SHAPES = Measure(recording.WEIGHT_SHAPES, difference=failure_text.shapes_difference)
WHICH_SUBLAYER = Measure(recording.WHICH_SUBLAYER)
REPEATED_SUBLAYERS = Measure(recording.WHICH_SUBLAYER, why=mistakes.repeated_why)
LAYER_OUTPUT = Measure(recording.OUTPUT, judge.arrays_agree)
RAISED = Measure(probes_layers.RAISED, judge.both_raised_or_not)
SHAPES_OF_WEIGHTS = Measure(recording.SHAPES_OF_WEIGHTS, difference=failure_text.shapes_difference)
OUTPUT_SHAPE = Measure(recording.OUTPUT_SHAPE)
SHIFTED = Measure(probes_layers.SHIFTED, why=mistakes.shifted_why)
ENCODINGS = Measure(probes_layers.ENCODINGS, why=mistakes.encodings_why)
# The loop's settings (``probes.loop_measures``): most compared as they are.
LOSS_LAYER, OPTIMIZER, CHECKPOINT_STEPS, METRICS, OUTPUT_DIRECTORY, LAYER_MODES = (
    Measure(name) for name in (recording.LOSS_LAYER, recording.OPTIMIZER, recording.CHECKPOINT_STEPS,
                               recording.METRICS, recording.OUTPUT_DIRECTORY, recording.LAYER_MODES))
OPTIMIZER_PARAMETERS = Measure(recording.OPTIMIZER_PARAMETERS, judge.parameters_agree)
LEARNING_RATES = Measure(recording.LEARNING_RATES, judge.allclose)
LOSS_AT_WORK = Measure(recording.LOSS_AT_WORK, judge.number_agrees)
OPTIMIZER_STEP = Measure(recording.OPTIMIZER_STEP, judge.arrays_agree)
EVALUATION_DATA = Measure(recording.EVALUATION_DATA, why=mistakes.evaluation_data_why)
TRAINING_DATA = Measure(recording.TRAINING_DATA, why=mistakes.training_data_why)
NEXT_TOKEN = Measure(recording.NEXT_TOKEN)
NEXT_TOKEN_TYPE = Measure(recording.NEXT_TOKEN_TYPE)
MODEL_INPUTS = Measure(recording.MODEL_INPUTS, difference=failure_text.ids_difference,
                       why=mistakes.padding_why)
SUMMARY = Measure(recording.SUMMARY)
CALLS = Measure(recording.CALLS, difference=failure_text.ids_difference, why=mistakes.calls_why)
MODEL_GIVEN = Measure(recording.MODEL_GIVEN)
PRINTED = _kept(recording.PRINTED)  # Feedback (grader.printed_note), never compared.
TAKES_VERBOSE = _kept(recording.TAKES_VERBOSE)
SHIPPED_WEIGHT_SHAPES = Measure(recording.WEIGHT_SHAPES, difference=failure_text.shapes_difference,
                                why=mistakes.shipped_why)
LOG_PROBABILITIES = Measure(recording.LOG_PROBABILITIES, judge.log_probabilities_agree)
SUMMARY_IDS = Measure(recording.SUMMARY_IDS)

# The loop's measures (``probes.loop_measures``), which the notebook's check reads too.
LOOP = (LOSS_LAYER, OPTIMIZER, OPTIMIZER_PARAMETERS, LEARNING_RATES, CHECKPOINT_STEPS, METRICS,
        OUTPUT_DIRECTORY, LAYER_MODES)
_TREES = (LAYER_TREE, LAYER_TYPE, PARTS, THEIR_SUBLAYERS)
_RUNS = (WEIGHT_SHAPES, WHICH_SUBLAYER, LAYER_OUTPUT)

# What every answer keeps (``probes.property_cases``, ``runner.kept_cases``).
INPUTS_AFTER = Measure(recording.INPUTS_AFTER, why=lambda got, expected, case: (
    'it changed the list it was given: pad a copy (tokens + [0] * n), never the '
    "caller's list, which greedy_decode goes on appending to"))
UNDER_JIT = Measure(recording.UNDER_JIT, difference=lambda expected, got: [],
                    why=lambda got, expected, case: got[len('no: '):])
DTYPE = Measure(recording.DTYPE)
WRITTEN = Measure(recording.WRITTEN)
DEFAULTS = Measure(recording.DEFAULTS, signature.agree, difference=signature.difference,
                   why=signature.why)
_JITTED = (UNDER_JIT, DTYPE)
# Cases only a function that takes their argument (verbose, max_length) is run through.
OPTIONAL_CASES = (recording.QUIET_CASE, probes.max_length_case())

# What the grader judges of each probe's cases.
_OF_PROBE = {
    probes_layers.probe_DotProductAttention: (ATTENTION_OUTPUT, OUTPUT_TYPE) + _JITTED,
    probes_layers.probe_dot_product_self_attention: (SELF_ATTENTION_OUTPUT,) + _JITTED,
    probes_layers.probe_compute_attention_heads_closure: (HEADS_OUTPUT,) + _JITTED,
    probes_layers.probe_compute_attention_output_closure: (JOINED_OUTPUT,) + _JITTED,
    probes_layers.probe_CausalAttention: _TREES + _RUNS + (RAISED,),
    probes_layers.probe_DecoderBlock: _TREES + _RUNS,
    probes_layers.probe_TransformerLM: (MODEL_TREE, LAYER_TYPE, PARTS, THEIR_SUBLAYERS, WEIGHT_SHAPES,
                                 REPEATED_SUBLAYERS, LAYER_OUTPUT, SHAPES_OF_WEIGHTS,
                                 OUTPUT_SHAPE, SHIFTED, ENCODINGS, DEFAULTS),
    probes.probe_training_loop: LOOP + (TRAINING_DATA, EVALUATION_DATA, LOSS_AT_WORK, OPTIMIZER_STEP) + _RUNS,
    probes.probe_next_symbol: (NEXT_TOKEN, NEXT_TOKEN_TYPE, MODEL_INPUTS, INPUTS_AFTER),
    probes.probe_greedy_decode: (SUMMARY, CALLS, MODEL_GIVEN, PRINTED, TAKES_VERBOSE, WRITTEN),
    probes.probe_whole: (SHIPPED_WEIGHT_SHAPES, LOG_PROBABILITIES, SUMMARY_IDS),
}


def of(function):
  """The measures the grader judges of a graded function (any other name: Parts 4 and 5), by name.

  A report names its measures (it came through JSON); each name is looked up
  here once, among the function's own measures.
  """
  probe = probes.PROBES.get(function, probes.probe_whole)
  return {measure.name: measure for measure in (*_OF_PROBE[probe], *INPUTS.values())}


def judge_cases(name, got_cases, expected_cases):
  """The failure lines of one function's report against the package's ([] when every case agrees)."""
  return printed(failed_cases(name, got_cases, expected_cases))


def failed_cases(name, got_cases, expected_cases):
  """The cases of one function's report that do not agree: [(case name, its failures, its tests)].

  A report names its measures (it came through JSON): each is looked up among the
  function's own (``of``), and the case handed to the judge (``judge.judge_case``).
  A case that raised, or was not run, fails each of its tests.
  """
  got_by_name = {}  # name -> its cases in the order they ran (a name may come twice)
  for case in got_cases:
    if isinstance(case, dict):
      got_by_name.setdefault(case.get('name'), []).append(case)
  judged, failed = of(name), []
  for expected in expected_cases:
    same_name = got_by_name.get(expected['name'])
    got = same_name.pop(0) if same_name else None
    if got is None and expected['name'] in OPTIONAL_CASES:
      continue
    wanted = {judged[key]: value for key, value in expected['measures'].items()}
    tests = sum(measure.compared for measure in wanted) or 1
    if got is None or got.get('not run'):
      failures = [failure_text.Failure(f"Failed: {expected['name']}: "
                                       + ((got or {}).get('not run') or 'not run'))]
    else:
      failures = judge.judge_case(dict(got, name=expected['name']), wanted, expected['measures'])
      tests = tests if got.get('error') else len(failures)
    if failures:
      failed.append((expected['name'], failures, tests))
  return failed


def printed(failed, where=()):
  """Failed cases' lines as the notebook's check prints them (``failure_text.Printer``).

  Each failure once (one like a failure above in one line), a why: once,
  arrays shown once, within ``failure_text.TEXT_BUDGET`` (the later cases
  said in one line).

  Args:
    failed: As ``failed_cases`` gives them.
    where: Lines that end the first failure's details (the where: line).
  """
  lines = []
  printer = failure_text.Printer(failure_text.TEXT_BUDGET, lines.append)
  for index, (case, failures, tests) in enumerate(failed):
    if index == 0 and where:
      first = failures[0]
      failures = [failure_text.Failure(first.header, [*first.details, *where], first.again,
                                       first.key, first.kind), *failures[1:]]
    printer.print_within(case, failures, tests)
  printer.close()
  return lines


# The notebook's own measures: what only its checks read (they run the learner's function
# beside the package's, in the learner's kernel), or judge otherwise than the grader.
SHAPE = Measure('shape', judge.equal)
KIND = Measure(recording.TYPE, judge.is_subclass)
CAUSAL_ATTENTION_TREE = Measure(recording.TREE, judge.same_tree, why=mistakes.last_dense_why)
TRANSFORMER_TREE = Measure('str(model)', judge.same_tree, why=mistakes.model_tree_why)
BLOCK_TREE = Measure('str(layers)', judge.same_tree)
SUBLAYER_TYPES = Measure('types of its sublayers', judge.equal)
SUBLAYER_COUNT = Measure('number of sublayers', judge.equal)
RAISED_AS_ASSERT = Measure("an error raised, as the course's assert raises one "
                           '(10 features do not split into 3 heads)', judge.equal)
RAN_WEIGHT_COUNT = Measure('number of weight arrays', judge.equal)
RAN_WEIGHT_SHAPES = Measure(recording.WEIGHT_SHAPES, judge.equal)
RAN_OUTPUT = Measure("output in {} mode, with the package's weights and random key",
                     judge.allclose)
# The predict-mode model decoded one token a call: its outputs side by side.
DECODED_OUTPUT = Measure("output decoded one token a call from an empty state, which must be "
                         "the package's eval-mode output with the same weights", judge.allclose)
BLOCK_LAYERS = Measure('number of layers', judge.equal)
BLOCK_LAYER_TYPES = Measure('types of the layers', judge.equal)
BLOCK_SUBLAYER_COUNTS = Measure('numbers of their sublayers', judge.equal)
WEIGHT_COUNT = Measure('number of weights', judge.equal)
LOOP_MODEL_WEIGHTS = Measure('weights of the model it trains', judge.equal)
LOOP_MODEL_OUTPUT = Measure(
    "the model's output on a batch, beside the package's TransformerLM(d_model=4, d_ff=16, "
    "n_layers=1, n_heads=2, mode='train') with the same weights and random key", judge.allclose)
READ_TOKEN = Measure('next token (read at position len(tokens))', judge.equal,
                     why=mistakes.read_why)
COURSE_NEXT_TOKEN = Measure(recording.NEXT_TOKEN, judge.equal)
DECODED_SUMMARY = Measure(recording.SUMMARY, judge.equal, why=mistakes.summary_why)
TRAINED_LOG_PROBABILITIES = Measure("log-probabilities, beside the package's model",
                                    judge.log_probabilities_agree)
SUMMARY_TOKENS = Measure("the summary's ids, token for token", judge.equal)
