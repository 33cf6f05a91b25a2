"""What ``arena replay ask`` sends a bot, read from a record: the position of one decision
(``--at K``), or a seat's whole match (``--replay-all``), each as the seat saw it in the match and
as :class:`arena.server.scripted.Script` plays it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardarena import messages

from arena.errors import UsageError
from arena.protocol import codec
from arena.records.format import Record
from arena.records.replay import replay, start_state
from arena.seeds import seat_seed
from arena.server.scripted import Script, ScriptedDecision
from engine import Action, Event, MatchState, Observation, Result


@dataclass(frozen=True, slots=True)
class Position:
    """A recorded decision, replayed: the state before it and what was recorded."""

    #: Decision number, from 0.
    number: int
    #: Decisions in the record.
    total: int
    #: The engine state before the decision (a private copy).
    state: MatchState
    #: The deciding seat.
    seat: int
    #: The recorded action text.
    recorded: str
    #: Whether the recorded action was the referee's fallback for a faulted bot.
    fallback: bool


def find_position(record: Record, at: int, where: str = "record") -> Position:
    """Replay ``record`` to decision ``at`` (then to the end, to verify it all)."""
    found: Position | None = None
    total = 0
    for step in replay(record, where):
        if step.number == at:
            state = step.state.clone()
            seat = state.to_move
            assert seat is not None
            found = Position(
                at,
                0,
                state,
                seat,
                str(step.entry.get("action")),
                bool(step.entry.get("fallback", False)),
            )
        total += 1
    if found is None:
        raise _out_of_range(at, total)
    return Position(found.number, total, found.state, found.seat, found.recorded, found.fallback)


def _out_of_range(at: int, total: int) -> UsageError:
    last = f"0 to {total - 1}" if total else "none"
    return UsageError(f"--at {at} is out of range: the record has {total} decisions ({last})")


def bot_seed(header: Mapping[str, Any], seat: int) -> int:
    """The seed the seat's bot got in the match (``ARENA_SEED``, ``MatchStart.bot_seed``)."""
    return seat_seed(int(header.get("seed", 0)), seat)


def _time_control(h: Mapping[str, Any]) -> messages.TimeControl:
    """The match's time control when it had one (self-play records have none). The header's
    check makes them finite numbers of ms; held to what the protocol can carry."""
    tc = h.get("time_control")
    if not isinstance(tc, dict):
        return messages.TimeControl()
    return messages.TimeControl(
        *(min(int(tc[k]), messages.MAX_TIME_MS) for k in ("move_ms", "bank_ms"))
    )


def _match_start(
    h: Mapping[str, Any], state: MatchState, seat: int, match_id: str
) -> messages.MatchStart:
    """The MatchStart the seat's bot got in the match, under ``match_id``."""
    names = state.game.seat_names(state.config)
    seats = {s.get("seat"): s for s in h.get("seats") or [] if isinstance(s, dict)}
    return messages.MatchStart(
        match_id=match_id,
        game=state.game.id,
        game_version=state.game.version,
        options={k: codec.option_to_text(v) for k, v in state.config.options},
        seats=(seat,),
        players=tuple(
            messages.PlayerInfo(
                s,
                names[s],
                str(seats.get(s, {}).get("bot_name", "")),
                str(seats.get(s, {}).get("bot_version", "")),
            )
            for s in range(state.num_seats)
        ),
        time_control=_time_control(h),
        fault_policy=str(h.get("fault_policy") or "lenient"),
        bot_seed=bot_seed(h, seat),
    )


def _unscored(state: MatchState, summary: str) -> Result:
    n = state.num_seats
    return Result((0.0,) * n, (1,) * n, "replay", summary=summary)


def position_script(header: Mapping[str, Any], pos: Position, token: str) -> Script:
    """``--at K``: the seat's every visible event so far and the one decision, under a match id
    of its own; then MatchEnd with no result."""
    state, seat = pos.state, pos.seat
    match_id = f"replay-ask-{header.get('match_id') or 'match'}-{pos.number}"
    # Numbered over what the seat may see, as the arena numbers them.
    asked = ScriptedDecision(
        state.observation(seat), tuple(state.legal_actions()), tuple(state.visible_events(seat)), 0
    )
    end = _unscored(state, "one decision asked from a record")
    return Script(
        token,
        _match_start(header, state, seat, match_id),
        seat,
        state.game.seat_names(state.config)[seat],
        (asked,),
        (),
        0,
        messages.MatchEnd(match_id, codec.engine_result_to_plain(end)),
    )


# --- --replay-all: the bot taken through the whole recorded match -----------------------------


@dataclass(frozen=True, slots=True)
class Asked:
    """One decision of the replayed seat, and the events that seat saw since its previous one."""

    #: Decision number in the record, from 0.
    number: int
    #: The recorded action text.
    recorded: str
    #: Whether the recorded action was the referee's fallback for a faulted bot.
    fallback: bool
    #: What the seat was sent: the events since its previous decision, its observation and
    #: legal actions.
    sent: ScriptedDecision

    @property
    def observation(self) -> Observation:
        return self.sent.observation

    @property
    def legal(self) -> tuple[Action, ...]:
        return self.sent.legal


@dataclass(frozen=True, slots=True)
class SeatScript:
    """What the bot of one seat is sent, from the match's start to its end."""

    seat: int
    asked: tuple[Asked, ...]
    #: The events after its last decision (none when the replay stops at a decision).
    tail: tuple[Event, ...]
    tail_seq: int


@dataclass(frozen=True, slots=True)
class MatchScript:
    """A record replayed for ``--replay-all``."""

    #: A fresh state of the match (its game, options and seats).
    start: MatchState
    #: Decisions in the record.
    total: int
    #: The seats to replay, each with at least one decision.
    seats: tuple[SeatScript, ...]
    #: The match's result and faults, as MatchEnd told the bots; ``None`` when the replay stops
    #: at a decision (``--at K``).
    result: Result | None
    faults: tuple[messages.FaultInfo, ...]

    def script(self, header: Mapping[str, Any], seat: int, token: str) -> Script:
        """The seat's script for the server, under the record's match id."""
        match_id = str(header.get("match_id") or "replay")
        mine = next(s for s in self.seats if s.seat == seat)
        result = self.result
        if result is None:  # stopped at a decision (--at K): nothing was decided after it
            result = _unscored(self.start, "replayed up to a decision")
        return Script(
            token,
            _match_start(header, self.start, seat, match_id),
            seat,
            self.start.game.seat_names(self.start.config)[seat],
            tuple(a.sent for a in mine.asked),
            mine.tail,
            mine.tail_seq,
            messages.MatchEnd(match_id, codec.engine_result_to_plain(result), self.faults),
        )


def match_script(
    record: Record, where: str = "record", seat: int | None = None, upto: int | None = None
) -> MatchScript:
    """Replay (and check) the whole record and script the bots of ``seat`` (default: every
    seat that decided); with ``upto``, only the seat of decision ``upto``, up to it."""
    start = start_state(record, where)
    n = start.num_seats
    read = [0] * n  # engine events each seat has been sent
    seqs = [0] * n
    asked: list[list[Asked]] = [[] for _ in range(n)]
    total = 0
    final: MatchState | None = None
    upto_seat: int | None = None
    for step in replay(record, where):
        total += 1
        state = final = step.state
        if upto is not None and step.number > upto:
            continue
        s = state.to_move
        assert s is not None
        new = tuple(state.visible_events(s, read[s]))
        read[s] = len(state.events)
        asked[s].append(
            Asked(
                step.number,
                str(step.entry.get("action")),
                bool(step.entry.get("fallback", False)),
                ScriptedDecision(state.observation(s), tuple(state.legal_actions()), new, seqs[s]),
            )
        )
        seqs[s] += len(new)
        upto_seat = s
    if upto is not None:
        if upto >= total or upto < 0:
            raise _out_of_range(upto, total)
        seat = upto_seat
    wanted = range(n) if seat is None else (seat,)
    scripts = tuple(
        SeatScript(
            s,
            tuple(asked[s]),
            () if upto is not None or final is None else tuple(final.visible_events(s, read[s])),
            seqs[s],
        )
        for s in wanted
        if asked[s]
    )
    result = None if upto is not None or final is None else final.result()
    return MatchScript(start, total, scripts, result, _recorded_faults(record, n))


def _recorded_faults(record: Record, seats: int) -> tuple[messages.FaultInfo, ...]:
    """The result line's faults, as MatchEnd carried them (those of the wrong form left out:
    replaying without ``strict`` leaves them unchecked)."""
    listed = record.result.get("faults")
    return tuple(
        messages.FaultInfo(f["seat"], f["kind"], f["detail"])
        for f in (listed if isinstance(listed, list) else [])
        if isinstance(f, dict)
        and isinstance(f.get("seat"), int)
        and not isinstance(f.get("seat"), bool)
        and 0 <= f["seat"] < seats
        and isinstance(f.get("kind"), str)
        and isinstance(f.get("detail"), str)
    )
