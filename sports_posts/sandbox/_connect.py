"""A client of the service the environment names, or of a sandbox when one is asked for.

What the examples, the CLI and a new user's first script want: the same code runs against
production (``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL`` set) and, with no
account and no network, against a local sandbox started for the duration. The sandbox is
used only when asked for (``sandbox=True``, no key in the environment, or a sandbox key):
a real key without a base URL is a configuration error, never sandbox data in silence.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from typing_extensions import TypedDict, Unpack

from .._client import AsyncSportsPosts, SportsPosts
from .._errors import ParameterError, SportsPostsError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from .._vocabulary import WebhookHeaders
    from .clock import Clock
    from .config import BurstLimit, ChaosSettings, KeyConfig

__all__ = [
    "SANDBOX_KEY_PREFIX",
    "SandboxOptions",
    "Target",
    "aconnect",
    "choose_target",
    "connect",
    "open_target",
]

log = logging.getLogger("sports_posts")

KEY_ENV = "SPORTS_POSTS_API_KEY"
URL_ENV = "SPORTS_POSTS_BASE_URL"

SANDBOX_KEY_PREFIX = "sp_sandbox_"
"""A key starting with this asks for an embedded sandbox that accepts it (no base URL needed)."""


class SandboxOptions(TypedDict, total=False):
    """The keyword arguments of [`Sandbox`][sports_posts.sandbox.Sandbox], for ``connect(**options)``."""

    seed: int
    plan: str
    leagues: Optional[Iterable[str]]
    keys: Union[Sequence[KeyConfig], Mapping[str, KeyConfig], None]
    posts: int
    posts_per_minute: float
    late_index_rate: float
    deletions_per_hour: float
    profile: str
    author_shape: Optional[str]
    time_scale: float
    webhook_timeout: Optional[float]
    webhook_header_names: Optional[WebhookHeaders]
    chaos: Optional[ChaosSettings]
    burst: Optional[BurstLimit]
    clock: Union[Clock, str, None]
    start: Optional[datetime]
    host: str
    port: int


@dataclass(frozen=True)
class Target:
    """Where a connection goes: the service at ``base_url``, or a sandbox (``base_url`` None)."""

    base_url: Optional[str]
    api_key: Optional[str] = field(repr=False)
    """The key to send; for a sandbox, a sandbox key it must accept, or None for its own key."""
    reason: str
    """Why this target, in words for a log line (never the key)."""

    @property
    def sandbox(self) -> bool:
        """True when a sandbox is started for the block."""
        return self.base_url is None


def choose_target(sandbox: Optional[bool] = None, environ: Optional[Mapping[str, str]] = None) -> Target:
    """Decide between the service and a sandbox, without starting anything.

    ``sandbox=True`` always starts one; ``sandbox=False`` never does; ``None`` starts one only
    when the environment has no key or a key starting with `SANDBOX_KEY_PREFIX`. A key
    without a base URL is a `SportsPostsError` that names ``SPORTS_POSTS_BASE_URL``.
    """
    env = os.environ if environ is None else environ
    key = (env.get(KEY_ENV) or "").strip() or None
    url = (env.get(URL_ENV) or "").strip() or None
    if sandbox is not None and not isinstance(sandbox, bool):
        raise ParameterError(f"sandbox must be True, False or None, got {sandbox!r}", parameter="sandbox")
    if sandbox:
        if url is not None:
            warnings.warn(f"a sandbox was asked for (sandbox=True, --sandbox): {URL_ENV} is set but ignored",
                          UserWarning, stacklevel=2)
        sandbox_key = key if key is not None and key.startswith(SANDBOX_KEY_PREFIX) else None
        return Target(None, sandbox_key, "a sandbox was asked for")
    if url is not None:
        if key is None:
            raise SportsPostsError(
                f"{URL_ENV} is set but {KEY_ENV} is not: set {KEY_ENV} to your API key "
                "(keys are created in the customer dashboard)"
            )
        return Target(url, key, f"the service at {url} ({URL_ENV})")
    if key is not None and key.startswith(SANDBOX_KEY_PREFIX):
        if sandbox is False:
            raise SportsPostsError(
                f"{KEY_ENV} is a sandbox key ({SANDBOX_KEY_PREFIX}...) but sandbox=False: "
                f"set {KEY_ENV} to a key of the service and {URL_ENV} to its base URL"
            )
        return Target(None, key, f"{KEY_ENV} is a sandbox key")
    if key is not None:
        raise SportsPostsError(
            f"{KEY_ENV} is set but {URL_ENV} is not: set {URL_ENV} to the service's base URL "
            "(it ends in /v1), or ask for a local sandbox explicitly "
            "(sandbox=True, `sports-posts ... --sandbox`)"
        )
    if sandbox is False:
        raise SportsPostsError(
            f"no service configured: set {KEY_ENV} and {URL_ENV} (sandbox=False refuses a local sandbox)"
        )
    return Target(None, None, f"{KEY_ENV} is not set")


def _check_sandbox_options(options: Mapping[str, Any]) -> None:
    """Unknown options are a ParameterError here, not a TypeError from deep inside."""
    from .server import Sandbox

    accepted = set(inspect.signature(Sandbox.__init__).parameters) - {"self"}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ParameterError(
            f"unknown sandbox option(s) {', '.join(unknown)}; Sandbox accepts {', '.join(sorted(accepted))}",
            parameter=unknown[0],
        )


@contextlib.contextmanager
def open_target(target: Target, sandbox_options: Optional[Mapping[str, Any]] = None) -> Iterator[tuple[str, str]]:
    """``(api_key, base_url)`` of the target; a sandbox runs for the duration of the block.

    ``sandbox_options`` go to `Sandbox` and are ignored for the service.
    """
    options = dict(sandbox_options or {})
    _check_sandbox_options(options)
    if target.base_url is not None:
        if options:
            log.debug("sandbox options %s ignored: %s", sorted(options), target.reason)
        yield str(target.api_key), target.base_url
        return
    from .server import Sandbox

    with Sandbox(**options) as sb:
        key = sb.api_key
        if target.api_key is not None:
            # The sandbox key gets the account of the sandbox's own key (its plan and leagues).
            default = sb.accounts.get(sb.api_key)
            assert default is not None  # the sandbox's own key is always registered
            key = sb.accounts.add(default.config, target.api_key)
        yield key, sb.base_url


@contextlib.contextmanager
def connect(*, sandbox: Optional[bool] = None, **sandbox_options: Unpack[SandboxOptions]) -> Iterator[SportsPosts]:
    """``with connect() as client:`` a [`SportsPosts`][sports_posts.SportsPosts] of the service
    or of a sandbox.

    The service named by ``SPORTS_POSTS_API_KEY`` and ``SPORTS_POSTS_BASE_URL``; a sandbox for
    the block only with ``sandbox=True``, with no key in the environment, or with a key
    starting with ``sp_sandbox_``. A key without a base URL raises ``SportsPostsError``.
    ``sandbox_options`` go to [`Sandbox`][sports_posts.sandbox.Sandbox] (``seed=``,
    ``posts_per_minute=``, ...). Which one it is goes to the ``sports_posts`` logger.
    """
    target = choose_target(sandbox)
    with open_target(target, sandbox_options) as (key, url), SportsPosts(api_key=key, base_url=url) as client:
        log.info("connect(): %s at %s", "an embedded sandbox" if target.sandbox else "the service", url)
        yield client


@contextlib.asynccontextmanager
async def aconnect(
    *, sandbox: Optional[bool] = None, **sandbox_options: Unpack[SandboxOptions]
) -> AsyncIterator[AsyncSportsPosts]:
    """``async with aconnect() as client:`` the async twin of [`connect`][sports_posts.sandbox.connect]."""
    target = choose_target(sandbox)
    with open_target(target, sandbox_options) as (key, url):
        async with AsyncSportsPosts(api_key=key, base_url=url) as client:
            log.info("aconnect(): %s at %s", "an embedded sandbox" if target.sandbox else "the service", url)
            yield client
