"""What a bot sends and reads, between the protocol's messages and :mod:`cardarena.messages`'
plain values: Hello, answers and pings out; everything the server sends, in. The server's side
of the same messages is the arena's (``arena.protocol.codec``).

Each function is named for its hop: plain values (``plain``, or the value's kind: ``hello``,
``result``) to protobuf messages (``proto``) and back.
"""

from __future__ import annotations

import json
from typing import Final

from cardarena._pb import arena_pb2 as pb
from cardarena.messages import (
    Action,
    Decision,
    ErrorInfo,
    EventInfo,
    FaultInfo,
    Hello,
    MatchEnd,
    MatchStart,
    PlayerInfo,
    Pong,
    Rejected,
    Result,
    ServerMessage,
    TimeControl,
    Welcome,
    clean_note,
)
from cardarena.observations import observation_dict

#: The protocol's error codes by the arena's names for them (``timeout``, ``flood`` …).
ERROR_CODES: Final = {
    "illegal_action": pb.ERROR_CODE_ILLEGAL_ACTION,
    "timeout": pb.ERROR_CODE_TIMEOUT,
    "protocol": pb.ERROR_CODE_PROTOCOL,
    "unknown_request": pb.ERROR_CODE_UNKNOWN_REQUEST,
    "flood": pb.ERROR_CODE_FLOOD,
    "disconnected": pb.ERROR_CODE_DISCONNECTED,
    "wrong_seat": pb.ERROR_CODE_WRONG_SEAT,
}
ERROR_NAMES: Final = {v: k for k, v in ERROR_CODES.items()}


# --------------------------------------------------------------------------------------------
# Bot -> server


def hello_to_proto(hello: Hello) -> pb.BotMessage:
    """Encode a Hello (bot side)."""
    return pb.BotMessage(
        hello=pb.Hello(
            bot_name=hello.bot_name,
            bot_version=hello.bot_version,
            token=hello.token,
            protocol_version=hello.protocol_version,
            games=list(hello.games),
            max_matches=hello.max_matches,
            batch_events=hello.batch_events,
            omit_text=hello.omit_text,
            omit_json=hello.omit_json,
        )
    )


def answer_to_proto(
    request_id: int,
    index: int | None = None,
    text: str | None = None,
    note: str = "",
    sdk_fallback: str = "",
) -> pb.BotMessage:
    """Encode an answer (bot side): by index (preferred) or by text, with an optional note and
    the SDK's fallback reason (each cleaned and cut as the server would: :func:`clean_note`)."""
    action = pb.Action(request_id=request_id)
    if index is not None:
        action.index = index
    elif text is not None:
        action.text = text
    if note:
        action.note = clean_note(note)
    if sdk_fallback:
        action.sdk_fallback = clean_note(sdk_fallback)
    return pb.BotMessage(action=action)


def ping_to_proto(nonce: int) -> pb.BotMessage:
    """Encode a Ping (bot side)."""
    return pb.BotMessage(ping=pb.Ping(nonce=nonce))


# --------------------------------------------------------------------------------------------
# Server -> bot: decoding (bot side, the SDK)

_ACTIONS: dict[tuple[str, str], Action] = {}


def _action(kind: str, arg: str) -> Action:
    """Interned actions: the SDK decodes the same few dozen over and over."""
    key = (kind, arg)
    action = _ACTIONS.get(key)
    if action is None:
        action = _ACTIONS.setdefault(key, Action(kind, arg))
    return action


def proto_to_result(msg: pb.MatchResult) -> Result:
    return Result(
        scores=tuple(msg.scores),
        ranks=tuple(msg.ranks),
        reason=msg.reason or "normal",
        forfeited_by=None if msg.forfeited_by < 0 or msg.reason != "forfeit" else msg.forfeited_by,
        summary=msg.summary,
    )


def _proto_to_event(e: pb.Event) -> EventInfo:
    return EventInfo(e.match_id, e.seq, e.kind, json.loads(e.json) if e.json else {}, e.private)


def proto_to_player(p: pb.Player) -> PlayerInfo:
    return PlayerInfo(p.seat, p.seat_name, p.bot_name, p.bot_version)


def proto_to_plain(msg: pb.ServerMessage, *, events: bool = True) -> ServerMessage | None:
    """Decode what the server sent; ``None`` for a kind this copy does not know.

    ``events=False`` leaves a Decision's carried events undecoded (``Decision.events`` empty):
    for a reader with no use for them, since decoding each costs a JSON parse.
    """
    kind = msg.WhichOneof("kind")
    if kind == "decision":
        d = msg.decision
        game, observation = observation_dict(d.observation)
        legal = tuple(_action(a.kind, a.arg) for a in d.legal_actions)
        return Decision(
            d.request_id,
            d.match_id,
            d.seat,
            game,
            observation,
            d.observation.text,
            legal,
            d.deadline_ms,
            d.bank_ms,
            tuple(_proto_to_event(e) for e in d.events) if events and d.events else (),
        )
    if kind == "event":
        return _proto_to_event(msg.event)
    if kind == "match_start":
        s = msg.match_start
        return MatchStart(
            match_id=s.match_id,
            game=s.game,
            game_version=s.game_version,
            options=dict(s.options),
            seats=tuple(s.seats),
            players=tuple(proto_to_player(p) for p in s.players),
            time_control=TimeControl(s.time_control.move_ms, s.time_control.bank_ms),
            fault_policy=s.fault_policy,
            bot_seed=s.bot_seed,
        )
    if kind == "match_end":
        return proto_to_match_end(msg.match_end)
    if kind == "error":
        r = msg.error
        return ErrorInfo(
            ERROR_NAMES.get(r.code, "unspecified"),
            r.message,
            r.strikes,
            r.match_id,
            r.request_id,
            r.fault,
            r.seat,
        )
    if kind == "welcome":
        w = msg.welcome
        return Welcome(w.server_version, w.session_id, w.protocol_version, w.resume_token)
    if kind == "rejected":
        return Rejected(msg.rejected.reason)
    if kind == "pong":
        return Pong(msg.pong.nonce)
    return None


def proto_to_match_end(m: pb.MatchEnd) -> MatchEnd:
    """Decode a MatchEnd body."""
    faults = tuple(FaultInfo(f.seat, f.kind, f.detail) for f in m.faults)
    return MatchEnd(m.match_id, proto_to_result(m.result), faults)
