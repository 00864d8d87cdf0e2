"""The explorer page in a real browser: headless Chromium through Selenium, offline, from a file."""

import os
import time

import numpy as np
import pytest

from summarizer.errors import SummarizerError
from summarizer.explorer import browser
from summarizer.explorer import page as page_module
from summarizer.explorer import pictures
from summarizer.explorer.explanation import explain

from .conftest import COURT, MADE_UP

try:
  browser.find()
  MISSING = None
except SummarizerError as e:
  MISSING = str(e)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f'needs headless Chromium: {MISSING}')

# Each article token's shading as the browser computed it: the alpha of its
# background colour (0 where unshaded).
SHADES = """
return Array.from(document.querySelectorAll('#article span')).map(function (span) {
  const rgba = getComputedStyle(span).backgroundColor.match(/[\\d.]+/g).map(Number);
  return rgba.length === 4 ? rgba[3] : (rgba.some(Boolean) ? 1 : 0);
});
"""


@pytest.fixture(scope='module')
def page(tmp_path_factory):
  with open(COURT, encoding='utf-8') as f:
    explanation = explain(f.read())
  path = tmp_path_factory.mktemp('page') / 'court.html'
  explanation.save(path)
  with browser.Chromium(width=1280, height=900, offline=True) as chrome:
    chrome.open(browser.file_url(path))
    yield explanation, chrome


def _most_shaded(chrome):
  shades = np.array(chrome.run(SHADES))
  return int(np.argmax(shades)), shades


def test_pointing_at_a_name_shades_the_words_explain_traced(page, tmp_path):
  explanation, chrome = page
  fact = next(f for f in explanation.facts if f.text == 'Holmilus Torulard')
  assert fact.agrees
  shaded = []
  for token in fact.summary_tokens:
    chrome.hover(f'#summary span[data-i="{token}"]')
    top, shades = _most_shaded(chrome)
    shaded.append(top)
    assert top == int(np.argmax(explanation.view(-1)[token]))  # The page's default view.
    assert np.count_nonzero(shades) <= page_module.TOP_K
  # The page shades each token's own peak; explain's trace keeps those near the name's peak.
  near = {j for j in shaded if abs(j - fact.peak) <= len(fact.summary_tokens) + 2}
  assert sorted(near | {fact.peak}) == fact.attended
  words = chrome.run('return arguments[0].map(function (i) {'
                     '  return document.querySelectorAll("#article span")[i].textContent; });',
                     fact.attended)
  # The page's article tokens there are pieces of the words explain names.
  assert fact.attended_text == 'Holmilus Torulard'
  assert words and all(word.strip() and word.strip() in fact.attended_text for word in words)
  chrome.screenshot(tmp_path / 'pointing.png')
  assert (tmp_path / 'pointing.png').read_bytes()[:4] == b'\x89PNG'


def test_the_page_loaded_nothing_and_marks_the_made_up_name(page):
  explanation, chrome = page
  assert chrome.run('return performance.getEntriesByType("resource").length') == 0
  assert chrome.run('return navigator.onLine') is False          # The network is off.
  made_up = chrome.run('return Array.from(document.querySelectorAll("#summary span.made-up"))'
                       '.map(function (s) { return s.textContent; }).join("")')
  assert made_up == MADE_UP.replace(' ', '')
  assert [f.text for f in explanation.facts if not f.in_article] == [MADE_UP]
  badges = chrome.run('return Array.from(document.querySelectorAll("#facts .badge.bad"))'
                      '.map(function (b) { return b.parentNode.firstChild.textContent; })')
  assert badges == [MADE_UP]


def test_the_selector_changes_block_and_head(page):
  explanation, chrome = page
  token = explanation.facts[0].summary_tokens[-1]
  labels = chrome.run('return Array.from(document.getElementById("view").options)'
                      '.map(function (o) { return o.text; })')
  chosen = labels.index('block 0, head 1')
  chrome.run('const s = document.getElementById("view"); s.value = arguments[0];'
             's.dispatchEvent(new Event("change"));', str(chosen))
  chrome.hover(f'#summary span[data-i="{token}"]')
  top, _ = _most_shaded(chrome)
  assert top == int(np.argmax(explanation.view(0, 1)[token]))
  chrome.run('const s = document.getElementById("view"); s.value = arguments[0];'
             's.dispatchEvent(new Event("change"));', str(labels.index('all blocks, mean of heads')))
  top, _ = _most_shaded(chrome)                                  # Same token, new view.
  assert top == int(np.argmax(explanation.view()[token]))


def test_a_click_pins_the_token_after_the_pointer_leaves(page):
  explanation, chrome = page
  token = 5
  chrome.click(f'#summary span[data-i="{token}"]')
  chrome.hover('h1')
  view = int(chrome.run('return document.getElementById("view").value'))
  assert chrome.run('return document.querySelector("#summary span.pinned").dataset.i') == str(token)
  top, _ = _most_shaded(chrome)
  grid = dict(page_module.views(explanation))[page_module.views(explanation)[view][0]]
  assert top == int(np.argmax(grid[token]))


def test_picture_is_a_screenshot_of_the_page_with_a_made_up_name_pointed_at(tmp_path):
  from PIL import Image  # pylint: disable=g-import-not-at-top
  with open(COURT, encoding='utf-8') as f:
    explanation = pictures.picture(f.read(), tmp_path / 'page.png', width=900, height=600)
  with Image.open(tmp_path / 'page.png') as image:
    assert image.size == (900, 600)
    pixels = np.asarray(image.convert('RGB'), np.int32)
  # Shading is orange (255, 140, 0) over white: the page is shown, a token pointed at.
  orange = (pixels[..., 0] > 240) & (np.abs(pixels[..., 1] - 150) < 40) & (pixels[..., 2] < 60)
  assert orange.sum() > 50
  assert [f.text for f in explanation.facts if not f.in_article] == [MADE_UP]


def test_measure_page_reports_size_and_times(tmp_path):
  with open(COURT, encoding='utf-8') as f:
    explanation = explain(f.read())
  explanation.save(tmp_path / 'page.html')
  result = pictures.measure_page(tmp_path / 'page.html', loads=2)
  assert result['bytes'] == os.path.getsize(tmp_path / 'page.html')
  assert result['article_spans'] == len(explanation.article_pieces)
  assert result['summary_spans'] == len(explanation.summary_pieces)
  assert 0 < result['ready_ms'] and 0 < result['load_ms'] and 0 <= result['hover_ms']


def test_the_jupyter_view_is_the_page_working_in_its_frame(page, tmp_path):
  explanation, chrome = page
  notebook_like = tmp_path / 'output.html'
  notebook_like.write_text(f'<!DOCTYPE html><body><div class="output">'
                           f'{explanation._repr_html_()}</div></body>',  # pylint: disable=protected-access
                           encoding='utf-8')
  chrome.open(browser.file_url(notebook_like), ready='document.querySelector("iframe")')
  chrome.frame('iframe')
  try:
    for _ in range(100):
      if chrome.run('return document.body && document.body.dataset.ready === "yes";'):
        break
      time.sleep(0.05)
    token = explanation.facts[-1].summary_tokens[0]
    chrome.hover(f'#summary span[data-i="{token}"]')
    top, _ = _most_shaded(chrome)
    assert top == int(np.argmax(explanation.view(-1)[token]))
  finally:
    chrome.frame(None)


def test_measuring_a_page_whose_script_never_ends_ends_in_one_line(tmp_path, monkeypatch, capsys):
  from summarizer.explorer import __main__ as explorer_command  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(browser, 'PAGE_SECONDS', 3)
  page = tmp_path / 'endless.html'
  page.write_text('<html><body><script>while (true) {}</script></body></html>')
  started = time.monotonic()
  assert explorer_command.main(['--measure', str(page)]) == 2
  assert time.monotonic() - started < 60
  err = capsys.readouterr().err
  assert err.count('\n') == 1 and err.startswith('error: ') and 'endless.html' in err, err
