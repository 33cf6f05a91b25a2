"""``arena replay show``: a recorded match as text, for the whole table or for one seat.

A record is replayed (and so verified) once into a list of :class:`Frame` snapshots: the match
just before each decision, plus one frame for the end. Text views are built from the engine's own
observations: the whole-table view shows the mover's ``render()`` and every hand (the game's
``holdings``, else each seat's private fields); a seat view shows exactly what that seat could
know, its own ``render()``, the events visible to it and its own decisions only (another seat's
action text may hold a hidden card, e.g. a discard passed face down, so a seat view only shows
what that action made public through events). What a game adds to either (a picture, scores) is
its :meth:`engine.Game.present`, given only what every seat shares (:func:`public_view`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from arena.errors import UsageError
from arena.records.format import Record, read_record
from arena.records.replay import replay, start_state
from arena.records.telemetry import telemetry_lines
from engine import Event, Game, MatchConfig, MatchState, Observation, Presentation

#: The ``seat`` of a view of the whole table (every hand, every event).
ALL = None

#: A place inside an observation: field names, and ``*`` for every item of a list of objects.
FieldPath = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Frame:
    """The match just before decision ``number``, or after the last one (``seat`` is None)."""

    #: Decision number from 0; for the end frame, the number of decisions.
    number: int
    #: The seat that decides now, or ``None`` in the end frame.
    seat: int | None
    #: The recorded action text (``None`` in the end frame).
    action: str | None
    #: Text forms of the legal actions, canonical order (empty in the end frame).
    legal: tuple[str, ...]
    #: Whether the referee played this action for a faulted seat.
    fallback: bool
    #: Every seat's observation at this point.
    observations: tuple[Observation, ...]
    #: The same observations as plain data (``to_dict()``), computed once.
    data: tuple[dict[str, Any], ...]
    #: The engine events since the previous frame, with their index in the match's event log.
    events: tuple[tuple[int, Event], ...]
    #: Fault entries recorded since the previous frame.
    faults: tuple[Mapping[str, Any], ...]
    #: The deciding bot's note on this decision ("" for none).
    note: str = ""
    #: Why the bot's SDK played a fallback instead of its strategy's choice ("" if it did not).
    sdk_fallback: str = ""

    @property
    def is_end(self) -> bool:
        """Whether this is the frame after the last decision."""
        return self.seat is None


@dataclass(frozen=True, slots=True)
class Replayed:
    """A verified record and its frames, ready for any view."""

    #: The record as read.
    record: Record
    #: The game it is a match of.
    game: Game
    #: The match's configuration.
    config: MatchConfig
    #: Names of the seats (``N E S W``, ``P1`` …).
    seat_names: tuple[str, ...]
    #: One frame per decision, then the end frame.
    frames: tuple[Frame, ...]
    #: Observation fields that differ between seats somewhere in the match (hands and the like):
    #: what the whole-table view lists per seat and what a seat view must keep to itself.
    private_fields: tuple[str, ...]
    #: The parts of observations that differ between seats somewhere in the match, as deep as
    #: they go (a player's ``hand`` inside ``players``): what :func:`public_view` leaves out.
    private_paths: frozenset[FieldPath]

    @property
    def decisions(self) -> int:
        """Number of recorded decisions."""
        return len(self.frames) - 1

    @property
    def num_seats(self) -> int:
        """Number of deciding seats."""
        return len(self.seat_names)

    def frame(self, at: int) -> Frame:
        """Frame ``at`` (0 … decisions); :class:`UsageError` when out of range."""
        if not 0 <= at <= self.decisions:
            raise UsageError(
                f"--at {at} is out of range: the record has {self.decisions} decisions "
                f"(0 to {self.decisions - 1}; {self.decisions} shows the end)"
            )
        return self.frames[at]

    def seat_index(self, text: str) -> int:
        """A seat given by number or name (``2``, ``S``); :class:`UsageError` if unknown."""
        return seat_index(self.seat_names, text)


def load_replay(path: Path) -> Replayed:
    """Read, verify and replay a record into frames; raises ``RecordError``."""
    record = read_record(path)
    return replayed_from_record(record, str(path))


def replayed_from_record(record: Record, where: str = "record") -> Replayed:
    """Replay an already-read record into frames; raises ``RecordError`` on any divergence."""
    frames: list[Frame] = []
    state: MatchState | None = None
    seen_events = 0
    last_entry = -1

    def faults_until(index: int) -> tuple[Mapping[str, Any], ...]:
        return tuple(e for e in record.entries[last_entry + 1 : index] if e.get("type") == "fault")

    for step in replay(record, where):
        state = step.state
        seat = state.to_move
        assert seat is not None
        new_events = tuple((i, state.events[i]) for i in range(seen_events, len(state.events)))
        seen_events = len(state.events)
        frames.append(
            Frame(
                number=step.number,
                seat=seat,
                action=str(step.entry.get("action")),
                legal=tuple(a.text for a in state.legal_actions()),
                fallback=bool(step.entry.get("fallback", False)),
                **_views(state),
                events=new_events,
                faults=faults_until(step.entry_index),
                note=str(step.entry.get("note", "")),
                sdk_fallback=str(step.entry.get("sdk_fallback", "")),
            )
        )
        last_entry = step.entry_index
    if state is None:
        # No decision at all (a forfeit before the first move): rebuild the end directly.
        state = start_state(record, where)
        for entry in record.entries:
            if entry.get("type") == "event" and entry.get("kind") == "forfeit":
                state.forfeit(int(entry["seat"]), str(entry.get("why", "")))
    frames.append(
        Frame(
            number=len(frames),
            seat=None,
            action=None,
            legal=(),
            fallback=False,
            **_views(state),
            events=tuple((i, state.events[i]) for i in range(seen_events, len(state.events))),
            faults=faults_until(len(record.entries)),
        )
    )
    paths = _private_paths(frames)
    return Replayed(
        record=record,
        game=state.game,
        config=state.config,
        seat_names=tuple(state.game.seat_names(state.config)),
        frames=tuple(frames),
        private_fields=_private_fields(frames, paths),
        private_paths=paths,
    )


def _views(state: MatchState) -> dict[str, Any]:
    observations = tuple(state.observation(s) for s in range(state.num_seats))
    return {"observations": observations, "data": tuple(o.to_dict() for o in observations)}


def _private_paths(frames: Sequence[Frame]) -> frozenset[FieldPath]:
    """Every part of the observations whose value differs between seats in some frame."""
    found: set[FieldPath] = set()
    for frame in frames:
        _differing(list(frame.data), (), found)
    return frozenset(found)


def differing_paths(views: Sequence[Mapping[str, Any]]) -> set[FieldPath]:
    """The parts of one moment's observations (one per seat, ``to_dict()`` form) that differ
    between seats: what a live view (arena/people) keeps out of the public part."""
    found: set[FieldPath] = set()
    _differing(list(views), (), found)
    return found


def without_paths(data: Mapping[str, Any], private: frozenset[FieldPath]) -> dict[str, Any]:
    """``data`` with the parts at ``private`` (and its ``seat``) removed: the public part."""
    public: dict[str, Any] = _without(dict(data), private, ())
    public.pop("seat", None)
    return public


def _differing(values: list[Any], path: FieldPath, found: set[FieldPath]) -> None:
    """Add to ``found`` where ``values`` (one per seat) differ: inside objects with the same
    keys and lists of objects of the same length, as deep as they agree; else at ``path``."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return
    if all(isinstance(v, dict) and v.keys() == first.keys() for v in values):
        for key in first:
            _differing([v[key] for v in values], (*path, key), found)
    elif all(isinstance(v, list) and len(v) == len(first) for v in values) and all(
        isinstance(item, dict) for v in values for item in v
    ):
        for items in zip(*values, strict=True):
            _differing(list(items), (*path, "*"), found)
    else:
        # Items of a list that differ in shape: the whole list is private.
        while path and path[-1] == "*":
            path = path[:-1]
        found.add(path)


def _private_fields(frames: Sequence[Frame], paths: frozenset[FieldPath]) -> tuple[str, ...]:
    """Fields with a private part, in declaration order (``seat`` aside: it is no secret)."""
    heads = {p[0] for p in paths if p}
    return tuple(k for k in frames[0].data[0] if k in heads and k != "seat")


def _without(value: Any, private: frozenset[FieldPath], path: FieldPath) -> Any:
    if isinstance(value, dict):
        return {
            k: _without(v, private, (*path, k))
            for k, v in value.items()
            if (*path, k) not in private
        }
    if isinstance(value, list):
        return [_without(v, private, (*path, "*")) for v in value]
    return value


def public_view(rep: Replayed, frame: Frame) -> dict[str, Any]:
    """What every seat's observation shares at ``frame``: seat 0's, with every part that differs
    between seats anywhere in the match removed, inner parts too (tennis players keep their
    names and hand sizes, not their hands). A part is private for the whole match, not only
    where it differs, so that even a coincidence (no seat holding a robbed ace) tells nothing."""
    return without_paths(frame.data[0], rep.private_paths)


def presentation(rep: Replayed, frame: Frame) -> Presentation:
    """The game's presentation of ``frame``: scores, facts, notes, its drawing's data."""
    return rep.game.present(rep.config, public_view(rep, frame))


# --- text pieces shared with the HTML view ------------------------------------------------------


def value_text(value: Any) -> str:
    """A field value as short text: lists space-joined, nested objects as compact JSON."""
    if isinstance(value, list | tuple):
        if all(isinstance(v, str | int | float | bool) for v in value):
            return " ".join(str(v) for v in value) if value else "—"
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def event_text(event: Event, names: Sequence[str]) -> str:
    """One event as a line: ``N play card=7H``; the acting seat's name first when there is one."""
    data = dict(event.data)
    who = ""
    seat = data.get("seat")
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        who = f"{names[seat]} "
        del data["seat"]
    parts = [f"{k}={value_text(v)}" for k, v in data.items()]
    return f"{who}{event.kind}" + (" " + " ".join(parts) if parts else "")


def private_text(data: Mapping[str, Any], fields: Sequence[str]) -> str:
    """A seat's private fields on one line: ``hand: 2C 7C … AS``."""
    return "; ".join(f"{k}: {value_text(data[k])}" for k in fields if k in data)


@dataclass(frozen=True, slots=True)
class HandRow:
    """One line of the whole table's private information (usually one seat's hand)."""

    #: Whose cards: a seat or player name.
    label: str
    #: The cards (or other private fields) as text.
    text: str
    #: The seats that may see this row; a seat view shows only rows that include its seat.
    seats: tuple[int, ...]


def hand_rows(rep: Replayed, frame: Frame) -> list[HandRow]:
    """The whole table's private information at ``frame``: one row per hand, as the game
    holds them (``Game.holdings``), else each seat's private fields."""
    held = rep.game.holdings(rep.config, frame.data)
    if held is not None:
        return [HandRow(h.label, value_text(list(h.cards)), h.seen_by) for h in held]
    return [
        HandRow(name, private_text(frame.data[s], rep.private_fields), (s,))
        for s, name in enumerate(rep.seat_names)
    ]


# --- whole frames --------------------------------------------------------------------------------


def render_frame(rep: Replayed, frame: Frame, seat: int | None = ALL) -> str:
    """Frame ``frame`` as text, for the whole table (``seat`` None) or what ``seat`` saw."""
    names = rep.seat_names
    total = rep.decisions
    if frame.is_end:
        title = f"end of match (after {total} decisions)"
    else:
        assert frame.seat is not None
        title = f"decision {frame.number} of {total}: {names[frame.seat]} to move"
    view = "whole table" if seat is ALL else f"seat {names[seat]}'s view"
    lines = [f"=== {rep.game.id} · {title} · {view} ==="]
    # The game's picture (the tennis court) shows only what every seat shares.
    sketch = presentation(rep, frame).sketch

    events = [(i, e) for i, e in frame.events if seat is ALL or e.visible_to(seat)]
    if events:
        lines.append("events:")
        for _, e in events:
            mark = ""
            if e.to is not None:
                mark = (
                    "  (private)"
                    if seat is not ALL
                    else f"  [to {'+'.join(names[s] for s in e.to)}]"
                )
            lines.append(f"  {event_text(e, names)}{mark}")
    for fault in frame.faults:
        fseat = fault.get("seat")
        if seat is ALL or fseat == seat:
            who = names[fseat] if isinstance(fseat, int) and 0 <= fseat < len(names) else fseat
            lines.append(f"fault: {who} {fault.get('kind')}: {fault.get('detail')}")

    if seat is ALL:
        shown = frame.seat if frame.seat is not None else 0
        lines.append(f"table (as {names[shown]} sees it):")
        lines.extend("  " + line for line in frame.observations[shown].render().splitlines())
        lines.extend("  " + line for line in sketch.splitlines())
        rows = hand_rows(rep, frame)
        if rows:
            lines.append("every hand:")
            width = max(len(r.label) for r in rows)
            lines.extend(f"  {r.label:<{width}}  {r.text}" for r in rows)
    else:
        lines.append(f"what {names[seat]} knows:")
        lines.extend("  " + line for line in frame.observations[seat].render().splitlines())
        lines.extend("  " + line for line in sketch.splitlines())

    if frame.is_end:
        lines.extend(result_lines(rep))
    elif seat is ALL or frame.seat == seat:
        assert frame.seat is not None
        who = names[frame.seat]
        legal = " ".join(frame.legal)
        lines.append(f"legal ({len(frame.legal)}): {legal}")
        note = "  [played by the referee: fault fallback]" if frame.fallback else ""
        lines.append(f"{who} chose {frame.action}{note}")
        if frame.sdk_fallback:
            lines.append(f"  [its SDK fell back after {frame.sdk_fallback}]")
        if frame.note:
            lines.append(f"  note: {frame.note}")
    else:
        assert frame.seat is not None
        lines.append(f"{names[frame.seat]} decides (its choice shows in the next events)")
    return "\n".join(lines)


def result_lines(rep: Replayed) -> list[str]:
    """The recorded result: summary, then scores and ranks per seat."""
    res = rep.record.result
    names = rep.seat_names
    out = [f"result: {res.get('summary') or res.get('reason', '')}"]
    scores = res.get("scores") or []
    ranks = res.get("ranks") or []
    for s, name in enumerate(names):
        if s < len(scores) and s < len(ranks):
            out.append(f"  {name}: score {scores[s]:g}, rank {ranks[s]}")

    def who(seat: Any) -> str:
        return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else str(seat)

    if res.get("reason") == "forfeit":
        out.append(f"  forfeit by {who(res.get('forfeited_by'))}")
    for fault in res.get("faults") or []:
        if isinstance(fault, dict):
            seat, kind, detail = fault.get("seat"), fault.get("kind"), fault.get("detail")
            out.append(f"  fault: {who(seat)} {kind}: {detail}")
    return out + telemetry_lines(rep.record.entries, list(names))


def branch_line(rep: Replayed) -> str | None:
    """The header's ``branched_from`` as a line (``arena replay play``'s records), else ``None``."""
    branch = rep.record.header.get("branched_from")
    if not isinstance(branch, dict):
        return None
    return (
        f"branched from {branch['match_id']} at decision {branch['decision']} "
        f"(record sha256 {branch['sha256']})"
    )


def frames_text(rep: Replayed, seat: int | None, at: int | None) -> Iterator[str]:
    """Every frame's text (or only frame ``at``), for ``show`` without ``--step``."""
    if at is not None:
        yield render_frame(rep, rep.frame(at), seat)
        return
    for frame in rep.frames:
        yield render_frame(rep, frame, seat)


STEP_HELP = "[Enter] next · b back · NUMBER jump · q quit"


def step_through(
    rep: Replayed, seat: int | None, start: int, stdin: TextIO, stdout: TextIO
) -> None:
    """Show one frame at a time, driven by lines on ``stdin``; EOF or ``q`` ends cleanly."""
    k = rep.frame(start).number
    while True:
        stdout.write(render_frame(rep, rep.frames[k], seat) + "\n")
        stdout.write(f"-- {STEP_HELP} > ")
        stdout.flush()
        line = stdin.readline()
        if not line:  # EOF
            stdout.write("\n")
            return
        cmd = line.strip().lower()
        if cmd in ("q", "quit", "exit"):
            return
        if cmd in ("b", "back", "p", "prev"):
            k = max(0, k - 1)
        elif cmd.isdigit():
            if int(cmd) > rep.decisions:
                stdout.write(f"no step {cmd}: steps run 0 to {rep.decisions}\n")
                continue
            k = int(cmd)
        elif cmd == "":
            if k == rep.decisions:
                return
            k += 1
        else:
            stdout.write(f"unknown command {cmd!r}; {STEP_HELP}\n")


def seat_index(names: Sequence[str], text: str) -> int:
    """The seat ``text`` names among ``names``, by number or name (``2``, ``S``);
    :class:`UsageError` if none."""
    key = text.strip()
    if key.isdigit() and int(key) < len(names):
        return int(key)
    for i, name in enumerate(names):
        if name.lower() == key.lower():
            return i
    shown = ", ".join(f"{i}={n}" for i, n in enumerate(names))
    raise UsageError(f"unknown seat {text!r} (seats: {shown})")
