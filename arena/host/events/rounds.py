"""An event's rounds from the stored results: who enters (:func:`entrants`), its start with its
first round (:func:`begin_event`), and each step after (:func:`advance_event`: the next round,
a knockout's extra deals, or the end with its winner).

Synchronous store calls (the runner runs them in a worker thread). Every decision is derived
from what the store holds, by :mod:`arena.host.events.brackets`' pure rules, and every write is
one transaction that the store refuses to repeat: a host killed at any point derives the same
step again when it comes back, and plays no deal twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.host.config import CompetitionConfig
from arena.host.events.brackets import (
    DealScore,
    bracket_slots,
    heat_advance,
    heat_ranking,
    knockout_pairs,
    next_knockout_field,
    place_points,
    snake_heats,
    swiss_pairs,
    swiss_standings,
    tie_outcome,
    total,
)
from arena.host.events.config import EventConfig, event_named
from arena.host.leaderboard import ProvisionalRule, leader_rows
from arena.host.matchmaking import unit_matches
from arena.host.store import (
    CompetitionStore,
    Conflict,
    EventUnit,
    NewEventUnit,
    NotFound,
    StoredEvent,
    StoredMatch,
)
from arena.ratings import RatingTable
from arena.seeds import derive_seed

Ties = list[list[int | None]]


@dataclass(frozen=True, slots=True)
class Step:
    """What :func:`advance_event` did: units stored (to play), or the event finished."""

    new_units: list[int]
    finished: bool = False
    winner: str | None = None


def entrants(
    store: CompetitionStore, config: CompetitionConfig, ladder: RatingTable, n: int
) -> list[int]:
    """The ``n`` best of the ladder now, one version per bot (its latest validated one), in the
    leaderboard's order (no provisional version before an established one); then, to fill the
    field, unrated latest versions, oldest first."""
    versions = store.versions()
    latest: dict[int, int] = {}
    for v in versions:
        if v.status == "validated":
            latest[v.bot_id] = max(latest.get(v.bot_id, 0), v.number)
    active = {
        v.ref: v.id for v in versions if v.status == "validated" and latest[v.bot_id] == v.number
    }
    rule = ProvisionalRule.of(config.ladder)
    rows = leader_rows(ladder.ratings, versions, {}, rule, latest=True)
    ranked = [active[r.ref] for r in rows if r.ref in active]
    ranked += sorted(set(active.values()) - set(ranked))
    return ranked[:n]


def begin_event(
    store: CompetitionStore, config: CompetitionConfig, ladder: RatingTable, event: EventConfig
) -> StoredEvent | None:
    """Start ``event`` now with its first round; ``None`` while fewer than two versions can
    enter. :class:`~arena.host.store.Conflict` once it has started."""
    field = entrants(store, config, ladder, event.entrants)
    if len(field) < 2:
        return None
    seed = derive_seed(store.secret_seed(), "event", event.name)
    ties = _first_round(event, len(field), len(config.places))
    units = _round_units(config, event.to_json(), seed, field, 0, ties)
    return store.start_event(event.name, event.format, event.to_json(), seed, field, ties, units)


def start_now(
    store: CompetitionStore, config: CompetitionConfig, ladder: RatingTable, name: str
) -> StoredEvent:
    """``arena remote admin event start NAME``: the configured event ``name`` started now
    (:class:`NotFound` if not configured, :class:`Conflict` if started or short of entrants)."""
    event = event_named(config.events, name)
    if event is None:
        known = ", ".join(e.name for e in config.events) or "none"
        raise NotFound(f"no event {name!r} in the competition's config (configured: {known})")
    made = begin_event(store, config, ladder, event)
    if made is None:
        raise Conflict(f"event {name!r} needs at least two validated versions to enter")
    return made


def _first_round(event: EventConfig, n: int, n_places: int) -> Ties:
    if event.format == "knockout":
        return [list(pair) for pair in knockout_pairs(bracket_slots(n))]
    if event.format == "swiss":
        rows = swiss_standings(n, [])
        pairs = swiss_pairs(sorted(rows, key=lambda r: r.seed))
        assert pairs is not None  # a first round always pairs
        return [list(p) for p in pairs]
    return [list(h) for h in snake_heats(range(n), n_places)]


def _deals(config: dict[str, object]) -> int:
    key = {"knockout": "best_of", "swiss": "deals_per_round", "heats": "deals_per_heat"}
    value = config[key[str(config["format"])]]
    assert isinstance(value, int)
    return value


def _round_units(
    config: CompetitionConfig,
    event_config: dict[str, object],
    seed: int,
    field: Sequence[int],
    round_: int,
    ties: Ties,
    deals: Sequence[int] | None = None,
    only: Sequence[int] | None = None,
) -> list[NewEventUnit]:
    """The units of ``ties`` (those of ``only``, when given): ``deals`` (default: the format's
    deals per tie). A tie with one side (a bye) plays nothing."""
    out = []
    for t, tie in enumerate(ties):
        seeds = [s for s in tie if s is not None]
        if len(seeds) < 2 or (only is not None and t not in only):
            continue
        n_places = len(config.places)
        table = tuple(field[seeds[p % len(seeds)]] for p in range(n_places))
        for d in deals if deals is not None else range(_deals(event_config)):
            out.append(
                NewEventUnit(
                    t,
                    d,
                    derive_seed(seed, round_, t, d),
                    table,
                    unit_matches(table, config.places),
                )
            )
    return out


def deal_scores(
    matches: Sequence[StoredMatch], places: Sequence[Sequence[int]]
) -> dict[int, dict[int, DealScore]]:
    """Per unit, each version's :class:`DealScore` over its done matches (a version holding
    several places of a cyclically filled table: their mean)."""
    out: dict[int, dict[int, DealScore]] = defaultdict(dict)
    for m in matches:
        if m.result is None:
            continue
        versions = [m.seats[g[0]] for g in places]
        points = place_points([int(m.result["ranks"][g[0]]) for g in places])
        held = {v: versions.count(v) for v in versions}
        for p, v in enumerate(versions):
            share = DealScore(
                points[p] / held[v], float(m.result["scores"][places[p][0]]) / held[v]
            )
            out[m.unit_id][v] = out[m.unit_id].get(v, DealScore()) + share
    return out


def advance_event(store: CompetitionStore, config: CompetitionConfig, event: StoredEvent) -> Step:
    """The event's next step once its stored units are all played (nothing while one is
    pending): its next round, its extra deals, or its end."""
    units = store.event_units(event.id)
    if any(u.state == "pending" for u in units):
        return Step([])
    rounds = store.event_rounds(event.id)
    scores = deal_scores(store.event_matches(event.id), config.places)
    state = EventState(store, config, event, units, rounds, scores)
    if event.format == "knockout":
        return state.knockout()
    if event.format == "swiss":
        return state.swiss()
    return state.heats()


@dataclass(slots=True)
class EventState:
    """The stored state of an event, and how each format goes on from it."""

    store: CompetitionStore
    config: CompetitionConfig
    event: StoredEvent
    units: list[EventUnit]
    rounds: list[Ties]
    scores: Mapping[int, Mapping[int, DealScore]]

    @property
    def last(self) -> int:
        return len(self.rounds) - 1

    def tie_scores(self, round_: int, tie: int, seeds: Sequence[int]) -> dict[int, list[DealScore]]:
        """Per deal number, each seed's score in that deal of the tie."""
        out: dict[int, list[DealScore]] = {}
        for u in self.units:
            if u.round == round_ and u.tie == tie:
                unit = self.scores.get(u.unit_id, {})
                out[u.deal] = [unit.get(self.event.entrants[s], DealScore()) for s in seeds]
        return out

    def knockout(self) -> Step:
        ties = self.rounds[self.last]
        best_of = int(self.event.config["best_of"])
        extra_rule = self.event.config.get("tiebreak", "extra-deal") == "extra-deal"
        winners: dict[int, int] = {}
        need_extra: list[int] = []
        for t, tie in enumerate(ties):
            a, b = tie
            if a is None or b is None:
                continue
            by_deal = self.tie_scores(self.last, t, (a, b))
            deals = [(s[0], s[1]) for d, s in by_deal.items() if d < best_of]
            extra = [(s[0], s[1]) for d, s in by_deal.items() if d >= best_of]
            outcome = tie_outcome((a, b), deals, extra if extra or not extra_rule else None)
            if outcome == "extra":
                need_extra.append(t)
            else:
                winners[t] = outcome
        if need_extra:
            return self._store(None, ties, deals=[best_of], only=need_extra)
        pairs = [(t[0], t[1]) for t in ties]
        field = next_knockout_field(pairs, winners)
        if len(field) == 1 and field[0] is not None:
            return self._finish(field[0], "won the final")
        return self._store(self.last + 1, [list(p) for p in knockout_pairs(field)])

    def swiss_played(self) -> list[tuple[int, int | None, float, float, float]]:
        played: list[tuple[int, int | None, float, float, float]] = []
        for r, ties in enumerate(self.rounds):
            for t, (a, b) in enumerate(ties):
                assert a is not None
                if b is None:
                    played.append((a, None, 1.0, 0.0, 0.0))
                    continue
                deals = self.tie_scores(r, t, (a, b)).values()
                sa, sb = total([d[0] for d in deals]), total([d[1] for d in deals])
                pa = (
                    1.0
                    if (sa.points, sa.score) > (sb.points, sb.score)
                    else 0.5
                    if sa == sb
                    else 0.0
                )
                played.append((a, b, pa, sa.points, sb.points))
        return played

    def swiss(self) -> Step:
        rows = swiss_standings(len(self.event.entrants), self.swiss_played())
        if len(self.rounds) >= int(self.event.config["rounds"]):
            return self._finish(rows[0].seed, f"led the standings after {len(self.rounds)} rounds")
        pairs = swiss_pairs(rows)
        if pairs is None:
            return self._finish(
                rows[0].seed, f"led after {len(self.rounds)} rounds: no new pairing left"
            )
        return self._store(self.last + 1, [list(p) for p in pairs])

    def heat_rankings(self, round_: int) -> list[list[int]]:
        out = []
        for t, heat in enumerate(self.rounds[round_]):
            members = [s for s in heat if s is not None]
            sums = {s: DealScore() for s in members}
            for deal in self.tie_scores(round_, t, members).values():
                for s, score in zip(members, deal, strict=True):
                    sums[s] = sums[s] + score
            out.append(heat_ranking(members, sums))
        return out

    def heats(self) -> Step:
        ranked = self.heat_rankings(self.last)
        if len(ranked) == 1:
            return self._finish(ranked[0][0], "won the final heat")
        advance = int(self.event.config["advance"])
        field = sorted(s for heat in ranked for s in heat[: heat_advance(len(heat), advance)])
        heats = snake_heats(field, len(self.config.places))
        return self._store(self.last + 1, [list(h) for h in heats])

    def _store(
        self,
        round_: int | None,
        ties: Ties,
        deals: Sequence[int] | None = None,
        only: Sequence[int] | None = None,
    ) -> Step:
        """Round ``round_`` (``None``: more deals of the last one) stored, in one transaction."""
        at = self.last if round_ is None else round_
        units = _round_units(
            self.config,
            self.event.config,
            self.event.seed,
            self.event.entrants,
            at,
            ties,
            deals,
            only,
        )
        before = {u.unit_id for u in self.store.event_units(self.event.id)}
        self.store.add_event_round(self.event.id, at, None if round_ is None else ties, units)
        if not units:  # a round of byes only: nothing to wait for
            return Step([])
        return Step(
            [u.unit_id for u in self.store.event_units(self.event.id) if u.unit_id not in before]
        )

    def _finish(self, seed: int, how: str) -> Step:
        winner = self.event.entrants[seed]
        ref = self.store.version(winner).ref
        self.store.finish_event(self.event.id, winner, f"{ref} {how}")
        return Step([], finished=True, winner=ref)
