"""Events as the API shows them (``/events``, ``/events/{name}``, ``/status``): configured ones
not yet started, and each started one with its rounds, ties, deals and match ids, its Swiss
standings, its winner."""

from __future__ import annotations

from collections.abc import Sequence

from arena.host.apitypes import (
    EventDeal,
    EventDetail,
    EventOut,
    EventRound,
    EventStanding,
    EventTie,
)
from arena.host.config import CompetitionConfig
from arena.host.events.brackets import (
    DealScore,
    heat_ranking,
    knockout_round_name,
    swiss_standings,
    total,
)
from arena.host.events.config import EventConfig
from arena.host.events.rounds import EventState, deal_scores
from arena.host.store import CompetitionStore, NotFound, StoredEvent, StoredMatch


def _configured(event: EventConfig) -> EventOut:
    return EventOut(
        name=event.name,
        format=event.format,
        state="scheduled",
        start=None if event.start is None else event.start.isoformat().replace("+00:00", "Z"),
        config=event.to_json(),
    )


def _started(event: StoredEvent, refs: dict[int, str]) -> EventOut:
    return EventOut(
        name=event.name,
        format=event.format,
        state=event.state,
        start=event.config.get("start"),
        entrants=[refs.get(v, str(v)) for v in event.entrants],
        config=event.config,
        started=event.created,
        finished=event.finished,
        winner=None if event.winner is None else refs.get(event.winner),
        reason=event.reason,
    )


def event_list(store: CompetitionStore, config: CompetitionConfig) -> list[EventOut]:
    """Every started event, then the configured ones not started yet."""
    refs = {v.id: v.ref for v in store.versions()}
    started = store.events()
    names = {e.name for e in started}
    return [_started(e, refs) for e in started] + [
        _configured(e) for e in config.events if e.name not in names
    ]


def event_states(store: CompetitionStore, config: CompetitionConfig) -> list[dict[str, str | None]]:
    """``/status``'s line per event: its name, state and winner."""
    return [
        {"name": e.name, "state": e.state, "winner": e.winner} for e in event_list(store, config)
    ]


def event_detail(store: CompetitionStore, config: CompetitionConfig, name: str) -> EventDetail:
    """One event: configured (its rules) or started (its rounds and standings)."""
    try:
        stored = store.event(name)
    except NotFound:
        configured = next((e for e in config.events if e.name == name), None)
        if configured is None:
            raise NotFound(f"no event {name!r}") from None
        return EventDetail(**_configured(configured).model_dump())
    refs = {v.id: v.ref for v in store.versions()}
    matches = store.event_matches(stored.id)
    state = EventState(
        store,
        config,
        stored,
        store.event_units(stored.id),
        store.event_rounds(stored.id),
        deal_scores(matches, config.places),
    )
    rounds = [_round(state, r, refs, matches) for r in range(len(state.rounds))]
    standings: list[EventStanding] = []
    if stored.format == "swiss":
        rows = swiss_standings(len(stored.entrants), state.swiss_played())
        for i, row in enumerate(rows):
            standings.append(
                EventStanding(
                    rank=i + 1,
                    ref=refs.get(stored.entrants[row.seed], "?"),
                    seed=row.seed + 1,
                    points=row.points,
                    match_points=row.match_points,
                    tiebreak=row.buchholz,
                    opponents=[refs.get(stored.entrants[o], "?") for o in row.opponents],
                )
            )
    return EventDetail(**_started(stored, refs).model_dump(), rounds=rounds, standings=standings)


def _round(
    state: EventState, r: int, refs: dict[int, str], matches: Sequence[StoredMatch]
) -> EventRound:
    event = state.event
    ties = state.rounds[r]
    by_unit: dict[int, list[str]] = {}
    for m in matches:
        by_unit.setdefault(m.unit_id, []).append(m.match_id)
    out: list[EventTie] = []
    for t, tie in enumerate(ties):
        seeds = [s for s in tie if s is not None]
        deals: list[EventDeal] = []
        per_deal = state.tie_scores(r, t, seeds)
        for u in state.units:
            if u.round == r and u.tie == t:
                scores = per_deal.get(u.deal, [DealScore()] * len(seeds))
                deals.append(
                    EventDeal(
                        deal=u.deal,
                        unit=u.unit_id,
                        state=u.state,
                        match_ids=by_unit.get(u.unit_id, []),
                        points=[s.points for s in scores],
                        scores=[s.score for s in scores],
                    )
                )
        sums = [total([d[i] for d in per_deal.values()]) for i in range(len(seeds))]
        played = deals and all(d.state != "pending" for d in deals)
        result: list[str] = []
        if played and event.format == "heats":
            ranking = heat_ranking(seeds, dict(zip(seeds, sums, strict=True)))
            result = [refs.get(event.entrants[s], "?") for s in ranking]
        elif len(seeds) == 1:
            result = [refs.get(event.entrants[seeds[0]], "?")]
        out.append(
            EventTie(
                sides=[None if s is None else refs.get(event.entrants[s], "?") for s in tie],
                seeds=[None if s is None else s + 1 for s in tie],
                deals=deals,
                points=[s.points for s in sums],
                scores=[s.score for s in sums],
                result=result,
            )
        )
    _knockout_results(state, r, out, refs)
    return EventRound(round=r + 1, name=_round_name(event.format, r, ties), ties=out)


def _knockout_results(
    state: EventState, r: int, ties: list[EventTie], refs: dict[int, str]
) -> None:
    """A knockout tie's result: who reached the next round (or won the event)."""
    event = state.event
    if event.format != "knockout":
        return
    if r + 1 < len(state.rounds):
        through = {s for tie in state.rounds[r + 1] for s in tie if s is not None}
    elif event.winner is not None:
        through = {event.entrants.index(event.winner)}
    else:
        return
    for tie, seeds in zip(ties, state.rounds[r], strict=True):
        winner = [s for s in seeds if s is not None and s in through]
        tie.result = [refs.get(event.entrants[s], "?") for s in winner]


def _round_name(format_: str, r: int, ties: Sequence[Sequence[int | None]]) -> str:
    if format_ == "knockout":
        return knockout_round_name(2 * len(ties))
    if format_ == "heats":
        return "final heat" if len(ties) == 1 else f"heats, round {r + 1}"
    return f"round {r + 1}"
