"""Every learner's laptop: the learner's path without what Windows lacks; the grader off Linux.

CI runs on Linux, so what a Windows machine lacks is hidden here: each
command runs in a fresh Python whose ``sitecustomize`` (``HIDE``, on
``PYTHONPATH``, so every Python the command starts is the same) refuses
the package ``fcntl``, ``resource``, ``pwd`` and ``termios`` (POSIX's: a
library imports them on its POSIX branch only, and takes another on
Windows), refuses everyone ``tensorflow_text`` and ``array_record`` (no
Windows wheel; array_record has no macOS one either), and removes
``os.O_NOFOLLOW`` and ``os.O_NONBLOCK``. Then the learner's path, as the README gives it:
summarise the sample (the same summary as without hiding), write the
exercises and run the package's checks on the package's own answers, a
tiny training run, an evaluation of its model, the explorer's page.

What this cannot show (a Windows path's drive and backslashes, Windows'
file locking and console, macOS itself) only a user on that platform can
confirm: summarizer/README.md, "Python versions and CI".

The grader refuses anywhere but Linux, in one line, before any work: its
platform faked (``sys.platform``, ``platform.system``).
"""

import errno
import io
import json
import os
import platform
import subprocess
import sys
import textwrap

import nbformat
import pytest

from summarizer import exercises, files
from summarizer.contract import handout
from summarizer.config import DATA_DIR
from summarizer.errors import SummarizerError, utf8_streams
from summarizer.grading import grader, nbgrader_plugin
from summarizer.runs import locks

# Imported by every Python on PYTHONPATH's folder: what Windows lacks, gone.
HIDE = textwrap.dedent('''
    """Hides what Windows lacks (tests/test_platforms.py)."""
    import os
    import sys

    # No wheel for Windows: hidden from every importer.
    NOT_INSTALLED = {'tensorflow_text', 'array_record'}
    # POSIX's: hidden from the package (and a script or -c). A library imports them only
    # on its POSIX branch (psutil's Linux module imports resource); on Windows it takes
    # another, which its Windows wheel is tested on.
    POSIX_ONLY = {'fcntl', 'resource', 'pwd', 'termios'}


    def importer():
      """The module whose code is importing (the first frame outside importlib)."""
      frame = sys._getframe(2)
      while frame is not None and (frame.f_code.co_filename.startswith('<frozen')
                                   or '/importlib/' in frame.f_code.co_filename):
        frame = frame.f_back
      return frame.f_globals.get('__name__') or '' if frame is not None else ''


    class HideWhatWindowsLacks:
      def find_spec(self, name, path=None, target=None):
        top = name.partition('.')[0]
        if top in NOT_INSTALLED or (top in POSIX_ONLY and importer().partition('.')[0] in (
            'summarizer', '__main__', '')):
          raise ModuleNotFoundError(f'No module named {name!r} (hidden)', name=name)
        return None


    sys.meta_path.insert(0, HideWhatWindowsLacks())
    for _name in [n for n in sys.modules if n.partition('.')[0] in NOT_INSTALLED | POSIX_ONLY]:
      del sys.modules[_name]
    for _flag in ('O_NOFOLLOW', 'O_NONBLOCK'):
      if hasattr(os, _flag):
        delattr(os, _flag)
''')
TIMEOUT = 900  # Seconds for any one command: the checks took over 11 minutes at a load of 11.
SAMPLE = os.path.join(DATA_DIR, 'samples', 'sport.txt')

# The package's own answers through the notebook's checks, as the notebook calls them.
CHECK_ANSWERS = textwrap.dedent('''
    import io, contextlib
    from summarizer import text
    from summarizer.assignment import checks
    from summarizer.contract import handout
    names = {'tokenize': text.course_tokenize, 'detokenize': text.course_detokenize}
    exec(handout.setup_source(), names)
    for name in handout.GRADED:
      exec(compile(handout.solution_source(name), name, 'exec'), names)
    for name in handout.GRADED:
      arguments = [names[a] for a in (name, *handout.CHECK_ARGUMENTS.get(name, ()))]
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        failed = getattr(checks, f'test_{name}')(*arguments)
      print(name, failed, printed.getvalue().strip().splitlines()[-1])
''')


@pytest.fixture(scope='module')
def hidden(tmp_path_factory):
  """The environment of a Python without what Windows lacks (its own compilation cache)."""
  folder = tmp_path_factory.mktemp('hide')
  (folder / 'sitecustomize.py').write_text(HIDE, encoding='utf-8')
  return dict(os.environ, PYTHONPATH=str(folder),
              SUMMARIZER_COMPILATION_CACHE=str(folder / 'jax-cache'))


def run(arguments, env, cwd):
  """Runs ``python ARGUMENTS``; returns its standard output, or fails with both outputs."""
  done = subprocess.run([sys.executable, *arguments], cwd=cwd, env=env, capture_output=True,
                        text=True, encoding='utf-8', timeout=TIMEOUT, check=False)
  assert done.returncode == 0, f'{arguments} exited {done.returncode}:\n{done.stderr[-3000:]}'
  return done.stdout


@pytest.mark.slow
def test_the_modules_windows_lacks_are_hidden(hidden, tmp_path):
  probe = textwrap.dedent('''
      import os
      for name in ('fcntl', 'resource', 'pwd', 'termios', 'tensorflow_text', 'array_record'):
        try:
          __import__(name)
          print(name, 'imported')
        except ImportError:
          pass
      print(hasattr(os, 'O_NOFOLLOW'), hasattr(os, 'O_NONBLOCK'))
  ''')
  assert run(['-c', probe], hidden, tmp_path) == 'False False\n'


@pytest.mark.slow
def test_summary_exercises_and_checks_without_what_windows_lacks(hidden, tmp_path):
  summary = run(['-m', 'summarizer', SAMPLE], hidden, tmp_path)
  assert summary == run(['-m', 'summarizer', SAMPLE], dict(os.environ), tmp_path)
  run(['-m', 'summarizer.exercises', '--out', 'mine.ipynb'], hidden, tmp_path)
  notebook = nbformat.read(tmp_path / 'mine.ipynb', as_version=4)
  graded = [cell for cell in notebook.cells
            if cell.metadata.get('nbgrader', {}).get('solution')]
  assert len(graded) == len(handout.GRADED)
  lines = run(['-c', CHECK_ANSWERS], hidden, tmp_path).splitlines()
  assert [line.split(' ', 2)[:2] for line in lines] == [[n, '0'] for n in handout.GRADED]
  assert all(line.endswith('All tests passed') for line in lines), lines


@pytest.mark.slow
def test_training_evaluation_and_the_explorer_without_what_windows_lacks(hidden, tmp_path):
  out = run(['-m', 'summarizer.train', '--output-dir', 'run', '--preset', 'tiny',
             '--max-steps', '3', '--eval-steps', '3', '--eval-batches', '1', '--no-progress',
             '--calibration-articles', '0', '--verdict-stories', '0'], hidden, tmp_path)
  assert 'from step 0 to 3' in out
  assert (tmp_path / 'run' / 'config.json').is_file()
  assert not (tmp_path / 'run' / '.summarizer.lock').exists()  # Released and removed.
  run(['-m', 'summarizer.evaluate', '--model', 'run', '--limit', '4', '--output-dir', 'eval'],
      hidden, tmp_path)
  with open(tmp_path / 'eval' / 'eval_results.json', encoding='utf-8') as f:
    assert json.load(f)
  court = os.path.join(DATA_DIR, 'samples', 'court.txt')
  run(['-m', 'summarizer', court, '--explain', 'court.html'], hidden, tmp_path)
  assert '</html>' in (tmp_path / 'court.html').read_text(encoding='utf-8')


def not_linux(monkeypatch):
  monkeypatch.setattr(sys, 'platform', 'win32')
  monkeypatch.setattr(platform, 'system', lambda: 'Windows')


def test_grading_off_linux_is_refused_in_one_line_before_any_work(tmp_path, monkeypatch,
                                                                 capsys):
  notebook = tmp_path / 'submitted.ipynb'
  notebook.write_text('not a notebook', encoding='utf-8')
  monkeypatch.setattr(grader, 'learner_cells', None)  # Any work would fail otherwise.
  not_linux(monkeypatch)
  assert exercises.main(['--grade', str(notebook)]) == 2
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: grading runs on Linux only')
  assert 'not on Windows' in err and 'WSL2' in err


def test_the_nbgrader_plugin_refuses_off_linux(monkeypatch):
  monkeypatch.setattr(grader, 'grade', None)
  not_linux(monkeypatch)
  with pytest.raises(SummarizerError, match='^grading runs on Linux only .* WSL2 on Windows$'):
    nbgrader_plugin.SandboxedGrades().preprocess(nbformat.v4.new_notebook(), {})


# What Windows lacks, faked in this process: the package's own ways around it.

def test_without_o_nofollow_a_link_is_refused_before_and_after_the_open(tmp_path, monkeypatch):
  monkeypatch.setattr(files, 'NO_FOLLOW', 0)
  target = tmp_path / 'thesis.md'
  target.write_text('my thesis\n', encoding='utf-8')
  link = tmp_path / 'train.log'
  link.symlink_to(target)
  flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
  with pytest.raises(OSError) as refused:
    files.open_unfollowed(str(link), flags)
  assert refused.value.errno == errno.ELOOP
  # A link put there after the check (the check fooled here) is found once open.
  monkeypatch.setattr(os.path, 'islink', lambda path: False)
  with pytest.raises(OSError) as refused:
    files.open_unfollowed(str(link), flags)
  assert refused.value.errno == errno.ELOOP
  assert target.read_text(encoding='utf-8') == 'my thesis\n'
  fd = files.open_unfollowed(str(tmp_path / 'new.log'), flags)  # A file of its own: opened.
  os.close(fd)
  assert (tmp_path / 'new.log').is_file()


def test_a_held_lock_names_its_holder_where_its_first_byte_cannot_be_read(tmp_path,
                                                                         monkeypatch):
  holder = subprocess.Popen([sys.executable, '-c', textwrap.dedent('''
      import sys
      from summarizer.runs import locks
      with locks.locked(sys.argv[1]):
        print('held', flush=True)
        sys.stdin.read()
  '''), str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
  try:
    assert holder.stdout.readline() == 'held\n'
    read = os.read

    def windows_read(fd, size):  # Windows: the holder's lock on byte 0 refuses other readers.
      if os.lseek(fd, 0, os.SEEK_CUR) == 0:
        raise PermissionError(errno.EACCES, 'locked')
      return read(fd, size)
    monkeypatch.setattr(locks.os, 'read', windows_read)
    with pytest.raises(SummarizerError, match=f'is in use by process {holder.pid} \\(python'):
      with locks.locked(str(tmp_path)):
        pass
  finally:
    holder.stdin.close()
    holder.wait(timeout=60)


def test_a_summary_in_a_console_code_page_is_written_as_utf_8(monkeypatch):
  raw = io.BytesIO()
  console = io.TextIOWrapper(raw, encoding='cp1252')
  monkeypatch.setattr(sys, 'stdout', console)
  utf8_streams()
  print('Zelvalon lose 6-1 → Keltalex, 40,443 fans in Garzeldale ✓')
  console.flush()
  assert raw.getvalue().decode('utf-8') == (
      'Zelvalon lose 6-1 → Keltalex, 40,443 fans in Garzeldale ✓\n')
