"""Every public exception class crosses a process boundary (pickle) as the same class with the
same message and attributes, without the API key; an API error raised in a
``ProcessPoolExecutor`` worker reaches the caller and leaves the pool working."""

from __future__ import annotations

import importlib
import inspect
import multiprocessing
import pickle
import pkgutil
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest

import sports_posts

API_KEY = "sk_live_PICKLE_SECRET_5e1f0a"


def public_modules() -> list[str]:
    """``sports_posts`` and every package or module of it without a private name part."""
    names = ["sports_posts"]
    for info in pkgutil.walk_packages(sports_posts.__path__, "sports_posts."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return names


def public_exceptions() -> dict[str, type[BaseException]]:
    """Every exception (and warning) class a public module exports in ``__all__``."""
    found: dict[str, type[BaseException]] = {}
    for name in public_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr, None)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


def a_response(status: int = 500) -> httpx.Response:
    """An answer whose request carries the key, as a live call's does."""
    request = httpx.Request("GET", "https://api.test/v1/posts",
                            headers={"Authorization": f"Bearer {API_KEY}", "X-API-Key": API_KEY})
    return httpx.Response(status, request=request, json={"error_code": "INTERNAL", "error_message": "boom"})


# A sample for each constructor parameter, by name; a new parameter name fails the test below
# with the name to add here.
SAMPLES: dict[str, Any] = {
    "message": "something failed: a\nsecond line",
    "response": a_response(),
    "request": a_response().request,
    "body": {"error_code": "INTERNAL", "error_message": "boom"},
    "error_code": "INTERNAL",
    "error_message": "boom",
    "retry_after": 12.5,
    "parameter": "leagues",
    "field": "items.0.id",
    "page": 3,
    "max_pages": 7,
    "limit": 1024,
    "age": -42.0,
    "engine": "redis",
    "code": "40P01",
    "post_id": "1790000000000000001",
    "deleted": ("1", "2"),
    "differences": ["league: NBA -> NFL"],
    "bound": "per_minute",
    "refills_at": datetime(2030, 1, 1, tzinfo=timezone.utc),
    "status": 429,
    "headers": {"Retry-After": "3"},
}
LIMIT_OF_BUDGET = 60


def construct(cls: type[BaseException]) -> BaseException:
    """``cls`` made with a sample for every parameter its constructor names."""
    signature = inspect.signature(cls.__init__)
    params = [p for p in signature.parameters.values() if p.name != "self"]
    if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return cls(SAMPLES["message"])
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.name not in SAMPLES:
            raise AssertionError(f"{cls.__qualname__}: add a sample for its parameter {p.name!r} to SAMPLES")
        value = SAMPLES[p.name]
        if cls.__name__ == "BudgetExhaustedError" and p.name == "limit":
            value = LIMIT_OF_BUDGET
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            args.append(value)
        else:
            kwargs[p.name] = value
    return cls(*args, **kwargs)


EXCEPTIONS = public_exceptions()


def test_the_enumeration_finds_the_classes_of_every_public_package() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS.values()}
    assert {"APIStatusError", "InternalServerError", "BudgetExhaustedError", "ComplianceSweepError",
            "PaginationError", "PageLimitError", "ResponseTooLargeError", "ReplayedWebhookError",
            "StoreError", "CoordinationError", "LeaseLostError", "CheckpointMismatchError",
            "ApiError", "CombinedModesWarning"} <= names


def readable(error: BaseException) -> dict[str, Any]:
    """What a user reads of an error: class, message, args and public attributes (the HTTP
    objects aside)."""
    attrs = {k: v for k, v in vars(error).items() if k not in ("request", "response") and not k.startswith("__")}
    return {"class": type(error), "str": str(error), "args": error.args, **attrs}


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_every_public_exception_round_trips_through_pickle(name: str) -> None:
    error = construct(EXCEPTIONS[name])
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(error, protocol=protocol)
        assert API_KEY.encode() not in data
        back = pickle.loads(data)
        assert readable(back) == readable(error)
        if hasattr(error, "status_code"):
            assert back.status_code == error.status_code == 500
        if hasattr(error, "request"):
            assert back.request is None  # left behind: the request holds the key
        sent: Any = getattr(error, "response", None)
        if sent is not None:
            # rebuilt, a real response of the same library: e.response.status_code is true there
            got: Any = getattr(back, "response", None)
            assert type(got) is type(sent)
            assert got.status_code == sent.status_code and got.content == sent.content
            assert got.request.url == sent.request.url.copy_with(query=None)
            assert "authorization" not in got.request.headers
        assert pickle.loads(pickle.dumps(back)).args == error.args


def a_500_in_a_worker() -> None:
    """A client call in a worker process that meets a 500."""
    from sports_posts import SportsPosts

    def fail(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error_code": "INTERNAL", "error_message": "worker boom"},
                              headers={"Retry-After": "7"})

    with SportsPosts(api_key=API_KEY, base_url="https://api.test/v1", max_retries=0,
                     http_client=httpx.Client(transport=httpx.MockTransport(fail))) as client:
        client.account.x_ids()


def still_working() -> str:
    return "ok"


def test_an_api_error_in_a_process_pool_worker_reaches_the_caller_and_the_pool_goes_on() -> None:
    from sports_posts import InternalServerError

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        failed = pool.submit(a_500_in_a_worker)
        with pytest.raises(InternalServerError) as caught:
            failed.result(timeout=120)
        assert caught.value.status_code == 500
        assert caught.value.error_code == "INTERNAL"
        assert caught.value.error_message == "worker boom"
        assert caught.value.retry_after == 7
        assert API_KEY not in str(caught.value) and API_KEY not in repr(caught.value.__dict__)
        assert pool.submit(still_working).result(timeout=120) == "ok"
