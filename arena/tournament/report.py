"""The standings of a tournament, read from its store: cross-table and rating leaderboard."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cardarena.client import strategy_failures

from arena.layout import LOGS_DIR
from arena.records.format import RecordError, may_contain, read_record
from arena.records.telemetry import FIGURE_BYTES, FIGURE_SPAN, Telemetry, seat_telemetry
from arena.tournament.crosstable import CrossTable, Side, match_sides
from arena.tournament.store import Store, StoredMatch
from engine import EngineError, Game, MatchConfig, get_game

if TYPE_CHECKING:
    from arena.par import ParTable
    from arena.ratings import RatingTable


@dataclass(slots=True)
class Standings:
    """What a tournament produced so far."""

    #: The game's id.
    game: str
    #: Matches finished and scheduled.
    done: int
    total: int
    #: Head-to-head scores.
    crosstable: CrossTable
    #: The rating fit over every finished match.
    ratings: RatingTable
    #: Matches ending by forfeit, and faults charged, per bot.
    forfeits: Counter[str]
    faults: Counter[str]
    #: Times a bot's strategy failed and the SDK played a fallback instead (no fault: the
    #: referee saw a legal answer; only the bot's logs tell), per bot.
    fallbacks: Counter[str] = field(default_factory=Counter)
    #: Luck-adjusted scores against a reference, when asked for (arena/tournament/par.py).
    par: ParTable | None = None
    #: Per bot, its seats' telemetry summed over the matches, and how many seats (one seat in
    #: one match each) had any (arena/records/telemetry.py); empty when no bot's notes have any.
    telemetry: dict[str, tuple[int, Telemetry]] = field(default_factory=dict)

    def render(self, title: str = "") -> str:
        """Plain text: cross-table, leaderboard, fault summary."""
        head = title or self.game
        parts = [
            f"{head}: {self.done}/{self.total} matches",
            "",
            "Cross-table (row's score against column / meetings):",
            self.crosstable.render(),
            "",
            "Leaderboard (Elo, 95 % interval):",
            self.ratings.render(),
        ]
        if self.par is not None:
            order = [r.bot for r in self.ratings.ratings]
            parts += ["", f"Par against {self.par.reference}:", self.par.render(order)]
        los = self.ratings.render_superiority() if len(self.ratings.ratings) <= 12 else ""
        if los:
            parts += ["", "Likelihood of superiority (%, row stronger than column):", los]
        if self.faults:
            shown = ", ".join(f"{bot} {n}" for bot, n in sorted(self.faults.items()))
            forfeits = ", ".join(f"{bot} {n}" for bot, n in sorted(self.forfeits.items()))
            parts += ["", f"Faults: {shown}" + (f"; forfeits: {forfeits}" if forfeits else "")]
        if self.fallbacks:
            shown = ", ".join(f"{bot} {n}" for bot, n in sorted(self.fallbacks.items()))
            parts += [
                "",
                f"Strategy failures (the SDK played the first legal action instead): {shown}; "
                "see the bots' logs",
            ]
        if self.telemetry:
            parts += ["", "Telemetry (the bots' notes, per seat and match; docs/sdk.md):"]
            parts += [
                f"  {bot}: {seats} seat(s) in matches; {t.line(per=seats)}"
                for bot, (seats, t) in sorted(self.telemetry.items())
            ]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "game": self.game,
            "matches_done": self.done,
            "matches_total": self.total,
            "ratings": self.ratings.to_dict(),
            "crosstable": self.crosstable.to_dict(),
            "faults": dict(sorted(self.faults.items())),
            "forfeits": dict(sorted(self.forfeits.items())),
            "strategy_failures": dict(sorted(self.fallbacks.items())),
            **({} if self.par is None else {"par": self.par.to_dict()}),
            **({"telemetry": self._telemetry_dict()} if self.telemetry else {}),
        }

    def _telemetry_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for bot, (seats, t) in sorted(self.telemetry.items()):
            per = Telemetry(t.decisions, dict(t.sums))
            out[bot] = {
                "seats": seats,
                "total": t.to_dict(),
                "per_seat_match": {k: round(v / seats, 3) for k, v in per.to_dict().items()},
            }
        return out


def stored_game(store: Store) -> tuple[Game, MatchConfig]:
    """The game and match configuration a store was created with."""
    identity = store.stored_config()
    assert identity is not None
    game = get_game(str(identity["game"]))
    try:
        config = game.configure(int(identity["players"]), dict(identity["options"]))
    except EngineError:
        # Options of an older version of the game: the sides only depend on the players.
        config = game.configure(int(identity["players"]))
    return game, config


def standings(store: Store) -> Standings:
    """Cross-table and ratings over every finished match of ``store``."""
    from arena.ratings import Entry, fit_ratings

    game, config = stored_game(store)
    bots = [name for name, _ in store.bots()]
    table = CrossTable(list(bots))
    matches: list[list[Entry]] = []
    faults: Counter[str] = Counter()
    forfeits: Counter[str] = Counter()
    finished = store.matches("done")
    for m in finished:
        assert m.result is not None
        sides: list[Side] = match_sides(game, config, m.seats, m.result)
        table.add(sides)
        matches.append([Entry(s.bots, s.rank) for s in sides])
        for f in m.faults:
            faults[m.seats[int(f["seat"])]] += 1
        by = m.result.get("forfeited_by")
        if m.result.get("reason") == "forfeit" and by is not None:
            forfeits[m.seats[int(by)]] += 1
    _, total = store.counts()
    return Standings(
        game=game.id,
        done=len(finished),
        total=total,
        crosstable=table,
        # The deal (its seed) is the cluster: with duplicate on, deal d is the same at every
        # table and in every rotation, so all its matches share its luck (docs/ratings.md).
        ratings=fit_ratings(matches, clusters=[m.seed for m in finished]),
        forfeits=forfeits,
        faults=faults,
        fallbacks=_fallbacks(store, {m.match_id: m.seats for m in finished}),
        telemetry=_telemetry(store, finished),
    )


def _telemetry(store: Store, finished: list[StoredMatch]) -> dict[str, tuple[int, Telemetry]]:
    """Per bot, the telemetry in its finished matches' records (only those whose bytes may hold
    a figure are read; a record gone or damaged is left out: the report is still of the
    results)."""
    found: dict[str, tuple[int, Telemetry]] = {}
    for m in finished:
        path = store.path.parent / m.record_path if m.record_path else None
        if path is None:
            continue
        try:
            if not may_contain(path, FIGURE_BYTES, FIGURE_SPAN):
                continue
            seats = seat_telemetry(read_record(path).entries)
        except (RecordError, OSError):
            continue
        for seat, t in seats.items():
            if 0 <= seat < len(m.seats):
                count, total = found.get(m.seats[seat], (0, Telemetry()))
                total.add(t.sums, t.decisions)
                found[m.seats[seat]] = (count + 1, total)
    return found


def _fallbacks(store: Store, seats: dict[str, tuple[str, ...]]) -> Counter[str]:
    """Strategy failures per bot, from the logs beside the store: a long-lived process's
    ``BOT-pN.log``, or a match's ``MATCH.seatN.log`` (``restart = "per_match"``)."""
    counts: Counter[str] = Counter()
    logs = store.path.parent / LOGS_DIR
    bots = {name for name, _ in store.bots()}
    try:
        paths = sorted(logs.glob("*.log"))
    except OSError:
        return counts
    for path in paths:
        try:
            failed = strategy_failures(path.read_bytes())
        except OSError:
            continue
        if not failed:
            continue
        stem = path.name.removesuffix(".log")
        match_id, dot, seat = stem.rpartition(".seat")
        bot, _, number = stem.rpartition("-p")
        if dot and seat.isdigit() and match_id in seats and int(seat) < len(seats[match_id]):
            counts[seats[match_id][int(seat)]] += failed
        elif number.isdigit() and bot in bots:
            counts[bot] += failed
    return counts
