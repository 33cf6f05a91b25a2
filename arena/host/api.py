"""The competition's HTTP JSON API (FastAPI: its OpenAPI schema is at ``/openapi.json``).

Anyone may read the status, the leaderboards, the bots and the finished matches; an author (with
``Authorization: Bearer TOKEN``) submits and retires their own versions and reads their own logs
and archives; the host (with the admin token in ``DIR/private/admin.token``) adds authors and
steers the ladder. Every error is ``{"detail": "one line"}`` with a 4xx status: a stranger's
mistake never shows a traceback. A match's record is public only once every rotation of its
deal has been played, so that no bot can read a deal it is still to play.
"""

from __future__ import annotations

import hmac
import io
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, Field

from arena.bots.docker import DockerUnavailable
from arena.errors import ArenaError
from arena.host.config import CompetitionConfig, check_units_per_minute
from arena.host.images import image_path, is_image_tarball, load_image, store_image
from arena.host.ladder import Standings
from arena.host.store import (
    IMAGES_DIR,
    SNAPSHOTS_DIR,
    Author,
    CompetitionStore,
    CompetitionStoreError,
    Conflict,
    DatabaseLocked,
    Forbidden,
    NotFound,
    StoredMatch,
    Version,
)
from arena.layout import LOGS_DIR, seat_log_name
from arena.records.html import viewer_document
from arena.registry import hash_token
from arena.snapshots.archive import ArchiveLimits
from arena.snapshots.tree import snapshot_path, store_snapshot
from arena.version import arena_version
from arena.web.pages import add_pages

PREFIX = "/api/v1"
#: Ids are SQLite integers: a larger number could only be a probe (and would overflow).
MAX_ID = 2**62
VersionId = Annotated[int, PathParam(ge=0, le=MAX_ID)]
SeatNumber = Annotated[int, PathParam(ge=0, le=1000)]
MatchId = Annotated[str, PathParam(min_length=1, max_length=100)]
#: Upload bodies are read in chunks of this size, and refused as soon as they pass the limit.
CHUNK = 64 * 1024


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


# --- response and request bodies ------------------------------------------------------------


class AuthorOut(BaseModel):
    id: int
    name: str
    created: str


class NewToken(BaseModel):
    author: AuthorOut
    #: Shown this once: only its hash is stored.
    token: str


class RotatedToken(BaseModel):
    token: str


class VersionOut(BaseModel):
    id: int
    bot: str
    number: int
    ref: str
    kind: str
    sha256: str | None
    runtime: str
    status: str
    #: Why it failed or was retired (its author only).
    reason: str | None = None
    created: str
    updated: str


class LiveVersion(BaseModel):
    version: VersionOut
    #: The token the live bot connects with (``ARENA_TOKEN``), shown this once.
    token: str


class BotOut(BaseModel):
    name: str
    author: str
    versions: list[VersionOut]


class Me(BaseModel):
    author: AuthorOut
    bots: list[BotOut]


class LeaderRow(BaseModel):
    rank: int
    ref: str
    bot: str
    author: str
    elo: float
    plus_minus: float
    matches: int
    score: float


class CrossCell(BaseModel):
    #: The versions, as ``BOT@N``: the row's record against the column's.
    row: str
    column: str
    matches: int
    wins: int
    losses: int
    draws: int


class Superiority(BaseModel):
    row: str
    column: str
    #: P(the row's version is stronger than the column's), from the rating fit.
    p: float


class CrossTable(BaseModel):
    #: The rated versions, best first.
    versions: list[str]
    cells: list[CrossCell]
    superiority: list[Superiority]


class HistoryRating(BaseModel):
    ref: str
    elo: float
    plus_minus: float


class HistoryPoint(BaseModel):
    at: str
    matches: int
    ratings: list[HistoryRating]


class MatchOut(BaseModel):
    match_id: str
    unit: int
    phase: str
    rotation: int
    #: The version of each seat, as ``BOT@N``.
    seats: list[str]
    state: str
    summary: str | None = None
    reason: str | None = None
    ranks: list[int] | None = None
    faults: list[dict[str, Any]] = Field(default_factory=list)
    finished: str | None = None
    #: Whether its record may be downloaded (every rotation of its deal is played).
    record_available: bool = False


class HeadToHead(BaseModel):
    #: The opponent version, ``BOT@N``.
    opponent: str
    matches: int
    #: Matches in which this version ranked above, below, or level with the opponent.
    wins: int
    losses: int
    draws: int


class Status(BaseModel):
    name: str
    game: str
    players: int
    server_version: str
    state: str
    units_per_minute: float
    versions: dict[str, int]
    matches_played: int
    #: The gRPC port live bots connect to (on this host's name).
    grpc_port: int


class Registration(BaseModel):
    name: str = Field(min_length=1, max_length=32)
    invite_code: str = Field(min_length=1, max_length=200)


class NewAuthor(BaseModel):
    name: str = Field(min_length=1, max_length=32)


class Control(BaseModel):
    state: Literal["running", "paused", "closed"] | None = None
    units_per_minute: float | None = Field(default=None, ge=0, le=100_000)


# --- who is asking -------------------------------------------------------------------------------


def current_author(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Author:
    """The author whose API token the request carries; 401 without one."""
    host: HostState = request.app.state.host
    token = _bearer(authorization)
    author = host.store.author_for_token(token) if token else None
    if author is None:
        raise HTTPException(401, "an author's API token is required (Authorization: Bearer)")
    return author


def require_admin(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    """403 unless the request carries the host's admin token."""
    host: HostState = request.app.state.host
    token = _bearer(authorization)
    if not token or not hmac.compare_digest(hash_token(token), host.admin_token_hash):
        raise HTTPException(403, "the host's admin token is required")


Authed = Annotated[Author, Depends(current_author)]


# --- the app ----------------------------------------------------------------------------------


def create_app(host: HostState) -> FastAPI:
    """The API over ``host``, and the web pages drawn from it."""
    app = FastAPI(
        title=f"Card Arena competition: {host.config.name}",
        version=arena_version(),
        description=__doc__,
        # FastAPI's /docs and /redoc pages load their scripts from a CDN: on a host without
        # internet (or for an author behind one) they are blank. The schema itself is served.
        docs_url=None,
        redoc_url=None,
    )
    store = host.store
    app.state.host = host

    @app.exception_handler(CompetitionStoreError)
    async def store_error(request: Request, err: CompetitionStoreError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=_status_of(err))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _validation_line(err)}, status_code=422)

    def version_out(v: Version, viewer: Author | None = None) -> VersionOut:
        mine = viewer is not None and viewer.id == v.author_id
        return VersionOut(
            id=v.id,
            bot=v.bot,
            number=v.number,
            ref=v.ref,
            kind=v.kind,
            sha256=v.sha256,
            runtime=str(v.manifest.get("runtime", "")),
            status=v.status,
            reason=v.reason if mine else None,
            created=v.created,
            updated=v.updated,
        )

    def bots_out(author_id: int | None, viewer: Author | None) -> list[BotOut]:
        names = {a.id: a.name for a in store.authors()}
        versions = store.versions(author_id=author_id)
        out = []
        for bot in store.bots(author_id):
            mine = [version_out(v, viewer) for v in versions if v.bot_id == bot.id]
            out.append(BotOut(name=bot.name, author=names.get(bot.author_id, ""), versions=mine))
        return out

    def owned(version_id: int, author: Author) -> Version:
        v = store.version(version_id)
        if v.author_id != author.id:
            raise HTTPException(403, f"version {v.ref} is not yours")
        return v

    def refs() -> dict[int, str]:
        return {v.id: v.ref for v in store.versions()}

    def match_out(m: StoredMatch, names: dict[int, str]) -> MatchOut:
        result = m.result or {}
        return MatchOut(
            match_id=m.match_id,
            unit=m.unit_id,
            phase=m.phase,
            rotation=m.rotation,
            seats=[names.get(v, str(v)) for v in m.seats],
            state=m.state,
            summary=result.get("summary"),
            reason=result.get("reason"),
            ranks=result.get("ranks"),
            faults=m.faults,
            finished=m.finished,
            record_available=_record_public(store, m),
        )

    def find_match(match_id: str) -> StoredMatch:
        m = store.match(match_id)
        if m.state != "done":
            raise HTTPException(404, f"match {match_id!r} is not finished")
        return m

    # --- public ---------------------------------------------------------------------------

    @app.get(f"{PREFIX}/status", response_model=Status)
    def status() -> Status:
        counts: dict[str, int] = {}
        for v in store.versions():
            counts[v.status] = counts.get(v.status, 0) + 1
        return Status(
            name=host.config.name,
            game=host.config.rules.game_id,
            players=host.config.rules.config.players,
            server_version=arena_version(),
            state=store.ladder_state(),
            units_per_minute=store.units_per_minute(),
            versions=counts,
            matches_played=sum(store.match_counts().values()),
            grpc_port=host.grpc_port,
        )

    @app.get(f"{PREFIX}/leaderboard", response_model=list[LeaderRow])
    def leaderboard(
        phase: Literal["ladder", "final"] = "ladder", latest: bool = False
    ) -> list[LeaderRow]:
        """Every rated version; with ``latest``, each bot's latest validated version only (its
        rating from the same fit)."""
        standings = host.standings()
        table = standings.ladder if phase == "ladder" else standings.final
        versions = store.versions()
        by_ref = {v.ref: v for v in versions}
        names = {a.id: a.name for a in store.authors()}
        newest: dict[int, int] = {}
        for each in versions:
            if each.status == "validated":
                newest[each.bot_id] = max(newest.get(each.bot_id, 0), each.number)
        rows = []
        for r in table.ratings:
            v = by_ref.get(r.bot)
            if latest and (v is None or newest.get(v.bot_id) != v.number):
                continue
            rows.append(
                LeaderRow(
                    rank=r.rank,
                    ref=r.bot,
                    bot=v.bot if v else r.bot,
                    author=names.get(v.author_id, "") if v else "",
                    elo=round(r.elo, 1),
                    plus_minus=round(r.plus_minus, 1),
                    matches=r.matches,
                    score=round(r.score, 4),
                )
            )
        return rows

    @app.get(f"{PREFIX}/bots", response_model=list[BotOut])
    def bots() -> list[BotOut]:
        return bots_out(None, None)

    @app.get(f"{PREFIX}/versions/{{version_id}}", response_model=VersionOut)
    def version(
        version_id: VersionId, authorization: Annotated[str | None, Header()] = None
    ) -> VersionOut:
        viewer = store.author_for_token(t) if (t := _bearer(authorization)) else None
        return version_out(store.version(version_id), viewer)

    @app.get(f"{PREFIX}/versions/{{version_id}}/head-to-head", response_model=list[HeadToHead])
    def head_to_head(version_id: VersionId) -> list[HeadToHead]:
        store.version(version_id)  # 404 for an unknown one
        names = refs()
        tally = pairwise(store.finished_matches(version_id=version_id))
        return [
            HeadToHead(
                opponent=names.get(other, str(other)),
                matches=sum(row),
                wins=row[0],
                losses=row[1],
                draws=row[2],
            )
            for (mine, other), row in sorted(tally.items())
            if mine == version_id
        ]

    @app.get(f"{PREFIX}/leaderboard/cross-table", response_model=CrossTable)
    def cross_table(phase: Literal["ladder", "final"] = "ladder") -> CrossTable:
        """Every pair of versions that met in the phase: wins, losses, draws of the row's
        version against the column's; and the fit's likelihood of superiority."""
        standings = host.standings()
        table = standings.ladder if phase == "ladder" else standings.final
        names = refs()
        cells = [
            CrossCell(
                row=names.get(a, str(a)),
                column=names.get(b, str(b)),
                matches=sum(t),
                wins=t[0],
                losses=t[1],
                draws=t[2],
            )
            for (a, b), t in sorted(pairwise(store.finished_matches(phase=phase)).items())
        ]
        los = [
            Superiority(row=a, column=b, p=round(p, 4)) for (a, b), p in table.superiority.items()
        ]
        return CrossTable(versions=[r.bot for r in table.ratings], cells=cells, superiority=los)

    @app.get(f"{PREFIX}/leaderboard/history", response_model=list[HistoryPoint])
    def history(phase: Literal["ladder", "final"] = "ladder") -> list[HistoryPoint]:
        """The leaderboard after each refit that counted new matches (at most 200, evenly
        thinned): each version's Elo and interval over time."""
        return [
            HistoryPoint(
                at=p.at,
                matches=p.matches,
                ratings=[HistoryRating(ref=r, elo=e, plus_minus=pm) for r, e, pm in p.ratings],
            )
            for p in store.rating_history(phase)
        ]

    @app.get(f"{PREFIX}/matches", response_model=list[MatchOut])
    def matches(
        version: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None,
        phase: Literal["ladder", "final"] | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> list[MatchOut]:
        if version is not None:
            store.version(version)  # 404 for an unknown one
        names = refs()
        found = store.finished_matches(version_id=version, phase=phase)
        return [match_out(m, names) for m in found[-limit:][::-1]]

    @app.get(f"{PREFIX}/matches/{{match_id}}", response_model=MatchOut)
    def match(match_id: MatchId) -> MatchOut:
        return match_out(find_match(match_id), refs())

    @app.get(
        f"{PREFIX}/matches/{{match_id}}/record",
        response_class=FileResponse,
        responses={200: {"content": {"application/gzip": {}}}},
    )
    def record(match_id: MatchId) -> FileResponse:
        m = find_match(match_id)
        if not _record_public(store, m) or m.record_path is None:
            raise HTTPException(
                409, "the record is published once every rotation of its deal is played"
            )
        path = host.directory / m.record_path
        if not path.is_file():
            raise HTTPException(404, f"the record of {match_id} is gone")
        return FileResponse(path, media_type="application/gzip", filename=path.name)

    @app.get(f"{PREFIX}/matches/{{match_id}}/viewer")
    def viewer(match_id: MatchId) -> JSONResponse:
        """The replay viewer's document of the match (``arena replay html``'s data), on the
        record's terms: once every rotation of its deal is played."""
        m = find_match(match_id)
        if not _record_public(store, m) or m.record_path is None:
            raise HTTPException(
                409, "the record is published once every rotation of its deal is played"
            )
        try:
            doc = viewer_document(host.directory / m.record_path)
        except ArenaError as err:
            raise HTTPException(404, f"the record of {match_id} cannot be shown: {err}") from None
        return JSONResponse(doc)

    @app.post(f"{PREFIX}/authors", response_model=NewToken, status_code=201)
    def register(body: Registration) -> NewToken:
        author, token = store.register_with_invite(
            body.name, body.invite_code, host.config.authors.invite_code
        )
        return NewToken(author=_author_out(author), token=token)

    # --- authors ----------------------------------------------------------------------------

    @app.get(f"{PREFIX}/me", response_model=Me)
    def me(author: Authed) -> Me:
        return Me(author=_author_out(author), bots=bots_out(author.id, author))

    @app.post(f"{PREFIX}/me/token", response_model=RotatedToken)
    def rotate(author: Authed) -> RotatedToken:
        return RotatedToken(token=store.rotate_token(author.id))

    @app.put(
        f"{PREFIX}/bots/{{name}}/versions",
        response_model=VersionOut,
        status_code=201,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                },
            }
        },
    )
    async def submit(name: str, request: Request, author: Authed) -> VersionOut:
        await anyio.to_thread.run_sync(_open_for_submissions, store)
        limits = _limits(host.config)
        data = await _body(request, limits.max_upload_bytes)
        snapshots = host.directory / SNAPSHOTS_DIR

        def stored() -> Version:
            try:
                if is_image_tarball(data, limits):
                    if not host.config.submissions.allow_images:
                        raise HTTPException(
                            400,
                            "this competition takes archives of source only, not Docker image "
                            "tarballs (its host has not set submissions.allow_images)",
                        )
                    image = store_image(data, host.directory / IMAGES_DIR, limits)
                    # Loaded now, so an image the engine refuses is refused at once.
                    load_image(host.directory / IMAGES_DIR, image.sha256)
                    return store.add_version(author.id, name, "image", image.sha256, image.manifest)
                snap = store_snapshot(data, snapshots, limits)
            except DockerUnavailable as err:
                raise HTTPException(503, str(err)) from None
            except ArenaError as err:
                raise HTTPException(400, str(err)) from None
            return store.add_version(
                author.id, name, "archive", snap.sha256, snap.manifest.to_dict()
            )

        v = await anyio.to_thread.run_sync(stored)
        host.changed()
        return version_out(v, author)

    @app.post(f"{PREFIX}/bots/{{name}}/live", response_model=LiveVersion, status_code=201)
    def live(name: str, author: Authed) -> LiveVersion:
        _open_for_submissions(store)
        v, token = store.add_live_version(author.id, name, {"runtime": "live"})
        host.changed()
        return LiveVersion(version=version_out(v, author), token=token)

    @app.post(f"{PREFIX}/versions/{{version_id}}/retire", response_model=VersionOut)
    def retire(version_id: VersionId, author: Authed) -> VersionOut:
        owned(version_id, author)
        v = store.set_status(version_id, "retired", "retired by its author")
        host.changed()
        return version_out(v, author)

    @app.get(f"{PREFIX}/versions/{{version_id}}/log", response_class=PlainTextResponse)
    def version_log(version_id: VersionId, author: Authed) -> PlainTextResponse:
        v = owned(version_id, author)
        if not v.log_path:
            raise HTTPException(404, f"version {v.ref} has no validation log")
        return PlainTextResponse(_read_text(host.directory / v.log_path))

    @app.get(
        f"{PREFIX}/versions/{{version_id}}/archive",
        response_class=Response,
        responses={200: {"content": {"application/gzip": {}, "application/x-tar": {}}}},
    )
    def archive(version_id: VersionId, author: Authed) -> Response:
        v = owned(version_id, author)
        if v.sha256 is None:
            raise HTTPException(404, f"version {v.ref} is a live bot: it has no archive")
        if v.kind == "image":
            # The image tarball as stored (what was uploaded, without its tags).
            return FileResponse(
                image_path(host.directory / IMAGES_DIR, v.sha256), media_type="application/x-tar"
            )
        root = snapshot_path(host.directory / SNAPSHOTS_DIR, v.sha256)
        return Response(_tar_gz(root), media_type="application/gzip")

    @app.get(f"{PREFIX}/matches/{{match_id}}/logs/{{seat}}", response_class=PlainTextResponse)
    def seat_log(match_id: MatchId, seat: SeatNumber, author: Authed) -> PlainTextResponse:
        m = find_match(match_id)
        if not 0 <= seat < len(m.seats):
            raise HTTPException(404, f"match {match_id} has no seat {seat}")
        v = store.version(m.seats[seat])
        if v.author_id != author.id:
            raise HTTPException(403, f"seat {seat} of {match_id} is not your bot's")
        path = host.directory / LOGS_DIR / seat_log_name(match_id, seat)
        if not path.is_file():
            raise HTTPException(404, f"seat {seat} of {match_id} left no log (a live bot)")
        return PlainTextResponse(_read_text(path))

    # --- the host ---------------------------------------------------------------------------

    @app.post(
        f"{PREFIX}/admin/authors",
        response_model=NewToken,
        status_code=201,
        dependencies=[Depends(require_admin)],
    )
    def add_author(body: NewAuthor) -> NewToken:
        author, token = store.add_author(body.name)
        return NewToken(author=_author_out(author), token=token)

    @app.post(
        f"{PREFIX}/admin/ladder", response_model=Status, dependencies=[Depends(require_admin)]
    )
    def steer(body: Control) -> Status:
        # A refused request changes nothing: the pace is checked before the state moves (which
        # may be refused), and stored after.
        pace = body.units_per_minute
        if pace is not None:
            try:
                pace = check_units_per_minute(pace)
            except ValueError as err:
                raise HTTPException(400, f"units_per_minute: {err}") from None
        if body.state is not None and body.state != store.ladder_state():
            store.set_ladder_state(body.state)
        if pace is not None:
            store.set_units_per_minute(pace)
        host.changed()
        return status()

    # The web face: pages drawn from this API, at paths of their own (arena/web/pages.py).
    add_pages(app, host.config.name)
    return app


# --- helpers ------------------------------------------------------------------------------------


def _status_of(err: CompetitionStoreError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, Forbidden):
        return 403
    if isinstance(err, Conflict):
        return 409
    if isinstance(err, DatabaseLocked):
        return 503
    return 400


def _validation_line(err: RequestValidationError) -> str:
    problems = []
    for e in err.errors()[:3]:
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
        problems.append(f"{where}: {e.get('msg', 'invalid')}" if where else str(e.get("msg")))
    return "; ".join(problems) or "invalid request"


def _bearer(authorization: str | None) -> str:
    if not authorization:
        return ""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _author_out(a: Author) -> AuthorOut:
    return AuthorOut(id=a.id, name=a.name, created=a.created)


def _limits(config: CompetitionConfig) -> ArchiveLimits:
    s = config.submissions
    return ArchiveLimits(
        max_upload_bytes=s.max_upload_bytes,
        max_files=s.max_files,
        max_unpacked_bytes=s.max_unpacked_bytes,
    )


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the upload is larger than {limit:,} bytes")
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the upload is larger than {limit:,} bytes")
        parts.append(chunk)
    if size == 0:
        raise HTTPException(400, "no archive in the request's body")
    return b"".join(parts)


def _open_for_submissions(store: CompetitionStore) -> None:
    """409 once the host has closed the competition: its versions are frozen for the final."""
    if store.ladder_state() == "closed":
        raise HTTPException(409, "the competition is closed: no more submissions")


def _record_public(store: CompetitionStore, m: StoredMatch) -> bool:
    """Published once its unit (every rotation of its deal) is over: a bot that may still
    play the deal must not be able to read it."""
    if m.state != "done":
        return False
    return store.unit(m.unit_id).state != "pending"


def pairwise(matches: Iterable[StoredMatch]) -> dict[tuple[int, int], list[int]]:
    """``(a, b) → [wins, losses, draws]`` of version ``a`` against ``b`` over ``matches``: in
    each match, every version against every other version at its table, by their best ranks
    (partners of one version count once)."""
    tally: dict[tuple[int, int], list[int]] = {}
    for m in matches:
        ranks = (m.result or {}).get("ranks") or []
        if len(ranks) != len(m.seats):
            continue
        best: dict[int, int] = {}
        for v, r in zip(m.seats, ranks, strict=True):
            best[v] = min(best.get(v, r), r)
        for a, ra in best.items():
            for b, rb in best.items():
                if a != b:
                    row = tally.setdefault((a, b), [0, 0, 0])
                    row[0 if ra < rb else 1 if ra > rb else 2] += 1
    return tally


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as err:
        raise HTTPException(404, f"cannot read the log: {err.strerror}") from None


def _tar_gz(root: Path) -> bytes:
    """The snapshot as a .tar.gz of its files (what its author uploaded, re-packed)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(root.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
    return out.getvalue()
