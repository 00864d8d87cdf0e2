"""Evaluation: how good the summaries are, and how fast the package is.

  scoring     ROUGE and the names-and-numbers scores
  baselines   Lead-3 and retrieval
  evaluate    a model's summaries scored beside the baselines
  bench       our speed claims, measured side by side
"""

# What the evaluate command's arguments name: here, so that parsing them loads no jax.
METHODS = ('fast', 'greedy')
RESULTS_FILE = 'eval_results.json'
PREDICTIONS_FILE = 'generated_predictions.txt'
# What an evaluation writes: earlier ones are replaced only when asked.
OUTPUT_FILES = (RESULTS_FILE, PREDICTIONS_FILE)
