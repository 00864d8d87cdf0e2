"""Inference: summarising with a trained model, beyond the course's greedy decoder.

  reading         an article from a file, standard input or --text; the cut warning
  articles        the article as the model reads it: tokenized, cut to fit
  checkpoint      a model directory read back: ours, or the course's by its shapes
  loading         a model directory loaded once per process, ready to decode
  sized_decoder   the compiled prefill and token step of caches of one size
  fast_decoder    the cached decoder: one call a token, or one compiled call a summary
  beam            greedy and beam search in one compiled loop, Hugging Face's constraints
  search          the search options of the commands (beams, penalties, batch size)
  summaries       one article as a SummaryRun, or many side by side
  api             summarize() and summarize_details(), the Python API
  calibration     article perplexity and its calibration: the out-of-domain warning
  undertrained    the warning for a summary of an undertrained model
"""
