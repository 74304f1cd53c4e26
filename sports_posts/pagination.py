"""Pages of GET /posts that fetch the next page only when iteration reaches it.

Every page costs the customer a call, so nothing is fetched ahead: ``list()`` fetches
page 1 (async: on ``await`` or on the first ``async for`` step), and page N+1 is asked
for only when the caller iterates past page N. The paging rule and the walk's bounds are
decided once, here, for both page types; each type only fetches.

Every walk is bounded: at most ``max_pages`` pages (default ``DEFAULT_MAX_PAGES``,
crossing it is a ``PageLimitError``), and a page that does not advance (the same
page number or the same posts again) is a ``PaginationError`` after the call that
showed it, so a service answering ``has_next: true`` forever cannot spend calls forever.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Generator, Iterator
from typing import Any, Callable, Generic, Optional, TypeVar

from ._errors import PageLimitError, PaginationError, ParameterError
from ._request import APICall
from .models.post import Pagination, Post, PostsResponse

__all__ = ["DEFAULT_MAX_PAGES", "AsyncPage", "PageLimitError", "PaginationError", "SyncPage"]

DEFAULT_MAX_PAGES = 1000
"""Pages one walk may fetch unless told otherwise: 100,000 posts at ``limit=100``, far past
any real listing, and a bound on what a service that never ends can cost."""

T = TypeVar("T", bound=Post)
PostsCall = APICall[PostsResponse]


def _next_call(call: PostsCall, pagination: Pagination, n_items: int) -> Optional[PostsCall]:
    """The call of the page after this one, or ``None``: the paging rule, once."""
    if not pagination.has_next or n_items == 0:
        # An empty page that claims a successor would make iteration spend calls for nothing.
        return None
    return call.with_params(page=str(pagination.page + 1))


def _check_guard(name: str, value: Optional[int]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ParameterError(f"{name} must be a positive integer or None", parameter=name)


class _Walk(Generic[T]):
    """How far a walk over pages may go: ``max_pages`` and ``max_items``, checked once for
    both page types before each next page is fetched."""

    def __init__(self, max_pages: Optional[int], max_items: Optional[int] = None) -> None:
        # max_items is a count the caller wants (a quiet stop); max_pages is a guard on the
        # spend (crossing it is an error, so a truncated listing is never taken for a whole).
        _check_guard("max_pages", max_pages)
        _check_guard("max_items", max_items)
        self.max_pages = max_pages
        self.max_items = max_items
        self.pages = 0
        self.items = 0

    def take(self, items: list[T]) -> list[T]:
        """The items of a reached page that the walk may still yield."""
        if self.max_items is not None:
            items = items[: self.max_items - self.items]
        self.items += len(items)
        return items

    def goes_on(self, page: _PageBase[T]) -> bool:
        """Whether to fetch the page after ``page``; ``PageLimitError`` when one
        exists but the walk has used its ``max_pages``."""
        if self.max_items is not None and self.items >= self.max_items:
            return False
        if not page.has_next_page():
            return False
        if self.max_pages is not None and self.pages >= self.max_pages:
            raise PageLimitError(
                f"stopped after {self.pages} page(s) of GET /posts: the walk's max_pages bound "
                f"({self.max_pages}) is reached and the service claims more; pass a larger "
                "max_pages to iter_pages()/iter_items() (None for no bound), or narrow the query",
                max_pages=self.max_pages,
            )
        return True


class _PageBase(Generic[T]):
    """What both page types hold: the call that fetched them and its answer."""

    _call: PostsCall
    _response: Optional[PostsResponse] = None
    _items: Optional[list[T]]
    _pagination: Optional[Pagination]

    def _set(self, response: PostsResponse) -> None:
        self._response = response
        self._items = response.items  # type: ignore[assignment]
        self._pagination = response.pagination

    def _followed_by(self, following: _PageBase[T]) -> None:
        """Check that ``following``, fetched as the next page, advances (else the walk
        would spend calls on the same answer without end)."""
        assert self._response is not None and following._response is not None
        following._response.check_follows(self._response)

    @property
    def items(self) -> list[T]:
        """The posts of this page."""
        if self._items is None:
            raise RuntimeError("this page is not fetched yet: `await` it first")
        return self._items

    @property
    def pagination(self) -> Pagination:
        """This page's number and whether pages follow."""
        if self._pagination is None:
            raise RuntimeError("this page is not fetched yet: `await` it first")
        return self._pagination

    def _following(self) -> Optional[PostsCall]:
        return _next_call(self._call, self.pagination, len(self.items))

    def has_next_page(self) -> bool:
        """Whether a next page exists (asking costs nothing)."""
        return self._following() is not None

    def __repr__(self) -> str:
        if self._pagination is None:
            return f"{type(self).__name__}(<not fetched>)"
        return (
            f"{type(self).__name__}(page={self._pagination.page}, items={len(self.items)}, "
            f"has_next={self._pagination.has_next})"
        )


class SyncPage(_PageBase[T]):
    """One page of posts; iterating it walks this page and every later one, lazily."""

    def __init__(
        self, fetch: Callable[[PostsCall], PostsResponse], call: PostsCall, response: PostsResponse
    ) -> None:
        self._fetch = fetch
        self._call = call
        self._set(response)

    @classmethod
    def first(cls, fetch: Callable[[PostsCall], PostsResponse], call: PostsCall) -> SyncPage[T]:
        """Fetch the first page of ``call`` (one call)."""
        return cls(fetch, call, fetch(call))

    def next_page(self) -> Optional[SyncPage[T]]:
        """Fetch the next page (one call), or ``None`` when this is the last."""
        call = self._following()
        if call is None:
            return None
        following: SyncPage[T] = SyncPage.first(self._fetch, call)
        self._followed_by(following)
        return following

    def iter_pages(self, *, max_pages: Optional[int] = DEFAULT_MAX_PAGES) -> Iterator[SyncPage[T]]:
        """This page, then each next one as it is reached; more than ``max_pages`` pages
        is a ``PageLimitError`` raised before the call past the bound."""
        return self._walk(_Walk(max_pages))

    def _walk(self, walk: _Walk[T]) -> Iterator[SyncPage[T]]:
        page: Optional[SyncPage[T]] = self
        while page is not None:
            walk.pages += 1
            yield page
            page = page.next_page() if walk.goes_on(page) else None

    def iter_items(
        self, *, max_items: Optional[int] = None, max_pages: Optional[int] = DEFAULT_MAX_PAGES
    ) -> Iterator[T]:
        """Every item from this page on, stopping quietly at ``max_items``; more than
        ``max_pages`` pages is a ``PageLimitError``."""
        walk: _Walk[T] = _Walk(max_pages, max_items)
        return (item for page in self._walk(walk) for item in walk.take(page.items))

    def __iter__(self) -> Iterator[T]:
        return self.iter_items()


class AsyncPage(_PageBase[T]):
    """The async twin of [`SyncPage`][sports_posts.SyncPage]: awaitable (fetches the page) and async-iterable.

    ``page = await aclient.posts.list(...)`` gives a loaded page;
    ``async for post in aclient.posts.list(...)`` iterates every post without the ``await``.
    """

    def __init__(
        self,
        fetch: Callable[[PostsCall], Awaitable[PostsResponse]],
        call: PostsCall,
        response: Optional[PostsResponse] = None,
    ) -> None:
        self._fetch = fetch
        self._call = call
        self._items = None
        self._pagination = None
        if response is not None:
            self._set(response)

    async def _load(self) -> AsyncPage[T]:
        if self._items is None:
            self._set(await self._fetch(self._call))
        return self

    def __await__(self) -> Generator[Any, None, AsyncPage[T]]:
        return self._load().__await__()

    async def next_page(self) -> Optional[AsyncPage[T]]:
        """Fetch the next page (one call), or ``None`` when this is the last."""
        await self._load()
        call = self._following()
        if call is None:
            return None
        following = await AsyncPage[T](self._fetch, call)
        self._followed_by(following)
        return following

    def iter_pages(self, *, max_pages: Optional[int] = DEFAULT_MAX_PAGES) -> AsyncIterator[AsyncPage[T]]:
        """This page, then each next one as it is reached; more than ``max_pages`` pages
        is a ``PageLimitError`` raised before the call past the bound."""
        return self._walk(_Walk(max_pages))

    async def _walk(self, walk: _Walk[T]) -> AsyncIterator[AsyncPage[T]]:
        page: Optional[AsyncPage[T]] = await self._load()
        while page is not None:
            walk.pages += 1
            yield page
            page = await page.next_page() if walk.goes_on(page) else None

    def iter_items(
        self, *, max_items: Optional[int] = None, max_pages: Optional[int] = DEFAULT_MAX_PAGES
    ) -> AsyncIterator[T]:
        """Every item from this page on, stopping quietly at ``max_items``; more than
        ``max_pages`` pages is a ``PageLimitError``."""
        walk: _Walk[T] = _Walk(max_pages, max_items)
        return (item async for page in self._walk(walk) for item in walk.take(page.items))

    def __aiter__(self) -> AsyncIterator[T]:
        return self.iter_items()
