"""What a training run starts from and what it keeps.

A run starts from a preset (with the flags' overrides), a vocabulary, and
random weights or those of a model directory (``--init-from``); it writes
into an output directory that it may continue (``--resume``) or start over
(``--overwrite-output-dir``) but never silently reuses. Its ``config.json``
records what it is: the preset, the data, the levers, the longest article
it read, and its lineage, the runs behind its weights.

The output directory is read once, as the run finds it, into a
``RunDirectory`` (``RunDirectory.read``): its run record, what it holds,
its checkpoint and vocabulary, and for ``--resume`` its config.json and
the step and shapes of its checkpoint. The checks, the vocabulary, the
lineage and the run (``prepare.Run``) take that object, as inference takes
a ``ModelDirectory``, and the few flags they need. The run's config.json is
written whole from what the run holds (``save_run_config``), its verdict
and calibration too: it is never read back.
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
  if args.optimizer is not None:
    overrides['optimizer'] = args.optimizer
  if args.matrix_scale is not None:
    overrides['matrix_scale'] = args.matrix_scale
  n_ids = text.vocab_size(vocab_file) if vocab_file else 0
  if n_ids > config.vocab_size:  # Round up to a multiple of 128 for speed.
    overrides['vocab_size'] = -(-n_ids // 128) * 128
  return dataclasses.replace(config, **overrides)


def start_model(init_from, preset):
  """Reads the model directory a run starts from (``--init-from``); None for random weights.

  The course's checkpoint (no config.json) is read with the heads of the
  run's ``preset`` (its name).
  """
  if not init_from:
    return None
  n_heads = None if model_directory.has_config(init_from) else get_preset(preset).n_heads
  return model_directory.read(init_from, n_heads=n_heads)


def chosen_vocab(args, directory=None, start=None):
  """Returns the vocabulary a run uses, or None if one must be built for it.

  In order: ``--vocab``; the one a resumed run already has (in its
  ``RunDirectory``, ``directory``); the one of the
  model ``--init-from`` starts from; the course's for the ``course`` preset
  (as the course does); the project's for ``news`` (the 1k one where the
  preset's ids are as few, ``config.news_vocab``). A ``tiny`` run on other
  data needs a vocabulary of its own: the news one would cut its words
  into meaningless pieces.
  """
  if args.vocab:
    return text.vocab_path(args.vocab)
  if args.resume and directory is not None and directory.vocab_file:
    return directory.vocab_file
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


@dataclasses.dataclass(frozen=True, eq=False)
class RunDirectory:
  """An output directory as a run finds it, read once (``read``).

  What the checks, the vocabulary and the lineage need of the directory
  is here; later code takes this object instead of the path. The
  checkpoint's arrays are not kept: their shapes are (Trax's Loop reads
  the checkpoint itself to resume it).

  Attributes:
    path: The directory (``--output-dir``).
    recorded: The files its run record names (``manifest``); None: it holds
      no run of ours.
    entries: What it holds but the lock, by name, sorted.
    checkpoint: Whether it holds a checkpoint.
    staged: Whether it holds a staged checkpoint (``saving.STAGED``).
    vocab_file: Its own vocabulary (None: it has none).
    values: What its config.json records; read to resume it only ({} else).
    config: The ``Config`` its config.json records (None unless read).
    step: The step of its checkpoint (None unless read).
    weight_shapes: The shapes of its checkpoint's weights (read to resume).
    slot_shapes: The shapes of the checkpoint's Adam moments (None: it keeps none).
  """
  path: str
  recorded: frozenset
  entries: tuple
  checkpoint: bool
  staged: bool
  vocab_file: str = None
  values: dict = dataclasses.field(default_factory=dict)
  config: object = None
  step: int = None
  weight_shapes: tuple = ()
  slot_shapes: tuple = None

  @property
  def pickle_file(self):
    """The checkpoint's pickle (what its errors name)."""
    return os.path.join(self.path, BASENAME + '.pkl.gz')

  @property
  def slots_file(self):
    """The file of the checkpoint's Adam moments."""
    return os.path.join(self.path, BASENAME + '.opt_slots0.npy.gz')

  @classmethod
  def read(cls, path, resume=False):
    """Reads an output directory whole, as a run finds it (made if missing).

    Only a directory that a run of ours recorded is touched: a save there
    that a kill interrupted is finished or discarded (``saving.recover``)
    before it is read. For ``resume``, the config.json and the checkpoint
    of such a directory are read too, every file once.

    Raises:
      SummarizerError: it is not a directory, its run record or (to resume)
        its config.json or checkpoint is unreadable, naming the file.
    """
    if os.path.exists(path) and not os.path.isdir(path):
      raise SummarizerError(f'--output-dir {path}: exists and is not a directory')
    os.makedirs(path, exist_ok=True)
    recorded = manifest.read(path)
    if recorded is not None:
      saving.recover(path)
    own_vocab = os.path.join(path, VOCAB_NAME)
    found = cls(path, None if recorded is None else frozenset(recorded), _entries(path),
                model_directory.has_checkpoint(path),
                bool(model_directory.checkpoint_files(path, saving.STAGED)),
                own_vocab if os.path.isfile(own_vocab) else None)
    if resume and recorded is not None and found.checkpoint:
      found = dataclasses.replace(found, **_resumed_part(found))
    return found


def _entries(path):
  """What ``path`` holds but the lock, by name, sorted."""
  return tuple(sorted(set(os.listdir(path)) - {locks.LOCK_NAME}))


def _resumed_part(directory):
  """What a run to resume reads of its directory: config.json, the checkpoint's step and shapes.

  The pickle, the weights and the Adam moments are each read once, whole
  (Trax's own reading would re-initialise at random what a truncated file
  lacks), and only their shapes are kept.
  """
  out, pkl = directory.path, directory.pickle_file
  config, values = load_config(out)
  saved = model_directory.read_checked(out, pkl, safe_pickle.load)
  if not isinstance(saved, dict) or not isinstance(saved.get('step'), int):
    raise SummarizerError(f'{pkl}: not a Trax checkpoint (no step)')
  _, weights = model_directory.read_checked(
      out, pkl, lambda path: model_directory.read_checkpoint(path, saved))
  slot_shapes = None
  if isinstance(saved.get('slots_per_task'), int):
    if not os.path.exists(directory.slots_file):
      raise SummarizerError(f'--resume: {directory.slots_file} missing: no optimizer state '
                            'to continue (an exported model has none); start a new run '
                            f'from its weights with --init-from {out}')
    slots = model_directory.read_checked(out, directory.slots_file, safe_pickle.load_arrays)
    slot_shapes = tuple(tuple(np.shape(s)) for s in slots)
  return dict(config=config, values=values, step=saved['step'],
              weight_shapes=tuple(tuple(np.shape(w)) for w in weights),
              slot_shapes=slot_shapes)


def prepare_output_dir(directory, config, resume=False, overwrite=False, max_steps=None):
  """Checks the output directory against --resume / --overwrite-output-dir.

  Refuse first, touch nothing: a directory that holds anything but a run
  of ours (recorded in its manifest) is refused before anything in it is
  deleted, renamed or replaced (``RunDirectory.read`` recovers only in a
  run of ours).

  Args:
    directory: The ``RunDirectory`` of ``--output-dir``.
    config: The run's ``Config``.
    resume: ``--resume``.
    overwrite: ``--overwrite-output-dir``.
    max_steps: ``--max-steps`` (None: none).

  Returns:
    True if a checkpoint is to be resumed.
  """
  if directory.recorded is None:
    _refuse_what_is_not_ours(directory, resume, overwrite)
    return False
  if resume:
    return _check_resume(directory, config, max_steps)
  if overwrite or not (directory.checkpoint or directory.staged):
    _remove_earlier_run(directory, overwrite)
  else:
    _refuse_if_not_empty(directory.path, directory.entries)
  return False


def _refuse_what_is_not_ours(directory, resume, overwrite):
  """For a directory with no run of ours: refuses --resume, --overwrite-output-dir and any file.

  An empty directory (or one the command has just made) has nothing to
  overwrite: --overwrite-output-dir starts a new run in it.
  """
  out = directory.path
  if resume and not directory.checkpoint:
    raise SummarizerError(f'--resume: no checkpoint in {out}')
  if resume:
    raise SummarizerError(f'--resume: {out} holds no run of ours (no {manifest.RUN_MANIFEST}), '
                          'so its checkpoint is not continued and nothing in it is touched; '
                          f'start a new run from its weights with --init-from {out}')
  if not overwrite:
    _refuse_if_not_empty(out, directory.entries)
  elif directory.entries:
    manifest.remove_run(out)  # Refuses: no run of ours there.


def _remove_earlier_run(directory, overwrite):
  """Removes what the run of ours in the directory wrote; anything else stays.

  With --overwrite-output-dir, whatever run it was; without it, only a run
  that stopped before its first checkpoint (bad data, a crash at start):
  it has nothing to resume, and its files would only block the run that is
  to replace it. A new run then starts in what is left, if that is empty.
  """
  manifest.remove_run(directory.path, directory.recorded)
  if not overwrite:
    print(f'note: {directory.path} held a run that stopped before its first checkpoint; its '
          'files were removed', flush=True)
    _refuse_if_not_empty(directory.path, _entries(directory.path))


def _check_resume(directory, config, max_steps):
  """Checks that the checkpoint in the output directory can be resumed; returns True."""
  out = directory.path
  if not directory.checkpoint:
    raise SummarizerError(f'--resume: no checkpoint in {out}')
  _check_record_fits_weights(directory)
  differences = architecture_differences(directory.config, config,
                                         'the checkpoint (its config.json and weights)')
  if differences:
    raise SummarizerError(f'--resume: {out}: the checkpoint does not match the requested '
                          'model: ' + differences)
  step = check_resumable(directory, config)
  if max_steps is not None and step > max_steps:
    raise SummarizerError(f'--resume: the checkpoint in {out} is at step {step}, past '
                          f'--max-steps {max_steps}: nothing to train; pass a '
                          'larger --max-steps')
  return True


def _check_record_fits_weights(directory):
  """Refuses a run whose config.json no longer describes its checkpoint's weights (edited)."""
  path = os.path.join(directory.path, 'config.json')
  found = model_directory.config_from_shapes(directory.weight_shapes, directory.config.n_heads,
                                             f'--resume: {directory.pickle_file}')
  for key in ARCHITECTURE:
    if getattr(found, key) != getattr(directory.config, key):
      raise SummarizerError(
          f'--resume: {path}: {key} is {getattr(directory.config, key)}, but the '
          f'checkpoint\'s weights have {key} {getattr(found, key)}; config.json no longer '
          'describes them (set it back); the checkpoint is left as it was')


def _refuse_if_not_empty(out, entries):
  """A new run starts in an empty directory (but for the lock): nothing of anyone's is mixed in."""
  if entries:
    shown = ', '.join(entries[:3]) + (', ...' if len(entries) > 3 else '')
    raise SummarizerError(f'--output-dir {out} is not empty ({shown}): pass --resume to '
                          'continue its checkpoint, --overwrite-output-dir to start over '
                          "(it removes only an earlier run's files), or choose another")


def refuse_init_from_output(init_from, output_dir):
  """A directory is never both the model a run starts from and where it writes."""
  if init_from and os.path.realpath(init_from) == os.path.realpath(output_dir):
    raise SummarizerError(f'--init-from {init_from} is also the --output-dir: a run '
                          'would overwrite the model it starts from; write to another '
                          'directory (and --export-to it afterwards if you like)')


def check_resumable(directory, config):
  """Checks that the checkpoint of ``directory`` (read whole) fits ``config``; returns its step.

  The files are left as they are when it does not.

  Raises:
    SummarizerError: the weights or the Adam moments are of the wrong
      shapes (naming the file), e.g. those of another architecture.
  """
  expected = layout.weight_shapes(config)
  try:
    layout.check_shapes(directory.weight_shapes, expected)
  except ValueError as e:
    raise SummarizerError(f'--resume: {directory.path}: the weights do not read whole ({e}); '
                          'the checkpoint is left as it was') from None
  # Adam keeps two moments per weight, each of the weight's shape.
  if directory.slot_shapes is not None and (
      list(directory.slot_shapes) != [shape for shape in expected for _ in (0, 1)]):
    raise SummarizerError(f'--resume: {directory.slots_file}: {len(directory.slot_shapes)} '
                          "arrays that are not Adam's two moments of each of the "
                          f'{len(expected)} weights; the checkpoint is left as it was')
  return directory.step


def earlier_runs(directory, resuming, start=None):
  """Returns the earlier runs behind this one, and the longest article they read.

  A run started ``--init-from`` a model directory (``start``) inherits that
  model's runs; a resumed run keeps the record it wrote when it started
  (its ``RunDirectory``'s config.json).
  """
  if resuming:
    values = directory.values
    return values.get('lineage', [])[:-1], values.get('max_article_tokens', 0)
  if start is None:
    return [], 0
  values = start.values or {'trained_steps': start.step}
  runs = values.get('lineage') or [{'init_from': None, 'steps': values.get('trained_steps'),
                                    'note': 'trained elsewhere'}]
  return list(runs), values.get('max_article_tokens', 0)


def save_run_config(run, steps, **ending):
  """Writes the run's config.json: the preset, the data, the levers and the lineage.

  Written whole from what the run holds each time, never read back.

  Args:
    run: The ``prepare.Run``: its args, config, earlier runs, vocabulary's
      fingerprint, the longest article it has read and whether its steps
      took split batches (``prepare.SplitBatches``).
    steps: The step it has reached.
    **ending: What its end adds: the verdict against Lead-3, the calibration.
  """
  args, config = run.args, run.config
  levers = dict(data=args.data, learning_rate=config.learning_rate,
                warmup_steps=config.warmup_steps, seed=args.seed,
                article_loss_weight=args.article_loss_weight,
                copy_fraction=args.copy_fraction, short_fraction=args.short_fraction,
                long_fraction=args.long_fraction, extract_fraction=args.extract_fraction,
                tied_init=args.tied_init, embedding_scale=args.embedding_scale,
                repeat_steps=args.repeat_steps, repeat_until_loss=args.repeat_until_loss,
                max_minutes=args.max_minutes, max_tokens=args.max_tokens)
  this_run = dict(levers, init_from=args.init_from, steps=steps)
  if run.split.on:
    this_run['split_batches'] = True
  lineage = list(run.earlier_runs) + [this_run]
  save_config(config, run.directory.path, vocab_file=VOCAB_NAME,
              vocab_fingerprint=run.vocab_fingerprint, max_steps=args.max_steps,
              init_from=args.init_from, max_article_tokens=run.counter['longest_article'],
              lineage=lineage, total_steps=sum(r.get('steps') or 0 for r in lineage),
              **levers, **ending)
  manifest.record_run(run.directory.path)
