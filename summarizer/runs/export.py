"""Exporting a training run as a model directory: what inference needs, calibrated.

It sits in ``runs`` above ``inference`` (exporting calibrates, calibrating
decodes, decoding loads checkpoints), so nothing imports in a circle.
"""

import ctypes
import json
import os
import shutil
import tempfile

from summarizer import files
from summarizer.inference import calibration
from summarizer.inference import model_directory
from summarizer.inference.loaded_model import LoadedModel
from summarizer.inference.model_directory import BASENAME, VOCAB_NAME
from summarizer.runs import locks
from summarizer.runs import manifest
from summarizer.config import CALIBRATION_KEY, FINGERPRINT_KEY, load_config, save_config
from summarizer.errors import SummarizerError


# What an export writes, and what else a directory may hold to be replaced by one.
EXPORT_FILES = ('config.json', VOCAB_NAME, BASENAME + '.pkl.gz', BASENAME + '.weights.npy.gz')
# renameat2's flag that swaps two paths in one step (Linux 3.15).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def export(run_dir, model_dir, calibration_articles=None):
  """Copies what inference needs (config, vocabulary, weights) to ``model_dir``.

  Optimizer slots are left behind: they triple the size and serve only
  training. A run that was not calibrated (``summarizer.inference.calibration``) is
  calibrated on the way, on ``calibration_articles`` validation articles
  (default: ``calibration.CALIBRATION_ARTICLES``).

  The export is written whole into a new folder beside ``model_dir``, then
  renamed into place: a kill at any moment leaves the earlier export (or
  none) as it was, never a mix. ``model_dir`` must be new, empty or an
  earlier export with nothing else in it (``check_export_target``).
  """
  if not model_directory.has_checkpoint(run_dir):
    raise SummarizerError(f'{run_dir}: no checkpoint to export')
  check_export_target(model_dir)
  parent = os.path.dirname(os.path.abspath(model_dir))
  staging = tempfile.mkdtemp(prefix=f'.{os.path.basename(os.path.abspath(model_dir))}.export-',
                             dir=parent)
  try:
    _write_export(run_dir, staging, calibration_articles)
    _move_into_place(staging, model_dir)
  except OSError as e:
    raise SummarizerError(f'--export-to {model_dir}: cannot write the export '
                          f'({e.strerror or e}); an earlier export there is kept') from None
  finally:
    shutil.rmtree(staging, ignore_errors=True)


def check_export_target(model_dir, output_dir=None):
  """Refuses a ``model_dir`` that an export must not replace.

  Args:
    model_dir: The export's directory.
    output_dir: The run's output directory (asked before the run trains).

  Raises:
    SummarizerError: it is a link, not a directory, or holds anything but
      an earlier export (its four files and manifest) and the run lock; or
      it is the run's output directory, or inside or around it.
  """
  if output_dir is not None:
    export, run = os.path.realpath(model_dir), os.path.realpath(output_dir)
    if export == run or export.startswith(run + os.sep) or run.startswith(export + os.sep):
      raise SummarizerError(f'--export-to {model_dir}: is the output directory '
                            f'{output_dir}, or inside or around it; export to another directory')
  if os.path.islink(model_dir):
    raise SummarizerError(f'--export-to {model_dir}: is a symbolic link; give the '
                          'directory itself')
  if not os.path.exists(model_dir):
    return
  if not os.path.isdir(model_dir):
    raise SummarizerError(f'--export-to {model_dir}: exists and is not a directory')
  names = set(os.listdir(model_dir)) - {locks.LOCK_NAME}
  others = sorted(names - set(EXPORT_FILES) - {manifest.EXPORT_MANIFEST})
  if others:
    raise SummarizerError(f'--export-to {model_dir}: holds {", ".join(others[:3])}, which '
                          'no export wrote; export to a new or empty directory')
  for name in names:
    path = os.path.join(model_dir, name)
    if os.path.islink(path) or not os.path.isfile(path):
      raise SummarizerError(f'--export-to {model_dir}: its {name} is not a plain file '
                            '(a link?); export to a new or empty directory')
  # An earlier export says so in its manifest (or, before manifests, has all four files).
  if names and manifest.EXPORT_MANIFEST not in names and names != set(EXPORT_FILES):
    raise SummarizerError(f'--export-to {model_dir}: holds {", ".join(sorted(names))} but '
                          'is not an earlier export; export to a new or empty directory')


def _write_export(run_dir, model_dir, calibration_articles):
  """Writes the export into the empty directory ``model_dir``."""
  for name in (VOCAB_NAME, BASENAME + '.pkl.gz', BASENAME + '.weights.npy.gz'):
    shutil.copyfile(os.path.join(run_dir, name), os.path.join(model_dir, name))
  config, values = load_config(run_dir)
  extra = {k: v for k, v in values.items() if k not in config.to_dict()}
  extra['trained_steps'] = model_directory.saved_step(run_dir)
  # The lineage says where each run started; a top-level init_from naming a
  # directory would name the exported model itself once it is overwritten.
  extra.pop('init_from', None)
  if extra.get('lineage'):
    extra['lineage'][-1]['steps'] = extra['trained_steps']
    extra['total_steps'] = sum(run.get('steps') or 0 for run in extra['lineage'])
  extra[FINGERPRINT_KEY] = bound_to_weights(model_dir, dict(config.to_dict(), **extra))
  save_config(config, model_dir, **extra)
  if CALIBRATION_KEY not in extra:  # A run stopped early was not calibrated.
    limit = calibration_articles or calibration.CALIBRATION_ARTICLES
    exported = LoadedModel(model_directory.read(model_dir))
    extra[CALIBRATION_KEY] = calibration.calibrate(exported, values.get('data', 'news'),
                                                   limit=limit)
    save_config(config, model_dir, **extra)
  manifest.write(model_dir, EXPORT_FILES, manifest.EXPORT_MANIFEST)
  os.chmod(model_dir, 0o755 & ~files.umask())


def bound_to_weights(model_dir, values):
  """The fingerprint that binds ``values`` (a config.json's) to the weights in ``model_dir``."""
  values = {k: v for k, v in values.items() if k != FINGERPRINT_KEY}
  values = json.loads(json.dumps(values))  # As config.json will read back: lists, not tuples.
  pkl = os.path.join(model_dir, BASENAME + '.pkl.gz')
  weights = model_directory.read_checked(model_dir, pkl)
  return model_directory.fingerprint(values, weights)


def _exchange(a, b):
  """Swaps two paths in one step (Linux's renameat2); False where it cannot."""
  try:
    rename = ctypes.CDLL(None, use_errno=True).renameat2
  except (OSError, AttributeError):
    return False
  return rename(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def _move_into_place(staging, model_dir):
  """Puts the complete export ``staging`` at ``model_dir``; the earlier one ends in ``staging``."""
  if not os.path.exists(model_dir):
    os.rename(staging, model_dir)
    return
  if _exchange(staging, model_dir):
    return
  # No atomic swap here: move the old one aside first. A kill between the two
  # renames leaves it, whole, in the folder beside named in the error below.
  aside = staging + '.old'
  os.rename(model_dir, aside)
  os.rename(staging, model_dir)
  os.rename(aside, staging)
