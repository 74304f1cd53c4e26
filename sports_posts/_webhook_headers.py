"""The names of the three webhook headers of spec 6.2, and ``WebhookHeaders`` to rename them.

A proxy or a white-label deployment may deliver the same webhook under other names
(``X-Acme-Signature``, say). The receiver's side (``sports_posts.webhooks``) and the
sandbox's sender both take a ``WebhookHeaders``; it lives below both layers so that
neither imports the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from ._errors import ParameterError

__all__ = [
    "DEFAULT_HEADER_NAMES",
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "WebhookHeaders",
    "header_names_or_default",
]

SIGNATURE_HEADER = "X-Service-Signature"
EVENT_HEADER = "X-Service-Event"
DELIVERY_HEADER = "X-Service-Delivery"

MAX_NAME_LENGTH = 256
"""Longer than any real header name; servers refuse whole header blocks of a few KiB."""

# RFC 9110 5.6.2 token characters, less "_": CGI and WSGI spell "-" as "_" (HTTP_X_ACME_...),
# so Django, Flask's WSGI servers and nginx (underscores_in_headers off) drop or merge such
# names, and a receiver behind them would never see the header.
_NAME = re.compile(r"[!#$%&'*+\-.^`|~0-9A-Za-z]+")
# Headers the sender writes itself or HTTP frames the message with: reusing one would
# overwrite it or be stripped on the way.
_RESERVED = frozenset(
    {"content-type", "content-length", "user-agent", "host", "transfer-encoding", "connection"}
)


@dataclass(frozen=True)
class WebhookHeaders:
    """The names under which a delivery carries its event kind, delivery id and signature.

    The defaults are spec 6.2's. Names are matched case-insensitively when read and sent as
    given. A name that is not an HTTP token (or has ``_``), is reserved, or repeats another
    (ignoring case) is a ``ParameterError`` naming the field.
    """

    event: str = EVENT_HEADER
    delivery: str = DELIVERY_HEADER
    signature: str = SIGNATURE_HEADER
    # ``(signature, delivery)`` lower-cased, as str and as bytes: what a receiver looks up,
    # computed here once instead of on every request.
    _lookup: tuple[str, str] = field(init=False, repr=False, compare=False)
    _lookup_bytes: tuple[bytes, bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            _check_name(f.name, value)
            folded = value.lower()
            if folded in seen:
                raise ParameterError(
                    f"{f.name} header name {value!r} is the same as the {seen[folded]} header's "
                    "(names are case-insensitive)",
                    parameter=f.name,
                )
            seen[folded] = f.name
        lookup = (self.signature.lower(), self.delivery.lower())
        object.__setattr__(self, "_lookup", lookup)
        object.__setattr__(self, "_lookup_bytes", (lookup[0].encode("ascii"), lookup[1].encode("ascii")))

    @classmethod
    def with_prefix(cls, prefix: str) -> WebhookHeaders:
        """``<prefix>Event``, ``<prefix>Delivery``, ``<prefix>Signature``: ``"X-Acme-"`` (or
        ``"X-Acme"``, a ``-`` is added) gives ``X-Acme-Event`` and so on."""
        if not isinstance(prefix, str) or not prefix:
            raise ParameterError("a header prefix must be a non-empty string", parameter="prefix")
        if not prefix.endswith("-"):
            prefix += "-"
        try:
            return cls(event=prefix + "Event", delivery=prefix + "Delivery", signature=prefix + "Signature")
        except ParameterError as exc:  # the names come from the prefix: say so
            raise ParameterError(f"bad header prefix {prefix[:40]!r}: {exc}", parameter="prefix") from None

    def as_dict(self) -> dict[str, str]:
        """``{"event": ..., "delivery": ..., "signature": ...}`` (for JSON and display)."""
        return {"event": self.event, "delivery": self.delivery, "signature": self.signature}


def _check_name(field_name: str, value: object) -> None:
    if not isinstance(value, str):
        raise ParameterError(
            f"{field_name} header name must be a str, not {type(value).__name__}", parameter=field_name
        )
    if not value:
        raise ParameterError(f"{field_name} header name must not be empty", parameter=field_name)
    if len(value) > MAX_NAME_LENGTH:
        raise ParameterError(
            f"{field_name} header name is {len(value)} characters long; at most {MAX_NAME_LENGTH}",
            parameter=field_name,
        )
    if _NAME.fullmatch(value) is None:
        if "_" in value:
            why = "'_' is dropped or turned into '-' by WSGI servers, Django and nginx"
        else:
            why = "only letters, digits and !#$%&'*+-.^`|~ are allowed (an HTTP token)"
        raise ParameterError(f"{field_name} header name {value[:40]!r} is not usable: {why}", parameter=field_name)
    if value.lower() in _RESERVED:
        raise ParameterError(
            f"{field_name} header name {value!r} is a standard HTTP header; pick another", parameter=field_name
        )


DEFAULT_HEADER_NAMES = WebhookHeaders()
"""Spec 6.2's names: ``X-Service-Event``, ``X-Service-Delivery``, ``X-Service-Signature``."""


def header_names_or_default(value: object) -> WebhookHeaders:
    """``value`` when it is a ``WebhookHeaders``, the spec's names for ``None``, else ParameterError."""
    if value is None:
        return DEFAULT_HEADER_NAMES
    if isinstance(value, WebhookHeaders):
        return value
    hint = " (for a prefix: WebhookHeaders.with_prefix(...))" if isinstance(value, str) else ""
    raise ParameterError(
        f"header_names must be a WebhookHeaders or None, not {type(value).__name__}{hint}",
        parameter="header_names",
    )
