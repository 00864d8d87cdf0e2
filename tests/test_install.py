"""The package installed as any package is: from a wheel, not from the checkout.

``pip install .``, ``pip install git+URL`` and ``pip install WHEEL`` all build
the same wheel with setuptools (pip builds one from the folder, or from its
clone of the repository, and installs it), so these tests build it and
install it:

* ``test_wheel_holds_the_package_and_its_data``: the wheel built from the
  files a commit of this working tree would hold (git's tracked files and the
  untracked ones it does not ignore, copied to a temporary folder: what a
  clone gives ``pip install git+URL``, with no build leftovers or run outputs)
  holds every module of the checkout, the shipped model, the vocabularies,
  the sample articles, notebook 03 and the explorer's page, and no tests.
* ``test_pip_install_git_url_builds_the_same_wheel``: ``pip wheel
  git+file:///...`` of a throwaway repository that commits that copy (pip's
  own clone and build, as ``pip install git+URL`` does) gives the same files.
* ``test_installed_package_works_from_any_folder``: the wheel installed with
  pip into a fresh virtual environment, run from a folder outside the
  checkout: the quick start (a summary of a file, the same as the checkout's
  package writes), ``--explain``, ``summarizer.exercises`` (a notebook with the
  ten exercises, whose explanations come from notebook 03) and a two-step
  ``summarizer.train`` run. The environment sees this one's installed
  dependencies through a ``.pth`` file, never the checkout: no PYTHONPATH,
  and ``summarizer.__file__`` must lie in the new environment.

The builds use the setuptools of this environment, offline
(``--no-build-isolation``); pip's isolated build, with the newest setuptools,
reads the same pyproject.toml.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

import summarizer
from summarizer.contract import handout
from summarizer.config import DATA_DIR, NOTEBOOKS_DIR
from summarizer.contract.recording import GRADED

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(summarizer.__file__)))
SITE_PACKAGES = sysconfig.get_paths()['purelib']
pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(CHECKOUT, '.git')),
    reason='needs the git checkout the package is imported from (an editable install)')
TIMEOUT = 300  # Seconds for any one command (the training run takes about 30).

# What the installed package reads, as the checkout has it -> its place in the wheel.
SHIPPED = {
    'data/news.subwords': 'summarizer/_data/news.subwords',
    'data/news1k.subwords': 'summarizer/_data/news1k.subwords',
    'data/summarize32k.subword.subwords': 'summarizer/_data/summarize32k.subword.subwords',
    'notebooks/03_transformer_summarizer.ipynb':
        'summarizer/_notebooks/03_transformer_summarizer.ipynb',
    'summarizer/explorer/page.html': 'summarizer/explorer/page.html',
}
# Folders shipped whole: the model's directory and the sample articles.
SHIPPED_FOLDERS = {'data/model': 'summarizer/_data/model',
                   'data/samples': 'summarizer/_data/samples'}
# The wheel, a few MB: the model and the course's vocabulary are most of it.
MOST_BYTES = 8_000_000

ARTICLE = """\
Heavy rain closed the coast road at Marrowby on Tuesday, and the council said it
would stay shut until engineers had checked the sea wall. About 300 homes lost
power for six hours. The council's leader, Anna Pellow, said crews would work
through the night and that the road should open again by Friday.
"""


def run(command, cwd, env=None, timeout=TIMEOUT):
  """Runs a command; returns its standard output, or fails the test with both outputs."""
  done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                        timeout=timeout, check=False)
  assert done.returncode == 0, (f'{" ".join(map(str, command))} exited {done.returncode}\n'
                                f'{done.stdout[-3000:]}\n{done.stderr[-3000:]}')
  return done.stdout


@functools.lru_cache(maxsize=1)
def git_files():
  """The checkout's files a commit of the working tree would hold (relative paths)."""
  listed = run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
               CHECKOUT)
  return tuple(sorted(path for path in listed.split('\0')
                      if path and os.path.isfile(os.path.join(CHECKOUT, path))))


def export(destination):
  """Copies those files to ``destination``, as a clone of the commit would have them."""
  for path in git_files():
    target = os.path.join(destination, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(os.path.join(CHECKOUT, path), target)
  return str(destination)


def build_wheel(source, out_dir):
  """``pip wheel`` of a folder or URL, offline with this environment's setuptools."""
  run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation',
       '--no-index', '--quiet', '-w', str(out_dir), source], str(out_dir.parent))
  wheels = [name for name in os.listdir(out_dir) if name.endswith('.whl')]
  assert len(wheels) == 1, wheels
  return os.path.join(out_dir, wheels[0])


def wheel_files(wheel):
  """{path in the wheel: bytes} of its files, its metadata aside."""
  with zipfile.ZipFile(wheel) as archive:
    return {name: archive.read(name) for name in archive.namelist()
            if not name.endswith('/') and '.dist-info/' not in name}


def expected_files():
  """{path in the wheel: the checkout's file}: every module and everything shipped."""
  expected = {path: path for path in git_files()
              if path.startswith('summarizer/') and path.endswith('.py')}
  expected.update({wheel_path: path for path, wheel_path in SHIPPED.items()})
  for folder, wheel_folder in SHIPPED_FOLDERS.items():
    for path in git_files():
      if path.startswith(folder + '/'):
        expected[wheel_folder + path[len(folder):]] = path
  return expected


# Files a checkout may hold beside the model's own (not in git): never shipped.
STRAY = ('data/model/notes.txt', 'data/model/model.pkl.gz.bak')


@pytest.fixture(scope='module')
def source(tmp_path_factory):
  exported = export(tmp_path_factory.mktemp('source'))
  for path in STRAY:
    with open(os.path.join(exported, path), 'w', encoding='utf-8') as f:
      f.write('left here by hand\n')
  return exported


@pytest.fixture(scope='module')
def wheel(source, tmp_path_factory):
  return build_wheel(source, tmp_path_factory.mktemp('dist'))


@pytest.mark.slow
def test_wheel_holds_the_package_and_its_data(source, wheel):
  files = wheel_files(wheel)
  expected = expected_files()
  missing = sorted(set(expected) - set(files))
  assert not missing, f'the wheel lacks {missing}: list them in pyproject.toml'
  for wheel_path, path in expected.items():
    with open(os.path.join(source, path), 'rb') as f:  # The copy the wheel was built from.
      assert files[wheel_path] == f.read(), f'{wheel_path} differs from {path}'
  # Beyond those, only the package's own files (a template listed as package data).
  extra = sorted(set(files) - set(expected) - set(git_files()))
  assert not extra, f'the wheel ships files from outside summarizer/: {extra}'
  assert not [name for name in files if not name.startswith('summarizer/')]
  assert os.path.getsize(wheel) < MOST_BYTES
  # The checkout reads the same files from its top level.
  assert os.path.samefile(DATA_DIR, os.path.join(CHECKOUT, 'data'))
  assert os.path.samefile(NOTEBOOKS_DIR, os.path.join(CHECKOUT, 'notebooks'))


@pytest.mark.slow
def test_pip_install_git_url_builds_the_same_wheel(source, wheel, tmp_path):
  git = ['git', '-c', 'user.name=test', '-c', 'user.email=test@example.com',
         '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false']
  env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
  for command in (['init', '--quiet'], ['add', '--all'], ['commit', '--quiet', '-m', 'x']):
    subprocess.run(git + command, cwd=source, env=env, check=True, capture_output=True)
  built = build_wheel(f'git+file://{source}', tmp_path / 'dist')
  assert wheel_files(built) == wheel_files(wheel)


def fresh_environment(directory, wheel):
  """A virtual environment with the wheel installed and this one's dependencies.

  Returns its Python and the environment variables to run it with.
  """
  subprocess.run([sys.executable, '-m', 'venv', '--without-pip', directory], check=True)
  python = os.path.join(directory, 'bin', 'python')
  # pip runs in the new environment, before it can see this one's packages
  # (the checkout's editable install among them): nothing to replace.
  run([sys.executable, '-m', 'pip', '--python', python, 'install', '--no-deps',
       '--no-index', '--quiet', wheel], directory)
  site_packages = run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                      directory).strip()
  # The dependencies (Trax, jax, ...) from this environment, after the new one's
  # own packages; a folder named in a .pth file is searched, its .pth files
  # (this environment's editable install of the checkout) are not run.
  with open(os.path.join(site_packages, '_dependencies.pth'), 'w', encoding='utf-8') as f:
    f.write(SITE_PACKAGES + '\n')
  env = {k: v for k, v in os.environ.items()
         if k not in ('PYTHONPATH', 'PYTHONHOME', 'PYTHONSTARTUP', 'VIRTUAL_ENV')}
  return python, env, site_packages


@pytest.mark.slow
def test_installed_package_works_from_any_folder(wheel, tmp_path):
  python, env, site_packages = fresh_environment(str(tmp_path / 'env'), wheel)
  folder = tmp_path / 'elsewhere'
  folder.mkdir()
  cwd = str(folder)
  where = run([python, '-c', 'import summarizer, summarizer.config as c; '
               'print(summarizer.__file__); print(c.DATA_DIR); print(c.NOTEBOOKS_DIR)'],
              cwd, env).split('\n')
  installed = os.path.join(site_packages, 'summarizer')
  assert where[:3] == [os.path.join(installed, '__init__.py'),
                       os.path.join(installed, '_data'), os.path.join(installed, '_notebooks')]
  (folder / 'article.txt').write_text(ARTICLE, encoding='utf-8')

  # The quick start: the same summary as the checkout's package writes.
  summary = run([python, '-m', 'summarizer', 'article.txt'], cwd, env)
  assert summary.strip()
  assert summary == run([sys.executable, '-m', 'summarizer', 'article.txt'], cwd)

  run([python, '-m', 'summarizer', 'article.txt', '--explain', 'page.html'], cwd, env)
  assert '<html' in (folder / 'page.html').read_text(encoding='utf-8').lower()

  run([python, '-m', 'summarizer.exercises', '--out', 'x.ipynb'], cwd, env)
  with open(folder / 'x.ipynb', encoding='utf-8') as f:
    cells = {cell['metadata']['nbgrader']['grade_id']: cell for cell in json.load(f)['cells']}
  assert [name for name, cell in cells.items()
          if cell['metadata']['nbgrader']['solution']] == list(GRADED)
  for name, explanation in handout.explanations().items():  # Notebook 03's cells.
    assert explanation.strip() in ''.join(cells[f'explains-{name}']['source'])

  run([python, '-m', 'summarizer.train', '--output-dir', 'run', '--max-steps', '2',
       '--no-progress', '--calibration-articles', '0', '--verdict-stories', '0'], cwd, env)
  assert (folder / 'run' / 'config.json').is_file()


def test_the_packages_dependencies_are_pinned_as_requirements_txt_pins_them():
  import tomllib  # pylint: disable=import-outside-toplevel
  with open(os.path.join(CHECKOUT, 'pyproject.toml'), 'rb') as f:
    declared = tomllib.load(f)['project']['dependencies']
  with open(os.path.join(CHECKOUT, 'requirements.txt'), encoding='utf-8') as f:
    pinned = {line.split('#')[0].strip() for line in f} - {''}
  assert declared and all('==' in d for d in declared)
  assert set(declared) <= pinned, set(declared) - pinned
