"""Exporting a training run as a model directory: what inference needs, calibrated.

It sits in ``runs`` above ``inference`` (exporting calibrates, calibrating
decodes, decoding loads checkpoints), so nothing imports in a circle.
"""

import os
import shutil

from summarizer.inference import calibration
from summarizer.inference import checkpoint
from summarizer.config import CALIBRATION_KEY, load_config, save_config
from summarizer.errors import SummarizerError


def export(run_dir, model_dir, calibration_articles=None):
  """Copies what inference needs (config, vocabulary, weights) to ``model_dir``.

  Optimizer slots are left behind: they triple the size and serve only
  training. A run that was not calibrated (``summarizer.inference.calibration``) is
  calibrated on the way, on ``calibration_articles`` validation articles
  (default: ``calibration.CALIBRATION_ARTICLES``).
  """
  if not checkpoint.has_checkpoint(run_dir):
    raise SummarizerError(f'{run_dir}: no checkpoint to export')
  os.makedirs(model_dir, exist_ok=True)
  base = checkpoint.BASENAME
  for name in (checkpoint.VOCAB_NAME, base + '.pkl.gz', base + '.weights.npy.gz'):
    shutil.copyfile(os.path.join(run_dir, name), os.path.join(model_dir, name))
  config, values = load_config(run_dir)
  extra = {k: v for k, v in values.items() if k not in config.to_dict()}
  extra['trained_steps'] = checkpoint.saved_step(run_dir)
  # The lineage says where each run started; a top-level init_from naming a
  # directory would name the exported model itself once it is overwritten.
  extra.pop('init_from', None)
  if extra.get('lineage'):
    extra['lineage'][-1]['steps'] = extra['trained_steps']
    extra['total_steps'] = sum(run.get('steps') or 0 for run in extra['lineage'])
  save_config(config, model_dir, **extra)
  if CALIBRATION_KEY not in extra:  # A run stopped early was not calibrated.
    limit = calibration_articles or calibration.CALIBRATION_ARTICLES
    calibration.save_calibration(model_dir, calibration.calibrate(
        model_dir, values.get('data', 'news'), limit=limit))
