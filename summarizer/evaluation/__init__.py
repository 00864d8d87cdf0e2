"""Evaluation: how good the summaries are, and how fast the package is.

  scoring     ROUGE and the names-and-numbers scores
  baselines   Lead-3 and retrieval
  evaluate    a model's summaries scored beside the baselines
  bench       our speed claims, measured side by side
"""
