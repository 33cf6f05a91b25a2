"""Which games exist. Modules load on first use: a tool that needs one game pays for one."""

from __future__ import annotations

import importlib

from engine.core import Game
from engine.errors import UnknownGameError

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
