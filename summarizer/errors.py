"""The package's one exception type for problems a user can fix."""


class SummarizerError(Exception):
  """Bad input, a missing file or a mismatched model: shown as one line."""
