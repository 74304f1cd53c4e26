"""sports-posts: the typed Python SDK of the Sports Posts data service.

The errors are imported at once; every other public name is imported on first use, so a
script that only needs one part of the SDK (say, webhook signatures) does not pay for the
rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import attach

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from ._budget import (
        BudgetDraw,
        BudgetExhaustedError,
        BudgetStatus,
        CallBudget,
    )
    from ._client import (
        AsyncSportsPosts,
        SportsPosts,
    )
    from ._compliance import (
        AsyncComplianceSweeper,
        ComplianceSweeper,
        ComplianceSweepError,
        SweepResult,
    )
    from ._config import RequestOptions
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
    from ._params import Unchecked
    from ._stores import CoordinationError
    from ._transport import RawResponse
    from ._version import __version__
    from ._warnings import CombinedModesWarning, SportsPostsWarning
    from .models.account import (
        AccountInformation,
        BillingCycle,
        Company,
        ComplianceList,
        Usage,
    )
    from .models.ids import (
        IdItem,
        IdList,
        Team,
        TeamList,
    )
    from .models.post import (
        Author,
        Media,
        Pagination,
        Post,
        PostsResponse,
        TaggedPlayer,
        TaggedTeam,
    )
    from .pagination import (
        AsyncPage,
        SyncPage,
    )
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
    from .polling.checkpoints import CheckpointLockedError, CheckpointMismatchError

# Each public name and the module that defines it, one a line.
__getattr__, __dir__, __all__ = attach(__name__, {
    "APIConnectionError": "._errors",
    "APIResponseValidationError": "._errors",
    "APIStatusError": "._errors",
    "APITimeoutError": "._errors",
    "AuthenticationError": "._errors",
    "BadRequestError": "._errors",
    "GoneError": "._errors",
    "InternalServerError": "._errors",
    "InvalidParameterError": "._errors",
    "InvalidRequestError": "._errors",
    "NotFoundError": "._errors",
    "PageLimitError": "._errors",
    "PaginationError": "._errors",
    "ParameterError": "._errors",
    "PaymentRequiredError": "._errors",
    "PermissionDeniedError": "._errors",
    "RateLimitError": "._errors",
    "ResponseTooLargeError": "._errors",
    "SignatureVerificationError": "._errors",
    "SinceIdNotFoundError": "._errors",
    "SportsPostsError": "._errors",
    "WebhookPayloadError": "._errors",
    "__version__": "._version",
    "CombinedModesWarning": "._warnings",
    "SportsPostsWarning": "._warnings",
    "BudgetDraw": "._budget",
    "BudgetExhaustedError": "._budget",
    "BudgetStatus": "._budget",
    "CallBudget": "._budget",
    "AsyncSportsPosts": "._client",
    "SportsPosts": "._client",
    "AsyncComplianceSweeper": "._compliance",
    "ComplianceSweepError": "._compliance",
    "ComplianceSweeper": "._compliance",
    "SweepResult": "._compliance",
    "Unchecked": "._params",
    "CoordinationError": "._stores",
    "RawResponse": "._transport",
    "RequestOptions": "._config",
    "AccountInformation": ".models.account",
    "BillingCycle": ".models.account",
    "Company": ".models.account",
    "ComplianceList": ".models.account",
    "Usage": ".models.account",
    "IdItem": ".models.ids",
    "IdList": ".models.ids",
    "Team": ".models.ids",
    "TeamList": ".models.ids",
    "Author": ".models.post",
    "Media": ".models.post",
    "Pagination": ".models.post",
    "Post": ".models.post",
    "PostsResponse": ".models.post",
    "TaggedPlayer": ".models.post",
    "TaggedTeam": ".models.post",
    "AsyncPage": ".pagination",
    "SyncPage": ".pagination",
    "AsyncPoller": ".polling",
    "Checkpoint": ".polling",
    "CheckpointConflictError": ".polling",
    "CheckpointError": ".polling",
    "FileCheckpoint": ".polling",
    "MemoryCheckpoint": ".polling",
    "Poller": ".polling",
    "PollState": ".polling",
    "RedisCheckpoint": ".polling",
    "CheckpointLockedError": ".polling.checkpoints",
    "CheckpointMismatchError": ".polling.checkpoints",
}, eager=("._errors", "._version", "._warnings"))
