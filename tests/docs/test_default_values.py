"""The API reference shows a parameter's default as its value (``120.0``), never as the
name of a constant (``DEFAULT_TOTAL_TIMEOUT``) that a reader would have to look up."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

import griffe

from .site import ROOT

HOOKS = [f"{ROOT / 'docs/hooks/concrete_types.py'}:ConcreteTypes",
         f"{ROOT / 'docs/hooks/default_values.py'}:DefaultValues"]


@functools.lru_cache(maxsize=1)
def _package() -> griffe.Module:
    """The package as the reference's griffe reads it, loaded once: the tests only read it."""
    extensions = griffe.load_extensions(*HOOKS)
    return griffe.load("sports_posts", extensions=extensions, search_paths=[str(ROOT)],
                       resolve_aliases=True, resolve_external=False)  # type: ignore[return-value]


def _functions(obj: griffe.Object, seen: set[int]) -> Any:
    for member in obj.members.values():
        if member.is_alias or id(member) in seen:
            continue
        seen.add(id(member))
        if isinstance(member, griffe.Function):
            yield member
        elif isinstance(member, (griffe.Class, griffe.Module)):
            yield from _functions(member, seen)


def test_no_signature_shows_a_constant_as_a_default() -> None:
    named = [
        f"{func.path}({parameter.name}={parameter.default})"
        for func in _functions(_package(), set())
        for parameter in func.parameters
        if isinstance(parameter.default, griffe.ExprName) and str(parameter.default).startswith("DEFAULT_")
        # an object with a long repr (a Timeout, a WebhookHeaders) keeps its name
        and str(parameter.default) not in {"DEFAULT_TIMEOUT", "DEFAULT_HEADER_NAMES"}
    ]
    assert named == []


def test_the_poll_lookback_and_the_client_bounds_show_their_values() -> None:
    package = _package()
    poll = package["resources.posts.PostModes.poll"]
    assert str(poll.parameters["lookback"].default) == "timedelta(seconds=180)"
    client = package["_base_client._ClientBase.__init__"]
    assert str(client.parameters["total_timeout"].default) == "120.0"
    assert str(package["pagination.SyncPage.iter_pages"].parameters["max_pages"].default) == "1000"


def test_a_value_reads_as_a_reader_writes_it() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("default_values", ROOT / "docs/hooks/default_values.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    literal = hook.literal
    assert literal(timedelta(seconds=90)) == "timedelta(seconds=90)"
    assert literal((1.0, 5.0)) == "(1.0, 5.0)"
    assert literal(object()) is None


def test_a_model_field_shows_its_default_and_why_it_is_optional() -> None:
    package = _package()
    name = package["models.post.Author"].members["name"]
    assert str(name.value) == "None"
    assert name.docstring is not None and "flat form carries only the username" in name.docstring.value
    author_id = package["models.post.Post"].members["author_id"]
    assert str(author_id.value) == "None" and author_id.docstring is not None
    assert author_id.docstring.value.startswith("The author's id") and "only the flat author form" in author_id.docstring.value
    assert str(package["models.ids.IdList"].members["ok"].value) == "True"
