"""The errors an operation raises, each with the status both transports give it.

Operations raise these (or the store's and access layer's own errors, mapped in `status_of`);
nothing an operation raises for a caller's mistake ever reaches a client as UNKNOWN or HTTP 500.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

MAX_ECHO = 200  # characters of the caller's input any message may quote


def echo(text: object) -> str:
    """The caller's input as a message may quote it: repr'd and cut to MAX_ECHO characters."""
    shown = repr(text)
    return shown if len(shown) <= MAX_ECHO else shown[: MAX_ECHO - 1] + "…"


class ServiceError(Exception):
    """An error with a gRPC status and an HTTP status; the message is one line for the caller."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    http: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message[:1000])


class InvalidArgument(ServiceError):
    code, http = grpc.StatusCode.INVALID_ARGUMENT, 422


class NotFound(ServiceError):
    code, http = grpc.StatusCode.NOT_FOUND, 404


class PermissionDenied(ServiceError):
    code, http = grpc.StatusCode.PERMISSION_DENIED, 403


class Unauthenticated(ServiceError):
    code, http = grpc.StatusCode.UNAUTHENTICATED, 401


class FailedPrecondition(ServiceError):
    code, http = grpc.StatusCode.FAILED_PRECONDITION, 409


class ResourceExhausted(ServiceError):
    code, http = grpc.StatusCode.RESOURCE_EXHAUSTED, 429

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Status:
    code: grpc.StatusCode
    http: int
    message: str
    retry_after: int | None = None


def status_of(exc: BaseException) -> Status | None:
    """The status for an exception operations may raise; None for a bug (the caller logs it, INTERNAL)."""
    from arena.access.ratelimit import RateLimited
    from arena.access.roles import Unauthenticated as BadToken
    from arena.sandbox.bundle import BundleError
    from arena.store import StoreError

    if isinstance(exc, ResourceExhausted):
        return Status(exc.code, exc.http, str(exc), exc.retry_after)
    if isinstance(exc, ServiceError):
        return Status(exc.code, exc.http, str(exc))
    if isinstance(exc, RateLimited):
        return Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, str(exc), exc.retry_after)
    if isinstance(exc, BadToken):
        return Status(grpc.StatusCode.UNAUTHENTICATED, 401, str(exc))
    if isinstance(exc, BundleError):
        return Status(grpc.StatusCode.INVALID_ARGUMENT, 422, f"the bundle was refused: {exc}")
    if isinstance(exc, StoreError):  # SeasonError and OwnerError too
        text = str(exc)
        missing = text.startswith("no ") or " has no " in text
        if missing:
            return Status(grpc.StatusCode.NOT_FOUND, 404, text)
        return Status(grpc.StatusCode.FAILED_PRECONDITION, 409, text)
    return None


MAX_ID = (1 << 63) - 1  # database ids are signed 64-bit


def check_id(value: int, what: str = "match") -> int:
    """A caller's id as the store can look it up; a larger one names nothing (NOT_FOUND, not a crash)."""
    if not 0 < value <= MAX_ID:
        raise NotFound(f"no {what} {value}")
    return value
