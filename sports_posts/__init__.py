"""sports-posts: the typed Python SDK of the Sports Posts data service.

The errors are imported at once; every other public name is imported on first use, so a
script that only needs one part of the SDK (say, webhook signatures) does not pay for the
rest at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    GoneError,
    InternalServerError,
    InvalidParameterError,
    InvalidRequestError,
    NotFoundError,
    PageLimitError,
    PaginationError,
    ParameterError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ResponseTooLargeError,
    SignatureVerificationError,
    SinceIdNotFoundError,
    SportsPostsError,
    WebhookPayloadError,
)
from ._version import __version__

if TYPE_CHECKING:
    from ._budget import BudgetExhaustedError, BudgetStatus, CallBudget
    from ._client import AsyncSportsPosts, SportsPosts
    from ._compliance import (
        AsyncComplianceSweeper,
        ComplianceSweeper,
        ComplianceSweepError,
        SweepResult,
    )
    from ._stores import CoordinationError
    from ._transport import RawResponse, RequestOptions
    from .models.account import AccountInformation, BillingCycle, Company, ComplianceList, Usage
    from .models.ids import IdItem, IdList, Team, TeamList
    from .models.post import (
        Author,
        Media,
        Pagination,
        Post,
        PostsResponse,
        TaggedPlayer,
        TaggedTeam,
    )
    from .pagination import AsyncPage, SyncPage
    from .polling import (
        AsyncPoller,
        Checkpoint,
        CheckpointConflictError,
        CheckpointError,
        FileCheckpoint,
        MemoryCheckpoint,
        Poller,
        PollState,
        RedisCheckpoint,
    )
    from .polling.checkpoints import CheckpointLockedError

_LAZY = {
    "CheckpointLockedError": ".polling.checkpoints",
    "RawResponse": "._transport",
    "RequestOptions": "._transport",
    "AccountInformation": ".models.account",
    "AsyncPage": ".pagination",
    "AsyncComplianceSweeper": "._compliance",
    "AsyncPoller": ".polling",
    "AsyncSportsPosts": "._client",
    "Author": ".models.post",
    "BillingCycle": ".models.account",
    "BudgetExhaustedError": "._budget",
    "BudgetStatus": "._budget",
    "CallBudget": "._budget",
    "Checkpoint": ".polling",
    "CheckpointConflictError": ".polling",
    "CheckpointError": ".polling",
    "Company": ".models.account",
    "ComplianceList": ".models.account",
    "ComplianceSweepError": "._compliance",
    "ComplianceSweeper": "._compliance",
    "CoordinationError": "._stores",
    "FileCheckpoint": ".polling",
    "IdItem": ".models.ids",
    "IdList": ".models.ids",
    "Media": ".models.post",
    "MemoryCheckpoint": ".polling",
    "Pagination": ".models.post",
    "PollState": ".polling",
    "Poller": ".polling",
    "Post": ".models.post",
    "PostsResponse": ".models.post",
    "RedisCheckpoint": ".polling",
    "SportsPosts": "._client",
    "SweepResult": "._compliance",
    "SyncPage": ".pagination",
    "TaggedPlayer": ".models.post",
    "TaggedTeam": ".models.post",
    "Team": ".models.ids",
    "TeamList": ".models.ids",
    "Usage": ".models.account",
}
"""Where each public name lives, for ``__getattr__``."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "APIConnectionError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AccountInformation",
    "AsyncComplianceSweeper",
    "AsyncPage",
    "AsyncPoller",
    "AsyncSportsPosts",
    "AuthenticationError",
    "Author",
    "BadRequestError",
    "BillingCycle",
    "BudgetExhaustedError",
    "BudgetStatus",
    "CallBudget",
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "CheckpointLockedError",
    "Company",
    "ComplianceList",
    "ComplianceSweepError",
    "ComplianceSweeper",
    "CoordinationError",
    "FileCheckpoint",
    "GoneError",
    "IdItem",
    "IdList",
    "InternalServerError",
    "InvalidParameterError",
    "InvalidRequestError",
    "Media",
    "MemoryCheckpoint",
    "NotFoundError",
    "PageLimitError",
    "Pagination",
    "PaginationError",
    "ParameterError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "PollState",
    "Poller",
    "Post",
    "PostsResponse",
    "RateLimitError",
    "RawResponse",
    "RedisCheckpoint",
    "RequestOptions",
    "ResponseTooLargeError",
    "SignatureVerificationError",
    "SinceIdNotFoundError",
    "SportsPosts",
    "SportsPostsError",
    "SweepResult",
    "SyncPage",
    "TaggedPlayer",
    "TaggedTeam",
    "Team",
    "TeamList",
    "Usage",
    "WebhookPayloadError",
    "__version__",
]
