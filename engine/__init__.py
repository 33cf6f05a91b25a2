"""Card Arena's referees: pure, deterministic game engines behind one interface.

Nothing in this package does I/O, reads a clock or starts a thread, but :mod:`engine.local`
(in-process play of SDK bots: it times their decisions and writes their records).
"""

from engine.core import (
    JSON,
    Action,
    Event,
    Game,
    Holding,
    MatchConfig,
    MatchState,
    Observation,
    Presentation,
    Result,
    ScoreRow,
    number_actions,
    rank_returns,
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
from engine.registry import game_ids, get_game, make

__all__ = [
    "JSON",
    "Action",
    "ConfigError",
    "EngineError",
    "Event",
    "Game",
    "Holding",
    "IllegalActionError",
    "MatchConfig",
    "MatchOverError",
    "MatchState",
    "Observation",
    "OptionSpec",
    "OptionValue",
    "Presentation",
    "Result",
    "ScoreRow",
    "UnknownGameError",
    "game_ids",
    "get_game",
    "make",
    "number_actions",
    "rank_returns",
    "ranks_from_scores",
]
