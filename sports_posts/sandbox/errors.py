"""The error answers of the emulated service (spec 2.5 and 7), raised by the pure layers."""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["ApiError", "error_body", "invalid"]


def error_body(error_code: str, error_message: str) -> dict[str, Any]:
    """The error body of spec 2.5."""
    return {"ok": False, "error_code": error_code, "error_message": error_message}


class ApiError(Exception):
    """An answer other than 200: status, error_code, message and optional headers."""

    def __init__(
        self, status: int, error_code: str, message: str, headers: Optional[dict[str, str]] = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message
        self.headers: dict[str, str] = headers or {}

    def __reduce__(self) -> tuple[Any, ...]:
        return ApiError, (self.status, self.error_code, self.message, self.headers), self.__dict__

    def body(self) -> dict[str, Any]:
        """The JSON error body of this answer."""
        return error_body(self.error_code, self.message)


def invalid(parameter: str, rule: str) -> ApiError:
    """400 INVALID_PARAMETER whose message names the parameter."""
    return ApiError(400, "INVALID_PARAMETER", f"Invalid parameter '{parameter}': {rule}")
