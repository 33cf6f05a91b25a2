"""What the API's routes depend on: the host they serve (``app.state.host``), and who is asking
(an author's token, the host's admin token, or nobody)."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, cast

from fastapi import Depends, Header, HTTPException, Request
from fastapi import Path as PathParam

from arena.host.analyses import Analyses
from arena.host.api.limits import authenticate
from arena.host.challenges import Challenges
from arena.host.config import CompetitionConfig
from arena.host.ladder import Standings
from arena.host.livefeed import LiveFeeds
from arena.host.store import Author, CompetitionStore
from arena.host.throttle import Throttle
from arena.par import ParTable
from arena.registry import hash_token


@dataclass(slots=True)
class HostState:
    """What the API serves from: the host's store and ladder, and its callbacks."""

    store: CompetitionStore
    config: CompetitionConfig
    directory: Path
    #: The latest standings (the ladder refits them as units end).
    standings: Callable[[], Standings]
    #: SHA-256 of the admin token.
    admin_token_hash: str
    #: Called after a version is submitted or the ladder is steered: the host looks again.
    changed: Callable[[], None]
    #: The port live bots connect to (gRPC, TLS when the API is); 0: not known.
    grpc_port: int = 0
    #: Whether the host serves TLS.
    tls: bool = False
    #: The ``[limits]`` on requests and authentication; ``None``: none (a test's app).
    throttle: Throttle | None = None
    #: The wall clock the quotas on new versions are counted by (epoch seconds).
    clock: Callable[[], float] = time.time
    #: Held while an author's quota is checked and their version added: two uploads at once
    #: cannot both take the last place.
    quota_lock: threading.Lock = field(default_factory=threading.Lock)
    #: The gRPC address advertised to live bots; ``""``: the request's host name, grpc_port.
    grpc_address: str = ""
    #: How many live bots are connected now (``/metrics``).
    live_bots: Callable[[], int] = lambda: 0
    #: The host's supervised parts and their states (``/healthz``; arena/host/supervise.py).
    parts: Callable[[], dict[str, str]] = dict
    #: The admin's reach into the running host: the live versions whose bots are connected, a
    #: disconnection of those of the given live versions (how many were), a unit stored by the
    #: admin handed to the ladder to play (a rerun).
    live_versions: Callable[[], set[int]] = set
    disconnect_live: Callable[[Sequence[int]], int] = lambda ids: 0
    play_unit: Callable[[int], None] = lambda unit_id: None
    #: The ids of the matches this host's own arena is playing now (its spectators' board);
    #: matches on a cluster's workers are not among them.
    running: Callable[[], list[str]] = list
    #: The ladder's latest par table (``[ladder] par``; arena/host/par.py); ``None``: none.
    par: Callable[[], ParTable | None] = lambda: None
    #: Authors' analyses of their matches (arena/host/analyses.py); ``None``: not served.
    analyses: Analyses | None = None
    #: Authors' challenges of the ladder's versions (arena/host/challenges.py); ``None``: none.
    challenges: Challenges | None = None
    #: The matches followed live (arena/host/livefeed.py); ``None``: no live feed.
    live_feeds: LiveFeeds | None = None


def host_state(request: Request) -> HostState:
    """The host the app serves (``create_app`` keeps it in ``app.state``)."""
    return cast(HostState, request.app.state.host)


Host = Annotated[HostState, Depends(host_state)]


def bearer(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer`` header; ``""`` without one."""
    if not authorization:
        return ""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def current_author(
    request: Request, host: Host, authorization: Annotated[str | None, Header()] = None
) -> Author:
    """The author whose API token the request carries; 401 without one (429 while the
    request's address is locked out for failed attempts)."""
    token = bearer(authorization)
    author = authenticate(request, token, host.store.author_for_token) if token else None
    if author is None:
        raise HTTPException(401, "an author's API token is required (Authorization: Bearer)")
    return author


def viewer(
    request: Request, host: Host, authorization: Annotated[str | None, Header()] = None
) -> Author | None:
    """The author whose token the request carries, if any: a public read shows them more (so a
    wrong token counts as a failed attempt here too)."""
    token = bearer(authorization)
    return authenticate(request, token, host.store.author_for_token) if token else None


def require_admin(
    request: Request, host: Host, authorization: Annotated[str | None, Header()] = None
) -> None:
    """403 unless the request carries the host's admin token."""
    token = bearer(authorization)

    def is_admin(given: str) -> bool | None:
        # Hashed first, then compared in constant time.
        return hmac.compare_digest(hash_token(given), host.admin_token_hash) or None

    if not token or not authenticate(request, token, is_admin):
        raise HTTPException(403, "the host's admin token is required")


Authed = Annotated[Author, Depends(current_author)]
Viewer = Annotated[Author | None, Depends(viewer)]

#: Where every route of the API starts.
PREFIX = "/api/v1"
#: Ids are SQLite integers: a larger number could only be a probe (and would overflow).
MAX_ID = 2**62
VersionId = Annotated[int, PathParam(ge=0, le=MAX_ID)]
SeatNumber = Annotated[int, PathParam(ge=0, le=1000)]
MatchId = Annotated[str, PathParam(min_length=1, max_length=100)]
