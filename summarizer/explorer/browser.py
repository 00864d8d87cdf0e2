"""Headless Chromium driven by Selenium, for testing and picturing pages.

Selenium's Chrome driver talks to ``chromedriver``, which starts Chromium
headless in a fresh profile. Debian's ``chromium`` and ``chromium-driver``
packages provide both, and ``selenium`` is pinned in requirements.txt;
``find`` says what is missing. Both programs are named explicitly, so
Selenium never looks for (or downloads) a driver of its own.

  with browser.Chromium(offline=True) as chrome:
    chrome.open('file:///tmp/page.html')
    chrome.hover('#summary span')
    chrome.screenshot('/tmp/page.png')
"""

import contextlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
import urllib.request

from summarizer.errors import SummarizerError

# Flags for a quiet, headless, sandbox-free (root in a container) Chromium
# that reaches for nothing on the network by itself.
# The most one page load or one script may take: a page whose script never ends
# (while(true){}) is given up on after it, not waited for.
PAGE_SECONDS = 60
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
  if importlib.util.find_spec('selenium') is None:
    raise SummarizerError('no selenium (pip install -r requirements.txt)')
  return chromium, driver


@contextlib.contextmanager
def _one_line(what):
  """Turns Selenium's exceptions into a SummarizerError naming ``what`` failed."""
  from selenium.common.exceptions import WebDriverException  # pylint: disable=g-import-not-at-top
  try:
    yield
  except WebDriverException as e:
    message = (e.msg or type(e).__name__).splitlines()[0]
    raise SummarizerError(f'{what}: {message}') from None


class Chromium:
  """A headless Chromium session; use it as a context manager.

  Args:
    width, height: The page's viewport in CSS pixels.
    offline: Cut the browser off the network (DevTools' network emulation).
  """

  def __init__(self, width=1280, height=900, offline=True):
    from selenium import webdriver  # pylint: disable=g-import-not-at-top
    chromium, driver = find()
    self.driver = None
    self._profile = tempfile.mkdtemp(prefix='chromium-profile-')
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + (f'--user-data-dir={self._profile}',
                                  f'--window-size={width},{height}'):
      options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=driver, log_output=subprocess.DEVNULL)
    try:
      with _one_line('chromedriver did not start'):
        self.driver = webdriver.Chrome(options=options, service=service)
      self.driver.set_page_load_timeout(PAGE_SECONDS)
      self.driver.set_script_timeout(PAGE_SECONDS)
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
    if self.driver is not None:
      try:
        self.driver.quit()
      except Exception:  # pylint: disable=broad-except
        pass  # A browser that is gone already: nothing left to end.
      self.driver = None
    shutil.rmtree(self._profile, ignore_errors=True)

  def open(self, url, ready='document.body && document.body.dataset.ready === "yes"',
           timeout=30):
    """Loads ``url`` and waits until the script ``ready`` is true."""
    from selenium.common.exceptions import TimeoutException  # pylint: disable=g-import-not-at-top
    from selenium.webdriver.support.wait import WebDriverWait  # pylint: disable=g-import-not-at-top
    with _one_line(url):
      self.driver.get(url)
      try:
        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(
            lambda driver: driver.execute_script(f'return Boolean({ready});'))
      except TimeoutException:
        raise SummarizerError(f'{url}: not ready after {timeout} s') from None

  def run(self, script, *args):
    """Runs JavaScript in the page (a function body) and returns its value."""
    with _one_line('script'):
      return self.driver.execute_script(script, *args)

  def frame(self, selector=None):
    """Makes the frame ``selector`` matches the one scripts run in (None: the page)."""
    with _one_line(f'frame {selector}'):
      if selector is None:
        self.driver.switch_to.default_content()
      else:
        self.driver.switch_to.frame(self.element(selector))

  def element(self, selector):
    """Returns the first element ``selector`` matches."""
    from selenium.webdriver.common.by import By  # pylint: disable=g-import-not-at-top
    with _one_line(selector):
      return self.driver.find_element(By.CSS_SELECTOR, selector)

  def hover(self, selector):
    """Moves the mouse onto the middle of an element, as a user points at it."""
    self._pointer(selector, click=False)

  def click(self, selector):
    """Clicks the middle of an element."""
    self._pointer(selector, click=True)

  def _pointer(self, selector, click):
    from selenium.webdriver.common.action_chains import ActionChains  # pylint: disable=g-import-not-at-top
    actions = ActionChains(self.driver, duration=0).move_to_element(self.element(selector))
    with _one_line(selector):
      (actions.click() if click else actions).perform()

  def screenshot(self, path):
    """Writes a PNG of the window to ``path``."""
    with _one_line('screenshot'):
      png = self.driver.get_screenshot_as_png()
    with open(path, 'wb') as f:
      f.write(png)

  def cdp(self, command, **params):
    """Sends a DevTools command (chromedriver's passthrough)."""
    with _one_line(command):
      return self.driver.execute_cdp_cmd(command, params)


def file_url(path):
  """The file:// URL of a local path."""
  return 'file://' + urllib.request.pathname2url(os.path.abspath(path))
