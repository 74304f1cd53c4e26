"""The built documentation site, read back as a reader's browser would see it.

``build_site`` runs ``mkdocs build --strict`` (what CI runs) into a directory; ``Page``
holds what the checks need from one HTML page: its ids, links, visible text and tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]

# Elements whose text a reader never sees.
_HIDDEN = {"script", "style", "template"}


def build_site(destination: Path) -> subprocess.CompletedProcess[str]:
    """Build the site strictly into ``destination``; the caller checks the return code."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(destination)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@dataclass
class Html:
    """What the checks read from a piece of HTML: ids, links, visible text, table rows."""

    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class Page:
    """One built page: ``url`` is its path in the site (``"reference/models/"``);
    ``article`` is the page's own content, without the navigation around it."""

    url: str
    whole: Html = field(repr=False)
    article: Html = field(repr=False)
    markup: str = field(repr=False)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = Html()
        self.hidden = 0
        self.text: list[str] = []
        self.row: Optional[list[str]] = None
        self.cell: Optional[list[str]] = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        values = dict(attrs)
        if tag in _HIDDEN:
            self.hidden += 1
        if values.get("id"):
            self.out.ids.add(str(values["id"]))
        if tag == "a" and values.get("href") is not None:
            self.out.links.append(str(values["href"]))
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden -= 1
        if tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.out.rows.append(self.row)
            self.row = None
        if tag in ("p", "div", "li", "pre", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6"):
            self.text.append("\n")

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)


def read_html(markup: str) -> Html:
    reader = _Reader()
    reader.feed(markup)
    reader.close()
    reader.out.text = "".join(reader.text)
    return reader.out


def read_page(site: Path, path: Path) -> Page:
    url = path.relative_to(site).as_posix()
    url = url[: -len("index.html")] if url.endswith("index.html") else url
    markup = path.read_text(encoding="utf-8")
    start, end = markup.find("<article"), markup.rfind("</article>")
    article = markup[start:end] if start != -1 and end != -1 else ""
    return Page(url=url, whole=read_html(markup), article=read_html(article), markup=markup)


@dataclass
class Site:
    """A built site: its directory and every HTML page by url (``""`` is the landing page)."""

    root: Path
    pages: dict[str, Page] = field(repr=False)

    def __getitem__(self, url: str) -> Page:
        return self.pages[url]


def read_site(root: Path) -> Site:
    pages = (read_page(root, path) for path in sorted(root.rglob("*.html")))
    return Site(root=root, pages={page.url: page for page in pages})
