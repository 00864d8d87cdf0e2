"""What the model writes as it learns: one validation story, summarised at each evaluation.

Losses say that a model learns, not what it can do. After each evaluation
the run summarises the first story of its validation split with the
weights of that moment, so a learner watches "The game in the win." turn
into a summary, or sees that it has not yet.
"""

import itertools

from summarizer._trax import tl
from summarizer.corpus import sources
from summarizer.errors import SummarizerError
from summarizer.inference import summaries
from summarizer.inference.loaded_model import LoadedModel

# Summary tokens a preview writes at most: a line or two while the model rambles.
PREVIEW_TOKENS = 48


class Preview:
  """The first validation story of a run's data, summarised with the weights of the moment.

  Args:
    run: A prepared ``summarizer.runs.prepare.Run``.
  """

  def __init__(self, run):
    self._config, self._vocab_file = run.config, run.vocab_file
    self._where = run.args.output_dir
    first = itertools.islice(sources.examples(run.args.data, 'validation', run.args.data_dir,
                                              download=False), 1)
    self.article, reference = next(first)
    self.highlights = _one_line(reference)  # What the story's summary should say.
    self._loaded = None

  def summary(self, weights):
    """Returns the story's summary (one line) by a model of these weights.

    Args:
      weights: The weights of a ``TransformerLM`` of the run's config (the
        training loop's, in any mode).
    """
    flat, _ = tl.flatten_weights_and_state(weights, ())
    if self._loaded is None:
      self._loaded = LoadedModel.from_weights(flat, self._config, self._vocab_file, self._where)
    else:  # The same shapes: what was compiled for the last preview serves again.
      self._loaded.replace_weights(flat)
    run = summaries.SummaryRun(self._loaded, self.article, PREVIEW_TOKENS, stream=False)
    return _one_line(run.details()['summary_text']) or '(nothing: the summary ends at once)'


def preview_of(run):
  """Returns a run's ``Preview``, or None where its data has no validation story to show."""
  try:
    return Preview(run)
  except (SummarizerError, StopIteration):
    return None


def _one_line(text):
  return ' / '.join(line.strip() for line in text.splitlines() if line.strip())
