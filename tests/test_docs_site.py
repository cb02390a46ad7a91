"""The documentation site builds with `mkdocs build --strict` and works in a real browser.

Builds the site into a temporary folder, serves it on localhost, and drives Debian's
Chromium (/usr/bin/chromium, installed by .ci/run) with Playwright: the home page loads, the
search box finds "backward", code blocks are highlighted, the generated figures load, and no
page logs a JavaScript error. Outside CI a missing tool skips with the reason; in CI (CI set)
it fails, since CI installs all of them.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest

# one worker runs the module (pyproject's --dist loadgroup): its module-scoped fixture
# starts processes once, not once per worker
pytestmark = pytest.mark.xdist_group("docs-site")

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("TORCHJAX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    for module, package in [("mkdocs", "mkdocs"), ("material", "mkdocs-material"),
                            ("mkdocstrings_handlers.python", "mkdocstrings[python]"),
                            ("matplotlib", "matplotlib"), ("playwright", "playwright")]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f'{package} is not installed (pip install -e ".[docs]" or ".[test]")'
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
    return None


def _require_tools():
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the site test cannot run in CI: {reason}")
    pytest.skip(f"SITE TEST NOT RUN: {reason}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_tools()
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}\n{res.stderr}"
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def browser(site):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class _Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser):
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"exception: {e}"))


def test_home_page_and_search(site, browser):
    _, url = site
    p = _Page(browser)
    p.page.goto(url)
    assert "torchjax" in p.page.title()
    box = p.page.locator("input.md-search__input")  # in the header at desktop widths
    box.click()
    box.press_sequentially("backward")
    results = p.page.locator(".md-search-result__item")
    results.first.wait_for(timeout=20_000)
    assert results.count() > 0
    assert "backward" in p.page.locator(".md-search-result").inner_text().lower()
    assert not p.errors, p.errors


def test_code_blocks_render(site, browser):
    _, url = site
    p = _Page(browser)
    p.page.goto(url + "getting_started/")
    blocks = p.page.locator("div.highlight pre code")
    assert blocks.count() >= 4
    assert "import torchjax as torch" in blocks.first.inner_text() or any(
        "import torchjax as torch" in blocks.nth(i).inner_text() for i in range(blocks.count()))
    # Pygments marked up the Python: keywords and names are spans with their classes
    assert p.page.locator("div.highlight code span.kn").count() > 0
    # the theme's JavaScript ran (it publishes its document$ observable)
    p.page.wait_for_function("typeof document$ !== 'undefined'", timeout=15_000)
    assert not p.errors, p.errors


def test_generated_figures_load(site, browser):
    _, url = site
    p = _Page(browser)
    p.page.goto(url + "performance_figures/")
    images = p.page.locator("article img")
    assert images.count() >= 3
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        p.page.wait_for_function("img => img.complete", arg=img.element_handle())
        assert img.evaluate("img => img.naturalWidth") > 0, img.get_attribute("src")
    assert "<!-- bench:" not in p.page.content()
    assert not p.errors, p.errors


def test_every_page_without_javascript_errors(site, browser):
    out, url = site
    pages = sorted(str(f.relative_to(out).parent) for f in out.rglob("index.html"))
    assert len(pages) > 40, pages
    for required in ["getting_started", "pytorch_users", "migration", "compile", "autograd",
                     "distributed", "performance_figures", "coverage", "reference/nn",
                     "reference/torchjax", "examples", "examples/char_transformer"]:
        assert required in pages, required
    p = _Page(browser)
    failed = {}
    for rel in pages:
        p.errors.clear()
        response = p.page.goto(url + ("" if rel == "." else rel + "/"))
        assert response is not None and response.ok, rel
        p.page.wait_for_load_state("load")
        if p.errors:
            failed[rel] = list(p.errors)
    assert not failed, failed
