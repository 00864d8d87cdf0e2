"""What the sandbox sends back is read within bounds and fitted to the package's results.

Every report here is forged, as learner code in the sandbox could forge it
(it can write its pipe): none may crash the grader, grow it far, or reach
the judge unchecked.
"""

import io
import json
import resource
import time
import zipfile

import numpy as np
import pytest

from summarizer.grading import grader, report_schema, sandbox


def frame(data):
  return len(data).to_bytes(8, 'big') + data


def report(document, arrays=None, compress=False):
  """A child's report: its JSON document, then an .npz of its arrays."""
  packed = io.BytesIO()
  if compress:
    np.savez_compressed(packed, **(arrays or {}))
  else:
    np.savez(packed, **(arrays or {}))
  return frame(json.dumps(document).encode()) + frame(packed.getvalue())


def item(body, item_id='0/next_symbol'):
  header = json.dumps({'id': item_id, 'status': {'exit': 0}, 'size': len(body)}).encode()
  return frame(header) + body


EXPECTED = [{'name': 'case', 'error': None,
             'measures': {'output': np.zeros((2, 3), np.float32), 'tree': 'Serial[\n  Dense\n]',
                          'shapes': [[2, 3], [3]], 'steps': 10}}]


def results_of(measures, name='case'):
  return {'cases': [{'name': name, 'measures': measures, 'error': None}], 'cell errors': []}


def test_a_report_that_fits_is_read_whole_arrays_put_back():
  body = report(results_of({'output': {'__array__': 'a0'}, 'tree': 'Serial[]',
                            'shapes': [[2, 3]], 'steps': 10, 'extra': 'dropped'}),
                {'a0': np.ones((2, 3), np.float32)})
  entry = sandbox.read_frames(item(body))['0/next_symbol']
  fitted = report_schema.fit(entry['results'], EXPECTED)
  measures = fitted['cases'][0]['measures']
  assert np.array_equal(measures['output'], np.ones((2, 3)))
  assert measures['steps'] == 10 and 'extra' not in measures


@pytest.mark.parametrize('document', [[1, 2], 'All tests passed', 7, None])
def test_a_report_of_another_type_is_unfit_not_a_crash(document):
  entry = sandbox.read_frames(item(report(document)))['0/next_symbol']
  assert entry['results'] is None and 'report of type' in entry['unfit']


@pytest.mark.slow
def test_a_compressed_array_is_refused_before_it_is_unpacked():
  # About 1 MB of zip that unpacks to 1 GB: refused by its entry's header.
  packed = io.BytesIO()
  with zipfile.ZipFile(packed, 'w', zipfile.ZIP_DEFLATED) as archive:
    with archive.open('a0.npy', 'w', force_zip64=True) as entry:
      header = io.BytesIO()
      np.lib.format.write_array_header_1_0(
          header, {'descr': '<f4', 'fortran_order': False, 'shape': (1 << 28,)})
      entry.write(header.getvalue())
      zeros = bytes(1 << 22)
      for _ in range(256):
        entry.write(zeros)
  body = frame(json.dumps(results_of({'output': {'__array__': 'a0'}})).encode())
  body += frame(packed.getvalue())
  grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  started = time.monotonic()
  entry = sandbox.read_frames(item(body))['0/next_symbol']
  assert 'does not write' in entry['unfit']
  assert time.monotonic() - started < 2
  assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown < 100_000  # KB


def test_an_array_whose_header_claims_more_than_it_holds_is_refused():
  packed = io.BytesIO()
  with zipfile.ZipFile(packed, 'w', zipfile.ZIP_STORED) as archive:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {'descr': '<f8', 'fortran_order': False, 'shape': (1 << 33,)})
    archive.writestr('a0.npy', header.getvalue() + bytes(64))
  body = frame(json.dumps(results_of({})).encode()) + frame(packed.getvalue())
  assert 'an array of shape' in sandbox.read_frames(item(body))['0/next_symbol']['unfit']


def test_an_array_of_objects_is_refused_unread():
  # np.savez pickles an array of objects: its header names dtype object.
  body = report(results_of({}), {'a0': np.array([{'x': 1}], dtype=object)})
  assert 'dtype object' in sandbox.read_frames(item(body))['0/next_symbol']['unfit']


@pytest.mark.parametrize('measures, reason', [
    ({'tree': 'Serial[\n' * 200_000}, 'a text of'),
    ({'shapes': [[1, 2]] * 100_000}, 'a list of 100000 items'),
    ({'output': [[0.0] * 3] * 2}, 'a list where none belongs'),
    ({'steps': {'a': 1}}, 'a record where none belongs'),
    ({'output': np.zeros((2, 3, 4))}, 'an array of shape (2, 3, 4)'),
    ({'shapes': [[[[[[[[[[[1]]]]]]]]]]]}, 'item 0: item 0: a list where none belongs'),
])
def test_what_does_not_fit_the_packages_results_is_named(measures, reason):
  with pytest.raises(report_schema.Unfit, match=reason.replace('(', r'\(').replace(')', r'\)')):
    report_schema.fit(results_of(measures), EXPECTED)


def test_a_wrong_plain_value_fits_and_is_left_to_the_judge():
  fitted = report_schema.fit(results_of({'steps': 'ten', 'output': None}), EXPECTED)
  assert fitted['cases'][0]['measures'] == {'steps': 'ten', 'output': None}


def test_what_a_function_prints_is_cut_not_refused():
  expected = [{'name': 'case', 'error': None, 'measures': {'what it prints, line by line': []}}]
  printed = ['line'] * 10_000
  fitted = report_schema.fit(results_of({'what it prints, line by line': printed}), expected)
  assert len(fitted['cases'][0]['measures']['what it prints, line by line']) == 50


def test_an_unfit_report_costs_its_function_with_the_reason():
  ran = {'0/next_symbol': {'status': {'exit': 0}, 'results': results_of({'x': 1}, name=7)}}
  expected = {'next_symbol': EXPECTED}
  result = grader.fitted(ran, expected)['0/next_symbol']
  verdict = grader.function_verdict('next_symbol', result, EXPECTED)
  assert verdict.points == 0
  assert verdict.lines == ["its report does not fit what the grader reads (a case that is not "
                           "a named record): nothing in it is graded"]


def test_bytes_past_a_reports_bound_are_not_read():
  huge = frame(b'{' * 64) + frame(b'')
  header = json.dumps({'id': '0/x', 'status': {}, 'size': 1 << 40}).encode()
  assert sandbox.read_frames(frame(header) + huge) == {}
