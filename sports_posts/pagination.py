"""Pages of GET /posts that fetch the next page only when iteration reaches it.

Every page costs the customer a call, so nothing is fetched ahead: ``list()`` fetches
page 1 (async: on ``await`` or on the first ``async for`` step), and page N+1 is asked
for only when the caller iterates past page N.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator
from typing import TYPE_CHECKING, Any, Generic, Optional, TypeVar, cast

from ._errors import ParameterError
from ._transport import APICall
from .models.post import Pagination, Post, PostsResponse

if TYPE_CHECKING:
    from ._client import AsyncSportsPosts, SportsPosts

__all__ = ["AsyncPage", "SyncPage"]

T = TypeVar("T", bound=Post)


def _next_call(call: APICall[PostsResponse], pagination: Pagination, n_items: int) -> Optional[APICall[PostsResponse]]:
    """The call of the page after this one, or ``None``: the paging rule, once."""
    if not pagination.has_next or n_items == 0:
        # An empty page that claims a successor would make iteration spend calls for nothing.
        return None
    return call.with_params(page=str(pagination.page + 1))


def _check_guard(name: str, value: Optional[int]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ParameterError(f"{name} must be a positive integer or None", parameter=name)


class SyncPage(Generic[T]):
    """One page of posts; iterating it walks this page and every later one, lazily."""

    def __init__(self, client: SportsPosts, call: APICall[PostsResponse], response: PostsResponse) -> None:
        self._client = client
        self._call = call
        self.items: list[T] = response.items  # type: ignore[assignment]
        self.pagination: Pagination = response.pagination

    def __repr__(self) -> str:
        return f"SyncPage(page={self.pagination.page}, items={len(self.items)}, has_next={self.pagination.has_next})"

    def has_next_page(self) -> bool:
        return _next_call(self._call, self.pagination, len(self.items)) is not None

    def next_page(self) -> Optional[SyncPage[T]]:
        """Fetch the next page (one call), or ``None`` when this is the last."""
        call = _next_call(self._call, self.pagination, len(self.items))
        return None if call is None else cast("SyncPage[T]", self._client._get_page(call))

    def iter_pages(self, *, max_pages: Optional[int] = None) -> Iterator[SyncPage[T]]:
        """This page, then each next one as it is reached; ``max_pages`` caps the calls."""
        _check_guard("max_pages", max_pages)
        return self._iter_pages(max_pages)

    def _iter_pages(self, max_pages: Optional[int]) -> Iterator[SyncPage[T]]:
        page: Optional[SyncPage[T]] = self
        count = 0
        while page is not None:
            yield page
            count += 1
            if max_pages is not None and count >= max_pages:
                return
            page = page.next_page()

    def iter_items(self, *, max_items: Optional[int] = None, max_pages: Optional[int] = None) -> Iterator[T]:
        """Every item from this page on, stopping at ``max_items`` or after ``max_pages``."""
        _check_guard("max_items", max_items)
        return self._iter_items(max_items, self.iter_pages(max_pages=max_pages))

    def _iter_items(self, max_items: Optional[int], pages: Iterator[SyncPage[T]]) -> Iterator[T]:
        seen = 0
        for page in pages:
            for item in page.items:
                if max_items is not None and seen >= max_items:
                    return
                seen += 1
                yield item
            if max_items is not None and seen >= max_items:
                return

    def __iter__(self) -> Iterator[T]:
        return self.iter_items()


class AsyncPage(Generic[T]):
    """The async twin of [`SyncPage`][sports_posts.SyncPage]: awaitable (fetches the page) and async-iterable.

    ``page = await aclient.posts.list(...)`` gives a loaded page;
    ``async for post in aclient.posts.list(...)`` iterates every post without the ``await``.
    """

    def __init__(
        self, client: AsyncSportsPosts, call: APICall[PostsResponse], response: Optional[PostsResponse] = None
    ) -> None:
        self._client = client
        self._call = call
        self._items: Optional[list[T]] = None
        self._pagination: Optional[Pagination] = None
        if response is not None:
            self._set(response)

    def _set(self, response: PostsResponse) -> None:
        self._items = response.items  # type: ignore[assignment]
        self._pagination = response.pagination

    async def _load(self) -> AsyncPage[T]:
        if self._items is None:
            self._set(await self._client._request(self._call))
        return self

    def __await__(self) -> Generator[Any, None, AsyncPage[T]]:
        return self._load().__await__()

    @property
    def items(self) -> list[T]:
        if self._items is None:
            raise RuntimeError("this page is not fetched yet: `await` it first")
        return self._items

    @property
    def pagination(self) -> Pagination:
        if self._pagination is None:
            raise RuntimeError("this page is not fetched yet: `await` it first")
        return self._pagination

    def __repr__(self) -> str:
        if self._pagination is None:
            return "AsyncPage(<not fetched>)"
        return f"AsyncPage(page={self._pagination.page}, items={len(self.items)}, has_next={self._pagination.has_next})"

    def has_next_page(self) -> bool:
        return _next_call(self._call, self.pagination, len(self.items)) is not None

    async def next_page(self) -> Optional[AsyncPage[T]]:
        """Fetch the next page (one call), or ``None`` when this is the last."""
        await self._load()
        call = _next_call(self._call, self.pagination, len(self.items))
        return None if call is None else await AsyncPage[T](self._client, call)

    def iter_pages(self, *, max_pages: Optional[int] = None) -> AsyncIterator[AsyncPage[T]]:
        """This page, then each next one as it is reached; ``max_pages`` caps the calls."""
        _check_guard("max_pages", max_pages)
        return self._iter_pages(max_pages)

    async def _iter_pages(self, max_pages: Optional[int]) -> AsyncIterator[AsyncPage[T]]:
        page: Optional[AsyncPage[T]] = await self._load()
        count = 0
        while page is not None:
            yield page
            count += 1
            if max_pages is not None and count >= max_pages:
                return
            page = await page.next_page()

    def iter_items(self, *, max_items: Optional[int] = None, max_pages: Optional[int] = None) -> AsyncIterator[T]:
        """Every item from this page on, stopping at ``max_items`` or after ``max_pages``."""
        _check_guard("max_items", max_items)
        return self._iter_items(max_items, self.iter_pages(max_pages=max_pages))

    async def _iter_items(self, max_items: Optional[int], pages: AsyncIterator[AsyncPage[T]]) -> AsyncIterator[T]:
        seen = 0
        async for page in pages:
            for item in page.items:
                if max_items is not None and seen >= max_items:
                    return
                seen += 1
                yield item
            if max_items is not None and seen >= max_items:
                return

    def __aiter__(self) -> AsyncIterator[T]:
        return self.iter_items()
