"""Finished matches and what they leave: the public list and each match, its record and its
replay viewer's document (once every rotation of its deal is played), and an author's own
seat logs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse

from arena.errors import ArenaError
from arena.host.api.challenges import challenge_out, challenge_record_path, is_challenge
from arena.host.api.deps import (
    MAX_ID,
    PREFIX,
    Authed,
    Host,
    HostState,
    MatchId,
    SeatNumber,
    Viewer,
)
from arena.host.api.errors import gone_if_pruned
from arena.host.api.views import finished_match, match_out, read_text, record_public
from arena.host.apitypes import TOTAL_HEADER, MatchOut
from arena.host.store import Author, Phase
from arena.layout import LOGS_DIR, seat_log_name
from arena.records.format import may_have_notes, read_record, record_bytes, without_notes
from arena.records.html import viewer_document

router = APIRouter(prefix=PREFIX)


@dataclass
class MatchFilters:
    """The match list's filters, each a query parameter named as in the store's
    ``MATCH_FILTERS``: a new one (a season, an event) is one field here and one line there."""

    version: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None
    bot: Annotated[str | None, Query(min_length=1, max_length=64)] = None
    phase: Phase | None = None
    faults: Annotated[bool | None, Query(description="with faults (true) or without")] = None
    season: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None
    event: Annotated[str | None, Query(min_length=1, max_length=64)] = None


@router.get("/matches", response_model=list[MatchOut])
def matches(
    host: Host,
    response: Response,
    filters: Annotated[MatchFilters, Depends()],
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> list[MatchOut]:
    """The finished matches (of a version, a bot, a phase, a season, an event; with faults or
    without), newest first: ``limit`` of them after the ``offset`` newest. The header
    ``X-Total-Count`` says how many there are with these filters, for paging."""
    store = host.store
    if filters.version is not None:
        store.version(filters.version)  # 404 for an unknown one
    if filters.bot is not None and all(b.name != filters.bot for b in store.bots()):
        raise HTTPException(404, f"no bot {filters.bot!r}")
    if filters.event is not None:
        store.event(filters.event)  # 404 for an unknown one
    given = {k: (int(v) if isinstance(v, bool) else v) for k, v in asdict(filters).items()}
    page, total = store.finished_matches_paged(given, limit, offset)
    response.headers[TOTAL_HEADER] = str(total)
    refs = store.version_refs([v for m, _ in page for v in m.seats])
    return [match_out(m, refs, unit != "pending") for m, unit in page]


@router.get("/matches/{match_id}", response_model=MatchOut)
def match(match_id: MatchId, host: Host) -> MatchOut:
    """A finished match; a challenge's (``human``) in any state, as ``/challenges/{id}``."""
    if is_challenge(match_id):
        return challenge_out(host, host.store.challenge(match_id))
    m = finished_match(host.store, match_id)
    return match_out(m, host.store.version_refs(m.seats), record_public(host.store, m))


@router.get(
    "/matches/{match_id}/record",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}}},
)
def record(match_id: MatchId, host: Host, who: Viewer) -> Response:
    """The match's record. The bots' notes on their decisions are their authors' own: each is
    taken out unless the request carries its author's token (the rest still verifies)."""
    path = _public_record(host, match_id)
    if not path.is_file():
        raise HTTPException(404, f"the record of {match_id} is gone")
    kept = None
    if may_have_notes(path):
        try:
            kept = without_notes(read_record(path), _own_seats(host, match_id, who))
        except ArenaError as err:
            raise HTTPException(404, f"the record of {match_id} cannot be read: {err}") from None
    if kept is None:  # no note another may not see: the file as written
        return FileResponse(path, media_type="application/gzip", filename=path.name)
    return Response(
        record_bytes(kept.header, kept.entries, kept.result),
        media_type="application/gzip",
        headers={"Content-Disposition": f'attachment; filename="{path.name}"'},
    )


@router.get("/matches/{match_id}/viewer")
def viewer(match_id: MatchId, host: Host, who: Viewer) -> JSONResponse:
    """The replay viewer's document of the match (``arena replay html``'s data), on the
    record's terms: once every rotation of its deal is played; with the notes of the request's
    author's seats only (none without a token)."""
    try:
        doc = viewer_document(_public_record(host, match_id), _own_seats(host, match_id, who))
    except ArenaError as err:
        raise HTTPException(404, f"the record of {match_id} cannot be shown: {err}") from None
    return JSONResponse(doc)


def _own_seats(host: HostState, match_id: str, who: Author | None) -> set[int]:
    """The seats of ``match_id`` that ``who``'s bots played (none for an anonymous visitor)."""

    def owned(version_id: int) -> bool:
        return who is not None and host.store.version(version_id).author_id == who.id

    if who is None:
        return set()
    if is_challenge(match_id):
        played = host.store.challenge(match_id).seats
        return {s for s, v in enumerate(played) if v is not None and owned(v)}
    seats = finished_match(host.store, match_id).seats
    return {s for s, v in enumerate(seats) if owned(v)}


@router.get("/matches/{match_id}/logs/{seat}", response_class=PlainTextResponse)
def seat_log(match_id: MatchId, seat: SeatNumber, host: Host, author: Authed) -> PlainTextResponse:
    m = finished_match(host.store, match_id)
    if not 0 <= seat < len(m.seats):
        raise HTTPException(404, f"match {match_id} has no seat {seat}")
    v = host.store.version(m.seats[seat])
    if v.author_id != author.id:
        raise HTTPException(403, f"seat {seat} of {match_id} is not your bot's")
    name = f"{LOGS_DIR}/{seat_log_name(match_id, seat)}"
    path = host.directory / name
    if not path.is_file():
        gone_if_pruned(host.store, name, f"the log of seat {seat} of {match_id}")
        raise HTTPException(404, f"seat {seat} of {match_id} left no log (a live bot)")
    return PlainTextResponse(read_text(path))


def _public_record(host: HostState, match_id: str) -> Path:
    """Where a finished match's record is; 409 until every rotation of its deal is played, 410
    once the host's retention removed it."""
    if is_challenge(match_id):
        return challenge_record_path(host, match_id)
    m = finished_match(host.store, match_id)
    if not record_public(host.store, m) or m.record_path is None:
        raise HTTPException(
            409, "the record is published once every rotation of its deal is played"
        )
    path = host.directory / m.record_path
    if not path.is_file():
        gone_if_pruned(host.store, m.record_path, f"the record of {match_id}")
    return path
