"""What the engine says a record's seats saw: the truth the replay viewers are checked against."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from arena.records.format import read_record
from arena.records.replay import replay
from arena.selfplay import recorded_match
from engine import Event, get_game

#: Every game, for the viewers' tests.
GAMES = ["whist", "tennis_whist", "spoil_five", "forty_five", "tennis"]
#: Small configurations so every match is short.
OPTIONS: dict[str, tuple[int | None, dict[str, str]]] = {
    "whist": (None, {"points_to_win": "1", "games_per_rubber": "1"}),
    "tennis_whist": (3, {"sets_to_win": "1"}),
    "spoil_five": (4, {}),
    "forty_five": (2, {"points_to_win": "15"}),
    "tennis": (2, {}),
}


def make_record(tmp_path: Path, game: str, seed: int, players: int | None = None) -> Path:
    """A short recorded self-play match of ``game`` (``OPTIONS``), written under ``tmp_path``."""
    default_players, options = OPTIONS[game]
    path = tmp_path / f"{game}.jsonl.gz"
    recorded_match(get_game(game), players or default_players, options, seed, path)
    return path


#: Card-like tokens: playing cards and tennis card types.
TOKEN = re.compile(r"^(?:[2-9TJQKA][CDHS]|(?:RF|LF|RB|LB)-(?:RF|LF|RB|LB)|SMASH|KILL|OUT)$")


def card_tokens(text: str) -> list[str]:
    """The card-like tokens of ``text``, in order."""
    return [t for t in re.split(r"[\s,;:=()\[\]\"']+", text) if TOKEN.match(t)]


def engine_steps(record: Path) -> list[tuple[list[dict[str, Any]], list[Event]]]:
    """Per step (each decision, then the end): every seat's observation and the engine events
    since the previous step."""
    out: list[tuple[list[dict[str, Any]], list[Event]]] = []
    state = None
    seen = 0
    for step in replay(read_record(record)):
        state = step.state
        out.append(([state.observation(s).to_dict() for s in range(state.num_seats)], []))
        out[-1][1].extend(state.events[seen:])
        seen = len(state.events)
    assert state is not None
    out.append(([state.observation(s).to_dict() for s in range(state.num_seats)], []))
    out[-1][1].extend(state.events[seen:])
    return out


def engine_views(record: Path) -> list[list[dict[str, Any]]]:
    """Per step (each decision, then the end): every seat's observation, from the engine."""
    return [views for views, _ in engine_steps(record)]


def hidden_now(views: list[dict[str, Any]], events: list[Event], seat: int) -> set[str]:
    """Cards only other seats know now: in their observations, not in ``seat``'s observation
    nor in the events ``seat`` was just sent (a card played in the last deal may be dealt to
    another seat in this one)."""
    told = [e.to_dict() for e in events if e.visible_to(seat)]
    allowed = set(card_tokens(json.dumps(views[seat]))) | set(card_tokens(json.dumps(told)))
    others = {t for s, obs in enumerate(views) if s != seat for t in card_tokens(json.dumps(obs))}
    return others - allowed
