"""Inference: summarising with a trained model, beyond the course's greedy decoder.

  article         an article from a file, standard input or --text; cleaned, cut to fit
  model_directory a model directory read once: ours, or the course's by its shapes
  layout          where a TransformerLM's layers and weights sit; a model built with its weights
  loaded_model    a model directory's model ready to decode, loaded once per process
  sized_decoder   the compiled prefill and token step of caches of one size
  fast_decoder    the cached decoder: one call a token, or one compiled call a summary
  beam            greedy and beam search in one compiled loop, Hugging Face's constraints
  search_options  the search flags of the commands (beams, penalties, batch size), jax-free
  summaries       one article as a SummaryRun, or many side by side
  api             summarize() and summarize_details(), the Python API
  calibration     article perplexity and its calibration: the out-of-domain warning
  undertrained    the warning for a summary of an undertrained model

A path goes in once, at ``loaded_model.load`` (``model_directory.read``); everything
after it takes the ``LoadedModel``.
"""
