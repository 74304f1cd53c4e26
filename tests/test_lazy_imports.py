"""What a bare ``import sports_posts`` costs: the errors only, every other name on first use.

Importing the clients loads the HTTP library and the call machinery, nothing more: the
models, the poller and the resources load with the first use of ``client.posts`` (and so
on), tenacity with a call's first failure, asyncio and anyio with the first async call,
httpcore with the first connection pool.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import sports_posts

PROBE = """
import sys
import sports_posts
heavy = [m for m in ("httpx", "pydantic.main", "asyncio", "anyio", "sports_posts._client") if m in sys.modules]
print(",".join(heavy))
"""


def test_import_sports_posts_loads_neither_the_http_stack_nor_the_models() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == ""


CLIENT_PROBE = """
import sys
from sports_posts import AsyncSportsPosts, SportsPosts
deferred = ("pydantic.main", "tenacity", "asyncio", "anyio", "httpcore", "sports_posts.models",
            "sports_posts.polling", "sports_posts.resources", "sports_posts._params", "sports_posts._budget")
print(",".join(m for m in deferred if m in sys.modules))
client = SportsPosts(api_key="sp_sandbox_x", base_url="http://127.0.0.1:9/v1")
print("resources" if "sports_posts.resources" in sys.modules else "")
client.posts
print(",".join(m for m in ("sports_posts.resources.posts", "sports_posts.models.post") if m in sys.modules))
"""


def test_importing_the_clients_defers_models_retries_asyncio_and_the_resources() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CLIENT_PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    on_import, after_init, after_posts = result.stdout.splitlines()
    assert on_import == ""
    assert after_init == ""
    assert after_posts == "sports_posts.resources.posts,sports_posts.models.post"


def test_every_public_name_resolves_and_dir_lists_them() -> None:
    for name in sports_posts.__all__:
        assert getattr(sports_posts, name) is not None
    assert set(sports_posts.__all__) <= set(dir(sports_posts))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        sports_posts.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("an unknown attribute resolved")


PACKAGES = [
    "sports_posts",
    "sports_posts.polling",
    "sports_posts.sandbox",
    "sports_posts.webhooks",
    "sports_posts.webhooks.dedupe",
    "sports_posts.webhooks.inbox",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_answers_dir_with_its_public_names_and_each_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert dir(module) == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def _lazy_parts(package: str) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """The TYPE_CHECKING re-exports (name -> module), the literal ``__all__`` and the literal
    run-time table (``_LAZY``) of ``package``'s ``__init__``, read from its source."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If)
                   and getattr(node.test, "id", "") == "TYPE_CHECKING")
    imported: dict[str, str] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        for alias in node.names:
            # `X as X` is the explicit re-export both mypy and pyright accept without settings
            assert alias.asname == alias.name, f"{package}: write `{alias.name} as {alias.name}`"
            imported[alias.name] = "." * node.level + (node.module or "")
    assigned = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    literal_all = ast.literal_eval(assigned["__all__"])
    table = ast.literal_eval(assigned["_LAZY"])
    return imported, literal_all, table


@pytest.mark.parametrize("package", PACKAGES)
def test_the_names_for_type_checkers_are_the_lazy_table(package: str) -> None:
    # One table per package; its TYPE_CHECKING re-exports and its literal __all__ (what type
    # checkers and the docs read) name the same objects from the same modules.
    imported, literal_all, table = _lazy_parts(package)
    module = importlib.import_module(package)
    assert literal_all == sorted(literal_all), "keep __all__ sorted"
    assert sorted(imported) == literal_all == sorted(table) == module.__all__
    assert imported == table
    for name, where in imported.items():
        source = importlib.import_module(where, package)
        assert getattr(module, name) is getattr(source, name), name


def test_attach_refuses_an_all_that_differs_from_the_table() -> None:
    from sports_posts._utils import attach

    with pytest.raises(ImportError, match="Missing"):
        attach("sports_posts", {"SportsPosts": "._client"}, ["SportsPosts", "Missing"])


def _public_packages() -> list[str]:
    root = Path(sports_posts.__file__ or "").parent
    found = []
    for init in sorted(root.rglob("__init__.py")):
        parts = init.parent.relative_to(root.parent).parts
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


def test_every_public_package_is_known_here() -> None:
    assert set(PACKAGES) <= set(_public_packages())
    # the others import their names eagerly: a literal __all__ is their export list
    for package in set(_public_packages()) - set(PACKAGES):
        module = importlib.import_module(package)
        tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
        assert not any(isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
                       for node in tree.body), f"{package}: add it to PACKAGES"
        for name in getattr(module, "__all__", ()):
            assert hasattr(module, name), (package, name)
