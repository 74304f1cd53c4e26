"""The report of every public ``Any`` (public_any.py, also run by .ci/typecheck on the wheel):
the source tree's public API has only the ``Any``s public_any.toml lists, and the report
finds each way an ``Any`` can sit in a signature."""

from __future__ import annotations

import textwrap
from pathlib import Path

from .public_any import ROOT, Allowed, Occurrence, Report, allowed, load, problems, report

FAKE = '''
from __future__ import annotations
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, overload
from typing_extensions import TypeAlias, TypedDict

from ._private import Hidden, _Base

if TYPE_CHECKING:
    from httpx._types import RequestData

__all__ = ["Json", "Options", "Public", "clean", "f", "g", "h", "k"]

Json: TypeAlias = "dict[str, Any]"
Inner = Mapping[str, Any]
F = TypeVar("F", bound=Callable[..., object])


class Options(TypedDict, total=False):
    extra: Inner


class Public(_Base):
    name: str
    blob: Any

    def method(self, *args: Any, **kwargs: int) -> Optional[Hidden]: ...

    @property
    def payload(self) -> Json: ...

    def _private(self, x: Any) -> Any: ...


def f(data: RequestData, wrap: F) -> F: ...
@overload
def g(x: int) -> int: ...
@overload
def g(x: str) -> list[Any]: ...
def g(x: object) -> object: ...
def h(callback: Callable[..., None]) -> None: ...
def k(x: int) -> str: ...
def clean(x: Mapping[str, int]) -> Callable[[int], str]: ...
'''

PRIVATE = '''
from typing import Any


class _Base:
    def inherited(self) -> dict[str, Any]: ...


class Hidden:
    def reached(self, value: Any) -> None: ...
'''


def _fake(tmp_path: Path) -> list[Occurrence]:
    package = tmp_path / "sports_posts"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(FAKE), encoding="utf-8")
    (package / "_private.py").write_text(textwrap.dedent(PRIVATE), encoding="utf-8")
    (package / "inner.py").write_text("from typing import Any\n\ndef open_(x: Any) -> None: ...\n", encoding="utf-8")
    (package / "hidden.py").write_text("from typing import Any\n\ndef skipped(x: Any) -> None: ...\n", encoding="utf-8")
    return Report(load(tmp_path), internal={"sports_posts.hidden"}).run()


def test_the_report_finds_every_kind_of_any(tmp_path: Path) -> None:
    found = {occurrence.key: occurrence.type for occurrence in _fake(tmp_path)}
    assert set(found) == {
        "sports_posts.Json (alias)",  # a TypeAlias written as a string
        "sports_posts.Options.extra (attribute)",  # a TypedDict's field, through an alias
        "sports_posts.Public.blob (attribute)",
        "sports_posts.Public.method (parameter *args)",
        "sports_posts.Public.payload (attribute)",  # a property, through a TypeAlias
        "sports_posts.Public.inherited (return)",  # from a private base
        "sports_posts._private.Hidden.reached (parameter value)",  # a class a signature returns
        "sports_posts.f (parameter data)",  # another library's alias (httpx: Mapping[str, Any])
        "sports_posts.f (parameter wrap)",  # a TypeVar's bound: Callable[..., object]
        "sports_posts.f (return)",
        "sports_posts.g (return)",  # one overload of two
        "sports_posts.h (parameter callback)",  # Callable[..., X] takes any arguments
        "sports_posts.inner.open_ (parameter x)",  # a public module without __all__
    }
    assert found["sports_posts.Options.extra (attribute)"] == "Inner (Inner = Mapping[str, Any])"
    assert "httpx._types.RequestData holds Any" in found["sports_posts.f (parameter data)"]


def test_a_check_fails_on_an_unlisted_any_a_stale_entry_and_a_missing_reason(tmp_path: Path) -> None:
    found = [Occurrence("sports_posts.f", "return", "Any"), Occurrence("sports_posts.E.__reduce__", "return", "Any")]
    entries = Allowed(
        {"*.__reduce__ (return)": "pickle's protocol", "sports_posts.gone (return)": "was open", "sports_posts.x": " "},
        {},
    )
    assert problems(found, entries) == [
        "not in public_any.toml: sports_posts.f (return): Any",
        "stale entry in public_any.toml (no such Any now): sports_posts.gone (return)",
        "stale entry in public_any.toml (no such Any now): sports_posts.x",
        "entry without a reason in public_any.toml: sports_posts.x",
    ]
    assert problems(found[1:], Allowed({"*.__reduce__ (return)": "pickle's protocol"}, {})) == []


def test_every_public_any_of_the_package_is_listed_with_its_reason() -> None:
    entries = allowed()
    package = load(ROOT)
    found = Report(package, entries.internal).run()
    assert problems(found, entries, package) == []
    assert found == report(ROOT, entries.internal)  # one walk gives what the next gives
