"""The explorer's page in headless Chromium: timed, and pictured."""

import os
import tempfile

import numpy as np

from summarizer import files
from summarizer.errors import SummarizerError, say
from summarizer.explorer import browser
from summarizer.explorer.explanation import explain
from summarizer.explorer.facts import TRACE_BLOCK


# Each summary token pointed at in turn, in the page: the mean time to shade.
_HOVER_EVERY_TOKEN = """
const spans = document.querySelectorAll('#summary span');
const start = performance.now();
spans.forEach(function (span) {
  span.dispatchEvent(new PointerEvent('pointerover', {bubbles: true}));
});
return spans.length ? (performance.now() - start) / spans.length : 0;
"""


def measure_page(path, loads=5):
  """Loads a page in headless Chromium (offline) and times it.

  Returns:
    A dict: ``bytes`` (file size), ``load_ms`` (median time to the load
    event), ``ready_ms`` (median time until the script has built the page),
    ``hover_ms`` (mean time to shade the article for one summary token),
    ``article_spans`` and ``summary_spans``.
  """
  load, ready, hover = [], [], []
  with browser.Chromium(offline=True) as chrome:
    for _ in range(loads):
      chrome.open(browser.file_url(path))
      load.append(chrome.run('return performance.getEntriesByType("navigation")[0]'
                             '.loadEventEnd;'))
      ready.append(chrome.run('return window.explorerReady;'))
      hover.append(chrome.run(_HOVER_EVERY_TOKEN))
    spans = chrome.run('return [document.querySelectorAll("#article span").length,'
                       ' document.querySelectorAll("#summary span").length];')
  return {'bytes': os.path.getsize(path), 'load_ms': float(np.median(load)),
          'ready_ms': float(np.median(ready)), 'hover_ms': float(np.mean(hover)),
          'article_spans': spans[0], 'summary_spans': spans[1]}


def picture(text, path, width=1280, height=740, force=True, model_dir=None):
  """Writes a screenshot of the page for ``text``, its first made-up name pointed at.

  The page is opened from a file in headless Chromium with ``#token=K`` (its
  own way to open with token K pinned). K is a token of the first name or
  number not in the article (else of the first traced one): the first
  whose most attended article token is a piece of the name itself (a
  copied piece), else its last. The screenshot is written whole under a
  new name beside ``path``, then renamed into place (never written through
  a link); an existing ``path`` is replaced only with ``force``. The page
  is ``model_dir``'s (default: the shipped model's).
  """
  explanation = explain(text, model_dir, on_clean=lambda line: say(f'warning: {line}'))
  facts = sorted(explanation.facts, key=lambda f: f.in_article)
  token = 0
  if facts:
    view, fact = explanation.view(TRACE_BLOCK), facts[0]
    copied = [i for i in fact.summary_tokens
              if explanation.article_pieces[int(np.argmax(view[i]))].strip() in fact.text]
    token = (copied or fact.summary_tokens[-1:])[0]
  token += 1  # The page counts from 1.
  with tempfile.TemporaryDirectory() as directory:
    page = os.path.join(directory, 'page.html')
    explanation.save(page)
    with browser.Chromium(width=width, height=height, offline=True) as chrome:
      chrome.open(browser.file_url(page) + f'#token={token}')
      _put_screenshot(chrome, path, force)
  return explanation


def _put_screenshot(chrome, path, force):
  """Writes Chromium's screenshot to a new file beside ``path``, then renames it into place."""
  try:
    with files.replacing(path, force) as temporary:
      chrome.screenshot(temporary)
  except OSError as e:
    raise SummarizerError(f'{path}: cannot write there ({e.strerror})') from None
