"""Measure our speed claims side by side, in one run, on this machine.

  python -m summarizer.bench            # everything, tiny preset (a few minutes)
  python -m summarizer.bench --full     # training throughput with the course preset
  python -m summarizer.bench --preset tiny --only train,data
  python -m summarizer.bench --only import,decode --json

Each line compares two things measured in the same run and states its goal:

  import    the package's Trax (`from summarizer import TransformerLM`) vs
            `import trax` (fresh processes, median of 3)
  train     tokens/s of our TransformerLM vs trax.models.TransformerLM
  decode    the fast cached decoder vs the course's greedy_decode
  data      examples/s the pipeline delivers vs examples/s training consumes
  cli       peak memory and wall time of `python -m summarizer` on a sample,
            and where that time goes (import, load, first token, the rest)
"""

import argparse
import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from summarizer.config import DATA_DIR, EOS, SEP, get_preset
from summarizer.errors import OneLineParser, SummarizerError, run_command

SECTIONS = ('import', 'train', 'decode', 'data', 'cli')
GOALS = {  # name: (goal, True if higher is better)
    'import': (0.3, False),
    'train': (0.95, True),
    'decode': (20.0, True),
    'data': (10.0, True),
    'cli_memory_mb': (1200.0, False),
    'cli_seconds': (10.0, False),
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


def _fixed_batches(config, n):
  """The first ``n`` training batches of the news corpus for ``config``."""
  from summarizer import data  # pylint: disable=g-import-not-at-top
  stream = data.batches('news', 'train', boundaries=config.boundaries,
                        batch_sizes=config.batch_sizes,
                        max_joint_length=config.max_joint_length, truncate=True)
  return list(itertools.islice(stream, n))


def _warm_loop(model, loss_layer, batches):
  """Returns a Trax ``Loop`` training ``model`` on ``batches``, every shape compiled."""
  import jax  # pylint: disable=g-import-not-at-top
  from summarizer._trax import trax  # pylint: disable=g-import-not-at-top
  from summarizer._trax import quiet_loop_log  # pylint: disable=g-import-not-at-top
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
  import jax  # pylint: disable=g-import-not-at-top
  from summarizer._trax import quiet_loop_log  # pylint: disable=g-import-not-at-top
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
  from summarizer._trax import tl, trax  # pylint: disable=g-import-not-at-top
  from summarizer.model import TransformerLM  # pylint: disable=g-import-not-at-top
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
  from summarizer import decoding, sources, text  # pylint: disable=g-import-not-at-top
  model, decoder, _, vocab = decoding.load(model_dir)
  # The news stories are mostly shorter than 256 tokens: consecutive test
  # articles are joined until the benchmark's article length is reached.
  ids = []
  for article, _ in sources.examples('news', 'test'):
    ids += text.tokenize(article, vocab)[:-1]
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

  timings = {}
  for name, run in (('greedy', greedy), ('fast', fast)):
    run()  # Warm: compile every shape first.
    start = time.perf_counter()
    tokens = run()
    timings[name] = (time.perf_counter() - start, tokens)
  identical = timings['greedy'][1] == timings['fast'][1]
  if not identical:
    raise SummarizerError('fast and greedy decoding disagree on the benchmark article')
  g, f = timings['greedy'][0], timings['fast'][0]
  return {'greedy_s': round(g, 3), 'fast_s': round(f, 3), 'ratio': round(g / f, 1),
          'identical': identical, 'article_tokens': article_tokens,
          'summary_tokens': summary_tokens}


def bench_data(preset='tiny', seconds=20.0, consumed_per_s=None):
  """Examples/s out of the pipeline (tokenising included) vs what training eats."""
  from summarizer import data  # pylint: disable=g-import-not-at-top
  config = get_preset(preset)
  stream = data.batches('news', 'train', boundaries=config.boundaries,
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
from summarizer import decoding
imported = time.perf_counter()
decoding.load(sys.argv[2] or None)
loaded = time.perf_counter()
tokens = decoding.summarize_tokens(open(sys.argv[1], encoding='utf-8').read(), sys.argv[2] or None)
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


def _verdict(name, value):
  goal, higher = GOALS[name]
  met = value >= goal if higher else value <= goal
  return f'{"meets" if met else "MISSES"} goal {"≥" if higher else "≤"} {goal:g}'


def run(sections=SECTIONS, preset='tiny', model_dir=None):
  """Runs the chosen benchmarks; returns their results as a dict."""
  results = {}
  if 'import' in sections:
    results['import'] = bench_import()
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
  return results


def table(results):
  """Formats results as the README's table."""
  rows = []
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
  header = ('measure', 'measured', 'ratio', 'goal')
  widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(4)]
  lines = ['| ' + ' | '.join(str(c).ljust(w) for c, w in zip(header, widths)) + ' |',
           '|' + '|'.join('-' * (w + 2) for w in widths) + '|']
  lines += ['| ' + ' | '.join(str(c).ljust(w) for c, w in zip(row, widths)) + ' |'
            for row in rows]
  return '\n'.join(lines)


def main(argv=None):
  p = OneLineParser(prog='python -m summarizer.bench', description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument('--preset', default='tiny',
                 help='preset of the training and data comparisons (default: tiny)')
  p.add_argument('--full', action='store_true', help='the same as --preset course')
  p.add_argument('--only', default=','.join(SECTIONS),
                 help='comma-separated sections: ' + ','.join(SECTIONS))
  p.add_argument('--model', default=None, help='model directory (default: shipped)')
  p.add_argument('--json', action='store_true', help='print JSON only')
  args = p.parse_args(argv)
  sections = [s.strip() for s in args.only.split(',') if s.strip()]
  unknown = set(sections) - set(SECTIONS)
  if unknown:
    p.error(f'unknown section(s) {", ".join(sorted(unknown))}; choose from '
            + ', '.join(SECTIONS))

  def command():
    results = run(sections, 'course' if args.full else args.preset, args.model)
    if args.json:
      print(json.dumps(results, indent=2))
    else:
      print(f'machine: {os.cpu_count()} cores, {sys.platform}, Python '
            f'{sys.version.split()[0]}')
      print(table(results))
    return 0
  return run_command(command, interrupted='stopped')


if __name__ == '__main__':
  sys.exit(main())
