"""The grader's where: line (issue 64): the learner's trace from the sandbox, the package's here.

The sandbox follows the learner's function alone on the notebook's check
inputs (``check_inputs.learners_traces``) and sends the trace back; the grader
reads it within bounds (``report_schema.fit_traces``) and follows the
package's function on the same inputs (``where_line``). Here the sandbox's
half runs in this process, on cells named as the sandbox names them, and the
trace crosses the report's bytes as the worker writes them: the line must be
the notebook's, name the learner's changed line, hold nothing but the
learner's values, and never come for a correct answer.
"""

import functools
import io
import json
import linecache
import time

import numpy as np
import pytest

import learner_variants
from summarizer.assignment import checks_arrays, checks_layers
from summarizer.contract import check_inputs, following, judge
from summarizer.grading import report_schema, watchers, where_line
from test_truthful_feedback import SHIFTED_MASK, changed_line, check

# Mistakes of the functions of arrays, as a learner types them (the changed line marked).
UNSCALED_SCORES = '''
def DotProductAttention(query, key, value, mask):
  assert query.shape[-1] == key.shape[-1] == value.shape[-1], 'widths differ'
  dots = jnp.matmul(query, jnp.swapaxes(key, -1, -2))  # changed
  if mask is not None:
    dots = jnp.where(mask, dots, jnp.full_like(dots, -1e9))
  logsumexp = trax.fastmath.logsumexp(dots, axis=-1, keepdims=True)
  dots = jnp.exp(dots - logsumexp)
  return jnp.matmul(dots, value)
'''

SWAPPED_AXES = '''
def compute_attention_output_closure(n_heads, d_head):
  def compute_attention_output(x):
    seqlen = x.shape[1]
    x = jnp.reshape(x, (-1, n_heads, seqlen, d_head))
    x = jnp.transpose(x, (0, 1, 3, 2))  # changed
    return jnp.reshape(x, (-1, seqlen, n_heads * d_head))
  return compute_attention_output
'''

HEADS_MERGED_WITH_POSITIONS = '''
def compute_attention_heads_closure(n_heads, d_head):
  def compute_attention_heads(x):
    batch_size, seqlen = x.shape[0], x.shape[1]
    x = jnp.reshape(x, (batch_size, seqlen, n_heads, d_head))
    x = jnp.transpose(x, (0, 2, 1, 3))
    x = jnp.reshape(x, (batch_size, -1, d_head))  # changed
    return x
  return compute_attention_heads
'''

# function -> (its mistake, the function its where: line names).
MISTAKES = {'DotProductAttention': (UNSCALED_SCORES, 'DotProductAttention'),
            'compute_attention_output_closure': (SWAPPED_AXES, 'compute_attention_output'),
            'dot_product_self_attention': (SHIFTED_MASK, 'dot_product_self_attention'),
            'compute_attention_heads_closure': (HEADS_MERGED_WITH_POSITIONS,
                                                'compute_attention_heads')}


def in_a_sandbox_cell(name, source):
  """``name`` defined from ``source`` as the worker runs a learner's cell (``<cell NAME>``).

  The earlier exercises' functions are the package's, run from the grader's own
  file name (``watchers.GRADER_FILES``), as in the sandbox: never followed.
  """
  names = learner_variants.course_namespace()
  for earlier in learner_variants.COURSE_ANSWERS:
    if earlier == name:
      break
    exec(compile(learner_variants.COURSE_ANSWERS[earlier], watchers.GRADER_FILES[1], 'exec'),
         names)  # pylint: disable=exec-used
  source = source.strip('\n') + '\n'
  filename = f'<cell {name}>'
  linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
  exec(compile(source, filename, 'exec'), names)  # pylint: disable=exec-used
  return names[name]


def sent_and_read(traces):
  """The traces as the worker writes them in a report, read back and fitted as the grader does."""
  arrays = {}

  def encode(value):
    if isinstance(value, np.ndarray):
      arrays[f'a{len(arrays)}'] = value
      return {'__array__': f'a{len(arrays) - 1}'}
    if isinstance(value, dict):
      return {key: encode(item) for key, item in value.items()}
    if isinstance(value, list):
      return [encode(item) for item in value]
    return value
  document = json.dumps({'traces': encode(traces)}).encode()
  packed = io.BytesIO()
  np.savez(packed, **arrays)
  body = b''.join(len(part).to_bytes(8, 'big') + part for part in (document, packed.getvalue()))
  return report_schema.fit(report_schema.read_report(body), [])['traces']


def grader_where(name, source):
  """The grader's where: line for ``source`` (None: none), without the case it was found on."""
  found = where_line.where_line(name, sent_and_read(
      check_inputs.learners_traces(name, in_a_sandbox_cell(name, source))))
  return None if found is None else found[1]


def notebook_wheres(name, source):
  _, printed = check(name, source)
  return [line.strip() for line in printed.splitlines() if line.strip().startswith('where: ')]


@pytest.mark.slow
@pytest.mark.parametrize('name', MISTAKES)
def test_the_grader_names_the_notebooks_where_line_at_the_changed_line(name):
  source, inner = MISTAKES[name]
  said = grader_where(name, source)
  assert said is not None and said.startswith(f'where: line {changed_line(source)} of {inner}, ')
  assert notebook_wheres(name, source) == [said]


@pytest.mark.slow
@pytest.mark.parametrize('name', check_inputs.TRACED)
def test_a_correct_answer_gets_no_where_line(name):
  assert grader_where(name, learner_variants.COURSE_ANSWERS[name]) is None


def test_the_learners_trace_holds_only_the_learners_frames():
  # dot_product_self_attention calls the package's DotProductAttention (the sandbox's earlier
  # answer): none of that function's values is in what is sent back.
  traces = check_inputs.learners_traces('dot_product_self_attention', in_a_sandbox_cell(
      'dot_product_self_attention', SHIFTED_MASK))
  assert traces and all(not trace['cut'] for trace in traces)
  assert {event[1] for trace in traces for event in trace['events']} == {
      'dot_product_self_attention'}


def test_a_function_not_from_a_cell_is_not_followed():
  # The package's own function (were it ever reachable) is never followed in the sandbox.
  assert check_inputs.learners_traces('DotProductAttention',
                                      learner_variants.course_namespace()['DotProductAttention']
                                      ) == []


def test_a_trace_past_its_bounds_is_sent_without_events():
  looping = '''
def DotProductAttention(query, key, value, mask):
  out = query
  for step in range(200):
    out = out + step
  return out
'''
  traces = check_inputs.learners_traces('DotProductAttention',
                                        in_a_sandbox_cell('DotProductAttention', looping))
  assert traces and all(trace['cut'] and not trace['events'] for trace in traces)
  assert all(trace['numbers'].size == 0 for trace in traces)
  assert where_line.where_line('DotProductAttention', sent_and_read(traces)) is None


def forged(**changes):
  trace = {'events': [[3, 'f', 'x', 0, 'float32', [2]]], 'numbers': np.zeros(2),
           'scalars': [[2, 'f', 'n', 3]], 'output': np.zeros(2), 'raised': False, 'cut': False,
           'outline': None}
  return dict(trace, **changes)


def _nested(depth):
  """An outline of Serials nested ``depth`` deep below its top."""
  return ['Serial', 2, 'f', [_nested(depth - 1)] if depth else [], '']


@pytest.mark.parametrize('trace', [
    forged(events=[[3, 'f', 'x', 0, 'float32', [3]]]),           # Numbers it does not hold.
    forged(events=[[3, 'f', 'x', 0, 'object', [2]]]),            # A dtype not sent.
    forged(events=[[3, 'f' * 101, 'x', 0, 'float32', [2]]]),     # A name too long.
    forged(events=[[3, 'f', 'x', 0, 'float32', [2]]] * (following.MOST_SENT_EVENTS + 1),
           numbers=np.zeros(2 * (following.MOST_SENT_EVENTS + 1))),
    forged(numbers=np.zeros(2, np.float32)),
    forged(output=np.zeros(following.MOST_SENT_NUMBERS + 1)),
    forged(scalars=[[2, 'f', 'n', 10 ** 30]]),
    forged(raised='no'),
    dict(forged(), extra=1),
    forged(outline=['D' * (following.MOST_NAME + 1), None, None, [], '']),  # A name too long.
    forged(outline=['Dropout', None, None, [], 'm' * (following.MOST_NAME + 1)]),  # A mode too.
    forged(outline=['Dense', None, None, []]),              # No mode.
    forged(outline=['Dense', 3, None, [], '']),             # A line with no function.
    forged(outline=['Dense', 0, 'f', [], '']),              # No such line.
    forged(outline=['Serial', None, None, [['Dense', None, None, [], '']] * (
        following.MOST_OUTLINE_LAYERS), '']),               # Too many layers.
    forged(outline=_nested(following.MOST_OUTLINE_DEPTH + 1)),
    forged(outline=['Serial', None, None, ['Dense'], '']),  # A sublayer that is no outline.
])
def test_a_forged_trace_is_dropped_and_costs_nothing_else(trace):
  assert report_schema.fit_traces([trace]) == []
  fitted = report_schema.fit({'cases': [], 'cell errors': ['x'], 'traces': [trace]}, [])
  assert fitted == {'cases': [], 'cell errors': ['x'], 'traces': []}


def test_a_trace_within_its_bounds_fits():
  assert len(report_schema.fit_traces([forged(), forged()])) == 2
  layer = forged(outline=['Serial', None, None, [['Dense_4', 3, 'f', [], ''],
                                                  _nested(following.MOST_OUTLINE_DEPTH - 1)],
                         " in mode 'train'"])
  assert report_schema.fit_traces([layer]) == [layer]
  assert report_schema.fit_traces([forged()] * (report_schema.MAX_TRACES + 1)) == []


@pytest.mark.parametrize('name', check_inputs.ARRAYS)
def test_the_inputs_followed_are_the_notebooks_checks_in_its_order(name, monkeypatch):
  seen = {}
  monkeypatch.setattr(checks_arrays, 'run_cases',
                      lambda cases, *args: len(seen.setdefault('cases', cases)) and 0)
  getattr(checks_arrays, f'test_{name}')(check_inputs.Capture())
  assert [case['name'] for case in seen['cases']] == check_inputs.case_names(name)
  notebook = [_arguments(judge.learners_call(case['call'])) for case in seen['cases']]
  followed = [_arguments(call) for call in check_inputs.calls(name, check_inputs.Capture())]
  assert len(notebook) == len(followed)
  for mine, theirs in zip(notebook, followed):
    assert len(mine) == len(theirs)
    for (args, kwargs), (their_args, their_kwargs) in zip(mine, theirs):
      assert set(kwargs) == set(their_kwargs) and len(args) == len(their_args)
      for got, wanted in [*zip(args, their_args),
                          *((kwargs[key], their_kwargs[key]) for key in kwargs)]:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(wanted))


@pytest.mark.parametrize('name', check_inputs.LAYERS)
def test_the_layers_followed_are_the_notebooks_checks_in_its_order(name, monkeypatch):
  seen = {}
  monkeypatch.setattr(checks_layers, 'run_cases',
                      lambda cases, *args: len(seen.setdefault('cases', cases)) and 0)
  function = learner_variants.course_namespace()[name]
  getattr(checks_layers, f'test_{name}')(function)
  notebook = {case['name']: _built(case['call']) for case in seen['cases']}
  names = check_inputs.case_names(name)
  # The notebook's cases that build a layer of the function, in its order: the printed
  # layers, then the runs.
  assert names == [case for case in notebook if case in names]
  assert len(names) >= 4 and check_inputs.told_by_trace(name) < set(names)
  for case, call in zip(names, check_inputs.calls(name, function)):
    assert call.func is function and notebook[case] == call.keywords, case


def _built(call):
  """The keyword arguments a layer case builds its layer with (a tree's, a run's), or None."""
  call = judge.learners_call(call)
  if isinstance(call, functools.partial):
    return call.keywords
  cells = dict(zip(call.__code__.co_freevars, (cell.cell_contents for cell in call.__closure__)))
  return cells['build'].keywords if 'build' in cells else None


def _arguments(call):
  """The arguments each spied call of a case got (the spy found in its call)."""
  spy = _spy_in(call)
  del spy.calls[:]
  call()
  return list(spy.calls)


def _spy_in(call):
  for part in (getattr(call, 'func', None), *getattr(call, 'args', ()),
               *(cell.cell_contents for cell in (getattr(call, '__closure__', None) or ())),
               *(getattr(call, '__defaults__', None) or ())):
    if isinstance(part, check_inputs.Capture):
      return part
  raise AssertionError(f'no spy in {call!r}')


def test_following_is_given_up_past_its_time_or_on_what_no_case_catches():
  function = in_a_sandbox_cell('DotProductAttention', UNSCALED_SCORES)
  assert len(check_inputs.learners_traces('DotProductAttention', function)) == len(
      check_inputs.calls('DotProductAttention', function))
  assert check_inputs.learners_traces('DotProductAttention', function,
                                      until=time.monotonic() - 1) == []
  interrupting = in_a_sandbox_cell('DotProductAttention', '''
def DotProductAttention(query, key, value, mask):
  raise KeyboardInterrupt
''')
  assert check_inputs.learners_traces('DotProductAttention', interrupting) == []
