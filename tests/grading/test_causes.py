"""A verdict's cause as the class report groups it: the same mistake, the same key, whatever was drawn."""

from summarizer.grading import causes

RAN = {'status': {'exit': 0}, 'results': {'cases': []}}


def unscaled(shape, value):
  return [f'Failed: DotProductAttention, q k v {shape}: output',
          f'    expected [[{value} ...]]', '    got [[0.1 ...]]',
          '    why: the scores were not scaled: divide the dot products by sqrt(d)']


def test_a_pass_has_no_key():
  assert causes.cause_of([], RAN) == {'status': causes.PASSED, 'key': '', 'label': '',
                                      'measure': '', 'why': '', 'line': ''}


def test_the_same_measure_and_why_give_one_key_whatever_the_inputs_drawn():
  first = causes.cause_of(unscaled('(2, 3, 4)', 0.25), RAN)
  again = causes.cause_of(unscaled('(3, 5, 2)', 0.75), RAN)
  assert first['status'] == causes.FAILED and first['measure'] == 'output'
  assert first['why'].startswith('the scores were not scaled')
  assert first['key'] == again['key']
  other = causes.cause_of(unscaled('(2, 3, 4)', 0.25)[:-1] + ['    why: the mask was used '
                                                              'the wrong way round'], RAN)
  assert other['key'] != first['key']


def test_a_raised_error_keys_on_its_type_and_message_and_names_the_learners_line():
  def raised(line, code):
    return [f'Failed: next_symbol on 7 tokens: it raised IndexError: index 9 is out of bounds '
            f'(in next_symbol, line {line}: {code})']
  one = causes.cause_of(raised(4, 'return x[9]'), RAN)
  two = causes.cause_of(raised(6, 'log = x[9]'), RAN)
  assert one['key'] == two['key'] == 'it raised IndexError: index # is out of bounds'
  assert one['line'] == 'in next_symbol, line 4: return x[9]'
  assert two['line'] == 'in next_symbol, line 6: log = x[9]'


def test_a_cell_error_comes_before_the_cases_it_spoils():
  lines = ['your cell: cell 12: NameError: name \'jnpp\' is not defined (in <module>, line 2: '
           'jnpp.ones(3))', 'Failed: DotProductAttention, q k v (2, 3, 4): output']
  found = causes.cause_of(lines, RAN)
  assert found['key'] == "a cell of their own raised NameError: name 'jnpp' is not defined"
  assert found['line'] == 'in <module>, line 2: jnpp.ones(3)'


def test_a_case_named_with_a_colon_is_not_read_as_its_measure():
  name = 'Part 4: your TransformerLM with the shipped weights'
  lines = [f'Failed: {name}: log-probabilities', '    expected ...',
           '    why: these functions fail their own checks: DotProductAttention']
  found = causes.cause_of(lines, RAN, [name])
  assert found['measure'] == 'log-probabilities'
  assert found['why'] == 'these functions fail their own checks: DotProductAttention'


def test_limits_and_runs_never_made_are_no_mistake():
  assert causes.cause_of(['not run ...'], None)['status'] == causes.NOT_RUN
  stopped = {'status': {'timed out': True, 'seconds': 30}, 'results': None}
  found = causes.cause_of(['stopped after 30 s'], stopped)
  assert found['status'] == causes.STOPPED and not found['key']


def test_a_crash_keys_on_how_it_ended():
  crashed = {'status': {'exit': 3}, 'results': None}
  found = causes.cause_of(['crashed (exit status 3; ...)'], crashed)
  assert found['status'] == causes.FAILED and found['key'] == 'crashed: exit code #'
