"""The rules of a match (:class:`MatchRules`: the game and its configuration, the time control,
the fault policy), checked in one place, and what a played match left (:class:`PlayedMatch`).

A tournament's config, a competition's config and ``arena serve``'s lobby each carry one
:class:`MatchRules`; every match they play is built from it (``MatchSpec.of`` for the server,
``ClusterRun`` for a cluster's workers). Plain values: the engine, the SDK's messages and the
fault policy, nothing else of the arena.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cardarena.messages import MAX_TIME_MS, FaultInfo, TimeControl

from arena.checks import Checker
from arena.policy import FAULT_POLICIES, FaultPolicy
from engine import (
    ConfigError,
    Game,
    MatchConfig,
    OptionValue,
    Result,
    UnknownGameError,
    get_game,
)

#: The keys of a config's ``[time_control]`` table.
TIME_KEYS = ("move_ms", "bank_ms")


@dataclass(frozen=True, slots=True)
class MatchRules:
    """What every match of a run is played under."""

    #: The game, its players and every option (defaults filled in), validated by the game.
    config: MatchConfig
    #: Thinking time.
    time_control: TimeControl = field(default_factory=TimeControl)
    #: How faults are punished.
    fault_policy: FaultPolicy = FaultPolicy.LENIENT

    @classmethod
    def of(
        cls,
        game: str,
        players: int | None = None,
        options: Mapping[str, OptionValue] | None = None,
        time_control: TimeControl | None = None,
        fault_policy: FaultPolicy = FaultPolicy.LENIENT,
    ) -> MatchRules:
        """The rules from plain arguments (the command line's); the engine's
        :class:`~engine.UnknownGameError` or :class:`~engine.ConfigError` when the game refuses
        them."""
        config = get_game(game).configure(players, options or {})
        return cls(config, time_control or TimeControl(), FaultPolicy(fault_policy))

    @property
    def game(self) -> Game:
        return get_game(self.config.game_id)

    @property
    def game_id(self) -> str:
        return self.config.game_id

    def identity(self) -> dict[str, Any]:
        """What fixes the meaning of a stored result: a resumed run must match it exactly."""
        return {
            "game": self.config.game_id,
            "game_version": self.game.version,
            "players": self.config.players,
            "options": dict(self.config.options),
            "time_control": {
                "move_ms": self.time_control.move_ms,
                "bank_ms": self.time_control.bank_ms,
            },
            "fault_policy": str(self.fault_policy),
        }


def check_rules(c: Checker, time: Checker) -> MatchRules:
    """The rules of a config's table: ``game``, ``players``, ``options`` and ``fault_policy`` read
    by ``c``, the time control by ``time`` (its keys ``time_control.move_ms`` and
    ``time_control.bank_ms``); each mistake in the config's words, naming the key."""
    config = check_match_config(c, check_game(c))
    default = TimeControl()  # a key left out takes the arena's one default
    time_control = TimeControl(
        move_ms=time.int_("time_control.move_ms", default.move_ms, 1, maximum=MAX_TIME_MS),
        bank_ms=time.int_("time_control.bank_ms", default.bank_ms, 0, maximum=MAX_TIME_MS),
    )
    fault_policy = FaultPolicy(c.choice("fault_policy", "lenient", FAULT_POLICIES))
    return MatchRules(config, time_control, fault_policy)


def check_game(c: Checker) -> Game:
    """The ``game`` key: a game the engine knows."""
    game_id = c.str_("game")
    try:
        return get_game(game_id)
    except UnknownGameError as err:
        raise c.fail("game", str(err)) from None


def check_match_config(c: Checker, game: Game) -> MatchConfig:
    """``players`` and ``options``, validated by ``game``."""
    players = c.raw.get("players")
    if players is not None and (isinstance(players, bool) or not isinstance(players, int)):
        raise c.fail("players", f"must be an integer; got {players!r}")
    try:
        game.configure(players)
    except ConfigError as err:
        raise c.fail("players", str(err)) from None
    options = c.raw.get("options", {})
    if not isinstance(options, dict):
        raise c.fail("options", "must be a table of option = value")
    for key, value in options.items():
        if not isinstance(value, bool | int | str):
            raise c.fail(
                f"options.{key}", f"must be an integer, true/false or a string; got {value!r}"
            )
    typed: dict[str, OptionValue] = dict(options)
    try:
        return game.configure(players, typed)
    except ConfigError as err:
        raise c.fail("options", str(err)) from None


@dataclass(frozen=True, slots=True)
class PlayedMatch:
    """What a finished match left, from the job that played it (here or on a cluster's worker)
    to the store that commits it."""

    #: The engine's result (a normal or a forfeit result).
    result: Result
    #: Every fault charged, in order.
    faults: tuple[FaultInfo, ...]
    #: The record file, relative to the run's directory.
    record_path: str
    #: Each seat's log for the match, relative to the run's directory (``None``: not launched
    #: by the run); empty when the run keeps its logs elsewhere (a tournament's pool).
    logs: tuple[str | None, ...] = ()
