"""The competition's status and standings: ``/status`` and ``/leaderboard`` (with its
cross-table and history). Public."""

from __future__ import annotations

from fastapi import APIRouter

from arena.host.api.deps import PREFIX, Host
from arena.host.api.views import all_refs, host_status, pairwise
from arena.host.apitypes import (
    CrossCell,
    CrossTable,
    HistoryPoint,
    HistoryRating,
    LeaderRow,
    Phase,
    Status,
    Superiority,
)

router = APIRouter(prefix=PREFIX)


@router.get("/status", response_model=Status)
def status(host: Host) -> Status:
    return host_status(host)


@router.get("/leaderboard", response_model=list[LeaderRow])
def leaderboard(host: Host, phase: Phase = "ladder", latest: bool = False) -> list[LeaderRow]:
    """Every rated version; with ``latest``, each bot's latest validated version only (its
    rating from the same fit)."""
    store = host.store
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
        for p in host.store.rating_history(phase)
    ]
