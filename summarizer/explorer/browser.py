"""Headless Chromium driven over WebDriver, for testing and picturing pages.

A small client of the W3C WebDriver protocol (JSON over HTTP, the standard
library is enough) talking to ``chromedriver``, which starts Chromium
headless in a fresh profile. Debian's ``chromium`` and ``chromium-driver``
packages provide both; ``find`` says what is missing.

  with browser.Chromium(offline=True) as chrome:
    chrome.open('file:///tmp/page.html')
    chrome.hover('#summary span')
    chrome.screenshot('/tmp/page.png')
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from summarizer.errors import SummarizerError

# The key under which WebDriver names an element.
ELEMENT = 'element-6066-11e4-a52f-4a3ec6e7df5b'
# Flags for a quiet, headless, sandbox-free (root in a container) Chromium
# that reaches for nothing on the network by itself.
CHROMIUM_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync',
                  '--disable-dev-shm-usage', '--hide-scrollbars')


def find():
  """Returns (chromium, chromedriver) paths, or raises naming what is missing."""
  chromium = next(filter(None, map(shutil.which, ('chromium', 'chromium-browser',
                                                  'google-chrome'))), None)
  driver = shutil.which('chromedriver')
  missing = [name for name, path in (('chromium', chromium), ('chromedriver', driver))
             if path is None]
  if missing:
    raise SummarizerError(f'no {" or ".join(missing)} on PATH (Debian: apt-get install '
                          'chromium chromium-driver)')
  return chromium, driver


class Chromium:
  """A headless Chromium session; use it as a context manager.

  Args:
    width, height: The page's viewport in CSS pixels.
    offline: Cut the browser off the network (DevTools' network emulation).
  """

  def __init__(self, width=1280, height=900, offline=True):
    chromium, driver = find()
    self._profile = tempfile.mkdtemp(prefix='chromium-profile-')
    port = _free_port()
    self._base = f'http://127.0.0.1:{port}'
    self._driver = subprocess.Popen([driver, f'--port={port}'], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    try:
      self._wait_ready()
      options = {'binary': chromium,
                 'args': list(CHROMIUM_FLAGS) + [f'--user-data-dir={self._profile}',
                                                 f'--window-size={width},{height}']}
      reply = self._call('POST', '/session', {'capabilities': {'alwaysMatch': {
          'browserName': 'chrome', 'goog:chromeOptions': options}}})
      self._session = f"/session/{reply['value']['sessionId']}"
      # The page's own size, without the window's frame.
      self.cdp('Emulation.setDeviceMetricsOverride', width=width, height=height,
               deviceScaleFactor=1, mobile=False)
      if offline:
        self.cdp('Network.enable')
        self.cdp('Network.emulateNetworkConditions', offline=True, latency=0,
                 downloadThroughput=0, uploadThroughput=0)
    except BaseException:
      self.close()
      raise

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()

  def close(self):
    """Ends the session, chromedriver and the profile."""
    if getattr(self, '_session', None):
      try:
        self._call('DELETE', self._session)
      except (OSError, SummarizerError):
        pass
      self._session = None
    if self._driver.poll() is None:
      self._driver.terminate()
      try:
        self._driver.wait(10)
      except subprocess.TimeoutExpired:
        self._driver.kill()
    shutil.rmtree(self._profile, ignore_errors=True)

  def open(self, url, ready='document.body && document.body.dataset.ready === "yes"',
           timeout=30):
    """Loads ``url`` and waits until the script ``ready`` is true."""
    self._call('POST', f'{self._session}/url', {'url': url})
    deadline = time.time() + timeout
    while not self.run(f'return Boolean({ready});'):
      if time.time() > deadline:
        raise SummarizerError(f'{url}: not ready after {timeout} s')
      time.sleep(0.05)

  def run(self, script, *args):
    """Runs JavaScript in the page (a function body) and returns its value."""
    return self._call('POST', f'{self._session}/execute/sync',
                      {'script': script, 'args': list(args)})['value']

  def frame(self, selector=None):
    """Makes the frame ``selector`` matches the one scripts run in (None: the page)."""
    self._call('POST', f'{self._session}/frame',
               {'id': None if selector is None else self.element(selector)})

  def element(self, selector):
    """Returns the WebDriver reference of the first element ``selector`` matches."""
    return self._call('POST', f'{self._session}/element',
                      {'using': 'css selector', 'value': selector})['value']

  def hover(self, selector):
    """Moves the mouse onto the middle of an element, as a user points at it."""
    self._pointer(selector, [])

  def click(self, selector):
    """Clicks the middle of an element."""
    self._pointer(selector, [{'type': 'pointerDown', 'button': 0},
                             {'type': 'pointerUp', 'button': 0}])

  def _pointer(self, selector, then):
    move = {'type': 'pointerMove', 'duration': 0, 'x': 0, 'y': 0,
            'origin': self.element(selector)}
    self._call('POST', f'{self._session}/actions', {'actions': [{
        'type': 'pointer', 'id': 'mouse', 'parameters': {'pointerType': 'mouse'},
        'actions': [move] + then}]})

  def screenshot(self, path):
    """Writes a PNG of the window to ``path``."""
    png = base64.b64decode(self._call('GET', f'{self._session}/screenshot')['value'])
    with open(path, 'wb') as f:
      f.write(png)

  def cdp(self, command, **params):
    """Sends a DevTools command (chromedriver's passthrough)."""
    return self._call('POST', f'{self._session}/goog/cdp/execute',
                      {'cmd': command, 'params': params})['value']

  def _wait_ready(self, timeout=30):
    deadline = time.time() + timeout
    while True:
      try:
        if self._call('GET', '/status')['value'].get('ready'):
          return
      except OSError:
        pass
      if time.time() > deadline or self._driver.poll() is not None:
        raise SummarizerError('chromedriver did not start')
      time.sleep(0.1)

  def _call(self, method, path, body=None):
    data = None if body is None else json.dumps(body).encode('utf-8')
    request = urllib.request.Request(self._base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
    try:
      with _OPENER.open(request, timeout=60) as reply:
        return json.loads(reply.read().decode('utf-8'))
    except urllib.error.HTTPError as e:
      detail = json.loads(e.read().decode('utf-8') or '{}').get('value', {})
      raise SummarizerError(f'WebDriver {method} {path}: {detail.get("error")}: '
                            f'{str(detail.get("message", "")).splitlines()[0:1]}') from None


# chromedriver is local: no proxy from the environment may stand in between.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def file_url(path):
  """The file:// URL of a local path."""
  return 'file://' + urllib.request.pathname2url(os.path.abspath(path))
