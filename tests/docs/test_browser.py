"""The built site in a real browser: Debian's Chromium driven by Playwright.

Every page at 1280x800 and 390x844, and in the dark scheme too: nothing scrolls
sideways, nothing logs a console error or asks a host other than the site, every chart's
text is at least 10 px tall as drawn, no name in a table is split across lines. Every internal link lands on a page, and its anchor on
an element of that page. The site is built once (tests/docs/conftest.py) and served on a
loopback port; one browser and one tab, reused from page to page. Each page is loaded
once, in the size and scheme the last page ended in, and looked at; then in the other
scheme; then the window is resized to the other size (the layout follows, as a rotated
phone's does) and it is looked at again. The scheme is the system's preference switched on
the loaded page, which the site follows; a scheme changes colours, not the layout, and the
pages alternate, so each size is seen in each scheme across the site. A page of the test's own, wide enough to scroll sideways on a
phone only, is walked with the site's and must be reported in the phone size alone.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from tests.serving import serving

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "sudo apt-get install chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic",
        # every host but the site's loopback one is unresolvable: a request off the site
        # fails at once (and is reported), it never leaves the machine
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}
SMALLEST_TEXT_PX = 10.0
SCHEME_WAIT_MS = 5000
CANARY = "__browser-test-canary__/"
"""The test's own page, served beside the site's: a line 600 px wide that cannot wrap (too
wide for a phone only), and a script that follows the system's scheme as the theme does."""
CANARY_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>too wide for a phone</title>
<link rel="icon" href="data:,"></head>
<body data-md-color-scheme="default"><article><p style="width: 600px; white-space: nowrap">600 px</p></article>
<script>
const dark = matchMedia("(prefers-color-scheme: dark)");
const follow = () => document.body.setAttribute("data-md-color-scheme", dark.matches ? "slate" : "default");
follow();
dark.addEventListener("change", follow);
</script></body></html>
"""

# What one page shows, read in the page itself after it loaded.
MEASURE = r"""() => {
  const html = document.documentElement;
  const charts = [...document.querySelectorAll('article img[src$=".svg"]')].map(img => ({
    src: img.currentSrc || img.src, width: img.getBoundingClientRect().width}));
  const ids = [...document.querySelectorAll('[id], a[name]')].map(e => e.id || e.getAttribute('name'));
  const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
  // an identifier in a table cell drawn on two lines or more ("created_a|t")
  const broken = [...document.querySelectorAll('article td code, article th code')]
    .filter(c => !/\s/.test(c.textContent.trim()) && c.getClientRects().length > 1).map(c => c.textContent);
  return {scrollWidth: html.scrollWidth, innerWidth: window.innerWidth, charts, ids, links, broken,
          scheme: document.body.getAttribute('data-md-color-scheme')};
}"""


@dataclass
class Findings:
    """What went wrong, by kind; each entry names the page, the viewport and the scheme."""

    overflow: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    offsite: list[str] = field(default_factory=list)
    small_text: list[str] = field(default_factory=list)
    broken_names: list[str] = field(default_factory=list)
    schemes: list[str] = field(default_factory=list)
    ids: dict[str, set[str]] = field(default_factory=dict)
    links: dict[str, set[str]] = field(default_factory=dict)

    def split(self, url: str) -> Findings:
        """What was found on page ``url``, moved out of these findings into new ones."""
        taken = Findings()
        for kind in ("overflow", "console", "offsite", "small_text", "broken_names", "schemes"):
            entries: list[str] = getattr(self, kind)
            mine = [entry for entry in entries if entry.startswith(f"{url} (")]
            setattr(taken, kind, mine)
            setattr(self, kind, [entry for entry in entries if entry not in mine])
        for kind in ("ids", "links"):
            seen: dict[str, set[str]] = getattr(self, kind)
            if url in seen:
                getattr(taken, kind)[url] = seen.pop(url)
        return taken


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, unlogged; the assets cached by the browser (not asked again per page);
    and the canary page."""

    def do_GET(self) -> None:
        if urlsplit(self.path).path != "/" + CANARY:
            super().do_GET()
            return
        body = CANARY_HTML.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(built_site: Path) -> Iterator[str]:
    """The built site on a free loopback port; its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield f"http://127.0.0.1:{port}/"


def page_urls(site: Path) -> list[str]:
    """Every page's path in the site ("" is the landing page), 404.html aside."""
    paths = []
    for path in sorted(site.rglob("*.html")):
        relative = path.relative_to(site).as_posix()
        if relative == "404.html":
            continue
        paths.append(relative[: -len("index.html")] if relative.endswith("index.html") else relative)
    return paths


def _chart_font_px(svg: Path) -> tuple[float, float]:
    """(viewBox width, smallest font-size) of a chart drawn by benchmarks/charts.py."""
    text = svg.read_text(encoding="utf-8")
    view = re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"', text)
    width = float(view.group(1)) if view else float(re.search(r'width="([\d.]+)"', text).group(1))  # type: ignore[union-attr]
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', text)]
    return width, min(sizes) if sizes else 16.0


async def _visit_all(site: Path, base: str, urls: list[str], found: Findings) -> None:
    """One browser, one tab: every page in every size and scheme."""
    from playwright.async_api import async_playwright

    origin = base.rstrip("/")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            await _walk(browser, site, base, origin, urls, found)
        finally:
            await browser.close()


def _looks(size: str, scheme: str) -> list[tuple[str, str]]:
    """The (size, scheme) order of the looks at a page loaded in ``size`` and ``scheme``: the
    other scheme in that size, then the other size in the other scheme, where the next page
    is loaded. Each page is seen in both sizes and both schemes, with one change of each
    (a change of scheme restyles the whole page: the walk's largest cost), and the pages
    alternate, so each size is seen in each scheme across the site."""
    other_size = next(name for name in VIEWPORTS if name != size)
    other_scheme = "dark" if scheme == "light" else "light"
    return [(size, scheme), (size, other_scheme), (other_size, other_scheme)]


def _label(viewport: str, scheme: str) -> str:
    """How a finding names the look it was made in: ``"phone 390x844 dark"``."""
    width, height = VIEWPORTS[viewport]
    return f"{viewport} {width}x{height} {scheme}"


async def _walk(browser: Any, site: Path, base: str, origin: str, urls: list[str], found: Findings) -> None:
    """Load each page once and look at it in every size and scheme (``_looks``)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    size, scheme = next(iter(VIEWPORTS)), "light"
    width, height = VIEWPORTS[size]
    where = {"page": "", "label": ""}
    context = await browser.new_context(viewport={"width": width, "height": height}, color_scheme="light",
                                        service_workers="block")
    try:
        page = await context.new_page()

        def note(kind: list[str], text: str) -> None:
            kind.append(f"{where['page'] or '/'} ({where['label']}): {text}")

        page.on("request", lambda request: None if request.url.startswith((origin + "/", "data:", "blob:"))
                else note(found.offsite, request.url))
        page.on("console", lambda msg: note(found.console, msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: note(found.console, str(exc)))
        shown_scheme = scheme  # the system's scheme the page is told
        for url in urls:
            looks = _looks(size, scheme)
            where.update(page=url, label=_label(*looks[0]))  # what the load itself logs
            await page.goto(base + url, wait_until="load")
            for viewport, scheme in looks:
                width, height = VIEWPORTS[viewport]
                where["label"] = _label(viewport, scheme)
                if page.viewport_size != {"width": width, "height": height}:
                    await page.set_viewport_size({"width": width, "height": height})
                if scheme != shown_scheme:
                    await page.emulate_media(color_scheme=scheme)
                    shown_scheme = scheme
                expected = "slate" if scheme == "dark" else "default"
                try:  # the theme's script follows the system's scheme a moment later
                    await page.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{expected}'",
                                                 timeout=SCHEME_WAIT_MS)
                except PlaywrightTimeout:
                    pass  # reported below with the scheme the page shows
                shown = await page.evaluate(MEASURE)
                if shown["scrollWidth"] > shown["innerWidth"]:
                    note(found.overflow, f"{shown['scrollWidth']} px wide in {shown['innerWidth']} px")
                if shown["scheme"] != expected:
                    note(found.schemes, f"scheme {shown['scheme']}, not {expected}")
                for name in shown["broken"]:
                    note(found.broken_names, name)
                for chart in shown["charts"]:
                    path = site / unquote(urlsplit(chart["src"]).path).lstrip("/")
                    box, smallest = _chart_font_px(path)
                    rendered = smallest * chart["width"] / box
                    if rendered < SMALLEST_TEXT_PX:
                        note(found.small_text, f"{path.name} text {rendered:.1f} px tall")
                if viewport == "desktop" and scheme == "light":
                    found.ids[url] = set(shown["ids"])
                    found.links[url] = set(shown["links"])
            size = viewport  # the next page loads in the size and scheme this one ended in
    finally:
        await context.close()


@pytest.fixture(scope="module")
def walked(built_site: Path, served: str) -> tuple[Findings, Findings]:
    """Visit every page in every size and scheme once, the canary twice first (loaded in
    each size); what the site's pages showed, and what the canary showed."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: {INSTALL} (the docs' browser test drives it)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[dev]' (or pip install playwright)")
    found = Findings()
    asyncio.run(_visit_all(built_site, served, [CANARY, CANARY, *page_urls(built_site)], found))
    return found, found.split(CANARY)


@pytest.fixture(scope="module")
def findings(walked: tuple[Findings, Findings]) -> Findings:
    """What the site's own pages showed."""
    return walked[0]


def test_a_page_too_wide_for_a_phone_is_found_in_the_phone_size_alone(walked: tuple[Findings, Findings]) -> None:
    # loaded once in each size: the resized look and the loaded looks all measure the phone
    canary = walked[1]
    sizes = sorted(entry.split(" (", 1)[1].split(")", 1)[0] for entry in canary.overflow)
    assert sizes == ["phone 390x844 dark"] * 2 + ["phone 390x844 light"], canary.overflow
    assert not (canary.schemes or canary.console or canary.offsite), canary


def test_the_site_has_pages_and_charts(built_site: Path, findings: Findings) -> None:
    assert len(findings.ids) >= 20, sorted(findings.ids)
    assert {"", "getting-started/", "performance/", "reference/models/"} <= set(findings.ids)


def test_no_page_scrolls_sideways(findings: Findings) -> None:
    assert not findings.overflow, "pages wider than the window:\n" + "\n".join(findings.overflow)


def test_no_console_error(findings: Findings) -> None:
    assert not findings.console, "console errors:\n" + "\n".join(findings.console)


def test_no_page_asks_another_host(findings: Findings) -> None:
    # fonts, scripts and the repository's facts: a reader's address goes to no other host
    assert not findings.offsite, "requests off the site:\n" + "\n".join(sorted(set(findings.offsite)))


def test_the_dark_scheme_follows_the_system(findings: Findings) -> None:
    assert not findings.schemes, "\n".join(findings.schemes)


def test_chart_text_is_at_least_10_px_tall(findings: Findings) -> None:
    assert not findings.small_text, "chart text too small:\n" + "\n".join(findings.small_text)


def test_table_cells_keep_identifiers_whole(findings: Findings) -> None:
    assert not findings.broken_names, "names split across lines:\n" + "\n".join(findings.broken_names)


def test_every_internal_link_and_anchor_resolves(built_site: Path, served: str, findings: Findings) -> None:
    broken = []
    for url, links in sorted(findings.links.items()):
        for link in sorted(links):
            if not link.startswith(served):
                continue
            parts = urlsplit(link)
            target = unquote(parts.path)[1:]
            if target.endswith("/") or target == "":
                page = target
            elif (built_site / target).is_dir():
                page = target + "/"
            else:
                page = None
                if not (built_site / target).is_file():
                    broken.append(f"{url or '/'}: {link} (no such file)")
                    continue
            if page is not None and page not in findings.ids:
                broken.append(f"{url or '/'}: {link} (no such page)")
            elif page is not None and parts.fragment and unquote(parts.fragment) not in findings.ids[page]:
                broken.append(f"{url or '/'}: {link} (no element #{unquote(parts.fragment)})")
    assert not broken, "links that do not land:\n" + "\n".join(broken)
    assert urljoin(served, "reference/models/") in findings.links["getting-started/"] or any(
        "reference/" in link for link in findings.links["getting-started/"]), "pages link to the reference"
