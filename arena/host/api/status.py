"""The competition's status and standings: ``/status`` and ``/leaderboard`` (with its
cross-table and history). Public."""

from __future__ import annotations

from fastapi import APIRouter, Request

from arena.host.api.deps import PREFIX, Host
from arena.host.api.views import all_refs, host_status, pairwise
from arena.host.apitypes import (
    CrossCell,
    CrossTable,
    HistoryPoint,
    HistoryRating,
    LeaderRow,
    ParBoard,
    ParRow,
    Phase,
    Status,
    Superiority,
)
from arena.host.leaderboard import ProvisionalRule, leader_rows

router = APIRouter(prefix=PREFIX)


@router.get("/status", response_model=Status)
def status(host: Host, request: Request) -> Status:
    return host_status(host, request.url.hostname)


@router.get("/leaderboard", response_model=list[LeaderRow])
def leaderboard(
    host: Host, phase: Phase = "ladder", latest: bool = False, all: bool = False
) -> list[LeaderRow]:
    """The rated versions, ranked among those shown: in the ladder, established ones first,
    then the provisional ones; retired versions only with ``all`` (marked). With ``latest``,
    each bot's latest validated version only (its rating from the same fit)."""
    store = host.store
    standings = host.standings()
    table = standings.ladder if phase == "ladder" else standings.final
    names = {a.id: a.name for a in store.authors()}
    return leader_rows(
        table.ratings,
        store.versions(),
        names,
        # The final's finalists all play the same matches: its order is the fit's.
        ProvisionalRule.of(host.config.ladder) if phase == "ladder" else None,
        latest=latest,
        retired=all,
    )


@router.get("/leaderboard/par", response_model=ParBoard)
def par(host: Host) -> ParBoard:
    """Each version's par in the ladder against the competition's reference (``[ladder]
    par``), computed in the background as matches finish: its mean score per match minus the
    reference's in the same seat on the same deal, with a 95 % interval."""
    table = host.par()
    if table is None:
        return ParBoard(reference=host.config.ladder.par, rows=[])
    rows = [
        ParRow(
            ref=b.bot,
            par=round(b.mean, 4),
            plus_minus=None if b.plus_minus is None else round(b.plus_minus, 4),
            matches=b.matches,
            deals=b.deals,
        )
        for b in table.bots
    ]
    return ParBoard(reference=table.reference, rows=rows)


@router.get("/leaderboard/cross-table", response_model=CrossTable)
def cross_table(host: Host, phase: Phase = "ladder") -> CrossTable:
    """Every pair of versions that met in the phase: wins, losses, draws of the row's
    version against the column's; and the fit's likelihood of superiority."""
    standings = host.standings()
    table = standings.ladder if phase == "ladder" else standings.final
    names = all_refs(host.store)
    cells = [
        CrossCell(
            row=names.get(a, str(a)),
            column=names.get(b, str(b)),
            matches=sum(t),
            wins=t[0],
            losses=t[1],
            draws=t[2],
        )
        for (a, b), t in sorted(pairwise(host.store.finished_matches(phase=phase)).items())
    ]
    los = [Superiority(row=a, column=b, p=round(p, 4)) for (a, b), p in table.superiority.items()]
    return CrossTable(versions=[r.bot for r in table.ratings], cells=cells, superiority=los)


@router.get("/leaderboard/history", response_model=list[HistoryPoint])
def history(host: Host, phase: Phase = "ladder") -> list[HistoryPoint]:
    """The leaderboard after each refit that counted new matches (at most 200, evenly
    thinned): each version's Elo and interval over time."""
    return [
        HistoryPoint(
            at=p.at,
            matches=p.matches,
            ratings=[HistoryRating(ref=r, elo=e, plus_minus=pm) for r, e, pm in p.ratings],
        )
        # With seasons, the current season's (a reset season starts its own history).
        for p in host.store.rating_history(phase, season=_season(host))
    ]


def _season(host: Host) -> int | None:
    return host.store.current_season().number if host.config.seasons.enabled else None
