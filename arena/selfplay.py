"""Self-play: uniformly random legal actions in one process, for smoke tests and speed checks."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.records.format import Recorder, match_header, write_record
from engine import JSON, Game, OptionValue, Result


@dataclass(slots=True)
class SelfplayReport:
    """What a self-play run measured."""

    #: The game's id.
    game: str
    #: Players at the table.
    players: int
    #: Every option's value.
    options: dict[str, OptionValue]
    #: Base seed; match ``i`` is played with seed ``seed + i``.
    seed: int
    #: Matches played.
    games: int = 0
    #: Decisions taken over all matches.
    decisions: int = 0
    #: Matches per outcome (the winning seats' names, ``+``-joined).
    outcomes: Counter[str] = field(default_factory=Counter)
    #: Game statistics counters, summed.
    stats: Counter[str] = field(default_factory=Counter)
    #: Figures the game derives from ``stats``.
    derived: dict[str, float] = field(default_factory=dict)
    #: Wall-clock seconds spent (not part of the reproducible data).
    seconds: float = 0.0

    @property
    def decisions_per_game(self) -> float:
        """Mean decisions per match."""
        return self.decisions / self.games if self.games else 0.0

    @property
    def decisions_per_second(self) -> float:
        """Throughput of engine plus random choice."""
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form; everything but ``decisions_per_second``/``seconds`` is reproducible."""
        return {
            "game": self.game,
            "players": self.players,
            "options": dict(self.options),
            "seed": self.seed,
            "games": self.games,
            "decisions": self.decisions,
            "mean_decisions_per_game": round(self.decisions_per_game, 3),
            "outcomes": dict(sorted(self.outcomes.items())),
            "stats": dict(sorted(self.stats.items())),
            **{k: round(v, 4) for k, v in sorted(self.derived.items())},
            "seconds": round(self.seconds, 3),
            "decisions_per_second": round(self.decisions_per_second, 1),
        }


def selfplay(
    game: Game,
    players: int | None,
    options: Mapping[str, OptionValue],
    games: int,
    seed: int,
) -> SelfplayReport:
    """Play ``games`` matches of uniformly random legal actions; raises ``ConfigError``."""
    config = game.configure(players, options)
    names = game.seat_names(config)
    report = SelfplayReport(game.id, config.players, dict(config.options), seed)
    chooser = random.Random(seed ^ 0x5EED)
    start = time.perf_counter()
    for i in range(games):
        state = game.new_match(config, seed + i)
        choice = chooser.choice
        while state.to_move is not None:
            state.apply(choice(state.legal_actions()))
        result = state.result()
        assert result is not None
        report.games += 1
        report.decisions += state.decisions
        report.outcomes["+".join(names[s] for s in result.winners) or "none"] += 1
        report.stats.update(result.stats)
    report.seconds = time.perf_counter() - start
    report.derived = game.summarize_stats(report.stats, report.games)
    return report


def recorded_match(
    game: Game, players: int | None, options: Mapping[str, OptionValue], seed: int, path: Path
) -> Result:
    """Play one match of random legal actions in-process and write its record to ``path``."""
    config = game.configure(players, options)
    state = game.new_match(config, seed)
    recorder = Recorder(state)
    chooser = random.Random(seed ^ 0x5EED)
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        action = chooser.choice(legal)
        recorder.decision(seat, len(legal), action.text, 0.0)
        state.apply(action)
    recorder.sync()
    result = state.result()
    assert result is not None
    bots = [("random", "selfplay")] * state.num_seats
    header = match_header(f"selfplay-{game.id}-{seed}", game, config, seed, bots, None, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return result
