"""The ``redis+sentinel://`` URL: the sentinels, the service and the master's settings; and
the sentinels' clients of a master client made from one."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .._errors import ParameterError
from .errors import redact_url

__all__ = ["sentinel_url", "with_sentinels"]


def sentinel_url(url: str, owner: str, parameter: str) -> tuple[list[tuple[str, int]], str, dict[str, Any]]:
    """``redis+sentinel://[user:password@]host[:port][,host[:port]...]/service[/db]``: the
    sentinels, the service name and the master's connection settings."""
    def refused() -> ParameterError:
        return ParameterError(
            f"{owner}: not a valid Sentinel URL (redis+sentinel://host:port[,host:port...]/service[/db]): "
            f"{redact_url(url)!r}", parameter=parameter)

    try:
        parts = urlsplit(url)
    except ValueError:
        raise refused() from None
    userinfo, _, hosts = parts.netloc.rpartition("@")
    sentinels: list[tuple[str, int]] = []
    for host in hosts.split(","):
        try:  # urlsplit reads an IPv6 host in brackets, [::1]:26379, as the URL standard writes it
            one = urlsplit(f"//{host}")
            port = one.port
        except ValueError:
            raise refused() from None
        if not one.hostname and not host.startswith(":"):
            raise refused()
        sentinels.append((one.hostname or "localhost", 26379 if port is None else port))
        if not 0 < sentinels[-1][1] < 65536:
            raise refused()
    path = [piece for piece in parts.path.split("/") if piece]
    if not path or len(path) > 2 or not hosts:
        raise refused()
    settings: dict[str, Any] = {}
    if len(path) == 2:
        if not path[1].isdigit():
            raise refused()
        settings["db"] = int(path[1])
    user, _, password = userinfo.partition(":")
    if user:
        settings["username"] = unquote(user)
    if password:
        settings["password"] = unquote(password)
    for name, value in parse_qsl(parts.query):
        if name.lower() in ("password", "pass", "passwd"):
            settings["password"] = value
        elif name.lower() == "sentinel_password":  # the sentinels' own, when they require one
            settings["sentinel_password"] = value
    if parts.scheme.lower().startswith("rediss"):
        settings["ssl"] = True
    return sentinels, unquote(path[0]), settings


def with_sentinels(client: Any) -> list[Any]:
    """``client`` and, when it is a Sentinel-managed master client, the clients of the
    sentinels it asks: what closing a client made from a URL closes (closing the master's
    own pool leaves their sockets open)."""
    manager = getattr(getattr(client, "connection_pool", None), "sentinel_manager", None)
    return [client, *manager.sentinels] if manager is not None else [client]
