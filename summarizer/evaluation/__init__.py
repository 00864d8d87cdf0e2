"""Evaluation: how good the summaries are, and how fast the package is.

  scoring     ROUGE and the names-and-numbers scores
  baselines   Lead-3 and retrieval
  scorecard   a model's summaries scored beside the baselines (python -m summarizer.evaluate)
  benchmarks  our speed claims, measured side by side (python -m summarizer.bench)
  first_model the bench's first-model section: a learner's ten-minute model against Lead-3
  class_grading the bench's grading section: a class through nbgrader autograde, one at a time and side by side
  verdict     a run's model against Lead-3 on validation stories, kept in its config.json
"""

# What the evaluate and bench commands' arguments name: here, so that parsing them loads no jax.
METHODS = ('fast', 'greedy')
RESULTS_FILE = 'eval_results.json'
PREDICTIONS_FILE = 'generated_predictions.txt'
# What an evaluation writes: earlier ones are replaced only when asked.
OUTPUT_FILES = (RESULTS_FILE, PREDICTIONS_FILE)
# The bench command's sections (its work is ``benchmarks``). Run when --only
# does not say: all but beam, which decodes 750 articles 4 ways, first-model,
# which trains for ten minutes, and grading, which autogrades ten notebooks.
BENCH_SECTIONS = ('import', 'init', 'train', 'decode', 'data', 'cli', 'start', 'batch', 'beam',
                  'first-model', 'grading')
DEFAULT_BENCH_SECTIONS = BENCH_SECTIONS[:-3]
