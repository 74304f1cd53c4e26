"""Moving the SDK's Redis keys between deployments: one server (or Sentinel) names a key
``prefix + rest``, a cluster ``{prefix}rest``. After a migration tool copied the keys with
their names (DUMP/RESTORE), ``respell`` gives them the names of the deployment they landed
on, as ``sports-posts redis respell`` does (docs/fleet.md, "Moving between one server and a
cluster")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from .redis import Redis, has_hash_tag, tagged

__all__ = ["respell"]


def respell(db: Redis, prefix: str, rests: Optional[Sequence[str]] = None, *,
            dry_run: bool = False) -> list[tuple[str, str]]:
    """Move the keys under ``prefix`` spelled for the other kind of deployment to the
    spelling of ``db``'s server.

    ``rests``: only ``prefix + rest`` for each (a lease's ``:lease`` and ``:fence``), else
    every key that starts with the prefix. A key that already exists under the new name is
    kept, except a fencing counter (a rest ending in ``:fence``), which takes the larger of
    the two: a fence never goes back. Values keep their time to live. Returns the (old, new)
    names moved (or that would move, with ``dry_run``)."""
    if has_hash_tag(prefix):
        return []  # spelled the same everywhere
    with db.errors():
        cluster = db.ready()
        client = db.client()
        old, new = (prefix, tagged(prefix, True)) if cluster else (tagged(prefix, True), prefix)
        if rests is None:
            pattern = "".join("\\" + c if c in "*?[]\\" else c for c in old) + "*"
            names = sorted({_text(name) for name in client.scan_iter(match=pattern, count=1000)})
            pairs = [(name, new + name[len(old):]) for name in names]
        else:
            pairs = [(old + rest, new + rest) for rest in rests if client.exists(old + rest)]
        if not dry_run:
            for source, target in pairs:
                _move(client, source, target)
        return pairs


def _move(client: Any, source: str, target: str) -> None:
    """One key to its new name, on whatever slot each lands (no RENAME: it cannot cross slots)."""
    if source.endswith(":fence"):
        value = max(int(client.get(source) or 0), int(client.get(target) or 0))
        client.set(target, value)
    elif not client.exists(target):
        dumped, ttl = client.dump(source), client.pttl(source)
        if dumped is not None:
            client.restore(target, max(ttl, 0), dumped, replace=False)
    client.delete(source)


def _text(name: Any) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)
