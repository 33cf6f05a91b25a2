"""Exports: standings and finished matches as CSV or JSON (``/export/standings.csv``,
``/export/matches.json``, …), public information only, the same as the API's own answers: no
seed, no hidden card, a record only as its link (and only once it is public). The matches are
streamed in batches read from the store, however many there are."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import StreamingResponse

from arena.host.api.challenges import challenge_out
from arena.host.api.deps import MAX_ID, PREFIX, Host, HostState
from arena.host.apitypes import LeaderRow, Phase
from arena.host.leaderboard import ProvisionalRule, leader_rows
from arena.host.store import Phase as MatchPhase

router = APIRouter(prefix=PREFIX)

Format = Literal["csv", "json"]
SeasonQuery = Annotated[int | None, Query(ge=1, le=MAX_ID)]
#: The columns of each export, in order (the JSON objects have the same keys).
STANDINGS_COLUMNS = tuple(LeaderRow.model_fields)
MATCH_COLUMNS = (
    "match_id",
    "unit",
    "phase",
    "season",
    "rotation",
    "seats",
    "summary",
    "reason",
    "ranks",
    "faults",
    "finished",
    "record",
    "human",
)
_MEDIA = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


def standings(host: Host, phase: Phase, season: int | None) -> list[LeaderRow]:
    """The leaderboard rows an export holds: the final's, an archived season's frozen ones, or
    the current season's as ``/leaderboard`` serves them."""
    store = host.store
    if season is not None:
        if phase != "ladder":
            raise HTTPException(400, "season: the ladder's seasons only (phase=ladder)")
        frozen = store.season(season).standings
        if frozen is not None:
            return [LeaderRow.model_validate(r) for r in frozen]
        if season != store.current_season().number:
            raise HTTPException(404, f"season {season} has no standings")
    fitted = host.standings()
    table = fitted.ladder if phase == "ladder" else fitted.final
    names = {a.id: a.name for a in store.authors()}
    rule = ProvisionalRule.of(host.config.ladder) if phase == "ladder" else None
    return leader_rows(table.ratings, store.versions(), names, rule)


def _stream(rows: Iterable[dict[str, Any]], columns: tuple[str, ...], fmt: Format) -> Iterator[str]:
    """``rows`` as CSV (a header, then one line each) or a JSON array, a piece at a time."""
    if fmt == "json":
        first = True
        yield "["
        for row in rows:
            yield ("\n" if first else ",\n") + json.dumps(row, allow_nan=False)
            first = False
        yield "\n]\n"
        return
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()}
        )
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


def _response(
    rows: Iterable[dict[str, Any]], columns: tuple[str, ...], fmt: Format, name: str
) -> StreamingResponse:
    return StreamingResponse(
        _stream(rows, columns, fmt),
        media_type=_MEDIA[fmt],
        headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'},
    )


@router.get(
    "/export/standings.{fmt}",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}, "application/json": {}}}},
)
def export_standings(
    host: Host, fmt: Format, phase: Phase = "ladder", season: SeasonQuery = None
) -> StreamingResponse:
    """The leaderboard (of ``phase``; of ``season``, frozen once it ended; else the current
    one) as CSV or JSON: its rows as ``/leaderboard`` and ``/seasons/{n}`` serve them."""
    rows = [r.model_dump(mode="json") for r in standings(host, phase, season)]
    return _response(rows, STANDINGS_COLUMNS, fmt, "standings")


@router.get(
    "/export/matches.{fmt}",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}, "application/json": {}}}},
)
def export_matches(
    host: Host,
    fmt: Format,
    phase: MatchPhase | None = None,
    season: SeasonQuery = None,
    version: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None,
    human: Annotated[bool, Query(description="the challenges (human matches) instead")] = False,
) -> StreamingResponse:
    """Every finished match (of ``phase``, ``season``, ``version``), oldest first: its seats'
    versions, result, faults, and its record's link once public; streamed. With ``human``: the
    finished challenges instead (``human`` true; of ``season``)."""
    store = host.store
    if human:
        return _response(human_rows(host, season, fmt), MATCH_COLUMNS, fmt, "challenges")
    if version is not None:
        store.version(version)  # 404 for an unknown one
    if season is not None:
        store.season(season)
    refs = {v.id: v.ref for v in store.versions()}

    def rows() -> Iterator[dict[str, Any]]:
        for m, in_season, public in store.export_matches(phase, season, version):
            result = m.result or {}
            yield {
                "match_id": m.match_id,
                "unit": m.unit_id,
                "phase": m.phase,
                "season": in_season,
                "rotation": m.rotation,
                "seats": [refs.get(v, str(v)) for v in m.seats],
                "summary": result.get("summary"),
                "reason": result.get("reason"),
                "ranks": result.get("ranks"),
                "faults": json.dumps(m.faults) if fmt == "csv" else m.faults,
                "finished": m.finished,
                "record": f"{PREFIX}/matches/{m.match_id}/record" if public else None,
                "human": False,
            }

    return _response(rows(), MATCH_COLUMNS, fmt, "matches")


def human_rows(host: HostState, season: int | None, fmt: Format) -> list[dict[str, Any]]:
    """The finished challenges as export rows, oldest first (their seats' ``person:AUTHOR``)."""
    done = [c for c in reversed(host.store.challenges(limit=MAX_ID)) if c.state == "done"]
    rows = []
    for c in done:
        if season is not None and c.season != season:
            continue
        out = challenge_out(host, c)
        rows.append(
            {
                "match_id": c.match_id,
                "unit": None,
                "phase": "challenge",
                "season": c.season,
                "rotation": None,
                "seats": out.seats,
                "summary": out.summary,
                "reason": out.reason,
                "ranks": out.ranks,
                "faults": json.dumps(c.faults) if fmt == "csv" else c.faults,
                "finished": c.finished,
                "record": f"{PREFIX}/matches/{c.match_id}/record",
                "human": True,
            }
        )
    return rows
