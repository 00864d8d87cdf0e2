"""What the end of a run says in plain words, where something needs saying.

A run that went as planned ends with its verdict and ``done:``. Otherwise
one ``diagnosis:`` line each, before ``done:``, for:

* a run that never left the repeat lessons: its model has read no story;
* a machine well below the recipe's speed (busy, or slow): ten minutes
  there teach less than the recipe's ten minutes (and where its model
  clears the bar all the same, it says so);
* a run that ended past its budget (the verdict and the calibration
  always read all their stories and articles, however long they take);
* a model below the bar, and how to go on from it: ``--resume`` with the
  minutes this run's pace needs to make the steps the recipe took to the
  bar (``Plan.minutes_to_bar``), at least ``DEFAULT_MORE_MINUTES``.
"""

from summarizer.inference import undertrained

# Minutes more a diagnosis suggests where the run's pace does not tell
# (the run made the recipe's steps, or made its stories for under a minute),
# and the fewest it suggests.
DEFAULT_MORE_MINUTES = 5


def diagnose(run, step, plan, budget, verdict, ending_seconds):
  """The run's ``diagnosis:`` lines (none when there is nothing to say).

  Args:
    run: The ``Run``.
    step: The step the run ended at.
    plan: The run's ``Plan`` (its measured speed), or None.
    budget: The run's ``Budget``, or None.
    verdict: The verdict record, or None (none was made).
    ending_seconds: Seconds the verdict and the calibration took.
  """
  # As many minutes as this run's pace needs to make the steps the bar took the recipe.
  # At least the default: the steps to the bar vary from seed to seed.
  minutes = max((plan.minutes_to_bar(step) if plan is not None else None) or 0,
                DEFAULT_MORE_MINUTES)
  more = (f'python -m summarizer.train --output-dir {run.args.output_dir} --resume '
          f'--max-minutes {minutes}')
  # A run budgeted by tokens alone learns the same on any machine: its speed is no
  # cause, and more tokens, not minutes, go on from it (half its budget again).
  tokens = getattr(run.args, 'max_tokens', None) if budget is None else None
  if tokens is not None:
    more = (f'python -m summarizer.train --output-dir {run.args.output_dir} --resume '
            f'--max-tokens {_round_tokens(tokens / 2)}')
  lines = []
  repeat = run.repeat
  if repeat is not None and repeat.ended_at is None:
    until = (f', not yet below {repeat.until_loss:g}' if repeat.until_loss is not None else '')
    lines.append(f'the run never left the repeat lessons: after {step:,} steps their loss is '
                 f'{repeat.recent_loss():.2f}{until}, so its model has read no story; more '
                 f'time goes to the stories: {more}')
  behind = undertrained.shortfalls(verdict) if verdict is not None else []
  if plan is not None and plan.slow() and tokens is None:
    speed = plan.run_tokens_per_second or plan.tokens_per_second
    advice = (f'close other programs, or give the run more minutes: {more}'
              if verdict is None or behind else 'its model clears the bar all the same')
    lines.append(f'this machine trained at {speed:,.0f} tokens/s, against '
                 f'the {plan.recipe_speed:,} the recipe was tuned at: it is busy (other '
                 f'programs use its cores) or slow, so its minutes taught less; {advice}')
  if budget is not None and budget.overrun() >= 1:
    read = []
    if verdict is not None:
      read.append(f'the verdict ({verdict["n"]} stories)')
    if run.args.calibration_articles:
      read.append(f'the calibration ({run.args.calibration_articles} articles)')
    took = (f': {" and ".join(read)} took {ending_seconds:.0f} s, and always read all '
            'they are given' if read else '')
    lines.append(f'the run ended {budget.overrun():.0f} s past its budget{took}')
  if behind:
    lines.append(f'the model is below the bar ({"; ".join(behind)}): '
                 f'each of its summaries will warn so; train it longer: {more}')
  return [f'diagnosis: {line}' for line in lines]


def _round_tokens(tokens):
  """``tokens`` to two significant digits (1,250,000 -> 1200000), at least 1,000."""
  tokens = max(int(tokens), 1000)
  scale = 10 ** (len(str(tokens)) - 2)
  return tokens // scale * scale
