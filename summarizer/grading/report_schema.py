"""What the sandbox sends back: read within bounds, checked against the package's results.

Everything in a report was written by a process where learner code ran, so
it is read as a stranger's file: a JSON document of at most
``MAX_DOCUMENT_BYTES`` and the arrays it names, uncompressed ``.npy``
entries of a zip whose headers are checked before a byte of data is
allocated (no pickle, no compressed entry, at most ``MAX_ARRAY_BYTES`` in
all). Then ``fit`` holds each case against the package's own results on
the same inputs: the same measures, of the same types, arrays of the same
rank, strings and lists at most a few times the expected size. What does
not fit costs its function, with the reason; it never reaches the judge.
"""

import io
import json
import re
import zipfile

import numpy as np

from summarizer.contract import following, recording

MAX_DOCUMENT_BYTES = 4 << 20  # A report's JSON: the package's largest is about 40 KB.
MAX_ARRAY_BYTES = 32 << 20    # Its arrays: the largest, Part 4's log-probabilities, is ~1 MB.
MAX_ARRAYS = 256
MAX_ITEM_BYTES = MAX_DOCUMENT_BYTES + MAX_ARRAY_BYTES + (1 << 16)  # What the worker passes on.
MAX_CASES = 64
GROWTH = 8        # A string or list may be this many times the expected one's length ...
SLACK = 4096      # ... plus this many characters or items.
# Feedback, not compared: cut to this many items, never refused (what a function prints).
CUT = {recording.PRINTED: 50}
_ARRAY_NAME = re.compile(r'a\d{1,4}\.npy')


class Unfit(ValueError):
  """A report, or a part of one, that the grader does not read."""


# --------------------------------------------------------------------------
# Reading the bytes.

def read_frame(stream, limit):
  size = stream.read(8)
  if len(size) < 8:
    raise EOFError('no more frames')
  size = int.from_bytes(size, 'big')
  if size > limit:
    raise Unfit(f'a frame of {size} bytes (at most {limit})')
  data = stream.read(size)
  if len(data) < size:
    raise Unfit('a frame cut short')
  return data


def read_report(body):
  """A child's report (JSON document, then the .npz of its arrays): a dict, arrays put back.

  Raises:
    Unfit: the bytes are not a report within the bounds.
  """
  stream = io.BytesIO(body)
  try:
    document = json.loads(read_frame(stream, MAX_DOCUMENT_BYTES))
    arrays = read_arrays(read_frame(stream, MAX_ARRAY_BYTES + (1 << 16)))
  except (ValueError, EOFError, RecursionError, UnicodeDecodeError, zipfile.BadZipFile) as error:
    raise Unfit(str(error)[:200] or type(error).__name__) from None
  if not isinstance(document, dict):
    raise Unfit(f'a report of type {type(document).__name__}')

  def put_back(value):
    if isinstance(value, dict):
      if set(value) == {'__array__'}:
        if value['__array__'] not in arrays:
          raise Unfit(f'an array it does not hold: {str(value["__array__"])[:40]}')
        return arrays[value['__array__']]
      return {k: put_back(v) for k, v in value.items()}
    if isinstance(value, list):
      return [put_back(v) for v in value]
    return value
  try:
    return put_back(document)
  except RecursionError:
    raise Unfit('nested too deeply') from None


def read_arrays(packed):
  """The arrays of an uncompressed .npz, each header checked before its data is read."""
  arrays, total = {}, 0
  with zipfile.ZipFile(io.BytesIO(packed)) as archive:
    entries = archive.infolist()
    if len(entries) > MAX_ARRAYS:
      raise Unfit(f'{len(entries)} arrays (at most {MAX_ARRAYS})')
    for entry in entries:
      if entry.compress_type != zipfile.ZIP_STORED or not _ARRAY_NAME.fullmatch(entry.filename):
        raise Unfit(f'an array entry {entry.filename[:40]!r} the worker does not write')
      total += entry.file_size
      if total > MAX_ARRAY_BYTES:
        raise Unfit(f'arrays of more than {MAX_ARRAY_BYTES} bytes')
      arrays[entry.filename[:-4]] = _read_npy(archive.read(entry))
  return arrays


def _read_npy(data):
  stream = io.BytesIO(data)
  version = np.lib.format.read_magic(stream)
  if version == (1, 0):
    shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
  elif version == (2, 0):
    shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
  else:
    raise Unfit(f'an array of format {version}')
  if dtype.hasobject or dtype.kind not in 'biuf':
    raise Unfit(f'an array of dtype {dtype}')
  count = int(np.prod(shape, dtype=np.int64)) if shape else 1
  body = data[stream.tell():]
  if count * dtype.itemsize != len(body):
    raise Unfit(f'an array of shape {shape} in {len(body)} bytes')
  values = np.frombuffer(body, dtype=dtype).reshape(shape, order='F' if fortran else 'C')
  return values.copy()


# --------------------------------------------------------------------------
# Fitting the package's results.

def fit(results, expected_cases):
  """The report's parts the judge reads, checked: {'cases', 'cell errors', 'traces'}.

  Raises:
    Unfit: naming the first part that does not fit.
  """
  cases = results.get('cases', [])
  errors = results.get('cell errors', [])
  if not isinstance(cases, list) or len(cases) > MAX_CASES:
    raise Unfit(f'its cases are not a list of at most {MAX_CASES}')
  if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
    raise Unfit('its cell errors are not a list of texts')
  wanted = {case['name']: case['measures'] for case in expected_cases}
  return {'cases': [_fit_case(case, wanted) for case in cases],
          'cell errors': [error[:2000] for error in errors[:20]],
          'traces': fit_traces(results.get('traces', []))}


# --------------------------------------------------------------------------
# The learner's traces (``following.sent_trace``): feedback for the where: line, never scored.

MAX_TRACES = 8
_DTYPES = frozenset({'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32',
                     'uint64', 'float16', 'float32', 'float64'})


def fit_traces(traces):
  """The traces that fit their bounds; [] when any does not (a where: line is then left out).

  A trace only ever adds a ``where:`` line: one that does not fit costs
  nothing but that line.
  """
  if not isinstance(traces, list) or len(traces) > MAX_TRACES:
    return []
  try:
    return traces if all(_trace_fits(trace) for trace in traces) else []
  except (TypeError, ValueError, OverflowError):
    return []


def _trace_fits(trace):
  if not isinstance(trace, dict) or set(trace) != {'events', 'numbers', 'scalars', 'output',
                                                   'raised', 'cut', 'outline'}:
    return False
  if trace['outline'] is not None and not _outline_fits(trace['outline']):
    return False
  events, numbers, scalars, output = (trace['events'], trace['numbers'], trace['scalars'],
                                      trace['output'])
  if not (isinstance(events, list) and isinstance(scalars, list)
          and len(events) <= following.MOST_SENT_EVENTS
          and len(scalars) <= following.MOST_SENT_EVENTS
          and isinstance(numbers, np.ndarray) and numbers.ndim == 1
          and numbers.dtype == np.float64 and numbers.size <= following.MOST_SENT_TOTAL
          and type(trace['raised']) is bool and type(trace['cut']) is bool):
    return False
  if output is not None and not (isinstance(output, np.ndarray) and output.ndim <= 8
                                 and output.size <= following.MOST_SENT_NUMBERS):
    return False
  sizes = [_event_size(event) for event in events]
  return (None not in sizes and sum(sizes) == numbers.size
          and all(_scalar_fits(scalar) for scalar in scalars))


def _outline_fits(outline):
  """Whether a layer's outline (``following.outline``) holds what it may, within its bounds."""
  left = [following.MOST_OUTLINE_LAYERS]

  def fits(node, depth):
    left[0] -= 1
    if left[0] < 0 or depth > following.MOST_OUTLINE_DEPTH:
      return False
    if not (isinstance(node, list) and len(node) == 5 and _name_fits(node[0])
            and isinstance(node[3], list) and _name_fits(node[4])):
      return False
    line, function = node[1], node[2]
    if not ((line is None and function is None)
            or (type(line) is int and 0 < line < 10 ** 6 and _name_fits(function))):
      return False
    return all(fits(child, depth + 1) for child in node[3])
  return fits(outline, 0)


def _event_size(event):
  """The number of numbers an event's array holds, or None when the event does not fit."""
  if not (isinstance(event, list) and len(event) == 6):
    return None
  line, function, name, frame, dtype, shape = event
  if not (type(line) is int and type(frame) is int and _name_fits(function)
          and (name is None or _name_fits(name)) and dtype in _DTYPES
          and isinstance(shape, list) and len(shape) <= 8
          and all(type(size) is int and 0 <= size <= following.MOST_SENT_NUMBERS
                  for size in shape)):
    return None
  size = int(np.prod(shape, dtype=np.int64))
  return size if size <= following.MOST_SENT_NUMBERS else None


def _scalar_fits(scalar):
  return (isinstance(scalar, list) and len(scalar) == 4 and type(scalar[0]) is int
          and _name_fits(scalar[1]) and _name_fits(scalar[2])
          and (type(scalar[3]) is float or type(scalar[3]) is int and abs(scalar[3]) < 1 << 62))


def _name_fits(name):
  return isinstance(name, str) and len(name) <= following.MOST_NAME


def _fit_case(case, wanted):
  if not isinstance(case, dict) or not isinstance(case.get('name'), str):
    raise Unfit('a case that is not a named record')
  name = case['name'][:500]
  error = case.get('error')
  if error is not None and not isinstance(error, str):
    raise Unfit(f'{name}: an error that is not a text')
  measures = case.get('measures')
  if not isinstance(measures, dict):
    raise Unfit(f'{name}: measures that are not a record')
  expected = wanted.get(name, {})
  kept = {}
  for what, value in measures.items():
    if what in CUT and isinstance(value, list):
      value = [str(line)[:200] for line in value[:CUT[what]]]
    if what in expected:
      problem = _misfit(value, expected[what])
      if problem:
        raise Unfit(f'{name}: {what}: {problem}')
      kept[what] = value
  return {'name': name, 'measures': kept, 'error': error and error[:2000]}


def _misfit(got, expected, depth=0):
  """Why ``got`` does not fit the shape of ``expected`` (None when it does).

  A container (array, list, record) must be where one is expected and not
  much larger; a plain value (None, a number, a short text) fits anywhere,
  as a wrong answer the judge then says is wrong.
  """
  if depth > 8:
    return 'nested too deeply'
  if got is None or isinstance(got, (bool, int, float)):
    return None
  if isinstance(got, str):
    room = GROWTH * len(expected if isinstance(expected, str) else '') + SLACK
    return None if len(got) <= room else f'a text of {len(got)} characters'
  if isinstance(got, np.ndarray):
    if not isinstance(expected, np.ndarray):
      return 'an array where none belongs'
    if got.ndim != expected.ndim or got.size > GROWTH * expected.size + SLACK:
      return f'an array of shape {got.shape} where {expected.shape} belongs'
    return None
  if isinstance(got, list):
    if not isinstance(expected, list):
      return 'a list where none belongs'
    if len(got) > GROWTH * len(expected) + SLACK // 64:
      return f'a list of {len(got)} items where {len(expected)} belong'
    for k, item in enumerate(got):
      problem = _misfit(item, expected[min(k, len(expected) - 1)] if expected else '',
                        depth + 1)
      if problem:
        return f'item {k}: {problem}'
    return None
  if isinstance(got, dict):
    if not isinstance(expected, dict) or len(got) > len(expected) + 16:
      return 'a record where none belongs'
    for key, item in got.items():
      problem = _misfit(item, expected.get(key, ''), depth + 1)
      if problem:
        return f'{key}: {problem}'
    return None
  return f'a {type(got).__name__}'
