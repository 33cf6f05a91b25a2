"""Card Arena's referees: pure, deterministic game engines behind one interface.

Nothing in this package does I/O, reads a clock or starts a thread.
"""

from engine.core import (
    JSON,
    Action,
    Event,
    Game,
    MatchConfig,
    MatchState,
    Observation,
    Result,
    ranks_from_scores,
)
from engine.errors import (
    ConfigError,
    EngineError,
    IllegalActionError,
    MatchOverError,
    UnknownGameError,
)
from engine.options import OptionSpec, OptionValue
from engine.registry import game_ids, get_game

__all__ = [
    "JSON",
    "Action",
    "ConfigError",
    "EngineError",
    "Event",
    "Game",
    "IllegalActionError",
    "MatchConfig",
    "MatchOverError",
    "MatchState",
    "Observation",
    "OptionSpec",
    "OptionValue",
    "Result",
    "UnknownGameError",
    "game_ids",
    "get_game",
    "ranks_from_scores",
]
