"""A bot that keeps state across matches: it plays the first legal card but counts, from the
events, the cards played in the current deal, and keeps a record of its results over every
match its process plays (``arena match --games N`` and tournaments reuse a bot's process).

Run it with only the SDK installed (``pip install ./sdk/python``)::

    arena match whist --bot "python examples/bots/tally.py" --bot "arena bot random" \\
        --bot "arena bot random" --bot "arena bot random" --games 2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardarena import Action, Bot, Result, run_bot
from cardarena.log import get_logger

log = get_logger("tally")


class Tally(Bot):
    name = "tally"

    def __init__(self) -> None:
        super().__init__()
        self.played: dict[str, int] = {}  # per match: cards seen played so far
        self.seats: dict[str, int] = {}  # per match: the seat this bot plays
        self.record = {"won": 0, "lost": 0}  # across matches: kept for the process's life

    def on_event(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        if kind == "play":
            self.played[match_id] = self.played.get(match_id, 0) + 1

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        assert self.turn is not None  # run_bot sets it before every choose
        self.seats[self.turn.match_id] = self.turn.seat
        return 0

    def end_match(self, match_id: str, result: Result) -> None:
        seat = self.seats.pop(match_id, None)
        won = seat is not None and seat in result.winners
        self.record["won" if won else "lost"] += 1
        # A warning, so it shows at the SDK's default level (the arena keeps the bot's log).
        log.warning(
            "tally",
            match_id=match_id,
            cards_seen=self.played.pop(match_id, 0),
            won=self.record["won"],
            lost=self.record["lost"],
        )


if __name__ == "__main__":
    run_bot(Tally())
