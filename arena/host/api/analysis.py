"""An author's analysis of their own seats in a finished match (docs/analysis.md, *On a
competition*): asked with ``POST /matches/{id}/analysis``, done by the host's analysis worker
(arena/host/analyses.py), read with ``GET``: its state to anyone who asked, its data to them
only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, HTTPException

from arena.host.analyses import Analyses, AnalysisRefused
from arena.host.api.deps import PREFIX, Authed, Host, HostState, MatchId
from arena.host.api.errors import gone_if_pruned
from arena.host.api.views import finished_match, record_public
from arena.host.apitypes import AnalysisOut

router = APIRouter(prefix=PREFIX)


def _analyses(host: HostState) -> Analyses:
    if host.analyses is None:
        raise HTTPException(404, "this host does not analyse matches")
    return host.analyses


def _out(data: dict[str, Any]) -> AnalysisOut:
    return AnalysisOut(
        match_id=str(data["match_id"]),
        state=str(data["state"]),
        seats=list(data.get("seats") or []),
        requested_at=data.get("requested_at"),
        reason=data.get("reason"),
        analysis=data.get("analysis") if data.get("state") == "done" else None,
    )


@router.post("/matches/{match_id}/analysis", response_model=AnalysisOut, status_code=202)
def request_analysis(match_id: MatchId, host: Host, author: Authed) -> AnalysisOut:
    """Queue the analysis of the author's seats in a finished match (one of their versions
    played it): 403 without a seat of theirs, 409 asked already or the record not yet public,
    429 over the day's limit (``[analysis] per_author_per_day``)."""
    analyses = _analyses(host)
    m = finished_match(host.store, match_id)
    seats = _own_seats(host, m.seats, author.id, match_id)
    if not record_public(host.store, m) or m.record_path is None:
        raise HTTPException(
            409, "the record is published once every rotation of its deal is played"
        )
    if not (host.directory / m.record_path).is_file():
        gone_if_pruned(host.store, m.record_path, f"the record of {match_id}")
        raise HTTPException(404, f"the record of {match_id} is gone")
    try:
        analyses.request(match_id, author.id, seats, m.record_path)
    except AnalysisRefused as err:
        raise HTTPException(err.status, str(err)) from None
    data = analyses.read(match_id, author.id)
    assert data is not None
    return _out(data)


@router.get("/matches/{match_id}/analysis", response_model=AnalysisOut)
def read_analysis(match_id: MatchId, host: Host, author: Authed) -> AnalysisOut:
    """The author's analysis of ``match_id``: its state (``none`` before they ask), and once
    done its data; 403 for an author without a seat in it."""
    m = finished_match(host.store, match_id)
    seats = _own_seats(host, m.seats, author.id, match_id)
    data = _analyses(host).read(match_id, author.id)
    if data is None:
        return AnalysisOut(match_id=match_id, state="none", seats=seats)
    return _out(data)


def _own_seats(
    host: HostState, versions: Sequence[int], author_id: int, match_id: str
) -> list[int]:
    seats = [s for s, v in enumerate(versions) if host.store.version(v).author_id == author_id]
    if not seats:
        raise HTTPException(403, f"none of {match_id}'s seats is your bot's")
    return seats
