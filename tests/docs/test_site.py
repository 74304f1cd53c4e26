"""The documentation site as a reader meets it: built strictly, then checked page by page.

The reference must show every public name under its public import path and nothing
private; every parameter of ``posts.list`` must be in its table; no Sphinx role or
unresolved cross-reference may reach the reader; every internal link must land.
"""

from __future__ import annotations

import html
import importlib
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from sports_posts import _params, _vocabulary

from .site import ROOT, Page, Site, read_site

# The import paths customers use; every name in their __all__ is documented.
PUBLIC_MODULES = [
    "sports_posts",
    "sports_posts.polling",
    "sports_posts.webhooks",
    "sports_posts.webhooks.adapters.asgi",
    "sports_posts.webhooks.adapters.wsgi",
    "sports_posts.webhooks.adapters.django",
    "sports_posts.sandbox",
]

# A name starting with one underscore, as text, an id or a dotted path part; dunders such
# as __version__ are public, and so are URL paths such as the sandbox's /_sandbox routes.
PRIVATE = re.compile(r"(?<![\w/])_[A-Za-z]\w*")
ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj|ref|py:\w+):")
UNRESOLVED = re.compile(r"\]\[[\w.]+\]")


@pytest.fixture(scope="module")
def site(built_site: Path) -> Site:
    return read_site(built_site)


def reference_pages(site: Site) -> Iterator[Page]:
    pages = [page for url, page in site.pages.items() if url.startswith("reference/")]
    assert len(pages) >= 6, sorted(site.pages)
    return iter(pages)


def documented_ids(site: Site) -> set[str]:
    return {i for page in reference_pages(site) for i in page.article.ids}


def public_names() -> list[tuple[str, str]]:
    return [
        (module, name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    ]


def test_every_public_name_is_in_the_reference(site: Site) -> None:
    ids = documented_ids(site)
    missing = []
    for module, name in public_names():
        obj = getattr(importlib.import_module(module), name)
        # A name re-exported by several public modules is documented once, under any of them.
        where = [
            other
            for other in PUBLIC_MODULES
            if getattr(importlib.import_module(other), name, None) is obj
        ]
        if not any(f"{other}.{name}" in ids for other in where):
            missing.append(f"{module}.{name}")
    assert not missing, f"public names missing from the API reference: {missing}"


def test_every_parameter_of_posts_list_is_in_its_table(site: Site) -> None:
    page = site["reference/clients/"]
    rows = {row[0]: row for row in page.article.rows if row}
    for name in typing.get_type_hints(_params.PostsListParams):
        assert name in rows, f"posts.list parameter {name!r} is not in the parameters table"
        _, type_text, mode, meaning, _ = rows[name]
        assert type_text and mode and meaning, rows[name]
        assert "None" not in type_text  # None means "not sent", said once above the table


def test_the_parameters_table_says_what_each_type_is(site: Site) -> None:
    rows = {row[0]: row for row in site["reference/clients/"].article.rows if row}
    assert rows["teams"][1] == "str | Sequence[str | int]"
    assert rows["lat"][1] == "int | float"
    assert rows["start_time"][1] == "datetime | str"
    assert f"at most {_vocabulary.MAX_TEAMS}" in rows["teams"][3]
    assert rows["teams"][2] == "team"
    assert "poll" in rows["leagues"][4] and "poll" not in rows["since"][4]


def test_no_private_name_reaches_the_reference(site: Site) -> None:
    leaks = {}
    for page in reference_pages(site):
        found = set(PRIVATE.findall(page.whole.text))
        found |= {i for i in page.whole.ids if PRIVATE.search(i.replace(".", " "))}
        found |= {
            link
            for link in page.whole.links
            if PRIVATE.search(urlsplit(link).fragment.replace(".", " "))
        }
        if found:
            leaks[page.url] = sorted(found)
    assert not leaks, f"private names in the API reference: {leaks}"


def test_signatures_carry_their_types(site: Site) -> None:
    text = site["reference/clients/"].article.text
    assert "list(**params: Unpack[PostsListOptions]) -> SyncPage[Post]" in text
    assert "max_retries: int = 2" in text
    # model fields carry theirs in the models' field tables
    fields = {row[0]: row for row in site["reference/models/"].article.rows}
    assert fields["created_at"][1] in ("UTCDateTime", "datetime")
    assert fields["text"][1] == "str" and fields["author_id"][1] == "Optional[str]"


def test_every_model_field_has_a_line_of_meaning(site: Site) -> None:
    ids = documented_ids(site)
    from pydantic import BaseModel

    import sports_posts

    markup = site["reference/models/"].markup
    for name in sports_posts.__all__:
        model = getattr(sports_posts, name)
        if isinstance(model, type) and issubclass(model, BaseModel):
            for field in model.model_fields:
                assert f"sports_posts.{name}.{field}" in ids, f"{name}.{field} is not in the reference"
                # its row of the model's field table: name, type, meaning
                row = re.search(rf'<tr>\s*<td><a [^>]*id="sports_posts\.{name}\.{field}"></a><code>{field}</code></td>'
                                r"\s*<td><code>[^<]+</code></td>\s*<td>(.*?)</td>\s*</tr>", markup, re.S)
                assert row and row.group(1).strip(), f"{name}.{field} has no row with a line of meaning"


def test_models_show_their_fields_in_one_table(site: Site) -> None:
    # One section per field made a 17-field model a page of headings.
    page = site["reference/models/"]
    assert not re.search(r'<h\d[^>]*id="sports_posts\.Post\.\w+"', page.markup), "a field has its own heading"
    headers = [row for row in page.article.rows if row[:3] == ["field", "type", "meaning"]]
    assert len(headers) >= 15  # a table per model
    rows = {row[0]: row for row in page.article.rows}
    assert rows["created_at"][1] == "UTCDateTime" and "UTC" in rows["created_at"][2]
    events = site["reference/webhooks/"]
    assert not re.search(r'<h\d[^>]*id="sports_posts\.webhooks\.BreakingNewsData\.\w+"', events.markup)
    assert 'id="sports_posts.webhooks.BreakingNewsEvent.dedupe_key"' in events.markup  # methods and properties stay


def test_an_optional_field_the_spec_lists_says_why_in_its_row(site: Site) -> None:
    import sports_posts

    markup = html.unescape(site["reference/models/"].markup)
    for model_name in ("Post", "Author", "Media", "IdList"):
        model = getattr(sports_posts, model_name)
        for field, info in model.model_fields.items():
            if info.description:
                row = re.search(rf'id="sports_posts\.{model_name}\.{field}".*?</tr>', markup, re.S)
                assert row and info.description in " ".join(re.sub("<[^>]+>", "", row.group(0)).split()), (
                    f"{model_name}.{field}: its row does not say why it is optional")


def test_the_pollers_options_are_documented_one_by_one(site: Site) -> None:
    from sports_posts.polling._base import PollerOptions

    page = site["reference/polling/"]
    assert "poller-options" in page.article.ids
    rows = {row[0]: row for row in page.article.rows if len(row) == 4}
    for key in PollerOptions.__annotations__:
        assert key in rows, f"Poller option {key!r} is not in the table"
        _, type_text, default, meaning = rows[key]
        assert type_text and default and meaning, rows[key]
    assert rows["interval"][2] == "60.0" and "caught up" in rows["interval"][3]


def test_no_raw_sphinx_role_or_unresolved_reference(site: Site) -> None:
    for url, page in site.pages.items():
        assert not ROLE.search(page.whole.text), (url, ROLE.findall(page.whole.text))
        assert not UNRESOLVED.search(page.article.text), (
            url,
            UNRESOLVED.findall(page.article.text),
        )


def test_every_internal_link_lands(site: Site) -> None:
    broken = []
    for url, page in site.pages.items():
        for link in page.whole.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or (url == "404.html" and link.startswith("/")):
                # 404.html is served at any depth, so mkdocs gives it root-relative links.
                continue
            target = (site.root / url / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{url}: {link}")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html":
                target_url = target.relative_to(site.root.resolve()).as_posix()
                target_url = target_url[: -len("index.html")]
                if fragment not in site[target_url].whole.ids:
                    broken.append(f"{url}: {link} (no such anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_site_links_the_repository_and_shows_the_version(site: Site) -> None:
    import sports_posts

    home = site[""]
    assert any(link.startswith("https://github.com/") for link in home.whole.links)
    assert sports_posts.__version__ in home.whole.text
    # The palette toggle offers the dark scheme.
    assert 'data-md-color-scheme="slate"' in home.markup
    assert "pip install sports-posts" in home.article.text


def test_code_gets_the_width_of_both_columns(site: Site) -> None:
    # The 88-character limit of test_sources.py assumes no table-of-contents column on the
    # right: the table of contents lives in the navigation (toc.integrate).
    for url, page in site.pages.items():
        assert "md-sidebar--secondary" not in page.markup, url


def test_changelog_page_renders_the_changelog_itself(site: Site) -> None:
    text = site["changelog/"].article.text
    headings = re.findall(r"^#{2,3} (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings
    for heading in headings:
        assert heading.replace("[", "").replace("]", "") in text


def test_every_example_is_linked(site: Site) -> None:
    links = site["examples/"].article.links
    for example in sorted((ROOT / "examples").glob("*.py")):
        assert any(link.endswith(f"/examples/{example.name}") for link in links), example.name


def _css_rules(css: str) -> list[tuple[str, str, str]]:
    """(media query or "", selector, declarations) of each rule of a flat stylesheet."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = []
    for media, body in re.findall(r"@media([^{]*)\{((?:[^{}]*\{[^}]*\})*)\s*\}", css):
        rules += [(media.strip(), s.strip(), d) for s, d in re.findall(r"([^{}]+)\{([^}]*)\}", body)]
    top = re.sub(r"@media[^{]*\{(?:[^{}]*\{[^}]*\})*\s*\}", "", css)
    return rules + [("", s.strip(), d) for s, d in re.findall(r"([^{}]+)\{([^}]*)\}", top)]


def _extra_css(site: Site, page: Page) -> str:
    links = re.findall(r'<link rel="stylesheet" href="([^"]*extra\.css)"', page.markup)
    assert links, f"{page.url} does not load the site's extra stylesheet"
    return (site.root / "stylesheets" / "extra.css").read_text(encoding="utf-8")


def test_charts_sit_on_a_light_panel_in_the_dark_scheme(site: Site) -> None:
    # The charts are dark drawings on a transparent background, shown as <img> (which page
    # CSS cannot recolour): on slate's dark background they were unreadable.
    charts = [(url, page) for url, page in site.pages.items() if re.search(r'<img [^>]*src="[^"]*\.svg"', page.markup)]
    assert charts, "the performance page shows its charts"
    for url, page in charts:
        rules = _css_rules(_extra_css(site, page))
        panel = [d for media, s, d in rules if not media and '[data-md-color-scheme="slate"]' in s and 'img[src$=".svg"]' in s]
        assert panel and re.search(r"background(-color)?:\s*#fff", panel[0]), url


def test_the_copy_button_leaves_the_first_line_of_code_alone_on_a_phone(site: Site) -> None:
    # mkdocs-material puts the copy button over the top right of a code block; at 390 px the
    # code lines reach there. The block's first line must start below the button (2.35em).
    rules = _css_rules(_extra_css(site, site["getting-started/"]))
    narrow = [(m, d) for m, s, d in rules if s == ".md-typeset pre > code" and "max-width" in m]
    assert narrow, "a rule for narrow screens pads code blocks"
    media, declarations = narrow[0]
    width = float(re.search(r"max-width:\s*([\d.]+)em", media).group(1)) * 16  # type: ignore[union-attr]
    padding = float(re.search(r"padding-top:\s*([\d.]+)em", declarations).group(1))  # type: ignore[union-attr]
    assert width >= 390 and padding >= 2.35


def _signatures(page: Page) -> list[str]:
    """The text of each signature block of a reference page, as the reader sees it."""
    blocks = re.findall(r'<div class="doc-signature highlight">(.*?)</div>', page.markup, re.S)
    return [re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", block))).strip() for block in blocks]


def _type_variable_names() -> set[str]:
    import pkgutil

    import sports_posts

    names = set()
    for info in pkgutil.walk_packages(sports_posts.__path__, "sports_posts."):
        if ".sandbox" in info.name or "adapters" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        names |= {value.__name__ for value in vars(module).values() if isinstance(value, typing.TypeVar)}
    return names


def test_signatures_name_types_not_type_variables(site: Site) -> None:
    # The clients, resources and pages share generic bases: an inherited signature must not read
    # `http_client: Optional[H]` or `-> PollerT`, names a reader cannot look up.
    names = _type_variable_names()
    assert {"H", "PollerT", "PageT"} <= names
    found: dict = {}  # type: ignore[type-arg]
    for page in reference_pages(site):
        for signature in _signatures(page):
            # RawResponse[T] is generic for its users: its own T is the parsed answer's type
            words = set(re.findall(r"[A-Za-z_]\w*", signature)) & names
            if words and not signature.startswith(("parse() -> T", "RawResponse(response: Response, parsed: T)")):
                found.setdefault(page.url, []).append(signature[:120])
    assert not found, f"type variables in signatures: {found}"
    clients = " | ".join(_signatures(site["reference/clients/"]))
    assert ") -> Poller |" in clients and ") -> AsyncPoller |" in clients
    assert "http_client: Optional[Client] = None" in clients and "http_client: Optional[AsyncClient] = None" in clients


def test_no_page_loads_anything_from_another_host(site: Site) -> None:
    # Fonts from a font host sent every reader's address there (and failed offline); the
    # repository's facts came from api.github.com. The site serves all it loads itself.
    for url, page in site.pages.items():
        loaded = re.findall(r'<(?:link|script|img)\b[^>]*\b(?:href|src)="(https?:)?//([^"/]+)', page.markup)
        assert not loaded, f"{url} loads from {sorted({host for _, host in loaded})}"
        assert 'data-md-component="source"' not in page.markup, f"{url} fetches the repository's facts"
