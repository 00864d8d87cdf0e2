"""The assignment as a notebook: the course's five parts, graded bodies blank.

Its command is ``python -m summarizer.exercises``. The notebook follows the course's assignment: Part 1, the data pipeline on
the embedded news, step by step with expected outputs; Part 2, attention and
the model (UNQ_C1 to UNQ_C7); Part 3, ``training_loop`` (UNQ_C8) and a short
run of it on your own model; Part 4, your ``TransformerLM`` loads the shipped
model's weights with ``init_from_file`` and must give the package's
log-probabilities; Part 5, ``next_symbol`` and ``greedy_decode`` (UNQ_C9,
UNQ_C10), then your functions summarise an article, token for token as the
package does. Each graded function has a code cell of its own with
scaffolding (each step, what it computes and its shape) and nbgrader's blank
(``# YOUR CODE HERE`` / ``raise NotImplementedError()``), followed by its
check from ``summarizer.assignment.checks``, which stops the notebook until it passes.

Every cell carries nbgrader's metadata: a graded function's cell is a
solution cell whose ``grade_id`` is the function's name, its check a graded
cell ``test_<name>`` with points, the rest read-only. ``--nbgrader DIR``
writes the teacher's version into ``DIR/source/<assignment>/``, with the
solutions between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, for
``nbgrader generate_assignment`` and ``autograde``.

Everything is generated, so the solutions live in one place: the code from
the package's own functions (found through ``summarizer``'s top-level names,
so modules may move; a statement under a ``# Not in the exercise`` comment is
left out), the explanations from the cells of
``notebooks/03_transformer_summarizer.ipynb`` tagged ``explains:<name>``, the
expected outputs of Part 1 from the package's pipeline.
"""

import ast
import dataclasses
import functools
import os
import textwrap

import nbformat

from summarizer import files
from summarizer.contract import notebook_data, recording
from summarizer.config import NOTEBOOKS_DIR
from summarizer.errors import SummarizerError
# The graded functions, their source and the setup cell: exercise_code.py (read from here too).
from summarizer.contract.exercise_code import (NOTEBOOK_HELPERS, NOTEBOOK_NAMES, OMIT,  # pylint: disable=unused-import
                                           SUMMARY, TRAINED_MODEL, Cut, cut, references,
                                           setup_imports, setup_source)
from summarizer.contract.recording import GRADED, graded_function

# What each check is handed after the function, as the course calls it.
CHECK_ARGUMENTS = {recording.TRAINING_LOOP: (recording.TRANSFORMER_LM,),
                   recording.NEXT_SYMBOL: (recording.TRANSFORMER_LM,)}
# Points of each graded cell: the exercises' checks, then the two checks of
# the whole (Parts 4 and 5), which fail with any function they use.
POINTS = {**dict.fromkeys(GRADED[:4], 1), **dict.fromkeys(GRADED[4:], 2), TRAINED_MODEL: 2,
          SUMMARY: 2}  # Exercises 1 to 4: a point each; the others and Parts 4 and 5: two.
ASSIGNMENT = 'transformer_summarizer'  # nbgrader's assignment name.

DEFAULT_OUT = 'transformer_summarizer_exercises.ipynb'
NOTEBOOK_03 = os.path.join(NOTEBOOKS_DIR, '03_transformer_summarizer.ipynb')
EXPLAINS = 'explains:'  # Tag prefix of notebook 03's explanation cells.
# nbgrader's markers and blank.
BEGIN, END = '### BEGIN SOLUTION', '### END SOLUTION'
# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
# The scaffolding: each step of a solution, what it computes and its shape.
#
# Written for learners, in the course's manner ("dots = None" lines become
# a list of steps). Each step names the variable the package's solution
# assigns (None for a step that assigns none), so a test can keep the two in
# step; the hints never show code. What the package's solution does beyond
# the course comes after the steps, as one note marked BEYOND_THE_COURSE.

BEYOND_THE_COURSE = 'Beyond the course'
STEPS = {
    recording.DOT_PRODUCT_ATTENTION: [
        ('depth', 'the size of the queries\' last axis, d'),
        ('scores', 'every query\'s dot product with every key (the keys transposed on '
                   'their last two axes), divided by sqrt(depth), as float32: '
                   '(..., L_q, L_k)'),
        ('scores', 'where the mask is False (0), MASK_SCORE instead (only when a mask '
                   'is given): (..., L_q, L_k)'),
        ('weights', 'the softmax over the keys, as the course writes it exp(scores - '
                    'logsumexp(scores)) with fastmath.logsumexp over the last axis, '
                    'keeping it: (..., L_q, L_k). Any standard softmax over the last axis '
                    'passes: they differ only on a fully masked row (its mask all 0), '
                    'which causal attention never has: there the course\'s form gives '
                    'the sum of the values and jax.nn.softmax their mean'),
        (None, 'return the weights times the values: (..., L_q, d_v)'),
    ],
    recording.HEADS_CLOSURE: [
        ('batch', 'the batch size B of x (B, L, H * Dh)'),
        ('length', 'its length L'),
        ('x', 'the features split into n_heads heads of d_head: (B, L, H, Dh)'),
        ('x', 'the heads axis moved before the positions: (B, H, L, Dh)'),
        (None, 'return the heads folded into the batch: (B * H, L, Dh)'),
    ],
    recording.SELF_ATTENTION: [
        ('length', 'the number of positions L of q (B, L, d)'),
        ('mask', 'the causal mask, boolean, True where position j <= i '
                 '(the lower triangle of a square of ones): (1, L, L)'),
        (None, 'return your DotProductAttention of q, k and v under it: (B, L, d)'),
    ],
    recording.OUTPUT_CLOSURE: [
        ('length', 'the number of positions L of x (B * H, L, Dh)'),
        ('x', 'the heads unfolded from the batch (let the batch size be worked '
              'out): (B, H, L, Dh)'),
        ('x', 'the positions moved back before the heads: (B, L, H, Dh)'),
        (None, 'return the heads joined into features: (B, L, H * Dh)'),
    ],
    recording.CAUSAL_ATTENTION: [
        (None, 'assert that d_feature is a multiple of n_heads, as the course does'),
        ('d_head', 'the features of each head'),
        ('AttnHeads', "a function returning a new tl.Fn layer named 'AttnHeads' that "
                      'runs your compute_attention_heads_closure at these sizes'),
        ('attention_core', "a tl.Fn layer named 'DotProductAttn' that runs your "
                           'dot_product_self_attention: q k v -- (B * H, L, Dh)'),
        (None, 'return a tl.Serial of: a tl.Branch of three branches (queries, keys, '
               'values), each a Dense of d_feature then AttnHeads(); the attention '
               "core; a tl.Fn named 'AttnOutput' that runs your "
               'compute_attention_output_closure: (B, L, d_feature); a last Dense '
               'of d_feature'),
        (BEYOND_THE_COURSE, "mode and max_len are for the package's predict-mode "
                            'cache of keys and values (fast decoding); your layer, as the '
                            "course's, may leave them unused"),
    ],
    recording.DECODER_BLOCK: [
        ('causal_attention', 'your CausalAttention of d_model in n_heads, in this '
                             'mode: (B, L, d_model)'),
        ('feed_forward', 'a list: LayerNorm, Dense of d_ff, a layer of ff_activation, '
                         'Dropout, Dense of d_model, Dropout (each Dropout at the '
                         'rate dropout, in this mode)'),
        (None, 'return a list of two residual layers: LayerNorm, the causal '
               'attention and a Dropout; then the feed-forward list'),
    ],
    recording.TRANSFORMER_LM: [
        ('positional_encoder', 'a list: an Embedding of vocab_size ids into d_model, '
                               'a Dropout, a PositionalEncoding of max_len '
                               '(all in this mode): ids (B, L) -- (B, L, d_model)'),
        ('decoder_blocks', 'n_layers of your DecoderBlock, each one built anew so '
                           'that each has weights of its own'),
        (None, 'return a tl.Serial of: ShiftRight (in this mode), the positional '
               'encoder, the blocks, a LayerNorm, a Dense of vocab_size and a '
               'LogSoftmax: (B, L, vocab_size)'),
    ],
    recording.TRAINING_LOOP: [
        ('output_dir', "the output directory with '~' expanded"),
        ('learning_rate', 'the course\'s 0.01'),
        ('train_task', 'a training.TrainTask over train_gen: cross-entropy loss, '
                       'Adam at the learning rate, the schedule '
                       'trax.lr.warmup_and_rsqrt_decay with 1,000 warmup steps and '
                       'that peak, a checkpoint every 10 steps'),
        ('eval_task', 'a training.EvalTask over eval_gen with the metrics '
                      'cross-entropy loss and accuracy'),
        (None, "return a training.Loop of the given TransformerLM with d_model=4, "
               "d_ff=16, n_layers=1, n_heads=2 in 'train' mode, the train task, "
               'the eval task (in a list) and the output directory'),
    ],
    recording.NEXT_SYMBOL: [
        ('token_length', 'the number of tokens so far'),
        ('padded_length', 'the smallest power of 2 strictly greater than that'),
        ('padded', 'the tokens followed by zeros up to that length'),
        ('padded_with_batch', 'as an int32 array with a batch axis: (1, P)'),
        ('output', "the model's log-probabilities on (padded_with_batch, "
                   'padded_with_batch), the first of the two things it returns: '
                   '(1, P, V)'),
        ('log_probs', 'the row at position token_length (where the next token is '
                      'predicted): (V,)'),
        (None, 'return the most likely id, as a Python int'),
    ],
    recording.GREEDY_DECODE: [
        ('cur_output_tokens', 'the article\'s ids (tokenize ends them with EOS), then '
                              'SEP'),
        ('generated_output', 'the summary\'s ids so far, none yet'),
        (None, 'at most max_length times: the next id from next_symbol (with the '
               'model), appended to both lists; when verbose, print what it adds to '
               'the detokenized summary; stop after EOS'),
        (None, 'return the detokenized summary'),
    ],
}


def _assigned(tree):
  """Names a function's statements assign or define, in order."""
  names = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      names.append(node.id)
    elif isinstance(node, ast.FunctionDef) and node is not tree:
      names.append(node.name)
  return names


def steps(name):
  """The scaffolding comments of an exercise, at the body's indentation.

  The steps of ``STEPS``, then the library functions the solution calls
  (``jnp.matmul``, ``tl.Branch``), then its note on what goes beyond the
  course, if any: never code, never a package function.
  """
  the_cut, function = cut(name), graded_function(name)
  body_lines = range(len(the_cut.head) + 1, len(the_cut.head) + len(the_cut.body) + 1)
  used = [dotted for dotted in references(function, the_cut.tree, body_lines)
          if '.' in dotted and dotted.split('.')[0] not in GRADED]
  notes = ['Steps (each one or two lines of code):']
  numbered = [step for step in STEPS[name] if step[0] != BEYOND_THE_COURSE]
  for number, (target, text) in enumerate(numbered, 1):
    label = f'{number}. {target}: ' if target else f'{number}. '
    notes += textwrap.wrap(label + text, 74, subsequent_indent='     ',
                           break_on_hyphens=False)
  if used:
    notes += textwrap.wrap('Useful here: ' + ', '.join(used), 74,
                           subsequent_indent='  ', break_on_hyphens=False)
  for target, text in STEPS[name]:
    if target == BEYOND_THE_COURSE:
      notes += textwrap.wrap(f'{target}: {text}', 74, subsequent_indent='  ',
                             break_on_hyphens=False)
  return [f'{the_cut.indent}# {note}'.rstrip() for note in notes]
# --------------------------------------------------------------------------
# The exercise cells.

def blank(indent):
  """nbgrader's blank, at ``indent``."""
  return f'{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()\n'


def solution(indent, body):
  """The solution between nbgrader's markers, at ``indent``."""
  return f'{indent}{BEGIN}\n' + ''.join(body) + f'{indent}{END}\n'


def exercise_source(name, with_solution=False):
  """The code cell of an exercise: signature, docstring, steps, then the blank.

  Args:
    name: The graded function.
    with_solution: Put the package's solution between nbgrader's markers
      instead of the blank (the teacher's source version).
  """
  the_cut = cut(name)
  number = GRADED.index(name) + 1
  step_lines = ''.join(line + '\n' for line in steps(name))
  body = (solution(the_cut.indent, the_cut.body) if with_solution
          else blank(the_cut.indent))
  return (f'# UNQ_C{number}\n# GRADED FUNCTION: {name}\n'
          + ''.join(the_cut.head) + step_lines + body
          + ''.join(the_cut.tail)).rstrip('\n')


def solution_source(name):
  """The function as a correct answer defines it in the notebook."""
  the_cut = cut(name)
  return ''.join(the_cut.head + the_cut.body + the_cut.tail)


@dataclasses.dataclass(frozen=True)
class PackageCode:
  """What a grade takes from the package: its answers, the blank cells, the setup, the model.

  Attributes:
    solutions: Each graded function (its name) as a correct answer defines
      it (``solution_source``).
    scaffolds: Each exercise's cell as the learner receives it, blank
      (``exercise_source``).
    setup: The notebook's setup cell.
    model_size: The shipped model's ``TransformerLM`` keywords.
    model_dir, model_file: Where the shipped model is.
  """
  solutions: dict
  scaffolds: dict
  setup: str
  model_size: dict
  model_dir: str
  model_file: str


@functools.lru_cache(maxsize=1)
def package_code():
  """The package's side of every grade (``PackageCode``), read once a process.

  The grader's one way to the package's code: what it hands the sandbox and
  compares with.
  """
  return PackageCode({name: solution_source(name) for name in GRADED},
                     {name: exercise_source(name) for name in GRADED}, setup_source(),
                     notebook_data.model_size(), notebook_data.MODEL_DIR, notebook_data.MODEL_FILE)


def course_code(name):
  """The package's ``name`` as the exercise's answer, for a notebook to show beside its explanation.

  Read from the package (``solution_source``), so the notebook shows what
  runs; a Markdown code block, which Jupyter highlights.
  """
  from IPython.display import Markdown  # pylint: disable=g-import-not-at-top
  return Markdown(f'```python\n{solution_source(name)}```')


def check_source(name):
  """The cell that runs the course's check of ``name`` and stops if it fails."""
  arguments = ', '.join((name,) + CHECK_ARGUMENTS.get(name, ()))
  number = GRADED.index(name) + 1
  return (f"# Exercise {number}, {name}: the course's test_{name} (UNQ_C{number})\n"
          f"assert checks.test_{name}({arguments}) == 0, checks.failed_cases()")


def explanations(path=NOTEBOOK_03):
  """The explanation of each graded function: notebook 03's tagged cells.

  Returns:
    dict: graded name -> the markdown of the cell tagged ``explains:<name>``.

  Raises:
    SummarizerError: if the notebook is missing or a function has no such
      cell, or two.
  """
  notebook = files.read_notebook(path, 'the explanations')
  found = {}
  for cell in notebook.cells:
    for tag in cell.metadata.get('tags', []):
      if tag.startswith(EXPLAINS) and cell.cell_type == 'markdown':
        found.setdefault(tag[len(EXPLAINS):], []).append(cell.source)
  for name in GRADED:
    if len(found.get(name, [])) != 1:
      raise SummarizerError(f'{path}: {len(found.get(name, []))} markdown cells '
                            f'tagged {EXPLAINS}{name}, not one')
  return {name: found[name][0] for name in GRADED}


# --------------------------------------------------------------------------
# The given cells: Part 1's pipeline, Part 3's run, Parts 4 and 5's checks.

_INTRO = """\
# The Transformer Summarizer: the assignment, by you

The course's week 2 assignment in its five parts: the data (Part 1), attention and the model
(Part 2), training (Part 3), a trained model (Part 4) and summarising (Part 5). Ten functions
are yours to write (UNQ_C1 to UNQ_C10). For each one:

1. Read the explanation, then write the function's body in the cell below it: replace
   `# YOUR CODE HERE` and `raise NotImplementedError()` with your code. The steps above the
   blank say what each line computes and its shape; the code is yours.
2. Run the cell after it: the check of that function (`summarizer.assignment.checks`). It prints
   `All tests passed`, or each failed case with what was expected and what came, and stops
   the notebook until your function passes.

Later exercises use your earlier ones (`CausalAttention` calls your heads and attention
functions, `DecoderBlock` your `CausalAttention`, ...), so work from the top, after running
the setup cell. In the end your model, with the shipped model's trained weights, summarises an
article with your `next_symbol` and `greedy_decode`, and must write the package's summary token
for token. This notebook is written by `python -m summarizer.exercises`: run it again for a
fresh copy.
"""

_PART_1 = """\
# Part 1: the data

The course streams CNN/DailyMail articles and their highlights; here the embedded news
stories (`notebook_data.stories(split)`) take their place, with the shipped model's vocabulary
(`notebook_data.VOCAB_DIR`, `notebook_data.VOCAB_FILE`), so that Parts 4 and 5 can use its trained
weights. Nothing in Part 1 is graded: run each cell and compare what it prints with the
expected output below it.

## 1.1 Tokenize and detokenize

`tokenize` turns a text into subword ids and ends them with EOS (1); `detokenize` turns ids
back into text, wrapped at 70 columns.
"""

_TOKENIZE = '''\
wrapper = textwrap.TextWrapper(width=70)


def tokenize(input_str, EOS=1):
    """Ids of the shipped model's vocabulary, then EOS."""
    ids = next(trax.data.tokenize(iter([input_str]), vocab_dir=notebook_data.VOCAB_DIR,
                                  vocab_file=notebook_data.VOCAB_FILE))
    return ids.tolist() + [EOS]


def detokenize(integers):
    """The text of these ids, wrapped at 70 columns."""
    text = trax.data.detokenize(integers, vocab_dir=notebook_data.VOCAB_DIR,
                                vocab_file=notebook_data.VOCAB_FILE)
    return wrapper.fill(text)


article, summary = next(notebook_data.stories('train'))
print(tokenize(summary))
print(detokenize(tokenize(summary)))'''

_PART_1_2 = """\
## 1.2 The joint sequence and its loss mask

The model is a language model: it reads one sequence per story, `article + [EOS, SEP] +
summary + [EOS]` (SEP is 0), and learns to continue a text. The loss should count only the
summary, so a mask weighs each position: 0 over the article, EOS and SEP, 1 over the summary
and its EOS. `preprocess` yields (inputs, targets, mask) with inputs equal to targets, as
Trax's training loop expects; the pipeline tokenizes each pair, joins it and drops sequences
longer than `notebook_data.MAX_LENGTH`.
"""

_PREPROCESS = '''\
def preprocess(stream):
    for (article, summary) in stream:
        joint = np.array(list(article) + [EOS, SEP] + list(summary) + [EOS])
        mask = [0] * (len(list(article)) + 2) + [1] * (len(list(summary)) + 1)
        yield joint, joint, np.array(mask)


input_pipeline = trax.data.Serial(
    trax.data.Tokenize(vocab_dir=notebook_data.VOCAB_DIR, vocab_file=notebook_data.VOCAB_FILE),
    preprocess,
    trax.data.FilterByLength(notebook_data.MAX_LENGTH))
train_stream = input_pipeline(notebook_data.stories('train'))
eval_stream = input_pipeline(notebook_data.stories('validation'))

train_input, train_target, train_mask = next(train_stream)
assert (train_input == train_target).all()
article_length = int((train_mask == 0).sum()) - 2
print('joint sequence:', len(train_input), 'tokens; article', article_length,
      '+ EOS, SEP + summary and EOS', int(train_mask.sum()))
print('around the separator:', train_input[article_length - 2:article_length + 5].tolist())
print('their mask:          ', train_mask[article_length - 2:article_length + 5].tolist())'''

_PART_1_3 = """\
## 1.3 Batches of similar length

Sequences are grouped by length into buckets, each with its own batch size (many short ones
or few long ones), and padded with 0 to the bucket's length. The padding's mask is 0 too.
"""

_BUCKETS = '''\
train_batch_stream = trax.data.BucketByLength(notebook_data.BOUNDARIES,
                                              notebook_data.BATCH_SIZES)(train_stream)
eval_batch_stream = trax.data.BucketByLength(notebook_data.BOUNDARIES,
                                             notebook_data.BATCH_SIZES)(eval_stream)
input_batch, _, mask_batch = next(train_batch_stream)
print('batch:', input_batch.shape, ' mask:', mask_batch.shape)'''

_PART_2 = """\
# Part 2: attention and the model

Seven functions, from scaled dot-product attention up to the whole language model.
"""

_PART_3 = """\
# Part 3: training

`training_loop` sets up Trax's training as the course does; then your loop trains your model
(a small one: d_model 4) for a few steps on the batches of Part 1, and shows its loss.

What to expect from `loop.run(10)` (about 30 s on 2 cores): a loss near ln(33300) ≈ 10.4 and
an accuracy of 0. That is what ten warm-up steps give, not a mistake: the learning rate rises
over the first 1,000 steps and is still tiny, so the model still guesses evenly over the 33,300
ids. (The blank lines between the steps are Trax's own printing.)
"""

_TRAINING_RUN = '''\
# A few steps of your training_loop on your TransformerLM (seconds, not a trained model).
loop = training_loop(TransformerLM, train_batch_stream, eval_batch_stream,
                     output_dir=tempfile.mkdtemp())
loop.run(10)
_ = checks.loss_remark(loop)  # A word when the loss cannot be right (a negative cross-entropy)'''

_PART_4 = """\
# Part 4: a trained model

Training a summarizer takes hours; the course loads a model it trained. Here the shipped
model (`data/model`, trained on the news stories) takes its place: your `TransformerLM`, at
its size (`notebook_data.model_size()`), in eval mode, loads its weights as the course loads its
model, with `init_from_file`. With the same weights it must give the package's
log-probabilities: that is a check of all seven functions of Part 2 at once.
"""

_LOAD = '''\
# Your TransformerLM, the shipped model's weights, loaded the course's way (after a look
# at whether your model's weights have the shipped model's shapes).
model = TransformerLM(**notebook_data.model_size(), mode='eval')
checks.shipped_weights_fit(TransformerLM)
_ = model.init_from_file(notebook_data.MODEL_FILE, weights_only=True)  # (returns the weights)'''

_TRAINED_CHECK = '''\
# Your model and the package's, same weights, same article: the same log-probabilities.
assert checks.test_trained_model(model) == 0, checks.failed_cases()'''

_PART_5 = """\
# Part 5: summarising

`next_symbol` gives the model's most likely next token, and `greedy_decode` writes a summary
with it, one token at a time.
"""

_SUMMARY_CHECK = '''\
# Your greedy_decode, next_symbol and model summarise an article: the package's summary,
# token for token (both are printed, yours first).
assert checks.test_summary(greedy_decode, next_symbol, model, tokenize, detokenize) == 0, \\
    checks.failed_cases()'''

_DONE = """\
## Done

All checks pass, and your functions write the package's summary. Compare them with the
package's, in `notebooks/03_transformer_summarizer.ipynb` and `summarizer/`: the same results
can be reached in more than one way. With the repository checked out, the notebook is in its
`notebooks/` folder and the package in its `summarizer/` folder; with the package installed,
this prints where its source is:

    python -c "import summarizer, os; print(os.path.dirname(summarizer.__file__))"
"""


@functools.lru_cache(maxsize=1)
def expected_outputs():
  """What Part 1's cells print, computed with the package's own pipeline.

  Returns:
    dict: cell name ('tokenize', 'preprocess', 'buckets') -> the text.
  """
  from summarizer import data, text  # pylint: disable=g-import-not-at-top
  from summarizer.corpus import streams  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(notebook_data.VOCAB_DIR, notebook_data.VOCAB_FILE)
  article, summary = next(notebook_data.stories('train'))
  summary_ids = text.tokenize(summary, vocab)
  wrapped = textwrap.TextWrapper(width=70).fill(text.detokenize(summary_ids, vocab))
  joint, weights = data.joint_sequence(text.tokenize(article, vocab)[:-1], summary_ids[:-1])
  article_length = int((weights == 0).sum()) - 2
  around = slice(article_length - 2, article_length + 5)
  batch, _, mask = next(streams.batches(
      'news', 'train', vocab, boundaries=notebook_data.BOUNDARIES,
      batch_sizes=notebook_data.BATCH_SIZES, max_joint_length=notebook_data.MAX_LENGTH,
      repeat=False, shuffle=False, n_devices=1))
  return {
      'tokenize': f'{summary_ids}\n{wrapped}\n',
      'preprocess': (f'joint sequence: {len(joint)} tokens; article {article_length} '
                     f'+ EOS, SEP + summary and EOS {int(weights.sum())}\n'
                     f'around the separator: {joint[around].tolist()}\n'
                     f'their mask:           {weights[around].astype(int).tolist()}\n'),
      'buckets': f'batch: {batch.shape}  mask: {mask.shape}\n',
  }


def _expected_cell(name):
  return '**Expected output**\n\n```\n' + expected_outputs()[name] + '```\n'
# --------------------------------------------------------------------------
# The notebook.

def nbgrader_metadata(grade_id, solution=False, points=None):
  """nbgrader's cell metadata: a solution cell, a graded cell or a read-only one."""
  metadata = {'grade': points is not None, 'grade_id': grade_id,
              'locked': not solution, 'schema_version': 3, 'solution': solution}
  if points is not None:
    metadata['points'] = points
  return metadata


def _cell(kind, source, tag, solution=False, points=None, grade_id=None):
  """A cell with a tag, a fixed id (the notebook is the same each time) and nbgrader's metadata."""
  new = nbformat.v4.new_markdown_cell if kind == 'markdown' else nbformat.v4.new_code_cell
  cell = new(source)
  cell.metadata['tags'] = [tag]
  cell.id = tag.replace(':', '-').replace('.', '-')
  cell.metadata['nbgrader'] = nbgrader_metadata(grade_id or cell.id, solution, points)
  return cell


def _exercise_cells(name, texts, with_solutions):
  """Explanation, exercise and check of one graded function."""
  number = GRADED.index(name) + 1
  heading = f'## Exercise {number}: `{name}` (UNQ_C{number})\n\n'
  return [
      _cell('markdown', heading + texts[name], EXPLAINS + name),
      _cell('code', exercise_source(name, with_solutions), f'exercise:{name}',
            solution=True, grade_id=name),
      _cell('code', check_source(name), f'check:{name}', points=POINTS[name],
            grade_id=f'test_{name}'),
  ]


def exercise_notebook(explained_by=NOTEBOOK_03, with_solutions=False):
  """Builds the assignment notebook (nbformat v4, no outputs).

  Args:
    explained_by: The notebook whose tagged cells explain the functions.
    with_solutions: The teacher's source version: solutions between
      nbgrader's markers instead of blanks.

  Returns:
    An ``nbformat.NotebookNode``: the introduction and the setup cell, then
    the five parts. Each graded function has its explanation, exercise and
    check (tagged ``explains:``, ``exercise:`` and ``check:`` plus its name);
    the other cells are tagged by what they hold. Every cell has nbgrader's
    metadata.
  """
  texts = explanations(explained_by)
  exercises = {name: _exercise_cells(name, texts, with_solutions) for name in GRADED}
  cells = [
      _cell('markdown', _INTRO, 'intro'),
      _cell('code', setup_source(), 'setup'),
      _cell('markdown', _PART_1, 'part:1'),
      _cell('code', _TOKENIZE, 'data:tokenize'),
      _cell('markdown', _expected_cell('tokenize'), 'expected:tokenize'),
      _cell('markdown', _PART_1_2, 'part:1.2'),
      _cell('code', _PREPROCESS, 'data:preprocess'),
      _cell('markdown', _expected_cell('preprocess'), 'expected:preprocess'),
      _cell('markdown', _PART_1_3, 'part:1.3'),
      _cell('code', _BUCKETS, 'data:buckets'),
      _cell('markdown', _expected_cell('buckets'), 'expected:buckets'),
      _cell('markdown', _PART_2, 'part:2'),
      *[cell for name in GRADED[:7] for cell in exercises[name]],
      _cell('markdown', _PART_3, 'part:3'),
      *exercises[recording.TRAINING_LOOP],
      _cell('code', _TRAINING_RUN, 'run:training'),
      _cell('markdown', _PART_4, 'part:4'),
      _cell('code', _LOAD, 'run:load'),
      _cell('code', _TRAINED_CHECK, f'check:{TRAINED_MODEL}', points=POINTS[TRAINED_MODEL],
            grade_id=f'test_{TRAINED_MODEL}'),
      _cell('markdown', _PART_5, 'part:5'),
      *exercises[recording.NEXT_SYMBOL],
      *exercises[recording.GREEDY_DECODE],
      _cell('code', _SUMMARY_CHECK, f'check:{SUMMARY}', points=POINTS[SUMMARY],
            grade_id=f'test_{SUMMARY}'),
      _cell('markdown', _DONE, 'done'),
  ]
  notebook = nbformat.v4.new_notebook(cells=cells, metadata={
      'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'},
      'language_info': {'name': 'python'},
  })
  nbformat.validate(notebook)
  return notebook


def _write(path, text, force):
  """Writes ``text`` to ``path`` whole (``files.write_text``); an existing one only with ``force``."""
  if not force and os.path.lexists(path):
    raise SummarizerError(files.exists_message(path))
  try:
    files.write_text(path, text, force)
  except OSError as e:
    raise SummarizerError(f'cannot write {path}: {e.strerror or e}') from None
  return path


def write_exercises(path=DEFAULT_OUT, force=False):
  """Writes the learner's notebook to ``path``; returns the path.

  Raises:
    SummarizerError: if ``path`` exists and ``force`` is not set, or it
      cannot be written.
  """
  return _write(path, nbformat.writes(exercise_notebook()), force)


def write_nbgrader_source(course_dir, force=False):
  """Writes nbgrader's source version into ``course_dir/source/<assignment>/``.

  Returns:
    The notebook's path.

  Raises:
    SummarizerError: as ``write_exercises``.
  """
  path = nbgrader_source_path(course_dir)
  directory = os.path.dirname(path)
  try:
    os.makedirs(directory, exist_ok=True)
  except OSError as e:
    raise SummarizerError(f'cannot write {directory}: {e.strerror or e}') from None
  return _write(path, nbformat.writes(exercise_notebook(with_solutions=True)), force)


def nbgrader_source_path(course_dir):
  """Where nbgrader's source version of the assignment goes in ``course_dir``."""
  return os.path.join(course_dir, 'source', ASSIGNMENT, ASSIGNMENT + '.ipynb')
