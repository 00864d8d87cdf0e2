"""What a training run is asked to do: the train command's flags as a dataclass."""

import dataclasses

from summarizer.config import CALIBRATION_ARTICLES


# The lessons a preset trains with unless a flag says otherwise (the others
# train with TrainArgs' defaults: the course's way). The quick preset's are
# the ten-minute recipe: the article's tokens weigh a quarter of the summary's
# (they teach the language and the copy; at full weight they took most of
# the steps' learning from the summaries), three examples in ten copy a
# sentence, the output projection starts tied to a larger embedding, and the
# run begins with repeat lessons until the model copies.
PRESET_LESSONS = {
    'quick': dict(article_loss_weight=0.25, copy_fraction=0.3, tied_init=True,
                  embedding_scale=11.3, repeat_steps=2000, repeat_until_loss=0.3),
}
# The lessons a time budget takes where the machine is slow and its steps take quarter
# batches (``prepare.SplitBatches``), in place of the preset's own (a flag still wins): one
# copy lesson in ten examples, not three, and the repeat lessons over once their loss is below
# 0.5. Pinned to one core a busy loop shares (4,100 to 4,300 tokens/s), ten minutes of seed 0
# at 0.42 of the peak held to the last 20% scored on the test stories: with the preset's
# lessons entity P 0.84, R 0.37; with copy lessons at a tenth 0.86/0.41 (Lead-3's recall: 0.41);
# with both these 0.92/0.43 (data/model/README.md, when a run goes slower).
SPLIT_LESSONS = {
    'quick': dict(copy_fraction=0.1, repeat_until_loss=0.5),
}
# Levers that shape a new run's random weights or first steps: a resumed run,
# or one started from a model, takes its preset's values of these as unset.
NEW_RUN_LESSONS = ('tied_init', 'embedding_scale', 'repeat_steps', 'repeat_until_loss')


@dataclasses.dataclass
class TrainArgs:
  """What a training run is asked to do (the command line's flags)."""
  data: str = 'news'
  data_dir: str = None
  vocab: str = None
  preset: str = 'tiny'
  max_steps: int = 1000         # None: no step limit (a --max-minutes run).
  max_minutes: float = None     # The whole command's wall-clock budget.
  max_tokens: int = None        # The training tokens a run may read, lessons included.
  eval_steps: int = None        # None: once a minute, or at each tenth of max_tokens (runs.plan).
  save_steps: int = 200
  eval_batches: int = 8
  learning_rate: float = None
  warmup_steps: int = None
  optimizer: str = None  # None: the preset's, or its token recipe's (config.OPTIMIZERS).
  matrix_scale: float = None  # None: the preset's (Muon's matrix step, in learning rates).
  seed: int = 0
  output_dir: str = 'runs/tiny'
  resume: bool = False
  overwrite_output_dir: bool = False
  article_loss_weight: float = 0.0
  copy_fraction: float = 0.0
  short_fraction: float = 0.0
  long_fraction: float = 0.0
  extract_fraction: float = 0.0
  tied_init: bool = False  # Start the output projection as the embedding's transpose.
  embedding_scale: float = 1.0  # Start the embedding this many times Trax's.
  repeat_steps: int = 0  # The first steps' batches are repeat lessons (a new run only).
  repeat_until_loss: float = None  # ... or fewer: until their loss is below this.
  truncate: bool = None  # None: the preset's choice.
  download: bool = True
  progress: bool = True
  export_to: str = None
  init_from: str = None
  calibration_articles: int = CALIBRATION_ARTICLES
  verdict_stories: int = 100  # Validation stories of the verdict against Lead-3 (0: none).
  preset_lessons: tuple = ()  # The lesson flags left to the preset (a slow machine may change them).


def on_split_batches(args, preset):
  """``args`` with the lessons a time budget takes on quarter batches, where the preset chose them."""
  lessons = {name: value for name, value in SPLIT_LESSONS.get(preset, {}).items()
             if name in args.preset_lessons}
  return dataclasses.replace(args, **lessons)
