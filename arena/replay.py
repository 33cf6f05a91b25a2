"""Replaying records: rebuild the match from header + decisions and check every recorded fact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.records import Record, RecordError, read_record
from engine import EngineError, MatchState, get_game


def _plain(value: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def start_state(record: Record, where: str) -> MatchState:
    """A fresh engine state for the record's header; raises :class:`RecordError`."""
    h = record.header
    try:
        game = get_game(str(h["game"]))
        config = game.configure(int(h["players"]), dict(h.get("options") or {}))
        seed = int(h["seed"])
    except KeyError as err:
        raise RecordError(f"{where}: header lacks {err.args[0]!r}") from None
    except (EngineError, TypeError, ValueError) as err:
        raise RecordError(f"{where}: header: {err}") from None
    if h.get("game_version") not in (None, game.version):
        raise RecordError(
            f"{where}: recorded with {game.id} version {h.get('game_version')}, "
            f"this engine has version {game.version}"
        )
    return game.new_match(config, seed)


@dataclass(slots=True)
class ReplayStep:
    """The state just before a recorded decision, for viewers and ``replay ask``."""

    #: Decision number, from 0.
    number: int
    #: Index of the decision's entry in the record.
    entry_index: int
    #: The decision entry itself.
    entry: dict[str, Any]
    #: The engine state before the decision is applied (do not mutate).
    state: MatchState


def replay(record: Record, where: str = "record") -> Iterator[ReplayStep]:
    """Replay a record, checking each event, decision and the result as it goes.

    Yields a :class:`ReplayStep` before applying each decision; raises :class:`RecordError`
    at the first divergence, naming the record line (line 1 is the header).
    """
    state = start_state(record, where)
    seen = 0  # engine events matched so far
    number = 0
    for index, entry in enumerate(record.entries):
        line = index + 2
        kind = entry.get("type")
        if kind == "decision":
            seat, action = entry.get("seat"), entry.get("action")
            if state.to_move != seat:
                raise RecordError(
                    f"{where}: line {line}: decision by seat {seat}, but seat "
                    f"{state.to_move} is to move"
                )
            if entry.get("legal") is not None and entry["legal"] != len(state.legal_actions()):
                raise RecordError(
                    f"{where}: line {line}: recorded {entry['legal']} legal actions, "
                    f"the engine has {len(state.legal_actions())}"
                )
            yield ReplayStep(number, index, entry, state)
            number += 1
            try:
                state.apply(str(action))
            except EngineError as err:
                raise RecordError(f"{where}: line {line}: {err}") from None
        elif kind == "event":
            recorded = {k: v for k, v in entry.items() if k != "type"}
            if seen == len(state.events) and recorded.get("kind") == "forfeit":
                # Forfeits come from the referee, not the rules: re-enact them.
                state.forfeit(int(recorded["seat"]), str(recorded.get("why", "")))
            if seen >= len(state.events):
                raise RecordError(
                    f"{where}: line {line}: recorded event {recorded.get('kind')!r} "
                    "that the engine did not produce"
                )
            expected = _plain(state.events[seen].to_dict())
            if recorded != expected:
                raise RecordError(
                    f"{where}: line {line}: event differs: recorded {_short(recorded)}, "
                    f"engine {_short(expected)}"
                )
            seen += 1
        elif kind != "fault":
            raise RecordError(f"{where}: line {line}: unknown entry type {kind!r}")
    if seen != len(state.events):
        missing = state.events[seen].kind
        raise RecordError(f"{where}: the engine produced event {missing!r} missing from the record")
    result = state.result()
    if result is None:
        raise RecordError(f"{where}: the record ends but the match is not over")
    expected_result = _plain(result.to_dict())
    recorded_result = {k: v for k, v in record.result.items() if k in expected_result}
    if recorded_result != expected_result:
        raise RecordError(
            f"{where}: result differs: recorded {_short(recorded_result)}, "
            f"engine {_short(expected_result)}"
        )


def verify(path: Path) -> int:
    """Verify one record file; returns the number of decisions replayed."""
    record = read_record(path)
    return sum(1 for _ in replay(record, str(path)))


def _short(obj: Any, limit: int = 160) -> str:
    text = json.dumps(obj, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
