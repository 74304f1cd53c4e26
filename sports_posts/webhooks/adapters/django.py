"""Django adapter: a ``csrf_exempt`` view over ``request.body`` (the service sends no CSRF token)."""

from __future__ import annotations

from typing import Any, Callable, cast

from ..receiver import WebhookReceiver

__all__ = ["django_view"]


def django_view(receiver: WebhookReceiver) -> Callable[..., Any]:
    """A view for ``path("webhooks/", django_view(receiver))``; POST only."""
    from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
    from django.views.decorators.csrf import csrf_exempt

    def sports_posts_webhook(request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        response = receiver.handle(request.body, request.headers)
        answer = HttpResponse(response.body, status=response.status_code)
        for name, value in response.headers:
            answer[name] = value
        return answer

    return cast("Callable[..., Any]", csrf_exempt(sports_posts_webhook))
