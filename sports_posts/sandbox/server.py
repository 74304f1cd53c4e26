"""The ``Sandbox``: the emulated service on a free 127.0.0.1 port, in a background thread."""

from __future__ import annotations

import importlib
import threading
from typing import Any, Optional

from .._errors import SportsPostsError
from .service import AUTHOR_SHAPES, SandboxService

__all__ = ["AUTHOR_SHAPES", "Sandbox"]


class Sandbox(SandboxService):
    """A faithful local emulator of the Sports Posts service, its live data and its webhooks.

    ``with Sandbox(seed=7) as sb:`` serves ``sb.base_url`` (ending in ``/v1``) with
    ``sb.api_key`` (paid plan, every league). Pass ``clock="manual"`` for time that only moves
    when a test calls [`advance`][sports_posts.sandbox.Sandbox.advance].

    ``profile="strict"`` (the default) reads every discrepancy and "not shown" of the
    specification the way least forgiving to the client (one author form per post, combined
    modes refused, game mode by the scheduled game); ``profile="lenient"`` reads each the
    forgiving way (both author forms, combined modes answered), for demos. See docs/sandbox.md.
    """

    _server: Any = None
    _thread: Optional[threading.Thread] = None
    _port: Optional[int] = None

    def __repr__(self) -> str:
        state = f"{self.url}" if self._port else "stopped"
        return f"<Sandbox seed={self.seed} {self.profile.name} {state} keys={len(self.accounts.all())}>"

    # -- server lifecycle ----------------------------------------------------------------

    def start(self) -> Sandbox:
        """Start uvicorn in a thread on a free loopback port and the webhook sender."""
        if self._server is not None:
            return self
        try:
            # The extra's packages are checked on every start: the sandbox's own modules that use
            # them may have been imported already, and would not fail again.
            for package in ("uvicorn", "starlette", "orjson"):
                importlib.import_module(package)
            from ._http import start_server
            from .app import create_app
        except ImportError as exc:  # the optional extra is missing
            raise SportsPostsError(
                f"the sandbox needs the 'sandbox' extra: pip install 'sports-posts[sandbox]' ({exc})"
            ) from None
        self._server, self._thread, self._port = start_server(create_app(self), self.host, self._requested_port)
        self.sender.start()
        return self

    def stop(self, *, grace: float = 0.0) -> bool:
        """Stop the server and the sender; safe to call twice. Webhook attempts in flight
        finish (within their timeout); answers in flight get ``grace`` seconds (0: cut at
        once, so that a chaos-slowed one does not hold ``stop()`` up). True when the server
        stopped within ``grace``."""
        self.sender.stop()
        clean = True
        if self._server is not None:
            self._server.should_exit = True  # stops accepting first
            if grace > 0 and self._thread is not None:
                self._thread.join(timeout=grace)
                clean = not self._thread.is_alive()
            self._server.force_exit = True
            if self._thread is not None:
                self._thread.join(timeout=5)
        self._server = None
        self._thread = None
        return clean

    def serve_forever(self) -> None:
        """Start if needed and block until Ctrl+C (for the ``sports-posts sandbox`` command)."""
        self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(timeout=0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on (once started)."""
        if self._port is None:
            raise RuntimeError("the sandbox is not started")
        return self._port

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:PORT`` (admin routes live under /_sandbox)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The service's base URL, ending in ``/v1``."""
        return f"{self.url}/v1"
