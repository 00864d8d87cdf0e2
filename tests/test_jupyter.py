"""The environment's Jupyter: `jupyter lab` is there, serves the notebooks, and its kernel is this Python."""

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The environment's own commands: beside the interpreter running the tests.
BIN = os.path.dirname(sys.executable)
JUPYTER = os.path.join(BIN, 'jupyter')


def pinned(package):
  """Returns the version requirements.txt pins for ``package``."""
  with open(os.path.join(ROOT, 'requirements.txt'), encoding='utf-8') as f:
    found = re.search(rf'^{package}==([^\s#]+)', f.read(), re.MULTILINE)
  assert found, f'{package} is not pinned in requirements.txt'
  return found.group(1)


@pytest.mark.slow
def test_jupyter_lab_is_the_pinned_version():
  done = subprocess.run([JUPYTER, 'lab', '--version'], capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.returncode == 0, done.stderr
  assert done.stdout.strip() == pinned('jupyterlab')


def test_the_notebooks_kernel_is_this_environment_and_imports_summarizer():
  # Started as JupyterLab starts it: the kernel the notebooks name, from the
  # kernel specs the environment's Jupyter finds.
  with open(os.path.join(ROOT, 'notebooks', '01_attention.ipynb'), encoding='utf-8') as f:
    kernel_name = json.load(f)['metadata']['kernelspec']['name']
  code = textwrap.dedent(f'''
      from jupyter_client.manager import start_new_kernel
      manager, client = start_new_kernel(kernel_name={kernel_name!r})
      try:
        reply = client.execute_interactive(
            "import sys, summarizer; print(sys.prefix); print(summarizer.__version__)",
            timeout=120, output_hook=lambda msg: print(msg['content'].get('text', ''), end=''))
        assert reply['content']['status'] == 'ok', reply['content']
      finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
  ''')
  done = subprocess.run([os.path.join(BIN, 'python'), '-c', code], capture_output=True,
                        text=True, timeout=180, check=False)
  assert done.returncode == 0, done.stderr
  import summarizer  # pylint: disable=g-import-not-at-top
  assert done.stdout.splitlines() == [sys.prefix, summarizer.__version__]


def _free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


@pytest.mark.slow
def test_jupyter_lab_serves_the_notebooks_offline(tmp_path):
  port, token = _free_port(), 'summarizer-test'
  env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / 'runtime'),
             JUPYTER_CONFIG_DIR=str(tmp_path / 'config'))
  log = tmp_path / 'lab.log'
  with open(log, 'w', encoding='utf-8') as log_file:
    server = subprocess.Popen(
        # As the README says: from the checkout.
        [JUPYTER, 'lab', '--no-browser', f'--port={port}',
         '--ip=127.0.0.1', f'--IdentityProvider.token={token}',
         *(['--allow-root'] if os.geteuid() == 0 else [])],
        cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT, env=env)
  try:
    deadline = time.time() + 120
    while True:
      try:
        with urllib.request.urlopen(
            f'http://127.0.0.1:{port}/api/contents/notebooks?token={token}', timeout=5) as r:
          listing = json.load(r)
        break
      except urllib.error.HTTPError:  # The server answered: no use waiting.
        raise
      except OSError:  # Not listening yet.
        assert server.poll() is None, log.read_text()[-2000:]
        assert time.time() < deadline, 'jupyter lab did not answer within 2 minutes'
        time.sleep(0.5)
    names = {item['name'] for item in listing['content']}
    assert {'01_attention.ipynb', '02_transformer_decoder.ipynb',
            '03_transformer_summarizer.ipynb'} <= names
    with urllib.request.urlopen(f'http://127.0.0.1:{port}/lab?token={token}', timeout=30) as r:
      assert r.status == 200 and b'JupyterLab' in r.read()
  finally:
    server.terminate()
    try:
      server.wait(timeout=30)
    except subprocess.TimeoutExpired:
      server.kill()
      server.wait()


@pytest.mark.parametrize('command', ['notebook', 'nbconvert', 'execute'])
@pytest.mark.slow
def test_the_other_jupyter_commands_a_learner_meets_are_there(command):
  done = subprocess.run([JUPYTER, command, '--version'], capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.returncode == 0, done.stderr


def test_nbval_markers_stand_alone_on_their_lines():
  # nbval honours '# NBVAL_...' only when nothing follows the marker on its line;
  # words after it made a cell compare its output on every CPU (issue 30).
  import glob  # pylint: disable=g-import-not-at-top
  checked = 0
  for path in glob.glob(os.path.join(ROOT, 'notebooks', '*.ipynb')):
    with open(path, encoding='utf-8') as f:
      cells = json.load(f)['cells']
    for cell in cells:
      for line in ''.join(cell['source']).splitlines():
        if 'NBVAL_' in line:
          checked += 1
          assert re.fullmatch(r'#\s*NBVAL_[A-Z_]+\s*', line), f'{os.path.basename(path)}: {line}'
  assert checked >= 2
