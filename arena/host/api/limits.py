"""The host's ``[limits]`` on the API (the mechanics: arena/host/throttle.py): every request
counted against its client address and its token (:class:`RateLimit`, before any route), failed
authentications counted and locked-out addresses refused (:func:`authenticate`), and an author's
quotas on new versions (:func:`check_quota`). Over a limit: 429 with ``Retry-After`` (whole
seconds) and the usual one-line ``{"detail": ...}``; over the stored-bytes quota, which no wait
lifts: 409.

The client address is the connection's (ASGI ``client``), or behind a proxy named in
``[http] trusted_proxies`` the client it forwards (arena/host/api/forwarded.py).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.host.throttle import DAY_S, Refusal, Throttle, next_version_in, whole_seconds

T = TypeVar("T")

#: Paths no request rate limits: a monitor polls ``/healthz`` (cheap: one row read).
UNLIMITED = frozenset({"/healthz"})

#: How a request's client address reads when the server was not told it (a Unix socket).
UNKNOWN_ADDRESS = "unknown"


def too_many(refusal: Refusal) -> HTTPException:
    """The 429 a refusal is."""
    return HTTPException(429, refusal.detail, headers={"Retry-After": str(refusal.retry_after)})


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else UNKNOWN_ADDRESS


def _bearer(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


class RateLimit:
    """ASGI middleware: a request over its address's or its token's rate is answered 429 before
    any route (or page) sees it."""

    def __init__(self, app: ASGIApp, throttle: Throttle | None) -> None:
        self.app = app
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        throttle = self.throttle
        if scope["type"] == "http" and throttle is not None and scope["path"] not in UNLIMITED:
            refusal = throttle.request(client_address(scope), _bearer(scope))
            if refusal is not None:
                response = JSONResponse(
                    {"detail": refusal.detail},
                    status_code=429,
                    headers={"Retry-After": str(refusal.retry_after)},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def authenticate(request: Request, secret: str, check: Callable[[str], T | None]) -> T | None:
    """``check(secret)`` (a token or an invite code), unless the request's address is locked out
    (429); a failure is counted against that address. A request with no secret at all is not
    an attempt: the caller answers it without calling this."""
    throttle: Throttle | None = request.app.state.host.throttle
    address = client_address(request.scope)
    if throttle is not None:
        refusal = throttle.auth_locked(address)
        if refusal is not None:
            raise too_many(refusal)
    found = check(secret)
    if found is None and throttle is not None:
        throttle.auth_failed(address)
    return found


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def check_quota(
    usage: Callable[[str], tuple[list[str], int]],
    now: float,
    versions_per_day: int,
    stored_bytes: int,
    adding: int = 0,
) -> int:
    """The bytes an author may still store, or the HTTP error their next version is refused
    with: ``usage(since)`` is the store's :meth:`author_usage` for them, ``now`` the wall
    clock (epoch seconds), ``adding`` the bytes of the upload at hand (0: not known yet);
    ``stored_bytes`` 0: no limit on bytes."""
    created, held = usage(_stamp(now - DAY_S))
    wait = next_version_in([_epoch(c) for c in created], now, versions_per_day)
    if wait > 0:
        n = whole_seconds(wait)
        raise too_many(
            Refusal(
                f"quota: {versions_per_day} new versions in any 24 hours "
                f"(limits.versions_per_day); the next may come at {_stamp(now + n)[:19]}Z: "
                f"try again in {n} s",
                n,
            )
        )
    if not stored_bytes:
        return -1
    left = stored_bytes - held
    if left <= 0 or adding > left:
        what = f"this upload's {adding:,} bytes unpacked would pass" if adding else "you reached"
        raise HTTPException(
            409,
            f"quota: {what} your {stored_bytes:,} bytes of stored uploads "
            f"(limits.stored_mib_per_author; {held:,} held; versions are kept for good, ask the "
            "host for more)",
        )
    return left
