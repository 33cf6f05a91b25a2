"""Which games exist. Modules load on first use: a tool that needs one game pays for one."""

from __future__ import annotations

import importlib

from engine.core import Game, MatchState
from engine.errors import UnknownGameError
from engine.options import OptionValue

#: Game id -> module defining ``GAME``, an instance of :class:`engine.core.Game`.
_MODULES: dict[str, str] = {
    "whist": "engine.games.whist",
    "tennis_whist": "engine.games.tennis_whist",
    "spoil_five": "engine.games.spoil_five",
    "forty_five": "engine.games.forty_five",
    "tennis": "engine.games.tennis",
}
_LOADED: dict[str, Game] = {}


def game_ids() -> tuple[str, ...]:
    """Every registered game id, in a stable order."""
    return tuple(_MODULES)


def get_game(game_id: str) -> Game:
    """The game registered as ``game_id``; :class:`UnknownGameError` names the known ones."""
    game = _LOADED.get(game_id)
    if game is not None:
        return game
    module_name = _MODULES.get(game_id)
    if module_name is None:
        known = ", ".join(_MODULES)
        raise UnknownGameError(f"unknown game {game_id!r} (known games: {known})")
    loaded = importlib.import_module(module_name).GAME
    if not isinstance(loaded, Game):
        raise TypeError(f"{module_name}.GAME is not a Game")
    _LOADED[game_id] = loaded
    return loaded


def make(
    game_id: str, players: int | None = None, seed: int = 0, **options: OptionValue
) -> MatchState:
    """A new match in one call: ``make("whist", players=4, seed=1, points_to_win=5)`` is
    ``get_game(id).new_match(game.configure(players, options), seed)``. ``players`` defaults to
    the game's usual table; errors are the long form's (:class:`ConfigError`, unknown game)."""
    game = get_game(game_id)
    return game.new_match(game.configure(players, options), seed)
