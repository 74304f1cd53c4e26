"""mkdocs hook: tables the reference cannot get from mkdocstrings alone.

- A pydantic model of a reference page (``::: sports_posts.Post`` with no options) is shown
  with its class docs and methods, then one table of its fields (name, type, meaning),
  instead of one section per field. Each field keeps its anchor (``#sports_posts.Post.id``),
  so links to a field still land.
- ``<!-- poller-options -->`` becomes the table of the ``PollerOptions`` TypedDict, the
  keyword options of ``Poller`` and ``AsyncPoller``, which a signature shows only as
  ``**options: Unpack[PollerOptions]``.

Types and meanings are read from the source (the annotations as written, the docstring
under each field, then its ``Field(description=...)``: why a field is optional), defaults
from the code, so the tables cannot drift from it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from typing import Any, Optional

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

POLLER_OPTIONS = "<!-- poller-options -->"
DIRECTIVE = re.compile(r"^::: (sports_posts(?:\.\w+)+)[ \t]*$(?!\n[ \t]+options:)", re.M)


def _documented(cls: type) -> dict[str, tuple[str, str]]:
    """name -> (annotation as written, docstring) of each annotated attribute of ``cls`` and
    of its bases in the package (the class's own first)."""
    found: dict[str, tuple[str, str]] = {}
    for klass in cls.__mro__:
        if not klass.__module__.startswith("sports_posts"):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.ClassDef):
            continue
        body = node.body
        for statement, following in zip(body, body[1:] + [None]):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                doc = ""
                if (isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                        and isinstance(following.value.value, str)):
                    doc = inspect.cleandoc(following.value.value)
                found.setdefault(statement.target.id, (ast.unparse(statement.annotation), doc))
    return found


def _cell(text: str) -> str:
    """Markdown for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _runtime(path: str) -> Optional[object]:
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def model_block(path: str, model: Any) -> str:
    """The model's mkdocstrings block without its fields, then the table of its fields."""
    from pydantic import BaseModel

    documented = _documented(model)
    others = sorted(
        name for name in dir(model)
        if not name.startswith("_") and name not in model.model_fields and not hasattr(BaseModel, name)
    )
    members = f"[{', '.join(others)}]" if others else "false"
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for name in model.model_fields:
        annotation, doc = documented.get(name, ("", ""))
        why = model.model_fields[name].description  # why a field the spec lists is optional
        if why and why not in doc:
            doc = f"{doc} {why}".strip()
        # an anchor per field, so that [Post.id][sports_posts.Post.id] still lands
        rows.append(f"| [](){{#{path}.{name}}}`{name}` | `{_cell(annotation)}` | {_cell(doc)} |")
    options = f"      members: {members}\n      inherited_members: {members}\n"
    return f"::: {path}\n    options:\n{options}\n" + "\n".join(rows) + "\n"


def poller_options_table() -> str:
    """Every key of ``PollerOptions`` with its type, default and meaning."""
    from sports_posts.polling import _base

    documented = _documented(_base.PollerOptions)
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(_base.PollerBase._setup).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    keys = list(_base.PollerOptions.__annotations__)
    missing = [key for key in keys if not documented.get(key, ("", ""))[1] or key not in defaults]
    if missing:
        raise PluginError(f"PollerOptions keys without a docstring or a default in _setup: {missing}")
    rows = ["| option | type | default | meaning |", "|---|---|---|---|"]
    for key in keys:
        annotation, doc = documented[key]
        default = defaults[key]
        shown = "None" if default is None else (f"{default.total_seconds():g} s" if hasattr(default, "total_seconds")
                                                else repr(default))
        rows.append(f"| [](){{#poller-options.{key}}}`{key}` | `{_cell(annotation)}` | `{shown}` | {_cell(doc)} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if POLLER_OPTIONS in markdown:
        markdown = markdown.replace(POLLER_OPTIONS, poller_options_table())
    if not page.file.src_uri.startswith("reference/"):
        return markdown
    from pydantic import BaseModel

    def replace(match: re.Match[str]) -> str:
        obj = _runtime(match.group(1))
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            return model_block(match.group(1), obj)
        return match.group(0)

    return DIRECTIVE.sub(replace, markdown)
