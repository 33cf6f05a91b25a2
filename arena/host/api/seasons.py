"""The ladder's seasons: ``/seasons`` (each with its winners) and ``/seasons/{n}`` (its standings,
frozen at its end once archived, and its rating history), public; ``/admin/seasons/end`` ends
the current season now and starts the next (the admin's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam

from arena.host.announce import Announcer
from arena.host.api.deps import MAX_ID, PREFIX, Host, require_admin
from arena.host.api.views import season_out
from arena.host.apitypes import (
    HistoryPoint,
    HistoryRating,
    LeaderRow,
    NewSeason,
    SeasonDetail,
    SeasonEnd,
    SeasonOut,
)
from arena.host.leaderboard import ProvisionalRule, leader_rows
from arena.host.seasons import Seasons

router = APIRouter(prefix=PREFIX)
SeasonNumber = Annotated[int, PathParam(ge=1, le=MAX_ID)]


@router.get("/seasons", response_model=list[SeasonOut])
def seasons(host: Host) -> list[SeasonOut]:
    """Every season, oldest first: the last one is current."""
    return [season_out(s) for s in host.store.seasons()]


@router.get("/seasons/{number}", response_model=SeasonDetail)
def season(host: Host, number: SeasonNumber) -> SeasonDetail:
    """Season ``number``: its standings (frozen at its end; the current one's as they stand
    now) and the ladder's rating history during it."""
    store = host.store
    s = store.season(number)
    if s.standings is not None:
        rows = [LeaderRow.model_validate(r) for r in s.standings]
    else:
        names = {a.id: a.name for a in store.authors()}
        rows = leader_rows(
            host.standings().ladder.ratings,
            store.versions(),
            names,
            ProvisionalRule.of(host.config.ladder),
        )
    history = [
        HistoryPoint(
            at=p.at,
            matches=p.matches,
            ratings=[HistoryRating(ref=r, elo=e, plus_minus=pm) for r, e, pm in p.ratings],
        )
        for p in store.rating_history("ladder", season=number)
    ]
    return SeasonDetail(season=season_out(s), standings=rows, history=history)


@router.post("/admin/seasons/end", response_model=SeasonEnd, dependencies=[Depends(require_admin)])
def end_season(body: NewSeason, host: Host) -> SeasonEnd:
    """End the current season now (its standings frozen, its result announced) and start the
    next, named ``name`` if given (else the config's next, or unnamed)."""
    name = body.name.strip() if body.name else None
    keeper = Seasons(host.store, host.config, Announcer(host.store, host.config))
    ended = keeper.end_now(name or None)
    host.changed()
    return SeasonEnd(ended=season_out(ended), current=season_out(host.store.current_season()))
