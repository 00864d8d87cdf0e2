"""The package's one exception type for problems a user can fix, and the
argument parser every command uses, whose errors are one line too."""

import argparse


class SummarizerError(Exception):
  """Bad input, a missing file or a mismatched model: shown as one line."""


class OneLineParser(argparse.ArgumentParser):
  """An argument parser whose errors are one line, not the usage plus a line."""

  def error(self, message):
    self.exit(2, f'error: {message} (see --help)\n')
