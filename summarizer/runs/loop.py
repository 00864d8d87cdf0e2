"""A training run from start to end: the course's Loop, hooked, kill-safe, reported.

A run writes into ``--output-dir``: ``config.json``, the vocabulary, the
checkpoint, Trax's metric logs (``train/``, ``eval/``, readable by
TensorBoard), ``train.log`` and a ``loss.png`` learning curve
(``summarizer.runs.run_dir`` decides what a run starts from and records). An
existing checkpoint is resumed only with ``--resume``. Ctrl-C, or the
SIGTERM a job scheduler sends before it stops a job, saves a checkpoint
after the step under way and exits (130, or 143 for SIGTERM).
"""

import os
import sys
import time

import jax
import numpy as np

from summarizer._trax import trax
from summarizer.config import CALIBRATION_KEY, VERDICT_KEY
from summarizer.errors import SummarizerError
from summarizer.inference import calibration
from summarizer.inference import model_directory
from summarizer.inference import undertrained
from summarizer.inference.loaded_model import LoadedModel
from summarizer.inference.model_directory import BASENAME
from summarizer.model import TransformerLM
from summarizer.runs import diagnosis
from summarizer.runs import export
from summarizer.runs import initialisation
from summarizer.runs import manifest
from summarizer.runs import run_dir
from summarizer.runs import saving
from summarizer.runs.args import on_split_batches
from summarizer.runs.budget import TokenBudget, cpu_threads
from summarizer.runs.hooked_loop import HookedLoop, quiet_loop_log
from summarizer.runs.plan import EvalClock, Plan, split_from_start
from summarizer.runs.prepare import tasks
from summarizer.runs.preview import preview_of
from summarizer.runs.report import Report, plot_losses
from summarizer.runs.stopping import BudgetSpent, Diverged, Stopped, finite, stop_signals

# Steps a budgeted run asks Trax's Loop for at a time (it stops at the budget's end).
STEPS_PER_CALL = 10**6


def _steps(loop, run, report, stop, clock):
  """Trains to ``max_steps`` or the budget's end; the loop evaluates when ``clock`` says.

  Saves at the end; a run that its budget ended is evaluated once more.

  Returns:
    The signal that stopped the run early, or None.
  """
  max_steps = run.args.max_steps
  saved = False
  try:
    if max_steps is None:
      while True:  # Until a budget is spent (or a signal): BudgetSpent, Stopped.
        loop.run(STEPS_PER_CALL)
    elif loop.step < max_steps:
      loop.run(max_steps - loop.step)
  except (Stopped, BudgetSpent) as e:
    loop.save_checkpoint(BASENAME)
    saved = True
    if isinstance(e, BudgetSpent) and clock.last_step != loop.step:
      loop.run_evals()  # The budget's last step is evaluated, as a last step is.
  finally:
    report.bar.close()
  if not saved and stop['signal'] is None and loop.step % run.args.save_steps:
    loop.save_checkpoint(BASENAME)
  _record(run, loop)
  return stop['signal']


def _record(run, loop, **ending):
  """Writes the run's config.json with the step it has reached (and what its end adds)."""
  run_dir.save_run_config(run, loop.step, **ending)


def train(run):
  """Runs (or resumes) a prepared training run; returns a summary dict.

  Args:
    run: The ``prepare.Run``, as ``prepare.prepared`` yields it (its
      directories locked): everything the run needs, resolved once from
      the train command's flags.

  Returns:
    dict with 'step', 'train_loss', 'eval_loss', 'eval_accuracy', 'seconds',
    'tokens_per_second', 'interrupted', 'stopped_by' (a signal's name or
    None), 'wall_seconds' (the whole run's), 'first_step_seconds' (start-up
    and compiling), 'calibration_seconds', 'split_batches' (whether its steps
    took split batches: ``runs.plan.SPLIT_SHARE``), 'output_dir' (and
    'exported_to').
  """
  args = run.args
  tokens = TokenBudget(args.max_tokens, run.counter) if args.max_tokens is not None else None
  split_from_start(run, run.budget)  # Before the tasks draw their first batch.
  if run.split.on and args.max_tokens is None:  # A slow machine's clock: its own lessons.
    run.args = args = on_split_batches(args, run.config.preset)
  train_task, eval_task = tasks(run, run.budget, tokens)
  # A token budget alone evaluates on its tokens; with minutes too, the clock ends it anyway.
  clock = EvalClock(args.eval_steps, args.max_steps,
                    tokens=tokens if run.budget is None else None)
  stopped_by, loop, report, plan = _trained(run, train_task, eval_task, tokens, clock)
  return _finish(run, loop, report, stopped_by, plan)


def _trained(run, train_task, eval_task, tokens, clock):
  """Trains with the hooked Loop; returns the stopping signal (or None), loop, report and plan."""
  args, config, out, budget = run.args, run.config, run.directory.path, run.budget
  with quiet_loop_log(os.path.join(out, 'train.log')) as log, stop_signals() as stop:

    def on_step(step, loss):
      report.step(step, loss)
      line = plan.measure(step, run.counter['tokens'])
      if line is not None:
        report.note(line, log)
      if run.repeat is not None and run.repeat.ended_at is None:
        run.repeat.feed(step, loss)
        if run.repeat.ended_at is not None:
          ended = run.repeat.ended_line()
          report.note(ended, log)
          report.new_phase()
      if not finite(loss):
        raise Diverged(step)
      if stop['signal'] is not None:
        raise Stopped()
      if (budget is not None and budget.spent()) or (tokens is not None and tokens.spent()):
        raise BudgetSpent()

    def on_eval():
      clock.evaluated(loop.step)
      plan.update(loop.step, run.counter['tokens'])
      _record(run, loop)
      report.evaluation(loop, log, run.phase)

    def save(write, directory):
      # A finite loss can still come with an update to NaN: never save such weights.
      if not finite(loop.model.weights):
        raise Diverged(loop.step)
      saving.save_or_explain(write, directory)

    loop = HookedLoop(
        TransformerLM(**config.model_kwargs(), mode='train'), [train_task],
        eval_model=TransformerLM(**config.model_kwargs(), mode='eval'),
        eval_tasks=[eval_task], output_dir=out, eval_at=clock.due,
        random_seed=args.seed, on_step=on_step, save=save, on_eval=on_eval)
    if run.start_weights is not None:
      loop.update_weights_and_state(weights=run.start_weights)
    elif not run.resuming and (args.tied_init or args.embedding_scale != 1.0):
      loop.update_weights_and_state(weights=initialisation.reshaped(
          loop.model.weights, args.tied_init, args.embedding_scale))
    _announce(run, loop)
    _record(run, loop)
    plan = Plan(run, budget, loop.step, tokens)
    report = Report(run.counter, loop.step, budget, preview_of(run), lessons=run.repeat is not None,
                    tokens=tokens, max_steps=args.max_steps, eval_batches=args.eval_batches,
                    show_progress=args.progress)
    try:
      stopped_by = _steps(loop, run, report, stop, clock)
    except Diverged as e:
      raise _diverged_error(run, e.step) from None
  return stopped_by, loop, report, plan


def _diverged_error(run, step):
  """The one line for a run stopped by a loss that turned NaN; records the kept step."""
  out = run.directory.path  # Its checkpoint as training left it, read anew.
  kept = model_directory.saved_step(out) if model_directory.has_checkpoint(out) else None
  if kept is not None:
    run_dir.save_run_config(run, kept)
  where = (f'the last good checkpoint (step {kept}) in {out} is kept' if kept is not None
           else 'no checkpoint had been saved')
  if step <= 1:  # No update had been made: no learning rate is to blame.
    return SummarizerError(
        f'the loss is not a number at step {step}, the first, before any update: the '
        f'starting weights or the first batch hold no numbers; the run stopped and {where}')
  return SummarizerError(
      f'the loss is not a number at step {step} (training diverged, at learning rate '
      f'{run.config.learning_rate:g}): the run stopped and {where}; try a lower '
      '--learning-rate or a longer --warmup-steps')


def _announce(run, loop):
  """Prints what is trained, on what, from where to where."""
  args, config = run.args, run.config
  n_weights = sum(int(np.prod(w.shape)) for w in jax.tree_util.tree_leaves(loop.model.weights))
  until = [f'to {args.max_steps}'] if args.max_steps is not None else []
  if args.max_minutes is not None:
    until.append(f'for {args.max_minutes:g} minutes')
  if args.max_tokens is not None:
    until.append(f'for {args.max_tokens:,} tokens')
  threads = cpu_threads()  # Set where the run is budgeted by tokens alone, or by its user.
  threads = f', {threads} CPU thread(s)' if threads is not None else ''
  print(f'{"resuming" if run.resuming else "training"} {config.preset} '
        f'({n_weights / 1e6:.1f}M parameters) on {args.data} '
        f'from step {loop.step} {" or ".join(until)}, '
        f'{trax.fastmath.local_device_count()} device(s){threads}, output in '
        f'{run.directory.path}', flush=True)
  shown = config.to_dict()
  if args.max_tokens is None and not run.split.on:
    del shown['decay_share']  # Only tokens or quarter batches hold the peak (budget.BudgetSchedule).
  print('config: ' + ', '.join(f'{k}={v}' for k, v in shown.items()), flush=True)


def _finish(run, loop, report, stopped_by, plan=None):
  """Plots, judges, calibrates and exports a run that was not stopped; returns its summary."""
  args, out, judge = run.args, run.directory.path, run.judge
  eval_losses = loop.history.get('eval', 'metrics/CrossEntropyLoss')
  plot_losses(report.train_losses, eval_losses, os.path.join(out, 'loss.png'),
              lessons_ended=(run.repeat.ended_at or loop.step) if run.repeat is not None else None)
  manifest.record_run(out)
  judging = time.monotonic()
  # The model as saved, read once for the verdict and the calibration; what
  # they find joins the run's record (config.json, written from memory).
  saved = (LoadedModel(model_directory.read(out, own_run=True))
           if stopped_by is None and (judge is not None or args.calibration_articles) else None)
  verdict, ending = None, {}
  if judge is not None and stopped_by is None:
    verdict = judge(saved, args.data, args.data_dir, args.verdict_stories,
                    show_progress=args.progress)
    if verdict is not None:
      ending[VERDICT_KEY] = verdict
      _record(run, loop, **ending)
      print(_verdict_line(verdict), flush=True)
  calibrating = time.monotonic()
  if args.calibration_articles and stopped_by is None:
    ending[CALIBRATION_KEY] = calibration.calibrate(
        saved, args.data, 'validation', args.calibration_articles, args.data_dir,
        show_progress=args.progress)
    _record(run, loop, **ending)
  ended = time.monotonic()
  seconds = time.time() - report.started
  accuracy = loop.history.get('eval', 'metrics/Accuracy')
  summary = {
      'step': loop.step,
      'train_loss': report.mean_train_loss(),
      'eval_loss': eval_losses[-1][1] if eval_losses else None,
      'eval_accuracy': accuracy[-1][1] if accuracy else None,
      'seconds': round(seconds, 1),
      'tokens_per_second': round(run.counter['tokens'] / max(seconds, 1e-9)),
      'interrupted': stopped_by is not None,
      'stopped_by': stopped_by.name if stopped_by else None,
      'wall_seconds': round(time.monotonic() - run.started, 1),
      # Where the time went: to the end of the first step (start-up, compiling).
      'first_step_seconds': (round(report.first_step_at - run.started, 1)
                             if report.first_step_at else None),
      'verdict_seconds': round(calibrating - judging, 1),
      'calibration_seconds': round(ended - calibrating, 1),
      'repeat_steps_taken': run.repeat.ended_at if run.repeat is not None else None,
      'split_batches': run.split.on,
      'output_dir': out,
  }
  if args.export_to and stopped_by is None:
    export.export(out, args.export_to, args.calibration_articles)
    summary['exported_to'] = args.export_to
  if stopped_by is not None:
    print(f'interrupted: checkpoint of step {loop.step} saved in {out}; '
          'continue with --resume', file=sys.stderr)
  else:
    if plan is not None:
      plan.ended(run.counter['tokens'], seconds)
    for line in diagnosis.diagnose(run, loop.step, plan, run.budget, verdict, ended - judging):
      print(line, flush=True)
  return summary


def _verdict_line(verdict):
  """'against Lead-3 on N validation stories: rouge1 a (b), ...' for the run's output."""
  model, lead3 = verdict['model'], verdict['lead3']
  scores = ', '.join(f'{name} {_score(value)} ({_score(lead3[name])})'
                     for name, value in model.items())
  warning = undertrained.verdict_warning(verdict)
  sentences = (f'; {verdict["sentences"]:.0%} of its summaries are sentences'
               if verdict.get('sentences') is not None else '')
  return (f'against Lead-3 on {verdict["n"]} validation stories, model (Lead-3): {scores}'
          f'{sentences}: ' + ('beats it' if warning is None else 'not yet: its summaries will say so'))


def _score(value):
  return 'none' if value is None else f'{value:.3f}'
