"""Django adapter: a ``csrf_exempt`` view over the raw request stream (the service sends no CSRF token)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, cast

from ..receiver import WebhookReceiver
from ._body import (
    JSON,
    MAX_BODY,
    NOT_ALLOWED,
    TOO_LARGE,
    check_max_body,
    declared_too_large,
    read_limited,
)

if TYPE_CHECKING:  # Django is the customer's: imported when a view is made
    from django.http import HttpRequest, HttpResponse

__all__ = ["django_view"]


def django_view(receiver: WebhookReceiver, *, max_body: int = MAX_BODY) -> Callable[[HttpRequest], HttpResponse]:
    """A view for ``path("webhooks/", django_view(receiver))``: POST only (405 with
    ``Allow: POST`` otherwise), bodies over ``max_body`` refused with 413 without being read
    whole (``request.read`` in chunks, never ``request.body``)."""
    max_body = check_max_body(max_body)
    from django.http import HttpResponse
    from django.views.decorators.csrf import csrf_exempt

    def sports_posts_webhook(request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            refused = HttpResponse(NOT_ALLOWED, status=405, content_type=JSON)
            refused["Allow"] = "POST"
            return refused
        if declared_too_large(request.META.get("CONTENT_LENGTH"), max_body):
            return HttpResponse(TOO_LARGE, status=413, content_type=JSON)
        raw = read_limited(request.read, max_body)  # Django bounds the stream by Content-Length
        if raw is None:
            return HttpResponse(TOO_LARGE, status=413, content_type=JSON)
        response = receiver.handle(raw, request.headers)
        answer = HttpResponse(response.body, status=response.status_code)
        for name, value in response.headers:
            answer[name] = value
        return answer

    # csrf_exempt keeps the view's signature (Django's stubs type it loosely)
    return cast("Callable[[HttpRequest], HttpResponse]", csrf_exempt(sports_posts_webhook))
