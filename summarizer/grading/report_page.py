"""The class report written: one offline HTML page, its pictures inside, and a CSV.

``write(report, out)`` writes ``out/class_report.html`` (the score
distribution and each exercise's pass rate as matplotlib pictures, embedded
as base64 PNG; then each exercise, the most failed first, with its groups of
students who failed for one cause: how many, who, one representative
feedback and the learner's line it names; then, apart, what is no mistake)
and ``out/class_report.csv`` (a row a student and exercise). The page needs
no network and no script. ``report_course`` is the command's work: read, then write.
"""

import base64
import csv
import html
import io
import os

from summarizer.contract.handout import ASSIGNMENT
from summarizer.errors import SummarizerError
from summarizer.files import check_writable
from summarizer.grading import causes, class_report
from summarizer.grading.class_report import LOST, feedback_excerpt, not_mistakes

HTML_NAME, CSV_NAME = 'class_report.html', 'class_report.csv'
LARGEST = 8  # The groups listed first, the class's largest.
COLUMNS = ('student', 'exercise', 'title', 'points', 'max_points', 'status', 'group', 'line')
# The pass-rate picture's colours: passed, lost (a mistake, a limit), neither (waiting, absent).
PASSED_COLOUR, LOST_COLOUR, OTHER_COLOUR = '#3a8a3a', '#c0392b', '#b0b0b0'
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { font-size: 1.2em; margin: 1.6em 0 .3em; }
.summary { color: #444; margin: 0 0 .8em; }
.pictures img { max-width: 49%; height: auto; vertical-align: top; }
.group { border-left: 4px solid #c0392b; padding: .2em .8em; margin: .6em 0; }
.group .count { font-weight: bold; } .names { color: #333; }
pre { background: #f5f5f5; padding: .5em; overflow-x: auto; font-size: 13px; margin: .3em 0; }
.line { font-family: monospace; background: #fff6d5; padding: 0 .3em; }
.apart { border-left: 4px solid #b0b0b0; padding: .2em .8em; margin: .6em 0; }
.passed { color: #3a8a3a; } .largest li { margin: .15em 0; }
"""


def report_course(course, out, assignment=ASSIGNMENT):
  """Reads the course and writes the page and the CSV into ``out``; returns the line to print.

  Raises:
    SummarizerError: a course that cannot be read, or with no graded submission.
  """
  class_report.database(course)
  for name in (HTML_NAME, CSV_NAME):  # Before any reading.
    check_writable(os.path.join(out, name))
  report = class_report.read_course(course, assignment)
  if not report.totals:
    raise SummarizerError(f'{course}: no graded submission of {assignment} in the gradebook '
                          '(run nbgrader autograde first)')
  page, table = write(report, out)
  return (f'read {len(report.names)} students, {len(report.totals)} graded submissions and '
          f'{len(report.exercises)} exercises of {assignment} in {course}; wrote {page} and '
          f'{table}')


def write(report, out):
  """Writes the page and the CSV into the folder ``out``; returns their paths."""
  os.makedirs(out, exist_ok=True)
  page, table = os.path.join(out, HTML_NAME), os.path.join(out, CSV_NAME)
  _replace(page, page_html(report), newline=None)
  _replace(table, csv_text(report), newline='')
  return page, table


def _replace(path, text, newline):
  """Writes ``path`` whole or not at all: a crash leaves the earlier report as it was."""
  partial = path + '.partial'
  with open(partial, 'w', encoding='utf-8', newline=newline) as f:
    f.write(text)
  os.replace(partial, path)


def csv_text(report):
  """The CSV: one row a student and exercise (``COLUMNS``); points empty where none is given."""
  titles = {name: title for name, title, _ in report.exercises}
  buffer = io.StringIO()
  writer = csv.writer(buffer, lineterminator='\n')
  writer.writerow(COLUMNS)
  for mark in report.marks:
    writer.writerow([mark.student, mark.exercise, titles.get(mark.exercise, mark.exercise),
                     '' if mark.points is None else f'{mark.points:g}', f'{mark.max_points:g}',
                     mark.status, mark.group, mark.line])
  return buffer.getvalue()


def page_html(report):
  """The whole page as one string."""
  ordered = sorted(report.exercises, key=lambda each: -report.failed(each[0]))
  body = [_head(report), _pictures(report), _largest(report)]
  body += [_exercise(report, name, title) for name, title, _ in ordered
           if report.failed(name) or not_mistakes(report, name)]
  clean = [title for name, title, _ in report.exercises
           if not report.failed(name) and not not_mistakes(report, name)]
  if clean:
    body.append(f'<h2>Passed by every graded student</h2><p class="passed">'
                f'{_text(", ".join(clean))}</p>')
  body.append(_absent(report))
  return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
          f'<title>Class report: {_text(report.assignment)}</title><style>{STYLE}</style>'
          f'</head><body>\n' + '\n'.join(body) + '\n</body></html>\n')


def _text(value):
  return html.escape(str(value), quote=True)


def _head(report):
  totals = sorted(report.totals.values())
  middle = totals[len(totals) // 2] if totals else 0
  lost = sorted(((report.failed(name), title) for name, title, _ in report.exercises),
                key=lambda each: -each[0])
  worst = ', '.join(f'{title} ({count} failed)' for count, title in lost[:3] if count)
  return (f'<h1>Class report: {_text(report.assignment)}</h1>'
          f'<p class="summary">{len(report.names)} students, {len(report.totals)} graded '
          f'submissions, {len(report.exercises)} exercises ({report.max_total:g} points). '
          f'Median score {middle:g} / {report.max_total:g}. '
          f'Most failed: {_text(worst or "none")}.</p>')


def _largest(report, keep=LARGEST):
  """The largest groups of the whole class, one line each, linked to their exercise."""
  order = {name: index for index, (name, _, _) in enumerate(report.exercises)}
  groups = sorted((group for groups in report.groups.values() for group in groups),
                  key=lambda group: (-len(group.marks), order[group.exercise]))[:keep]
  if not groups:
    return '<p>No student failed an exercise for a cause the grader names.</p>'
  titles = {name: title for name, title, _ in report.exercises}
  lines = [f'<li><a href="#{_text(group.exercise)}">{_text(titles[group.exercise])}</a>: '
           f'<b>{len(group.marks)}</b> ({_text(", ".join(group.students))}): '
           f'{_text(group.marks[0].label[:160])}</li>' for group in groups]
  return '<h2>The largest groups</h2><ol class="largest">' + ''.join(lines) + '</ol>'


def _pictures(report):
  scores, rates = pictures(report)
  return (f'<div class="pictures"><img id="scores" alt="score distribution" src="{scores}">'
          f'<img id="pass-rates" alt="pass rate per exercise" src="{rates}"></div>')


def _exercise(report, name, title):
  """An exercise's section: its groups, then what is no mistake."""
  marks = report.of(name)
  graded = [mark for mark in marks if mark.points is not None or mark.status in LOST]
  passed = sum(mark.status == causes.PASSED for mark in marks)
  parts = [f'<h2 id="{_text(name)}">{_text(title)}: {report.failed(name)} failed, '
           f'{passed} passed of {len(graded)} graded</h2>']
  for group in report.groups.get(name, []):
    parts.append(_group(report, group))
  for status, apart in sorted(not_mistakes(report, name).items()):
    who = '; '.join(_who(report, mark) for mark in apart)
    parts.append(f'<div class="apart"><b>{_text(status)}</b> ({len(apart)}): {who}</div>')
  return '\n'.join(parts)


def _who(report, mark):
  reason = f': {mark.reason}' if mark.reason else ''
  return _text(report.names.get(mark.student, mark.student) + reason[:300])


def _group(report, group):
  first = group.marks[0]
  who = _text(report.names.get(first.student, first.student))
  line = (f'<p>the learner\'s line: <span class="line">{_text(first.line)}</span></p>'
          if first.line else '<p>the feedback names no line of the learner\'s</p>')
  if first.code and not first.line:
    line += (f'<details><summary>{who}\'s {_text(first.exercise)} cell</summary>'
             f'<pre>{_text(first.code)}</pre></details>')
  names = ', '.join(report.names.get(student, student) for student in group.students)
  return (f'<div class="group"><p><span class="count">{len(group.marks)} '
          f'student{"s" if len(group.marks) != 1 else ""}</span>: {_text(first.label)}</p>'
          f'<p class="names">{_text(names)}</p>{line}'
          f'<details open><summary>{who}\'s feedback</summary><pre>{_text(feedback_excerpt(first.text))}</pre></details>'
          '</div>')


def _absent(report):
  """The students with nothing graded, as what they are."""
  absent = {}
  for mark in report.marks:
    if mark.points is None and mark.student not in report.totals:
      absent.setdefault(mark.status, set()).add(mark.student)
  if not absent:
    return ''
  lines = [f'<li>{_text(status)}: {_text(", ".join(sorted(report.names[s] for s in who)))}</li>'
           for status, who in sorted(absent.items())]
  return '<h2>Nothing graded</h2><ul>' + ''.join(lines) + '</ul>'


def pictures(report):
  """(the score distribution, the pass rate per exercise) as data: URLs of PNGs."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  from matplotlib import pyplot  # pylint: disable=g-import-not-at-top
  with pyplot.rc_context({'font.size': 9}):
    return _score_picture(report, pyplot), _rate_picture(report, pyplot)


def _png(figure, pyplot):
  buffer = io.BytesIO()
  figure.savefig(buffer, format='png', dpi=100, bbox_inches='tight')
  pyplot.close(figure)
  return 'data:image/png;base64,' + base64.b64encode(buffer.getvalue()).decode('ascii')


def _score_picture(report, pyplot):
  figure, axes = pyplot.subplots(figsize=(5.6, 3.4))
  top = int(report.max_total)
  axes.hist(list(report.totals.values()), bins=[x - 0.5 for x in range(top + 2)],
            color='#4a78b0', edgecolor='white')
  axes.set_xlim(-0.5, top + 0.5)
  axes.set_xticks(range(0, top + 1, 2 if top > 10 else 1))
  axes.set_xlabel(f'total points (of {report.max_total:g})')
  axes.set_ylabel('students')
  axes.yaxis.get_major_locator().set_params(integer=True)
  axes.set_title(f'Score distribution ({len(report.totals)} graded submissions)')
  return _png(figure, pyplot)


def _rate_picture(report, pyplot):
  names = [name for name, _, _ in report.exercises][::-1]  # The first exercise at the top.
  counts = [(sum(m.status == causes.PASSED for m in report.of(name)), report.failed(name),
             len(report.of(name))) for name in names]
  labels = [title.replace('Exercise ', 'Ex. ') for _, title, _ in report.exercises][::-1]
  passed = [each[0] for each in counts]
  lost = [each[1] for each in counts]
  other = [each[2] - each[0] - each[1] for each in counts]
  figure, axes = pyplot.subplots(figsize=(5.6, 3.4))
  axes.barh(labels, passed, color=PASSED_COLOUR, label='passed')
  axes.barh(labels, lost, left=passed, color=LOST_COLOUR, label='failed')
  axes.barh(labels, other, left=[a + b for a, b in zip(passed, lost)], color=OTHER_COLOUR,
            label='neither (by hand, not graded)')
  axes.set_xlabel('students')
  axes.xaxis.get_major_locator().set_params(integer=True)
  axes.set_title('Pass rate per exercise')
  axes.legend(loc='upper center', bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=7,
              frameon=False)
  return _png(figure, pyplot)
