"""A local server, run in its own process, that answers GET /v1/posts with one fixed page.

Both the SDK and the baseline read the same bytes from it over keep-alive connections,
so the ratio measures only what the client adds.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import uvicorn

from benchmarks._data import page_bytes

BODY = page_bytes(100)
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


if __name__ == "__main__":
    # Keep-alive connections stay open however long a round waits (uvicorn closes an idle one
    # after 5 s by default: a client starved that long on a busy machine, as CI's niced lane
    # is, met "Server disconnected" on its next request, a failure of the harness).
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", access_log=False, lifespan="off",
                timeout_keep_alive=3600)
