"""What a match job is given (:class:`MatchSpec`) and what it gives back (:class:`MatchOutcome`).

A match is a pure job: a function from a spec to an outcome (the result and the record), with no
state shared between matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cardarena.messages import FaultInfo, PlayerInfo, TimeControl

from arena.policy import FaultPolicy
from arena.rules import MatchRules
from engine import JSON, OptionValue, Result


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """Who plays one seat: the secret token its bot connects with, and the bot's name."""

    #: The bot authenticates with this token; its connection acts for this seat only.
    token: str
    #: Name shown for the seat; ``""`` to take the name the bot gives in its Hello.
    bot_name: str = ""


@dataclass(frozen=True, slots=True)
class Branch:
    """A match that starts where a recorded one stood at a decision (``arena replay play``):
    the referee plays the recorded actions before it asks any bot, so the new record holds them
    as its first decisions and verifies from the deal like any other."""

    #: The record branched from: its match id and the SHA-256 of its file.
    match_id: str
    sha256: str
    #: The decision branched at (from 0): the number of recorded actions played first.
    decision: int
    #: Those actions' texts, in order (``play:QS``).
    actions: tuple[str, ...]

    def header(self) -> dict[str, JSON]:
        """The record header's ``branched_from``."""
        return {"match_id": self.match_id, "sha256": self.sha256, "decision": self.decision}


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Everything that defines one match."""

    #: Unique id (records and the protocol use it).
    match_id: str
    #: Game id.
    game: str
    #: One entry per deciding seat, in seat order.
    seats: tuple[SeatSpec, ...]
    #: The engine's seed: with the decisions it fixes the whole match.
    seed: int = 0
    #: Players at the table; ``None`` for the game's default.
    players: int | None = None
    #: Game options (values as for ``Game.configure``).
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    #: Per-move time plus bank.
    time_control: TimeControl = field(default_factory=TimeControl)
    #: How faults are punished.
    fault_policy: FaultPolicy = FaultPolicy.LENIENT
    #: How long the match waits for every seat's bot to connect before it starts anyway (a seat
    #: still missing then faults on each of its decisions, without waiting).
    connect_timeout_s: float = 10.0
    #: Where the match starts: ``None`` from the deal, else a recorded match's decision (a new
    #: kind of start, not of seat: every seat is played as in any match once it is asked).
    branch: Branch | None = None

    @classmethod
    def of(
        cls,
        rules: MatchRules,
        match_id: str,
        seats: Sequence[SeatSpec],
        seed: int,
        connect_timeout_s: float = 10.0,
    ) -> MatchSpec:
        """The match ``match_id`` under ``rules``: what every runner (``arena match``, a
        tournament, a competition, a cluster's worker, the lobby) registers."""
        return cls(
            match_id=match_id,
            game=rules.config.game_id,
            seats=tuple(seats),
            seed=seed,
            players=rules.config.players,
            options=dict(rules.config.options),
            time_control=rules.time_control,
            fault_policy=rules.fault_policy,
            connect_timeout_s=connect_timeout_s,
        )


@dataclass(frozen=True, slots=True)
class DecisionTiming:
    """How long one decision took."""

    #: The deciding seat.
    seat: int
    #: Milliseconds from sending the request to receiving the answer (on the referee's clock).
    ms: float
    #: Whether the referee played the fallback action.
    fallback: bool


@dataclass(slots=True)
class MatchOutcome:
    """What a finished match produced."""

    #: The spec it was played from.
    spec: MatchSpec
    #: The engine result (a forfeit result when a seat forfeited).
    result: Result
    #: Every fault charged, in order.
    faults: tuple[FaultInfo, ...]
    #: The seats as played (names and versions from the bots' Hellos).
    players: tuple[PlayerInfo, ...]
    #: The record's header.
    header: dict[str, JSON]
    #: The record's entries: events, decisions and faults in the order they happened.
    entries: list[dict[str, JSON]]
    #: One timing per decision, in order.
    timings: list[DecisionTiming]

    def faults_of(self, seat: int) -> int:
        """Faults charged to ``seat``."""
        return sum(1 for f in self.faults if f.seat == seat)

    def result_dict(self) -> dict[str, JSON]:
        """The record's result line: ``Result.to_dict()`` plus ``faults``."""
        return {**self.result.to_dict(), "faults": [f.to_dict() for f in self.faults]}
