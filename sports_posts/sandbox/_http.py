"""uvicorn as the sandbox runs it: one configuration, shared with the sandbox's benchmark baseline.

A request line or header block that h11 cannot parse never reaches the application, so
uvicorn answers it itself, in plain text; the protocol below answers it with the spec's
JSON error body instead, like every other 400 of the service.
"""

from __future__ import annotations

import json
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import error_body

__all__ = ["JsonErrorH11Protocol", "uvicorn_config"]


class JsonErrorH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, except that an unparsable request gets a JSON 400 (spec 2.5)."""

    def send_400_response(self, msg: str) -> None:
        body = json.dumps(error_body("INVALID_PARAMETER", f"Malformed HTTP request: {msg}")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


def uvicorn_config(app: Any) -> uvicorn.Config:
    """The uvicorn settings of a sandbox server: h11 with JSON 400s, no lifespan, quiet, quick to stop."""
    return uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False, http=JsonErrorH11Protocol,
        ws="none", timeout_graceful_shutdown=1,
    )
