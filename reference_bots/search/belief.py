"""What the seat knows, and full states sampled from it.

A bot is sent its observation at each decision and the events it may see as they happen; the
referee's state, with everyone's cards, stays on the server. To search, the bot rebuilds a full
state from what it was sent: ``Game.restore`` sets everything the observation shows and deals
every card the seat has not seen among the places it may be (respecting voids shown by failures
to follow suit, the turn-up in the dealer's hand, the hand sizes, the cards played), and
``determinize`` deals them again for each simulation. The events fill in what an observation
does not hold (tennis's face-down discards of the seat's own side).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cardarena.bot import Turn

from engine import ConfigError, EngineError, Event, Game, MatchConfig, MatchState, get_game


class Belief:
    """The events each match has shown this bot, and states rebuilt from them."""

    def __init__(self) -> None:
        # match id -> (kind, data, private) of every event seen, oldest first.
        self._events: dict[str, list[tuple[str, Mapping[str, Any], bool]]] = {}
        self._configs: dict[str, MatchConfig] = {}

    def saw(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        """Remember one event of ``match_id``."""
        self._events.setdefault(match_id, []).append((kind, data, private))

    def forget(self, match_id: str) -> None:
        """Drop what was kept for a match that ended."""
        self._events.pop(match_id, None)
        self._configs.pop(match_id, None)

    def root(
        self, game_id: str, turn: Turn, observation: Mapping[str, Any], rng: random.Random
    ) -> MatchState:
        """A full state consistent with everything the seat was sent; ``EngineError`` when the
        engine cannot rebuild one (an observation of a rules version it does not know)."""
        game = get_game(game_id)
        seen = [
            Event(kind, data, (turn.seat,) if private else None)
            for kind, data, private in self._events.get(turn.match_id, ())
        ]
        config = self._configs.get(turn.match_id)
        if config is not None:
            return game.restore(config, observation, seen, rng)
        # The first decision: the table whose state shows this observation (two seats may be
        # two tennis players or two sides of four).
        error: EngineError | None = None
        for config in table_configs(game, turn.seats, turn.options):
            try:
                state = game.restore(config, observation, seen, rng)
            except EngineError as err:
                error = error or err
                continue
            self._configs[turn.match_id] = config
            return state
        raise error or EngineError(f"{game.id} has no table of {turn.seats} seats")


def table_configs(game: Game, seats: int, options: Mapping[str, Any]) -> list[MatchConfig]:
    """The configurations a match may have, from what MatchStart says: its options and how
    many seats it has."""
    out = []
    for players in dict.fromkeys((seats, *game.player_counts)):
        try:
            config = game.configure(players, options)
        except ConfigError:
            continue
        if game.num_seats(config) == seats:
            out.append(config)
    return out
