"""sports-posts: the typed Python SDK of the Sports Posts data service.

The errors are imported at once; every other public name is imported on first use, so a
script that only needs one part of the SDK (say, webhook signatures) does not pay for the
rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._utils import attach

if TYPE_CHECKING:  # the same names, as explicit re-exports (`X as X`) that every checker accepts
    from ._budget import BudgetDraw as BudgetDraw
    from ._budget import BudgetExhaustedError as BudgetExhaustedError
    from ._budget import BudgetStatus as BudgetStatus
    from ._budget import CallBudget as CallBudget
    from ._client import AsyncSportsPosts as AsyncSportsPosts
    from ._client import SportsPosts as SportsPosts
    from ._config import RequestOptions as RequestOptions
    from ._config import RetryEvent as RetryEvent
    from ._errors import APIConnectionError as APIConnectionError
    from ._errors import APIResponseValidationError as APIResponseValidationError
    from ._errors import APIStatusError as APIStatusError
    from ._errors import APITimeoutError as APITimeoutError
    from ._errors import AuthenticationError as AuthenticationError
    from ._errors import BadRequestError as BadRequestError
    from ._errors import CombinedModesWarning as CombinedModesWarning
    from ._errors import GoneError as GoneError
    from ._errors import HTTPClientScopeError as HTTPClientScopeError
    from ._errors import InternalServerError as InternalServerError
    from ._errors import InvalidParameterError as InvalidParameterError
    from ._errors import InvalidRequestError as InvalidRequestError
    from ._errors import NotFoundError as NotFoundError
    from ._errors import PageLimitError as PageLimitError
    from ._errors import PaginationError as PaginationError
    from ._errors import ParameterError as ParameterError
    from ._errors import PaymentRequiredError as PaymentRequiredError
    from ._errors import PermissionDeniedError as PermissionDeniedError
    from ._errors import RateLimitError as RateLimitError
    from ._errors import ResponseTooLargeError as ResponseTooLargeError
    from ._errors import SignatureVerificationError as SignatureVerificationError
    from ._errors import SinceIdNotFoundError as SinceIdNotFoundError
    from ._errors import SportsPostsError as SportsPostsError
    from ._errors import SportsPostsWarning as SportsPostsWarning
    from ._errors import WebhookPayloadError as WebhookPayloadError
    from ._http import default_async_http_client as default_async_http_client
    from ._http import default_http_client as default_http_client
    from ._params import Unchecked as Unchecked
    from ._stores import CoordinationError as CoordinationError
    from ._transport import RawResponse as RawResponse
    from ._version import __version__ as __version__
    from .models.account import AccountInformation as AccountInformation
    from .models.account import BillingCycle as BillingCycle
    from .models.account import Company as Company
    from .models.account import ComplianceList as ComplianceList
    from .models.account import Usage as Usage
    from .models.ids import IdItem as IdItem
    from .models.ids import IdList as IdList
    from .models.ids import Team as Team
    from .models.ids import TeamList as TeamList
    from .models.post import Author as Author
    from .models.post import Media as Media
    from .models.post import Pagination as Pagination
    from .models.post import Post as Post
    from .models.post import PostsResponse as PostsResponse
    from .models.post import TaggedPlayer as TaggedPlayer
    from .models.post import TaggedTeam as TaggedTeam
    from .pagination import AsyncPage as AsyncPage
    from .pagination import SyncPage as SyncPage
    from .polling import AsyncPoller as AsyncPoller
    from .polling import Checkpoint as Checkpoint
    from .polling import CheckpointConflictError as CheckpointConflictError
    from .polling import CheckpointError as CheckpointError
    from .polling import FileCheckpoint as FileCheckpoint
    from .polling import MemoryCheckpoint as MemoryCheckpoint
    from .polling import Poller as Poller
    from .polling import PollState as PollState
    from .polling import RedisCheckpoint as RedisCheckpoint
    from .polling.checkpoints import CheckpointLockedError as CheckpointLockedError
    from .polling.checkpoints import CheckpointMismatchError as CheckpointMismatchError
    from .resources.compliance import AsyncComplianceSweeper as AsyncComplianceSweeper
    from .resources.compliance import ComplianceSweeper as ComplianceSweeper
    from .resources.compliance import ComplianceSweepError as ComplianceSweepError
    from .resources.compliance import SweepResult as SweepResult

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
    "BudgetDraw",
    "BudgetExhaustedError",
    "BudgetStatus",
    "CallBudget",
    "Checkpoint",
    "CheckpointConflictError",
    "CheckpointError",
    "CheckpointLockedError",
    "CheckpointMismatchError",
    "CombinedModesWarning",
    "Company",
    "ComplianceList",
    "ComplianceSweepError",
    "ComplianceSweeper",
    "CoordinationError",
    "FileCheckpoint",
    "GoneError",
    "HTTPClientScopeError",
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
    "RetryEvent",
    "SignatureVerificationError",
    "SinceIdNotFoundError",
    "SportsPosts",
    "SportsPostsError",
    "SportsPostsWarning",
    "SweepResult",
    "SyncPage",
    "TaggedPlayer",
    "TaggedTeam",
    "Team",
    "TeamList",
    "Unchecked",
    "Usage",
    "WebhookPayloadError",
    "__version__",
    "default_async_http_client",
    "default_http_client",
]

# Each public name and the module that defines it, one a line: the run-time table.
# tests/test_lazy_imports.py checks that it, __all__ and the imports above name the same things.
_LAZY = {
    "APIConnectionError": "._errors",
    "APIResponseValidationError": "._errors",
    "APIStatusError": "._errors",
    "APITimeoutError": "._errors",
    "AuthenticationError": "._errors",
    "BadRequestError": "._errors",
    "GoneError": "._errors",
    "HTTPClientScopeError": "._errors",
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
    "CombinedModesWarning": "._errors",
    "SportsPostsWarning": "._errors",
    "BudgetDraw": "._budget",
    "BudgetExhaustedError": "._budget",
    "BudgetStatus": "._budget",
    "CallBudget": "._budget",
    "AsyncSportsPosts": "._client",
    "SportsPosts": "._client",
    "AsyncComplianceSweeper": ".resources.compliance",
    "ComplianceSweepError": ".resources.compliance",
    "ComplianceSweeper": ".resources.compliance",
    "SweepResult": ".resources.compliance",
    "Unchecked": "._params",
    "CoordinationError": "._stores",
    "RawResponse": "._transport",
    "RequestOptions": "._config",
    "RetryEvent": "._config",
    "default_async_http_client": "._http",
    "default_http_client": "._http",
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
}

if not TYPE_CHECKING:  # at run time only: a checker reads the imports above
    __getattr__, __dir__ = attach(__name__, _LAZY, __all__, eager=("._errors", "._version"))
