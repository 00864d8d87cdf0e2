"""What a training run starts from and what it keeps.

A run starts from a preset (with the flags' overrides), a vocabulary, and
random weights or those of a model directory (``--init-from``); it writes
into an output directory that it may continue (``--resume``) or start over
(``--overwrite-output-dir``) but never silently reuses. Its ``config.json``
records what it is: the preset, the data, the levers, the longest article
it read, and its lineage, the runs behind its weights.
"""

import dataclasses
import glob
import os

import numpy as np

from summarizer import text
from summarizer.corpus import subwords
from summarizer.inference import layout
from summarizer.inference import model_directory
from summarizer.inference.model_directory import BASENAME, VOCAB_NAME
from summarizer import safe_pickle
from summarizer.runs import locks
from summarizer.runs import manifest
from summarizer.runs import saving
from summarizer.config import (COURSE_VOCAB_FILE, get_preset, load_config, news_vocab,
                               save_config)
from summarizer.errors import SummarizerError

# Config entries that fix the architecture: a checkpoint resumes only into
# a model that agrees on all of them.
ARCHITECTURE = ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'n_heads', 'max_len')
# Training examples a run's own vocabulary is built from (enough for its
# frequent words; the whole of CNN/DailyMail would take an hour).
VOCAB_EXAMPLES = 20000


def resolve_config(args, vocab_file=None):
  """Returns the Config of a run: the preset with the flags' overrides.

  Args:
    args: A ``TrainArgs``.
    vocab_file: The run's vocabulary; the model gets at least as many ids.
  """
  config = get_preset(args.preset)
  overrides = {}
  if args.learning_rate is not None:
    overrides['learning_rate'] = args.learning_rate
  if args.warmup_steps is not None:
    overrides['warmup_steps'] = args.warmup_steps
  if args.truncate is not None:
    overrides['truncate'] = args.truncate
  n_ids = text.vocab_size(vocab_file) if vocab_file else 0
  if n_ids > config.vocab_size:  # Round up to a multiple of 128 for speed.
    overrides['vocab_size'] = -(-n_ids // 128) * 128
  return dataclasses.replace(config, **overrides)


def start_model(args):
  """Reads the model directory a run starts from (``--init-from``); None for random weights.

  The course's checkpoint (no config.json) is read with the preset's heads.
  """
  if not args.init_from:
    return None
  n_heads = None if model_directory.has_config(args.init_from) else get_preset(args.preset).n_heads
  return model_directory.read(args.init_from, n_heads=n_heads)


def chosen_vocab(args, start=None):
  """Returns the vocabulary a run uses, or None if one must be built for it.

  In order: ``--vocab``; the one a resumed run already has; the one of the
  model ``--init-from`` starts from; the course's for the ``course`` preset
  (as the course does); the project's for ``news`` (the 1k one where the
  preset's ids are as few, ``config.news_vocab``). A ``tiny`` run on other
  data needs a vocabulary of its own: the news one would cut its words
  into meaningless pieces.
  """
  if args.vocab:
    return text.vocab_path(args.vocab)
  own = os.path.join(args.output_dir, VOCAB_NAME)
  if args.resume and os.path.isfile(own):
    return own
  if start is not None:
    return start.vocab_file
  if args.preset == 'course':
    return COURSE_VOCAB_FILE
  if args.data == 'news':
    return news_vocab(get_preset(args.preset))
  return None


def build_run_vocab(args, config, path):
  """Builds a vocabulary of the preset's size from the run's training data."""
  print(f'no --vocab: building a {config.vocab_size}-subword vocabulary from the '
        f'training split of {args.data} into {path}', flush=True)
  subwords.build_vocab(args.data, config.vocab_size, path, args.data_dir,
                    limit=VOCAB_EXAMPLES, progress=args.progress, download=args.download)
  return path


def architecture_differences(saved, config, where):
  """Describes how two configs' architectures differ ('' if they agree)."""
  return '; '.join(f'{key} {getattr(saved, key)} in {where}, '
                   f'{getattr(config, key)} requested'
                   for key in ARCHITECTURE if getattr(saved, key) != getattr(config, key))


def initial_weights(start, config):
  """Returns the weights of the model a run starts from, checked to fit ``config``.

  A fresh run may start from a trained model (fine-tuning) instead of a
  random one; the optimizer and the learning-rate schedule start afresh.

  Args:
    start: The ``ModelDirectory`` of ``--init-from`` (``start_model``).
    config: The run's ``Config``.
  """
  differences = architecture_differences(start.config, config, start.path)
  if differences:
    raise SummarizerError(f'--init-from {start.path}: the model does not match '
                          'the requested one: ' + differences)
  return start.model('eval').weights


def own_files(directory, patterns):
  """Lists the files and folders in ``directory`` that a command writes.

  Args:
    directory: A directory (missing: nothing found).
    patterns: Glob patterns of what the command writes.
  """
  found = []
  for pattern in patterns:
    found += glob.glob(os.path.join(glob.escape(directory), pattern))
  return found


def prepare_output_dir(args, config):
  """Checks the output directory against --resume / --overwrite-output-dir.

  Refuse first, touch nothing: a directory that holds anything but a run
  of ours (recorded in its manifest) is refused before anything in it is
  deleted, renamed or replaced; only then is a save that a kill
  interrupted finished or discarded (``saving.recover``).

  Returns:
    True if a checkpoint is to be resumed.
  """
  out = args.output_dir
  if args.resume and args.overwrite_output_dir:
    raise SummarizerError('--resume and --overwrite-output-dir exclude each other')
  if os.path.exists(out) and not os.path.isdir(out):
    raise SummarizerError(f'--output-dir {out}: exists and is not a directory')
  os.makedirs(out, exist_ok=True)
  if manifest.read(out) is None:
    _refuse_what_is_not_ours(args)
    return False
  saving.recover(out)
  if args.overwrite_output_dir:
    manifest.remove_run(out)  # What the earlier run wrote; anything else stays.
    return False
  if args.resume:
    return _check_resume(args, config)
  _clear_run_that_never_saved(out)
  _refuse_if_not_empty(out)
  return False


def _refuse_what_is_not_ours(args):
  """For a directory with no run of ours: refuses --resume, --overwrite-output-dir and any file.

  An empty directory (or one the command has just made) has nothing to
  overwrite: --overwrite-output-dir starts a new run in it.
  """
  out = args.output_dir
  if args.overwrite_output_dir and set(os.listdir(out)) - {locks.LOCK_NAME}:
    manifest.remove_run(out)  # Refuses: no run of ours there.
  if args.resume and not model_directory.has_checkpoint(out):
    raise SummarizerError(f'--resume: no checkpoint in {out}')
  if args.resume:
    raise SummarizerError(f'--resume: {out} holds no run of ours (no {manifest.RUN_MANIFEST}), '
                          'so its checkpoint is not continued and nothing in it is touched; '
                          f'start a new run from its weights with --init-from {out}')
  _refuse_if_not_empty(out)


def _check_resume(args, config):
  """Checks that the checkpoint in the output directory can be resumed; returns True."""
  out = args.output_dir
  if not model_directory.has_checkpoint(out):
    raise SummarizerError(f'--resume: no checkpoint in {out}')
  saved, _ = load_config(out)
  differences = architecture_differences(saved, config, 'the checkpoint')
  if differences:
    raise SummarizerError(f'{out}: checkpoint does not match the requested '
                          'model: ' + differences)
  step = check_resumable(out, config)
  if args.max_steps is not None and step > args.max_steps:
    raise SummarizerError(f'--resume: the checkpoint in {out} is at step {step}, past '
                          f'--max-steps {args.max_steps}: nothing to train; pass a '
                          'larger --max-steps')
  return True


def _clear_run_that_never_saved(out):
  """Removes the files of a run of ours that stopped before its first checkpoint.

  Such a run (bad data, a crash at start) has nothing to resume, and its
  files would only block the run that is to replace it.
  """
  if manifest.read(out) is not None and not model_directory.has_checkpoint(out) and not (
      model_directory.checkpoint_files(out, saving.STAGED)):
    manifest.remove_run(out)
    print(f'note: {out} held a run that stopped before its first checkpoint; its files '
          'were removed', flush=True)


def _refuse_if_not_empty(out):
  """A new run starts in an empty directory (but for the lock): nothing of anyone's is mixed in."""
  others = sorted(set(os.listdir(out)) - {locks.LOCK_NAME})
  if others:
    shown = ', '.join(others[:3]) + (', ...' if len(others) > 3 else '')
    raise SummarizerError(f'--output-dir {out} is not empty ({shown}): pass --resume to '
                          'continue its checkpoint, --overwrite-output-dir to start over '
                          "(it removes only an earlier run's files), or choose another")


def refuse_init_from_output(args):
  """A directory is never both the model a run starts from and where it writes."""
  if args.init_from and os.path.realpath(args.init_from) == os.path.realpath(args.output_dir):
    raise SummarizerError(f'--init-from {args.init_from} is also the --output-dir: a run '
                          'would overwrite the model it starts from; write to another '
                          'directory (and --export-to it afterwards if you like)')


def check_resumable(out, config):
  """Reads the checkpoint in ``out`` whole and checks it fits ``config``; returns its step.

  Trax's own reading would re-initialise at random the weights a truncated
  file lacks (and train on, and save over the checkpoint); here the run
  stops first, and the files are left as they are.

  Raises:
    SummarizerError: a file is missing, truncated, unsafe or of the wrong
      shapes (naming it), e.g. the optimizer state of an exported model.
  """
  pkl = os.path.join(out, BASENAME + '.pkl.gz')
  saved = model_directory.read_checked(out, pkl, safe_pickle.load)
  if not isinstance(saved, dict) or not isinstance(saved.get('step'), int):
    raise SummarizerError(f'{pkl}: not a Trax checkpoint (no step)')
  weights = model_directory.read_checked(out, pkl)
  try:
    expected = layout.weight_shapes(config)
    layout.check_shapes(weights, expected)
  except ValueError as e:
    raise SummarizerError(f'--resume: {out}: the weights do not read whole ({e}); '
                          'the checkpoint is left as it was') from None
  if isinstance(saved.get('slots_per_task'), int):
    slots_file = os.path.join(out, BASENAME + '.opt_slots0.npy.gz')
    if not os.path.exists(slots_file):
      raise SummarizerError(f'--resume: {slots_file} missing: no optimizer state to '
                            'continue (an exported model has none); start a new run '
                            f'from its weights with --init-from {out}')
    slots = model_directory.read_checked(out, slots_file, safe_pickle.load_arrays)
    # Adam keeps two moments per weight, each of the weight's shape.
    if [tuple(np.shape(s)) for s in slots] != [shape for shape in expected for _ in (0, 1)]:
      raise SummarizerError(f'--resume: {slots_file}: {len(slots)} arrays that are not '
                            f"Adam's two moments of each of the {len(expected)} weights; "
                            'the checkpoint is left as it was')
  return saved['step']


def earlier_runs(args, resuming, start=None):
  """Returns the earlier runs behind this one, and the longest article they read.

  A run started ``--init-from`` a model directory (``start``) inherits that
  model's runs; a resumed run keeps the record it wrote when it started.
  """
  if resuming:
    values = load_config(args.output_dir)[1]
    return values.get('lineage', [])[:-1], values.get('max_article_tokens', 0)
  if start is None:
    return [], 0
  values = start.values or {'trained_steps': start.step}
  runs = values.get('lineage') or [{'init_from': None, 'steps': values.get('trained_steps'),
                                    'note': 'trained elsewhere'}]
  return list(runs), values.get('max_article_tokens', 0)


def save_run_config(args, config, earlier, steps, longest_article, split_batches=False):
  """Writes the run's config.json: the preset, the data, the levers and the lineage.

  ``split_batches``: this run's steps took split batches (``prepare.SplitBatches``).
  """
  levers = dict(data=args.data, learning_rate=config.learning_rate,
                warmup_steps=config.warmup_steps, seed=args.seed,
                article_loss_weight=args.article_loss_weight,
                copy_fraction=args.copy_fraction, short_fraction=args.short_fraction,
                long_fraction=args.long_fraction, extract_fraction=args.extract_fraction,
                tied_init=args.tied_init, embedding_scale=args.embedding_scale,
                repeat_steps=args.repeat_steps, repeat_until_loss=args.repeat_until_loss,
                max_minutes=args.max_minutes)
  this_run = dict(levers, init_from=args.init_from, steps=steps)
  if split_batches:
    this_run['split_batches'] = True
  lineage = list(earlier) + [this_run]
  save_config(config, args.output_dir, vocab_file=VOCAB_NAME,
              vocab_fingerprint=text.vocab_fingerprint(
                  os.path.join(args.output_dir, VOCAB_NAME)),
              max_steps=args.max_steps, init_from=args.init_from,
              max_article_tokens=longest_article, lineage=lineage,
              total_steps=sum(run.get('steps') or 0 for run in lineage), **levers)
  manifest.record_run(args.output_dir)
