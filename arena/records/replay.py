"""Replaying records: rebuild the match from header + decisions and check every recorded fact."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from cardarena.messages import clean_note

from arena.policy import FAULT_POLICIES, STRIKES_TO_FORFEIT, forfeit_reason
from arena.records.format import CONNECTION_EVENTS, NOTE_KEYS, Record, RecordError, read_record
from engine import EngineError, MatchState, get_game

# What the referee writes on each line (``prev`` aside; the header's and the result's ``type``
# are dropped by read_record). verify() refuses any other field: where the engine does not check
# a value, a field nobody writes could only carry something the match did not produce.
_HEADER_KEYS = frozenset(
    {
        "schema",
        "match_id",
        "game",
        "game_version",
        "players",
        "options",
        "seed",
        "seats",
        "time_control",
        "fault_policy",
        # Only in a match branched from a record (``arena replay play``): {match_id, sha256,
        # decision}; its first ``decision`` decisions are the referee's, replayed from it.
        "branched_from",
    }
)
_BRANCH_KEYS = frozenset({"match_id", "sha256", "decision"})
_SEAT_KEYS = frozenset({"seat", "seat_name", "bot_name", "bot_version"})
_TIME_CONTROL_KEYS = frozenset({"move_ms", "bank_ms"})
_DECISION_KEYS = frozenset(
    {"type", "seat", "legal", "action", "ms", "fallback", "note", "sdk_fallback"}
)
_FAULT_KEYS = frozenset({"type", "seat", "kind", "detail"})
_CONNECTION_KEYS = frozenset({"type", "seat", "event", "session"})
#: The result line holds the engine's result (``Result.to_dict()``) plus this.
_RESULT_FAULTS = "faults"


def _plain(value: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def start_state(record: Record, where: str) -> MatchState:
    """A fresh engine state for the record's header; raises :class:`RecordError`.

    Every reader starts here (``verify``, ``show``, ``html``, ``ask``), so all of them hold line
    1 to :func:`check_header` and :func:`check_seats`: a header one refuses, they all refuse.
    """
    h = record.header
    check_header(h, where)
    try:
        game = get_game(h["game"])
        config = game.configure(h["players"], dict(h.get("options") or {}))
    except (EngineError, TypeError, ValueError) as err:
        raise RecordError(f"{where}: header: {err}") from None
    if h.get("game_version") not in (None, game.version):
        raise RecordError(
            f"{where}: recorded with {game.id} version {_cut(repr(h.get('game_version')))}, "
            f"this engine has version {game.version}"
        )
    try:
        state = game.new_match(config, h["seed"])
    except (EngineError, TypeError, ValueError, OverflowError) as err:
        raise RecordError(f"{where}: header: {err}") from None
    check_seats(h, state, where)
    return state


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


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_ms(value: Any) -> bool:
    """A duration in milliseconds as the referee writes it: a finite number, not negative."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def check_header(h: Mapping[str, Any], where: str) -> None:
    """The checks of line 1 that every reader makes, before the engine sees it: each field the
    referee writes has the type it writes (an integer is not ``true`` nor ``4.0``, a string is
    not a number), ``options`` is an object, ``fault_policy`` a known policy and
    ``time_control`` null or ``{move_ms, bank_ms}``. Fields it does not know it ignores
    (``verify`` refuses them, :func:`replay` ``strict``); raises :class:`RecordError`."""
    for key in ("game", "players", "seed"):
        if key not in h:
            raise RecordError(f"{where}: header lacks {key!r}")
    for key, ok in (
        ("schema", _is_int(h.get("schema"))),
        ("match_id", isinstance(h.get("match_id"), str)),
        ("game", isinstance(h.get("game"), str)),
        ("game_version", isinstance(h.get("game_version", ""), str)),
        ("players", _is_int(h.get("players"))),
        ("options", isinstance(h.get("options", {}), dict)),
        ("seed", _is_int(h.get("seed"))),
    ):
        if not ok:
            raise RecordError(f"{where}: line 1: header's {key} has the wrong type")
    policy = h.get("fault_policy")
    if policy not in FAULT_POLICIES:
        raise RecordError(
            f"{where}: line 1: fault_policy {_cut(repr(policy))} is not one of "
            f"{', '.join(FAULT_POLICIES)}"
        )
    tc = h.get("time_control")
    if tc is not None and (
        not isinstance(tc, dict) or not all(_is_ms(tc.get(k)) for k in _TIME_CONTROL_KEYS)
    ):
        raise RecordError(f"{where}: line 1: time_control is not null or {{move_ms, bank_ms}}")
    branch = h.get("branched_from")
    if branch is not None and (
        not isinstance(branch, dict)
        or set(branch) != _BRANCH_KEYS
        or not isinstance(branch["match_id"], str)
        or not (isinstance(branch["sha256"], str) and len(branch["sha256"]) == 64)
        or not (_is_int(branch["decision"]) and branch["decision"] >= 0)
    ):
        raise RecordError(f"{where}: line 1: branched_from is not {{match_id, sha256, decision}}")


def branched_at(h: Mapping[str, Any]) -> int:
    """The decisions of a branched record (header ``branched_from``) that the referee replayed
    from the record it branched from; 0 for any other (:func:`check_header` checked it)."""
    branch = h.get("branched_from")
    return int(branch["decision"]) if isinstance(branch, dict) else 0


def check_seats(h: Mapping[str, Any], state: MatchState, where: str) -> None:
    """Line 1's ``seats``, for every reader: one object per seat of the match, in seat order,
    with its number, the game's name for it, and the bot's name and version as strings."""
    names = state.game.seat_names(state.config)
    seats = h.get("seats")
    if not isinstance(seats, list) or len(seats) != state.num_seats:
        raise RecordError(f"{where}: line 1: seats must list the {state.num_seats} seats")
    for i, s in enumerate(seats):
        if (
            not isinstance(s, dict)
            or not _is_int(s.get("seat"))
            or s["seat"] != i
            or s.get("seat_name") != names[i]
            or not isinstance(s.get("bot_name"), str)
            or not isinstance(s.get("bot_version"), str)
        ):
            raise RecordError(
                f"{where}: line 1: seat {i} is not {{seat, seat_name, bot_name, bot_version}} "
                f"of seat {i} ({names[i]}): {_short(s)}"
            )


def _same(recorded: Any, expected: Any) -> bool:
    """Equal as JSON text, not just as Python values (where ``true == 1 == 1.0``)."""
    return json.dumps(recorded, sort_keys=True) == json.dumps(expected, sort_keys=True)


def _unknown(obj: Mapping[str, Any], allowed: frozenset[str]) -> str | None:
    """The first field of ``obj`` not in ``allowed``, if any."""
    extra = sorted(set(obj) - allowed)
    return extra[0] if extra else None


@dataclass(slots=True)
class _Faults:
    """The fault lines seen so far, and what the referee's fault policy makes of them."""

    #: The header's fault policy.
    policy: str
    #: Faults charged per seat so far (every fault is a strike).
    strikes: list[int]
    #: The fault lines so far as the result lists them: ``{"seat", "kind", "detail"}``.
    listed: list[dict[str, Any]] = field(default_factory=list)
    #: ``(seat, why)`` of the forfeit the referee owes once a fault reaches the policy's limit.
    due: tuple[int, str] | None = None
    #: Record line of the fault that made the forfeit due.
    due_line: int = 0
    #: Decisions the referee replayed from the record a branched match started from.
    branched: int = 0


def _check_header(record: Record, state: MatchState, where: str) -> _Faults:
    """Strict checks of line 1 beyond :func:`check_header` and :func:`check_seats` (which
    :func:`start_state` made): no field the referee never writes, and the game's full
    options; returns the fault book."""
    h = record.header
    bad = _unknown(h, _HEADER_KEYS)
    if bad is not None:
        raise RecordError(f"{where}: line 1: header has a field the referee never writes: {bad!r}")
    if not _same(h.get("options"), _plain(dict(state.config.options))):
        raise RecordError(
            f"{where}: line 1: options {_short(h.get('options'))} are not the game's full "
            f"options {_short(dict(state.config.options))}"
        )
    names = state.game.seat_names(state.config)
    for i, s in enumerate(h["seats"]):
        if set(s) != _SEAT_KEYS:
            raise RecordError(
                f"{where}: line 1: seat {i} is not {{seat, seat_name, bot_name, bot_version}} "
                f"of seat {i} ({names[i]}): {_short(s)}"
            )
    tc = h.get("time_control")
    if tc is not None and set(tc) != _TIME_CONTROL_KEYS:
        raise RecordError(f"{where}: line 1: time_control is not null or {{move_ms, bank_ms}}")
    return _Faults(str(h["fault_policy"]), [0] * state.num_seats, branched=branched_at(h))


def _check_fault(entry: Mapping[str, Any], book: _Faults, line: int, where: str) -> None:
    """A fault line: its fields, and what it charges under the fault policy."""
    bad = _unknown(entry, _FAULT_KEYS)
    if bad is not None:
        raise RecordError(
            f"{where}: line {line}: fault has a field the referee never writes: {bad!r}"
        )
    seat, kind, detail = entry.get("seat"), entry.get("kind"), entry.get("detail")
    if not (_is_int(seat) and 0 <= seat < len(book.strikes)):
        raise RecordError(f"{where}: line {line}: fault charged to no seat of the match: {seat!r}")
    if not isinstance(kind, str) or not kind or not isinstance(detail, str):
        raise RecordError(f"{where}: line {line}: fault lacks its kind or detail")
    book.strikes[seat] += 1
    book.listed.append({"seat": seat, "kind": kind, "detail": detail})
    if book.due is None:
        why = forfeit_reason(book.policy, book.strikes[seat], kind, detail)
        if why is not None:
            book.due, book.due_line = (seat, why), line


def _check_connection(
    entry: Mapping[str, Any], record: Record, seats: int, line: int, where: str
) -> None:
    """A connection line (schema 2): its fields."""
    if record.header.get("schema") == 1:
        raise RecordError(f"{where}: line {line}: a connection line in a schema 1 record")
    if set(entry) != _CONNECTION_KEYS:
        raise RecordError(
            f"{where}: line {line}: connection line is not {{seat, event, session}}: "
            f"{_short(entry)}"
        )
    seat, event, session = entry["seat"], entry["event"], entry["session"]
    if not (_is_int(seat) and 0 <= seat < seats):
        raise RecordError(f"{where}: line {line}: connection of no seat of the match: {seat!r}")
    if event not in CONNECTION_EVENTS or not isinstance(session, str):
        raise RecordError(
            f"{where}: line {line}: connection event {_short(event, 40)} is not one of "
            f"{', '.join(sorted(CONNECTION_EVENTS))}, or its session is not a string"
        )


def _check_decision(
    entry: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    book: _Faults,
    line: int,
    where: str,
    number: int,
) -> None:
    """A decision line's fields, before it is replayed (the engine checks seat and action)."""
    bad = _unknown(entry, _DECISION_KEYS)
    if bad is not None:
        raise RecordError(
            f"{where}: line {line}: decision has a field the referee never writes: {bad!r}"
        )
    seat, ms = entry.get("seat"), entry.get("ms")
    if (
        not _is_int(seat)
        or not _is_int(entry.get("legal"))
        or not isinstance(entry.get("action"), str)
    ):
        raise RecordError(f"{where}: line {line}: decision lacks its seat, legal count or action")
    if not _is_ms(ms):
        raise RecordError(f"{where}: line {line}: decision time {ms!r} is not a number of ms")
    fallback = entry.get("fallback")
    if not isinstance(fallback, bool):
        raise RecordError(f"{where}: line {line}: decision's fallback is not true or false")
    for key in ("note", "sdk_fallback"):
        text = entry.get(key, "")
        # As the server keeps them: cleaned and cut (a viewer must never meet raw controls).
        if not isinstance(text, str) or text != clean_note(text):
            raise RecordError(f"{where}: line {line}: decision's {key} is not a cleaned note")
    if book.due is not None:
        raise RecordError(
            f"{where}: line {line}: decision after the fault on line {book.due_line} forfeited "
            f"seat {book.due[0]} ({book.policy} policy); the referee plays no further decision"
        )
    if number < book.branched and (ms != 0 or fallback or any(k in entry for k in NOTE_KEYS)):
        raise RecordError(
            f"{where}: line {line}: decision {number} of the branch's start is not the "
            "referee's (0 ms, no fallback, no note)"
        )
    if fallback and not (
        previous is not None and previous.get("type") == "fault" and previous.get("seat") == seat
    ):
        raise RecordError(
            f"{where}: line {line}: fallback decision of seat {seat} without a fault of that "
            "seat just before it"
        )


def _forfeit_of(
    recorded: Mapping[str, Any], state: MatchState, line: int, where: str
) -> tuple[int, str]:
    """The seat and reason of a forfeit event, for every reader."""
    seat, why = recorded.get("seat"), recorded.get("why")
    if not (_is_int(seat) and 0 <= seat < state.num_seats) or not isinstance(why, str):
        raise RecordError(f"{where}: line {line}: forfeit event without a seat and a reason")
    return seat, why


def _check_forfeit(seat: int, why: str, book: _Faults, line: int, where: str) -> None:
    """A forfeit event must be the one the recorded faults make the referee declare."""
    if book.due is None:
        need = (
            "the first fault forfeits"
            if book.policy == "strict"
            else f"{STRIKES_TO_FORFEIT} faults forfeit; seat {seat} has {book.strikes[seat]}"
        )
        raise RecordError(
            f"{where}: line {line}: forfeit by seat {seat} that no recorded fault justifies "
            f"({book.policy} policy: {need})"
        )
    if book.due != (seat, why):
        raise RecordError(
            f"{where}: line {line}: forfeit by seat {seat} ({why!r}), but the fault on line "
            f"{book.due_line} forfeits seat {book.due[0]} ({book.due[1]!r})"
        )


def replay(record: Record, where: str = "record", *, strict: bool = False) -> Iterator[ReplayStep]:
    """Replay a record, checking each event, decision and the result as it goes.

    Yields a :class:`ReplayStep` before applying each decision; raises :class:`RecordError`
    at the first divergence, naming the record line (line 1 is the header).

    ``strict`` (what :func:`verify` does) also holds every line to what the referee writes: no
    field it never writes, a fallback decision right after its seat's fault, a forfeit exactly
    where and as the recorded faults make the referee declare it under the header's fault
    policy, and a result line that is the engine's result plus ``faults`` equal to the record's
    fault lines.
    """
    state = start_state(record, where)
    book = _check_header(record, state, where) if strict else None
    seen = 0  # engine events matched so far
    number = 0
    previous: dict[str, Any] | None = None
    for index, entry in enumerate(record.entries):
        line = index + 2
        kind = entry.get("type")
        if kind == "decision":
            if book is not None:
                _check_decision(entry, previous, book, line, where, number)
            seat, action = entry.get("seat"), entry.get("action")
            if state.to_move != seat:
                raise RecordError(
                    f"{where}: line {line}: decision by seat {_short(seat, 40)}, but seat "
                    f"{state.to_move} is to move"
                )
            if entry.get("legal") is not None and entry["legal"] != len(state.legal_actions()):
                raise RecordError(
                    f"{where}: line {line}: recorded {_short(entry['legal'], 40)} legal actions, "
                    f"the engine has {len(state.legal_actions())}"
                )
            if book is not None and entry["fallback"]:
                expected_action = state.fallback_action().text
                if action != expected_action:
                    raise RecordError(
                        f"{where}: line {line}: fallback decision {action!r}, but the "
                        f"referee's fallback is {expected_action!r}"
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
                seat, why = _forfeit_of(recorded, state, line, where)
                if book is not None:
                    _check_forfeit(seat, why, book, line, where)
                try:
                    state.forfeit(seat, why)
                except EngineError as err:
                    raise RecordError(f"{where}: line {line}: {err}") from None
            if seen >= len(state.events):
                raise RecordError(
                    f"{where}: line {line}: recorded event {recorded.get('kind')!r} "
                    "that the engine did not produce"
                )
            expected = _plain(state.events[seen].to_dict())
            if recorded != expected or (book is not None and not _same(recorded, expected)):
                raise RecordError(
                    f"{where}: line {line}: event differs "
                    f"{_difference(recorded, expected, f'events[{seen}]')}"
                )
            seen += 1
        elif kind == "fault":
            if book is not None:
                _check_fault(entry, book, line, where)
        elif kind == "connection":
            if book is not None:
                _check_connection(entry, record, state.num_seats, line, where)
        else:
            raise RecordError(f"{where}: line {line}: unknown entry type {kind!r}")
        previous = entry
    if book is not None and number < book.branched:
        raise RecordError(
            f"{where}: the record has {number} decisions, fewer than the {book.branched} its "
            "branch started with"
        )
    if seen != len(state.events):
        missing = state.events[seen].kind
        raise RecordError(f"{where}: the engine produced event {missing!r} missing from the record")
    _check_result(record, state, book, where)


def _check_result(record: Record, state: MatchState, book: _Faults | None, where: str) -> None:
    """The record's result line is the engine's result for the replayed match (and, ``book``
    given, exactly what the referee writes: its fields, and faults equal to the fault lines)."""
    result = state.result()
    if result is None:
        raise RecordError(f"{where}: the record ends but the match is not over")
    last = len(record.entries) + 2  # the result line
    expected_result = _plain(result.to_dict())
    if book is not None:
        bad = _unknown(record.result, frozenset(expected_result) | {_RESULT_FAULTS})
        if bad is not None:
            raise RecordError(
                f"{where}: line {last}: result has a field the referee never writes: {bad!r}"
            )
        lacking = sorted((set(expected_result) | {_RESULT_FAULTS}) - set(record.result))
        if lacking:
            raise RecordError(f"{where}: line {last}: result lacks {lacking[0]!r}")
    recorded_result = {k: v for k, v in record.result.items() if k in expected_result}
    if recorded_result != expected_result or (
        book is not None and not _same(recorded_result, expected_result)
    ):
        raise RecordError(
            f"{where}: line {last}: result differs "
            f"{_difference(recorded_result, expected_result, 'result')}"
        )
    if book is not None and not _same(record.result[_RESULT_FAULTS], book.listed):
        raise RecordError(
            f"{where}: line {last}: the result's faults {_short(record.result[_RESULT_FAULTS])} "
            f"are not the record's fault lines {_short(book.listed)}"
        )


def verify(path: Path) -> int:
    """Verify one record file; returns the number of decisions replayed.

    Checks the hash chain, replays the match from the header and the decisions, and holds
    every line to what the referee writes (``replay(strict=True)``); raises
    :class:`RecordError` naming the first line that does not hold.
    """
    record = read_record(path)
    return sum(1 for _ in replay(record, str(path), strict=True))


#: Stands for a field or item one side lacks, in a difference.
_ABSENT = object()


def _first_difference(recorded: Any, expected: Any, path: str) -> tuple[str, Any, Any] | None:
    """The path of the first value that differs as JSON (``result.scores[1]``), and both sides
    there (:data:`_ABSENT` where one side lacks it); ``None`` when they are the same."""
    if isinstance(recorded, dict) and isinstance(expected, dict):
        for key in sorted(set(recorded) | set(expected), key=str):
            found = _first_difference(
                recorded.get(key, _ABSENT), expected.get(key, _ABSENT), f"{path}.{key}"
            )
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(expected, list):
        for i in range(max(len(recorded), len(expected))):
            found = _first_difference(
                recorded[i] if i < len(recorded) else _ABSENT,
                expected[i] if i < len(expected) else _ABSENT,
                f"{path}[{i}]",
            )
            if found is not None:
                return found
        return None
    if recorded is _ABSENT or expected is _ABSENT or not _same(recorded, expected):
        return path, recorded, expected
    return None


def _difference(recorded: Any, expected: Any, path: str) -> str:
    """``at PATH: recorded X, engine Y``: the first field that differs, both values short (a
    whole line cut to a length would hide it when it comes late)."""
    found = _first_difference(recorded, expected, path)
    if found is None:  # equal as JSON yet not as Python values: cannot happen, but say so
        return f"at {path}: recorded {_short(recorded, 60)}, engine {_short(expected, 60)}"
    where, ours, theirs = found

    def shown(value: Any) -> str:
        return "(absent)" if value is _ABSENT else _short(value, 60)

    return f"at {where}: recorded {shown(ours)}, engine {shown(theirs)}"


def _short(obj: Any, limit: int = 160) -> str:
    return _cut(json.dumps(obj, sort_keys=True), limit)


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
