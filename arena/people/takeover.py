"""``arena replay play``: take a seat over from a recorded match at one of its decisions.

The record is replayed to decision K as ``arena replay ask`` replays it
(:func:`arena.records.ask.find_position`, which checks the whole record), and a new match is
played on the real arena from there: its :class:`~arena.server.Branch` has the referee play the
record's first K actions from the record's seed before it asks any seat, so the new record holds
them as its first K decisions, verifies from the deal like any record and names the record and
decision it branched from (``branched_from``). Seat S is a person (the ``arena play`` page) or a
given bot; every other seat is the bot the caller names for it, or, when it names none, the
record's own bot where the caller knows how to start it (the reference bots, by their recorded
names); else the take-over is refused in one line naming the seats that lack a command.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardarena.messages import MAX_TIME_MS, TimeControl

from arena.bots.sandbox import Limits
from arena.errors import UsageError
from arena.match import DEFAULT_OUT, CommandMatch, play_commands
from arena.people.play import Seating, play_people
from arena.policy import FaultPolicy
from arena.records.ask import find_position
from arena.records.format import RecordError, read_record
from arena.records.view import seat_index
from arena.server import Branch


@dataclass(frozen=True, slots=True)
class Takeover:
    """A recorded match at decision K, ready to be played on from there."""

    #: The record's game, players, options and seed: the new match's.
    game: str
    players: int
    options: Mapping[str, Any]
    seed: int
    #: The record's time control and fault policy.
    time_control: TimeControl
    fault_policy: FaultPolicy
    #: The record and the decision the new match branches from, with the actions before it.
    branch: Branch
    #: The seat taken over, and who played each seat in the record (``name version``).
    seat: int
    seat_names: tuple[str, ...]
    recorded_bots: tuple[tuple[str, str], ...]


def plan_takeover(path: Path, at: int, seat: str) -> Takeover:
    """The record at ``path`` at decision ``at``, seat ``seat`` (number or name) to be taken
    over. Raises :class:`UsageError` for a decision or seat the record does not have, and
    ``RecordError`` for a record that does not replay."""
    if at < 0:
        raise UsageError(f"--at {at}: decisions are numbered from 0")
    record = read_record(path)
    position = find_position(record, at, str(path))
    state = position.state
    names = tuple(state.game.seat_names(state.config))
    h = record.header
    actions = tuple(str(e["action"]) for _, e in record.decisions())[:at]
    try:
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise RecordError(f"{path}: {err.strerror or err}") from None
    tc = h.get("time_control")
    return Takeover(
        game=state.game.id,
        players=state.config.players,
        options=dict(state.config.options),
        seed=int(h["seed"]),
        time_control=TimeControl()
        if not isinstance(tc, dict)
        else TimeControl(*(min(int(tc[k]), MAX_TIME_MS) for k in ("move_ms", "bank_ms"))),
        fault_policy=FaultPolicy(str(h["fault_policy"])),
        branch=Branch(str(h.get("match_id") or path.name), sha256, at, actions),
        seat=seat_index(names, seat),
        seat_names=names,
        recorded_bots=tuple((str(s["bot_name"]), str(s["bot_version"])) for s in h["seats"]),
    )


def seat_commands(
    plan: Takeover,
    taker: str | None,
    given: Mapping[int, str],
    known: Callable[[str], str | None],
) -> tuple[str | None, ...]:
    """Each seat's command: ``taker`` (``None``: a person) in the seat taken over, ``given``'s
    in the seats it names, else ``known(recorded bot name)``. Raises :class:`UsageError` for a
    seat ``given`` names that is not at the table or is the one taken over, and for a seat left
    without a command."""
    seats = len(plan.seat_names)
    for s in given:
        if not 0 <= s < seats:
            raise UsageError(f"--bot-for {s}=…: the record's table has seats 0 to {seats - 1}")
        if s == plan.seat:
            raise UsageError(f"--bot-for {s}=…: seat {s} is the one taken over (--seat)")
    commands: list[str | None] = []
    lacking: list[str] = []
    for s, (name, version) in enumerate(plan.recorded_bots):
        command = taker if s == plan.seat else given.get(s) or known(name)
        if s != plan.seat and command is None:
            played_by = " ".join(part for part in (name, version) if part)
            lacking.append(f"seat {s} ({plan.seat_names[s]}: {played_by or 'unnamed'})")
        commands.append(command)
    if lacking:
        raise UsageError(
            f"no command starts the record's bot in {', '.join(lacking)}: give --bot-for SEAT=CMD"
        )
    return tuple(commands)


def branch_id(plan: Takeover) -> str:
    """The new match's id: the record's, the decision, and a few random characters."""
    return f"{plan.branch.match_id}-at{plan.branch.decision}-{secrets.token_hex(3)}"


async def play_takeover(
    plan: Takeover,
    commands: tuple[str | None, ...],
    *,
    announce: Callable[[Mapping[int, str]], None],
    time_control: TimeControl | None = None,
    out_dir: Path = DEFAULT_OUT,
    connect_timeout_s: float = 20.0,
    sandbox: Limits | None = None,
) -> CommandMatch:
    """Play the branched match: a person's page (``announce``) where ``commands`` has ``None``,
    else bots only. ``time_control`` replaces the record's."""
    common: dict[str, Any] = {
        "players": plan.players,
        "options": plan.options,
        "seed": plan.seed,
        "out_dir": out_dir,
        "time_control": time_control or plan.time_control,
        "fault_policy": plan.fault_policy,
        "connect_timeout_s": connect_timeout_s,
        "sandbox": sandbox,
        "branch": plan.branch,
        "match_id": branch_id(plan),
    }
    if None in commands:
        return await play_people(
            plan.game, Seating(commands, plan.players), announce=announce, **common
        )
    played = await play_commands(plan.game, commands, **common)
    assert isinstance(played, CommandMatch)
    return played
