"""Model and training configuration: one dataclass, named presets, course constants.

A preset fixes the architecture, the learning-rate schedule and the batching,
so a model directory's ``config.json`` is enough to rebuild the model that
wrote it.
"""

import dataclasses
import json
import math
import os

from summarizer.errors import SummarizerError
from summarizer.files import check_record, read_file, read_json, write_text

# The course's vocabulary: its 33,021 subwords, rounded up to a size of ids.
VOCAB_SIZE = 33300
# Special token ids of the course's subword vocabularies.
PAD = 0          # Padding; also the separator between article and summary.
SEP = 0          # The course writes ``article + [EOS, SEP] + summary + [EOS]``.
EOS = 1          # End of a text.

# The course's bucketing of joint sequences by length (in tokens).
BOUNDARIES = (128, 256, 512, 1024)
BATCH_SIZES = (16, 8, 4, 2, 1)
MAX_JOINT_LENGTH = 2048  # Longer examples are dropped (or their article cut).

# The course's training schedule: Adam at this peak after a linear warmup,
# then an rsqrt decay; its exercise checkpoints every few steps.
LEARNING_RATE = 0.01
WARMUP_STEPS = 1000
COURSE_STEPS_PER_CHECKPOINT = 10

# config.json's entry for the article perplexities a model was calibrated on.
CALIBRATION_KEY = 'perplexity_calibration'
# config.json's entry for how a model scored against Lead-3 when its run ended.
VERDICT_KEY = 'verdict'
# What binds a model directory's config.json to its weights (inference.model_directory.fingerprint).
FINGERPRINT_KEY = 'weights_fingerprint'
# Validation articles a calibration reads (or all, if the split is smaller).
CALIBRATION_ARTICLES = 500

# Where the package keeps what it ships: the repository's top-level data/ and
# notebooks/ folders, which an installed package (a wheel, ``pip install .``
# or ``pip install git+URL``) holds as its package data summarizer/_data and
# summarizer/_notebooks (see pyproject.toml). A checkout, installed editable
# or not at all, has no such folders inside the package and reads the top
# level's.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _shipped(name, installed_name):
  """The folder ``name`` beside the package, or ``installed_name`` inside it if installed."""
  installed = os.path.join(PACKAGE_DIR, installed_name)
  if os.path.isdir(installed):
    return installed
  return os.path.join(os.path.dirname(PACKAGE_DIR), name)


DATA_DIR = _shipped('data', '_data')
# Notebook 03's folder (the exercises' explanations, summarizer.contract.handout).
NOTEBOOKS_DIR = _shipped('notebooks', '_notebooks')
DEFAULT_VOCAB_FILE = os.path.join(DATA_DIR, 'news.subwords')
# The news corpus's smaller vocabulary (1,018 subwords; news_vocab), the quick
# preset's: its output layer half as wide, a story 2% more tokens.
NEWS_1K_VOCAB_FILE = os.path.join(DATA_DIR, 'news1k.subwords')
# The course's vocabulary (33,021 subwords), as its lab saves it.
COURSE_VOCAB_NAME = 'summarize32k.subword.subwords'
COURSE_VOCAB_FILE = os.path.join(DATA_DIR, COURSE_VOCAB_NAME)
DEFAULT_MODEL_DIR = os.path.join(DATA_DIR, 'model')


# The train command's optimizers (runs/optimizers.py): Trax's Adam, or Muon's orthogonalised
# momentum for the hidden matrices.
OPTIMIZERS = ('adam', 'muon')


@dataclasses.dataclass(frozen=True)
class Config:
  """Everything needed to build a TransformerLM and train it.

  Defaults are the course's assignment (the ``course`` preset).
  """
  preset: str = 'course'
  vocab_size: int = VOCAB_SIZE  # The course's 33,021 subwords, rounded up.
  d_model: int = 512            # Width of embeddings and residual stream.
  d_ff: int = 2048              # Width of the feed-forward layer (4 x d_model).
  n_layers: int = 6             # Decoder blocks.
  n_heads: int = 8              # Attention heads; d_model / n_heads = 64 each.
  dropout: float = 0.1          # Dropout rate in training mode.
  max_len: int = 4096           # Positions the positional encoding covers.
  learning_rate: float = LEARNING_RATE  # Peak of the warmup-then-rsqrt schedule.
  warmup_steps: int = WARMUP_STEPS     # Linear warmup before the rsqrt decay.
  max_joint_length: int = MAX_JOINT_LENGTH  # Longest article+summary kept.
  truncate: bool = False        # Cut longer articles to fit (True), or drop
                                # the example as the course's FilterByLength does.
  boundaries: tuple = BOUNDARIES            # Bucket edges by sequence length.
  batch_sizes: tuple = BATCH_SIZES          # One per bucket, plus the last.
  adam_b2: float = 0.999        # Adam's decay of its squared-gradient average
                                # (Trax's default): its memory is about
                                # 1 / (1 - adam_b2) steps.
  clip_grad_norm: float = None  # Scale each step's whole gradient down to at
                                # most this norm (None: no clipping, Trax's default).
  decay_share: float = 1.0      # A token-budgeted run's learning rate holds its peak,
                                # then decays to zero over this last share of the budget.
  optimizer: str = 'adam'       # 'adam' (Trax's, the course's) or 'muon': hidden matrices
                                # step along their orthogonalised momentum (runs/optimizers.py).
  matrix_scale: float = 2.0     # Muon's matrix step as a multiple of the learning rate.

  def model_kwargs(self):
    """Returns the keyword arguments of ``TransformerLM`` for this config."""
    return dict(vocab_size=self.vocab_size, d_model=self.d_model,
                d_ff=self.d_ff, n_layers=self.n_layers, n_heads=self.n_heads,
                dropout=self.dropout, max_len=self.max_len)

  def to_dict(self):
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, values):
    """Builds a Config from ``to_dict`` output, ignoring unknown keys.

    A key the values lack (written before the field existed) takes the
    value of the preset they name.
    """
    fields = {f.name for f in dataclasses.fields(cls)}
    kept = {k: v for k, v in values.items() if k in fields}
    for key in ('boundaries', 'batch_sizes'):
      if key in kept:
        kept[key] = tuple(kept[key])
    return dataclasses.replace(PRESETS.get(kept.get('preset'), cls()), **kept)


PRESETS = {
    # The assignment's model: 6 layers of width 512 (about 55M parameters).
    'course': Config(),
    # A model that learns the news corpus on 2 CPU cores in minutes to hours:
    # 3 layers of width 256 over the project's 2k-subword vocabulary (about
    # 3M parameters). A gentler schedule than the course's (a small model on
    # small batches diverges at 0.01), no dropout (a run sees each story
    # about once: nothing to overfit), and buckets sized for the corpus,
    # whose stories are 150 to 350 tokens long.
    'tiny': Config(preset='tiny', vocab_size=2048, d_model=256, d_ff=1024,
                   n_layers=3, n_heads=4, dropout=0.0, max_len=1024,
                   learning_rate=0.002, warmup_steps=400,
                   max_joint_length=1024, truncate=True, boundaries=(256, 384, 512),
                   batch_sizes=(16, 8, 4, 2)),
    # Your own summarizer in ten minutes (the default of a new run with
    # --max-minutes; its lessons are runs.args.PRESET_LESSONS['quick']):
    # 2 layers of width 128 with a feed-forward layer twice as wide (about
    # 0.7M parameters) over the news corpus's 1k vocabulary (news_vocab: the
    # output layer, half a step's time at 2,048 ids, costs half as much, and
    # the copy lessons end sooner), which a 2-core CPU trains at about 15,600
    # tokens a second; a higher peak, a short warm-up, and half
    # tiny's batches, so ten minutes make about 5,800 updates (more, smaller
    # steps learn faster in so short a run; below runs.plan.SPLIT_SHARE of
    # that speed, as on one shared core, each batch is split in four, where
    # two cores would gain few steps from it). Adam remembers its squared
    # gradients for about 20 steps, not 1,000, and a step's gradient norm is
    # clipped at 1: when the repeat lessons give way to the stories, its step
    # sizes follow the new gradients at once. A token-budgeted run, or one on
    # quarter batches, holds the peak for the first 80% of its budget and
    # decays over the last 20% (whole batches on a clock decay over the whole
    # run); a token budget takes TOKEN_RECIPES['quick']: in 2.5 million tokens, a decay over the
    # whole budget left seed 0 below the bar on the validation stories (entity
    # P/R 0.78/0.31), over the last 40% above it (0.91/0.43) and seeds 1 and 2
    # below it (data/model/README.md, the bar in 2.5 million tokens).
    'quick': Config(preset='quick', vocab_size=1024, d_model=128, d_ff=256,
                    n_layers=2, n_heads=4, dropout=0.0, max_len=1024,
                    learning_rate=0.005, warmup_steps=200,
                    max_joint_length=1024, truncate=True, boundaries=(256, 384, 512),
                    batch_sizes=(8, 4, 2, 1), adam_b2=0.95, clip_grad_norm=1.0,
                    decay_share=0.2),
}

# What a token budget (--max-tokens) changes in a preset's recipe, where a time budget keeps the
# one its ten-minute figures were measured with: ``config``, the Config fields of a new run from
# random weights (a resumed run keeps its checkpoint's); ``lessons``, the lesson flags' defaults
# (over runs.args.PRESET_LESSONS). For quick: four decoder blocks, not two; Muon's orthogonalised
# steps for the hidden matrices at 2.5 times the peak (runs/optimizers.py); the article's tokens
# at half the summary's weight, not a quarter; and one copy lesson in ten examples, not three.
# Its quarter batches take 0.42 of the peak (prepare.SplitBatches), and the peak holds to the
# last 20% (decay_share). In 1.25 million tokens from random weights, seeds 0, 1 and 2 each clear
# the bar on the validation stories and then on the test stories, where three blocks on Adam
# missed it on every seed (data/model/README.md, half the tokens).
TOKEN_RECIPES = {
    'quick': dict(config=dict(n_layers=4, optimizer='muon', matrix_scale=2.5),
                  lessons=dict(copy_fraction=0.1, article_loss_weight=0.5)),
}


def news_vocab(config):
  """The shipped vocabulary of the news corpus for ``config``: the 1k one where its ids fit."""
  if config.vocab_size <= 1024:
    return NEWS_1K_VOCAB_FILE
  return DEFAULT_VOCAB_FILE


def get_preset(name):
  """Returns the named preset or raises ``SummarizerError`` naming the choices."""
  if name not in PRESETS:
    raise SummarizerError(f'unknown preset {name!r}; choose one of: '
                          + ', '.join(sorted(PRESETS)))
  return PRESETS[name]


def save_config(config, directory, **extra):
  """Writes ``config.json`` (the preset values plus ``extra``) atomically."""
  values = dict(config.to_dict(), **extra)
  path = os.path.join(directory, 'config.json')
  try:
    write_text(path, json.dumps(values, indent=2, sort_keys=True) + '\n')
  except OSError as e:  # A full disk, a read-only directory: the old file stays.
    raise SummarizerError(f'{path}: cannot write ({e.strerror or e}); the earlier '
                          'one, if any, is kept') from None
  return path


def update_config(directory, **changes):
  """Sets entries of a model directory's config.json, keeping the others."""
  config, values = load_config(directory)
  extra = {k: v for k, v in values.items() if k not in config.to_dict()}
  return save_config(config, directory, **dict(extra, **changes))


# The most the package reads of each kind of file a user gives it, in bytes:
# far above any real one, far below what would use up a laptop's memory. A
# larger one (a link to /dev/zero, a sparse file, a small gzip that unpacks
# to gigabytes) is refused in one line before it is read.
MAX_CONFIG_BYTES = 10**6     # A model directory's config.json: ours are 2-3 KB.
MAX_VOCAB_BYTES = 50 * 10**6  # A .subwords vocabulary: the course's 33k subwords are 270 KB.
# An article (a file or standard input), or one example of a data source (a
# .story file, a JSONL line, a CSV row): a long news story is 10-50 KB.
MAX_ARTICLE_BYTES = 10 * 10**6
# The arrays of one checkpoint file, unpacked: the course's model (about 55M
# parameters) has 220 MB of weights, and 440 MB of Adam's moments in its
# opt_slots file; a model twice its size fits, and no preset comes near.
MAX_WEIGHTS_BYTES = 10**9
# A checkpoint's pickle, unpacked: the step, the history of its metrics and
# the input signature (the shipped model's is 23 KB), its arrays beside it.
# Trax before 1.3.8 pickled the weights and Adam's moments inside it: a
# pickle with no weights file beside it may be as large as the arrays.
MAX_PICKLE_BYTES = 64 * 10**6
# The published CNN/DailyMail url lists (all_train.txt: 287k urls of about 100
# characters each).
MAX_URL_LIST_BYTES = 200 * 10**6


def load_config(directory):
  """Reads ``config.json`` from a model directory; returns (Config, all values).

  A byte-order mark (as Notepad saves UTF-8) is read as UTF-8.
  """
  path = os.path.join(directory, 'config.json')
  try:
    values = read_json(path, MAX_CONFIG_BYTES, "a model directory's config.json may be")
  except FileNotFoundError:
    raise SummarizerError(f'{directory}: not a model directory (no config.json)') from None
  except (OSError, ValueError) as e:
    raise SummarizerError(f'{path}: unreadable ({e})') from None
  if not isinstance(values, dict):
    raise SummarizerError(f'{path}: not a JSON object')
  check_values(values, path)
  return Config.from_dict(values), values


# config.json's whole-number fields and the least each may be.
_AT_LEAST = {'vocab_size': 1, 'd_model': 1, 'd_ff': 1, 'n_layers': 1, 'n_heads': 1,
             'max_len': 2, 'warmup_steps': 1, 'max_joint_length': 2,
             'max_article_tokens': 0, 'trained_steps': 0, 'total_steps': 0, 'max_steps': 0,
             'max_tokens': 1}
# The calibration record's numbers (see summarizer.calibration).
_CALIBRATION_NUMBERS = ('p50', 'max', 'threshold')
# The scores of one system in a run's verdict (evaluation.verdict).
_SCORES = {name: float for name in ('rouge1', 'rouge2', 'rougeL', 'entity_precision',
                                    'entity_recall')}
_NUMBER_OR_NULL = (float, type(None))
# The types of config.json's fields, read before any value is (check_record); the
# bounds of the numbers come after, in check_values.
_SCHEMA = {
    'preset': str, 'data': str, 'optimizer': str, 'vocab_file': str,
    'vocab_fingerprint': (str, type(None)),
    'truncate': bool, 'tied_init': bool, 'seed': (int, type(None)),
    **{name: int for name in ('vocab_size', 'd_model', 'd_ff', 'n_layers', 'n_heads',
                              'max_len', 'warmup_steps', 'max_joint_length',
                              'max_article_tokens', 'repeat_steps')},
    **{name: (int, type(None)) for name in ('trained_steps', 'total_steps', 'max_steps',
                                            'max_tokens')},
    **{name: float for name in ('dropout', 'learning_rate')},
    **{name: _NUMBER_OR_NULL for name in (
        'max_minutes', 'repeat_until_loss', 'adam_b2', 'article_loss_weight', 'decay_share',
        'clip_grad_norm', 'copy_fraction', 'embedding_scale', 'extract_fraction',
        'long_fraction', 'short_fraction', 'matrix_scale')},
    'boundaries': [int], 'batch_sizes': [int],
    CALIBRATION_KEY: ({'n': int, 'split': str, **{k: float for k in (
        'p50', 'p90', 'p99', 'max', 'threshold')}}, type(None)),
    VERDICT_KEY: ({'n': int, 'split': str, 'step': (int, type(None)),
                   'model': _SCORES, 'lead3': _SCORES}, type(None)),
    FINGERPRINT_KEY: ({'fields': dict, 'sha256': str}, type(None)),
    'lineage': ([{'steps': (int, type(None)), 'seed': (int, type(None)),
                  'data': (str, type(None))}], type(None)),
}


def _is_int(value):
  return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
  return (isinstance(value, (int, float)) and not isinstance(value, bool)
          and math.isfinite(value))


def _check_budget(values, bad):
  """Checks a run's time budget and the share of it its learning rate decays over."""
  if values.get('max_minutes') is not None and not (_is_number(values['max_minutes'])
                                                     and values['max_minutes'] > 0):
    bad('max_minutes', 'null or a number above 0')
  share = values.get('decay_share')
  if share is not None and not (_is_number(share) and 0 < share <= 1):
    bad('decay_share', 'null or a number above 0 and at most 1')


def _check_optimizer(values, bad):
  """Checks a run's optimizer and its matrix step."""
  if 'optimizer' in values and values['optimizer'] not in OPTIMIZERS:
    bad('optimizer', ' or '.join(f'"{name}"' for name in OPTIMIZERS))
  if 'matrix_scale' in values and not (_is_number(values['matrix_scale'])
                                        and values['matrix_scale'] > 0):
    bad('matrix_scale', 'a number above 0')  # Null too: Muon would step by nothing.


def check_values(values, path='config.json'):
  """Checks every value of a config.json that the package reads.

  Raises:
    SummarizerError: naming the file, the first field that is wrong and
      what it should be.
  """
  def bad(field, should):
    raise SummarizerError(f'{path}: "{field}" is {json.dumps(values[field])[:60]}; it must '
                          f'be {should}')

  check_record(values, _SCHEMA, path)

  if 'preset' in values and not isinstance(values['preset'], str):
    bad('preset', 'a string')
  for field, least in _AT_LEAST.items():
    if field in values and not (_is_int(values[field]) and values[field] >= least):
      if values[field] is None and field in ('trained_steps', 'total_steps', 'max_steps',
                                             'max_tokens'):
        continue
      bad(field, f'a whole number, at least {least}')
  if 'dropout' in values and not (_is_number(values['dropout']) and 0 <= values['dropout'] < 1):
    bad('dropout', 'a number from 0 to below 1')
  if 'learning_rate' in values and not (_is_number(values['learning_rate'])
                                        and values['learning_rate'] >= 0):
    bad('learning_rate', 'a number, 0 or more')
  _check_budget(values, bad)
  _check_optimizer(values, bad)
  if 'truncate' in values and not isinstance(values['truncate'], bool):
    bad('truncate', 'true or false')
  for field in ('boundaries', 'batch_sizes'):
    if field in values and not (isinstance(values[field], list) and values[field]
                                and all(_is_int(v) and v >= 1 for v in values[field])):
      bad(field, 'a list of whole numbers, each at least 1')
  if 'boundaries' in values and 'batch_sizes' in values and (
      len(values['batch_sizes']) != len(values['boundaries']) + 1):
    bad('batch_sizes', 'one more than the boundaries')
  heads, width = values.get('n_heads'), values.get('d_model')
  if _is_int(heads) and _is_int(width) and width % heads:
    bad('n_heads', f'a divisor of d_model {width}')
  name = values.get('vocab_file')
  if name is not None and not (isinstance(name, str) and name and not os.path.isabs(name)
                               and '..' not in name.replace('\\', '/').split('/')):
    bad('vocab_file', "a file's name inside the model directory")
  fingerprint = values.get('vocab_fingerprint')
  if fingerprint is not None and not (isinstance(fingerprint, str)
                                      and len(fingerprint) == 32):
    bad('vocab_fingerprint', "the md5 of the model's vocabulary (32 hex digits)")
  calibration = values.get(CALIBRATION_KEY)
  if calibration is not None and not (
      isinstance(calibration, dict)
      and all(_is_number(calibration.get(k)) and calibration[k] >= 0
              for k in _CALIBRATION_NUMBERS)):
    bad(CALIBRATION_KEY, 'null or a record with the numbers ' + ', '.join(_CALIBRATION_NUMBERS))
  lineage = values.get('lineage')
  if lineage is not None and not (isinstance(lineage, list)
                                  and all(isinstance(run, dict) for run in lineage)):
    bad('lineage', 'a list of records')
