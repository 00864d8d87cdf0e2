"""The measurements behind ``python -m summarizer.bench``: each section timed side by side.

Each ``bench_*`` function measures two things in the same run, on this
machine, and returns their figures and ratio; ``run`` runs the sections the
command names and ``table`` prints them beside their goals (``GOALS``). What
each section compares is the command's ``--help`` (``summarizer/bench.py``).
"""

import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import numpy as np

from summarizer import _trax_init, decoding
from summarizer._trax import tl, trax
from summarizer.config import DATA_DIR, EOS, SEP, get_preset, news_vocab
from summarizer.corpus import sources
from summarizer.corpus import streams
from summarizer.errors import SummarizerError
from summarizer.evaluation import DEFAULT_BENCH_SECTIONS
from summarizer.evaluation import class_grading
from summarizer.evaluation import first_model
from summarizer.evaluation import scorecard
from summarizer.evaluation import scoring
from summarizer.inference import beam
from summarizer.inference import loaded_model
from summarizer.inference import summaries
from summarizer.model import TransformerLM
from summarizer.runs.hooked_loop import quiet_loop_log

GOALS = {  # name: (goal, True if higher is better)
    'import': (0.3, False),
    'init': (0.5, False),
    'train': (0.95, True),
    'decode': (20.0, True),
    'decode_loop': (100.0, True),
    'batch': (4.0, True),
    'data': (10.0, True),
    'cli_memory_mb': (1200.0, False),
    'cli_seconds': (10.0, False),
    'start_ratio': (2.5, False),
    'start_seconds': (2.0, False),
    'start_memory_mb': (500.0, False),
    'start_import_s': (1.5, False),
}


def _wall(argv, env=None):
  start = time.perf_counter()
  subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL, env=env)
  return time.perf_counter() - start


def bench_import(repeats=3):
  """Median wall time of importing the package vs plain Trax, interleaved."""
  ours, theirs = [], []
  for _ in range(repeats):
    # `import summarizer` alone loads nothing heavy; the model imports Trax.
    ours.append(_wall([sys.executable, '-c', 'from summarizer import TransformerLM']))
    theirs.append(_wall([sys.executable, '-c', 'import trax']))
  a, b = statistics.median(ours), statistics.median(theirs)
  return {'summarizer_s': round(a, 2), 'trax_s': round(b, 2), 'ratio': round(a / b, 3)}


def bench_init(rounds=5):
  """Initialising TransformerLM with Trax's own init vs the package's: median seconds, interleaved.

  Two models: the checks' exercise model (one block, width 4) and the tiny
  preset's; each round builds both anew and initialises them with each init.
  """
  from summarizer.contract import probes_layers  # pylint: disable=g-import-not-at-top
  models = {'the checks\' exercise model': (probes_layers.EXERCISE_MODEL, (2, 8)),
            'tiny': (get_preset('tiny').model_kwargs(), (2, 256))}

  def seconds(kwargs, shape):
    layer = TransformerLM(**dict(kwargs, mode='train'))
    start = time.perf_counter()
    layer.init(trax.shapes.signature(np.zeros(shape, np.int32)))
    return time.perf_counter() - start
  results = {}
  for name, (kwargs, shape) in models.items():
    seconds(kwargs, shape)  # Jax compiles the initialisers' programs once.
    ours, theirs = [], []
    for _ in range(rounds):
      with _trax_init.traxs_own_init(trax.layers.combinators):
        theirs.append(seconds(kwargs, shape))
      ours.append(seconds(kwargs, shape))
    results[name] = {'trax_s': round(statistics.median(theirs), 3),
                     'ours_s': round(statistics.median(ours), 3),
                     'ratio': round(statistics.median(ours) / statistics.median(theirs), 2)}
  return results


def _fixed_batches(config, n):
  """The first ``n`` training batches of the news corpus for ``config`` (its ids fit the model)."""
  stream = streams.batches('news', 'train', vocab_file=news_vocab(config),
                           boundaries=config.boundaries,
                           batch_sizes=config.batch_sizes,
                           max_joint_length=config.max_joint_length, truncate=True)
  return list(itertools.islice(stream, n))


def _warm_loop(model, loss_layer, batches):
  """Returns a Trax ``Loop`` training ``model`` on ``batches``, every shape compiled."""
  training = trax.supervised.training
  task = training.TrainTask(labeled_data=itertools.cycle(batches),
                            loss_layer=loss_layer,
                            optimizer=trax.optimizers.Adam(1e-3))
  with quiet_loop_log():  # The Loop prints that it has no output_dir.
    loop = training.Loop(model, [task], random_seed=0)
    loop.run(len(batches))
    jax.block_until_ready(loop.model.weights)
  return loop


def _seconds_per_pass(loops, n_batches, rounds):
  """Times passes of each loop in turn, alternating which goes first.

  Alternating spreads the machine's drift (other processes, clock speed) over
  both sides; the fastest pass of each is returned, in the loops' order.
  """
  best = [float('inf')] * len(loops)
  with quiet_loop_log():
    for round_ in range(rounds):
      order = range(len(loops)) if round_ % 2 == 0 else reversed(range(len(loops)))
      for i in order:
        start = time.perf_counter()
        loops[i].run(n_batches)
        jax.block_until_ready(loops[i].model.weights)
        best[i] = min(best[i], time.perf_counter() - start)
  return best


def bench_train(preset='tiny', n_batches=6, rounds=4):
  """Tokens/s of our TransformerLM vs Trax's, same config and batches."""
  config = get_preset(preset)
  batches = _fixed_batches(config, n_batches)
  tokens = sum(int((b[0] != 0).sum()) for b in batches)
  examples = sum(len(b[0]) for b in batches)
  kwargs = config.model_kwargs()
  loops = [_warm_loop(TransformerLM(**kwargs, mode='train'), tl.CrossEntropyLoss(),
                      batches),
           _warm_loop(trax.models.TransformerLM(**kwargs, mode='train'),
                      tl.CrossEntropyLossWithLogSoftmax(), batches)]
  ours, theirs = _seconds_per_pass(loops, len(batches), rounds)
  return {'preset': preset, 'ours_tokens_s': round(tokens / ours),
          'trax_tokens_s': round(tokens / theirs), 'ratio': round(theirs / ours, 3),
          'examples_per_s': examples / ours}


def bench_decode(model_dir=None, article_tokens=256, summary_tokens=64):
  """Fast cached decoding vs the course's greedy decoding, same output."""
  loaded = loaded_model.load(model_dir)
  model, decoder = loaded.model, loaded.decoder
  # The news stories are mostly shorter than 256 tokens: consecutive test
  # articles are joined until the benchmark's article length is reached.
  ids = []
  for article, _ in sources.examples('news', 'test'):
    ids += loaded.tokenize(article)[:-1]
    if len(ids) >= article_tokens:
      break
  if len(ids) < article_tokens:
    raise SummarizerError(f'the test articles have fewer than {article_tokens} tokens')
  prefix = ids[:article_tokens] + [EOS, SEP]

  def greedy():
    return list(decoding.greedy_tokens(prefix, model, summary_tokens,
                                       stop_at_eos=False))

  def fast():
    return list(decoder.generate(prefix, summary_tokens, stop_at_eos=False))

  def loop():
    started, _ = decoder.start(prefix, max_length=summary_tokens)
    (tokens,) = decoder.decode_rows(started, summary_tokens, stop_at_eos=False)
    return tokens

  timings = {}
  for name, run, repeats in (('greedy', greedy, 1), ('fast', fast, 3), ('loop', loop, 3)):
    run()  # Warm: compile every shape first.
    best = float('inf')
    for _ in range(repeats):  # The fastest of a few: the machine is shared.
      start = time.perf_counter()
      tokens = run()
      best = min(best, time.perf_counter() - start)
    timings[name] = (best, tokens)
  identical = timings['greedy'][1] == timings['fast'][1] == timings['loop'][1]
  if not identical:
    raise SummarizerError('fast and greedy decoding disagree on the benchmark article')
  g, f, c = timings['greedy'][0], timings['fast'][0], timings['loop'][0]
  return {'greedy_s': round(g, 3), 'fast_s': round(f, 3), 'ratio': round(g / f, 1),
          'loop_s': round(c, 3), 'loop_ratio': round(g / c, 1),
          'fast_tokens_s': round(summary_tokens / f), 'loop_tokens_s': round(summary_tokens / c),
          'identical': identical, 'article_tokens': article_tokens,
          'summary_tokens': summary_tokens}


def _test_articles(n, join=1):
  """The first ``n`` news test articles (of ``join`` stories each) and their highlights."""
  pairs = scorecard.scored_pairs('news', 'test', n, download=False, join=join)
  return [article for article, _ in pairs], [highlights for _, highlights in pairs]


def bench_batch(model_dir=None, n_articles=64, batch_size=16, max_length=64):
  """Articles/s decoding test stories one at a time vs ``batch_size`` side by side.

  One at a time twice: one jitted call a token (how articles were decoded
  before batches), and the whole token loop in one compiled call.
  """
  articles, _ = _test_articles(n_articles)
  loaded = loaded_model.load(model_dir)

  def per_token():
    return [summaries.summarize_tokens(article, loaded, max_length).details()['summary_text']
            for article in articles]

  def decode(size):
    runs = summaries.summarize_many(articles, loaded, max_length, batch_size=size)
    return [run.details()['summary_text'] for run in runs]

  timings = {}
  for name, run in (('token', per_token), ('one', lambda: decode(1)),
                    ('batch', lambda: decode(batch_size))):
    run()  # Warm: compile every shape first.
    start = time.perf_counter()
    summarized = run()
    timings[name] = (len(articles) / (time.perf_counter() - start), summarized)
  identical = timings['token'][1] == timings['one'][1] == timings['batch'][1]
  if not identical:
    raise SummarizerError('a batch changed the summaries of the benchmark articles')
  token, one, many = (timings[name][0] for name in ('token', 'one', 'batch'))
  return {'articles': len(articles), 'batch_size': batch_size,
          'token_articles_s': round(token, 2), 'one_articles_s': round(one, 2),
          'batch_articles_s': round(many, 2), 'ratio': round(many / one, 2),
          'token_ratio': round(many / token, 2), 'identical': identical}


def repeats_a_trigram(summary):
  """Whether a summary has the same three words twice (case aside)."""
  words = summary.lower().split()
  trigrams = list(zip(words, words[1:], words[2:]))
  return len(set(trigrams)) < len(trigrams)


# The searches the beam section compares: the course's greedy search, beam
# search with Hugging Face's defaults, and the CNN/DailyMail recipe of
# BART-large-CNN (4 beams, length penalty 2, no repeated trigram).
BEAM_SEARCHES = (
    ('greedy', dict()),
    ('greedy, no repeated trigram', dict(no_repeat_ngram_size=3)),
    ('beam 4', dict(num_beams=4)),
    ('beam 4, length penalty 2, no repeated trigram',
     dict(num_beams=4, length_penalty=2.0, no_repeat_ngram_size=3)),
)


def bench_beam(model_dir=None, n_articles=500, joined=250, max_length=64,
               batch_size=16, searches=BEAM_SEARCHES):
  """Greedy vs beam search on test stories and on joined stories (two an article)."""
  loaded = loaded_model.load(model_dir)
  results = []
  for join, n in ((1, n_articles), (2, joined)):
    if not n:
      continue
    articles, references = _test_articles(n, join)
    for name, settings in searches:
      search = beam.Search(**settings)
      summaries.summarize_many(articles[:batch_size], loaded, max_length,
                               search=search, batch_size=batch_size)  # Warm.
      start = time.perf_counter()
      runs = summaries.summarize_many(articles, loaded, max_length, search=search,
                                      batch_size=batch_size)
      seconds = time.perf_counter() - start
      written = [run.details()['summary_text'] for run in runs]
      scores = scoring.score_system(written, articles, references)
      results.append({
          'search': name, 'join': join, 'articles': len(articles),
          'ms_per_article': round(1000 * seconds / len(articles), 1),
          **{k: None if v is None else round(v, 4) for k, v in scores.items()},
          'trigram_repeats': round(sum(map(repeats_a_trigram, written)) / len(written), 4),
          'mean_words': round(sum(len(s.split()) for s in written) / len(written), 1)})
  return results


def bench_data(preset='tiny', seconds=20.0, consumed_per_s=None):
  """Examples/s out of the pipeline (tokenising included) vs what training eats."""
  config = get_preset(preset)
  stream = streams.batches('news', 'train', vocab_file=news_vocab(config),
                           boundaries=config.boundaries,
                           batch_sizes=config.batch_sizes,
                           max_joint_length=config.max_joint_length, truncate=True)
  start = time.perf_counter()
  examples = 0
  for batch in stream:
    examples += len(batch[0])
    if time.perf_counter() - start > seconds:
      break
  rate = examples / (time.perf_counter() - start)
  result = {'pipeline_examples_s': round(rate, 1)}
  if consumed_per_s:
    result.update(training_examples_s=round(consumed_per_s, 1),
                  ratio=round(rate / consumed_per_s, 1))
  return result


def bench_cli(model_dir=None):
  """Peak resident memory and wall time of one `python -m summarizer` run."""
  samples = sorted(glob.glob(os.path.join(DATA_DIR, 'samples', '*.txt')))
  if not samples:
    raise SummarizerError('no sample article in data/samples')
  argv = [sys.executable, '-m', 'summarizer', samples[0]]
  if model_dir:
    argv += ['--model', model_dir]
  with tempfile.NamedTemporaryFile('r', suffix='.txt') as report:
    start = time.perf_counter()
    subprocess.run(['/usr/bin/time', '-f', '%M', '-o', report.name, *argv],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    peak_kb = int(report.read().strip().splitlines()[-1])
  return {'memory_mb': round(peak_kb / 1024), 'seconds': round(seconds, 2),
          'stages': bench_stages(samples[0], model_dir)}


# Run in a fresh interpreter by bench_stages: the summarize command's steps, timed.
_STAGES_SCRIPT = """
import json, sys, time
start = time.perf_counter()
from summarizer.inference import loaded_model, summaries
imported = time.perf_counter()
model = loaded_model.load(sys.argv[2] or None)
loaded = time.perf_counter()
tokens = summaries.summarize_tokens(open(sys.argv[1], encoding='utf-8').read(), model)
next(tokens)
first = time.perf_counter()
rest = sum(1 for _ in tokens)
done = time.perf_counter()
print(json.dumps({'import_s': imported - start, 'load_s': loaded - imported,
                  'first_token_s': first - loaded, 'other_tokens_s': done - first,
                  'other_tokens': rest}))
"""


def bench_stages(sample, model_dir=None):
  """Where the summarize command's time goes: import, load, first token, the rest.

  The first token includes compiling the prefill, the second compiling the
  one-token step; both are paid once per process.
  """
  output = subprocess.run([sys.executable, '-c', _STAGES_SCRIPT, sample, model_dir or ''],
                          check=True, capture_output=True, text=True).stdout
  stages = json.loads(output.strip().splitlines()[-1])
  return {k: round(v, 2) if k.endswith('_s') else v for k, v in stages.items()}


# What the command is compared with: the least a jax program pays to start.
_JAX_FIRST_ARRAY = 'import jax, jax.numpy as jnp; jnp.ones(3).block_until_ready()'


def _timed_process(argv, env=None):
  """Wall seconds and peak resident MB of one fresh process, output dropped."""
  with tempfile.NamedTemporaryFile('r', suffix='.txt') as report:
    start = time.perf_counter()
    subprocess.run(['/usr/bin/time', '-f', '%M', '-o', report.name, *argv],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env)
    seconds = time.perf_counter() - start
    peak_kb = int(report.read().strip().splitlines()[-1])
  return seconds, peak_kb / 1024


def bench_start(sample=None, model_dir=None, repeats=3):
  """How fast the summarize command starts, beside a bare jax program.

  Four kinds of fresh process run in turn, ``repeats`` rounds, so that the
  machine's load falls on all of them alike: the command, the command with
  jax's compilation cache off, ``import jax`` with a first array, and the
  import of ``TransformerLM``. Each keeps its best time and the peak memory
  of that best run.
  """
  sample = sample or os.path.join(DATA_DIR, 'samples', 'sport.txt')
  command = [sys.executable, '-m', 'summarizer', sample]
  if model_dir:
    command += ['--model', model_dir]
  no_cache = dict(os.environ, SUMMARIZER_COMPILATION_CACHE='off')
  runs = {'command': (command, None),
          'no_cache': (command, no_cache),
          'jax': ([sys.executable, '-c', _JAX_FIRST_ARRAY], None),
          'import': ([sys.executable, '-c', 'from summarizer import TransformerLM'], None)}
  best = {name: (float('inf'), 0.0) for name in runs}
  for _ in range(repeats):
    for name, (argv, env) in runs.items():
      best[name] = min(best[name], _timed_process(argv, env))
  (command_s, command_mb), (jax_s, jax_mb) = best['command'], best['jax']
  return {'sample': os.path.relpath(sample), 'command_s': round(command_s, 2),
          'command_mb': round(command_mb), 'jax_s': round(jax_s, 2),
          'jax_mb': round(jax_mb), 'ratio': round(command_s / jax_s, 2),
          'no_cache_s': round(best['no_cache'][0], 2),
          'import_s': round(best['import'][0], 2), 'repeats': repeats}


def _fraction(value):
  return '-' if value is None else f'{value:.3f}'


def _verdict(name, value):
  goal, higher = GOALS[name]
  met = value >= goal if higher else value <= goal
  return f'{"meets" if met else "MISSES"} goal {"≥" if higher else "≤"} {goal:g}'


def run(sections=DEFAULT_BENCH_SECTIONS, preset='tiny', model_dir=None, minutes=10.0, seed=0,
        shared_core=False, class_size=10):
  """Runs the chosen benchmarks; returns their results as a dict.

  ``minutes``, ``seed`` and ``shared_core`` are the first-model section's
  training run's (``first_model.bench_first_model``); ``class_size`` the
  grading section's submissions.
  """
  results = {}
  if 'import' in sections:
    results['import'] = bench_import()
  if 'init' in sections:
    results['init'] = bench_init()
  if 'train' in sections or 'data' in sections:
    results['train'] = bench_train(preset)
  if 'decode' in sections:
    results['decode'] = bench_decode(model_dir)
  if 'data' in sections:
    results['data'] = bench_data(preset, consumed_per_s=results['train']['examples_per_s'])
  if 'train' not in sections:
    results.pop('train', None)
  if 'cli' in sections:
    results['cli'] = bench_cli(model_dir)
  if 'start' in sections:
    results['start'] = bench_start(model_dir=model_dir)
  if 'batch' in sections:
    results['batch'] = bench_batch(model_dir)
  if 'beam' in sections:
    results['beam'] = bench_beam(model_dir)
  if 'first-model' in sections:
    results['first-model'] = first_model.bench_first_model(minutes, seed,
                                                           shared_core=shared_core)
  if 'grading' in sections:
    results['grading'] = class_grading.bench_grading(class_size)
  return results


def _start_rows(r):
  """The table's rows of the start section."""
  rows = []
  rows.append((f'python -m summarizer {r["sample"]} vs import jax + a first array',
               f'{r["command_s"]} s vs {r["jax_s"]} s', f'{r["ratio"]}x',
               _verdict('start_ratio', r['ratio'])))
  rows.append(("... the command's wall time", f'{r["command_s"]} s', '',
               _verdict('start_seconds', r['command_s'])))
  rows.append(('... its peak memory (jax alone)', f'{r["command_mb"]} MB ({r["jax_mb"]} MB)',
               '', _verdict('start_memory_mb', r['command_mb'])))
  if 'no_cache_s' in r:
    rows.append(('... with the compilation cache off (SUMMARIZER_COMPILATION_CACHE=off)',
                 f'{r["no_cache_s"]} s', f'{r["no_cache_s"] / r["jax_s"]:.2f}x',
                 'what the cache saves'))
  rows.append(('from summarizer import TransformerLM', f'{r["import_s"]} s', '',
               _verdict('start_import_s', r['import_s'])))
  return rows


def _init_rows(results):
  """The table's rows of the init section: a model a row."""
  return [(f'initialising TransformerLM ({name}), ours vs Trax\'s init',
           f'{r["ours_s"]} s vs {r["trax_s"]} s', f'{r["ratio"]}', _verdict('init', r['ratio']))
          for name, r in results.items()]


def table(results):
  """Formats results as the table of summarizer/README.md's Performance section."""
  rows = _init_rows(results.get('init', {}))
  if 'import' in results:
    r = results['import']
    rows.append(('import TransformerLM vs import trax', f'{r["summarizer_s"]} s vs {r["trax_s"]} s',
                 f'{r["ratio"]}', _verdict('import', r['ratio'])))
  if 'train' in results:
    r = results['train']
    rows.append((f'training tokens/s, ours vs trax ({r["preset"]})',
                 f'{r["ours_tokens_s"]} vs {r["trax_tokens_s"]}', f'{r["ratio"]}',
                 _verdict('train', r['ratio'])))
  if 'decode' in results:
    r = results['decode']
    rows.append((f'decoding {r["article_tokens"]}+{r["summary_tokens"]} tokens, greedy / fast',
                 f'{r["greedy_s"]} s / {r["fast_s"]} s', f'{r["ratio"]}x',
                 _verdict('decode', r['ratio'])))
    if 'loop_s' in r:
      rows.append(('... greedy / fast in one compiled loop',
                   f'{r["greedy_s"]} s / {r["loop_s"]} s ({r["fast_tokens_s"]} -> '
                   f'{r["loop_tokens_s"]} tokens/s)', f'{r["loop_ratio"]}x',
                   _verdict('decode_loop', r['loop_ratio'])))
  if 'data' in results and 'ratio' in results['data']:
    r = results['data']
    rows.append(('examples/s, pipeline vs training',
                 f'{r["pipeline_examples_s"]} vs {r["training_examples_s"]}',
                 f'{r["ratio"]}x', _verdict('data', r['ratio'])))
  if 'cli' in results:
    r = results['cli']
    rows.append(('python -m summarizer: peak memory', f'{r["memory_mb"]} MB', '',
                 _verdict('cli_memory_mb', r['memory_mb'])))
    rows.append(('python -m summarizer: wall time', f'{r["seconds"]} s', '',
                 _verdict('cli_seconds', r['seconds'])))
    if 'stages' in r:
      t = r['stages']
      rows.append(('... of which (separate run)',
                   f'import {t["import_s"]} s, load {t["load_s"]} s, first token '
                   f'{t["first_token_s"]} s, {t["other_tokens"]} more '
                   f'{t["other_tokens_s"]} s', '', 'where the time goes'))
  if 'start' in results:
    rows += _start_rows(results['start'])
  if 'batch' in results:
    r = results['batch']
    rows.append((f'articles/s, {r["articles"]} test stories, batch 1 vs {r["batch_size"]}',
                 f'{r["one_articles_s"]} vs {r["batch_articles_s"]}', f'{r["ratio"]}x',
                 _verdict('batch', r['ratio']) + ', same summaries'))
    rows.append(('... batch 1 one call a token (before) vs batch '
                 f'{r["batch_size"]}', f'{r["token_articles_s"]} vs {r["batch_articles_s"]}',
                 f'{r["token_ratio"]}x', _verdict('batch', r['token_ratio'])))
  for r in results.get('beam', ()):
    rows.append((f'{r["search"]}: {r["articles"]} {"joined " if r["join"] > 1 else ""}'
                 'test stories',
                 f'{r["ms_per_article"]} ms/article, R1 {r["rouge1"]:.3f} R2 '
                 f'{r["rouge2"]:.3f} RL {r["rougeL"]:.3f}, entities P '
                 f'{_fraction(r["entity_precision"])} R {_fraction(r["entity_recall"])}, '
                 f'{r["mean_words"]} words', f'{100 * r["trigram_repeats"]:.1f}%',
                 'repeat a trigram'))
  for section, rows_of in (('first-model', first_model.rows), ('grading', class_grading.rows)):
    rows += rows_of(results[section]) if section in results else []
  return _markdown(('measure', 'measured', 'ratio', 'goal'), rows)


def _markdown(header, rows):
  """A Markdown table, its columns aligned."""
  widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
  lines = ['| ' + ' | '.join(str(c).ljust(w) for c, w in zip(header, widths)) + ' |',
           '|' + '|'.join('-' * (w + 2) for w in widths) + '|']
  lines += ['| ' + ' | '.join(str(c).ljust(w) for c, w in zip(row, widths)) + ' |'
            for row in rows]
  return '\n'.join(lines)

