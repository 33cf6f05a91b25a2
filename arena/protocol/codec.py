"""The server's side of the protocol: what a bot sends, read; what the server sends, written
(the plain values are :mod:`cardarena.messages`; a bot's side is :mod:`cardarena.codec`).
Observations are :mod:`.observations`'; the wire format written by hand, and its C encoder,
:mod:`.wireformat`'s; the spectator service's messages :mod:`.spectator`'s. Engine values
(actions, results) become the protocol's here.

Each function is named for its hop, ``<from>_to_<to>``, along engine values (``event``,
``engine_result``, ``option``, ``decision``) → plain values (``plain``, or the value's kind) →
protobuf messages (``proto``) → wire ``bytes``; what a bot sends goes back (``bot_bytes_to_plain``).
An event's ``body`` is its Event message's bytes, made once and sent alone or in requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardarena import messages
from cardarena._pb import arena_pb2 as pb
from cardarena.codec import ERROR_CODES
from cardarena.messages import (
    Answer,
    BotMessage,
    ErrorInfo,
    EventInfo,
    Garbage,
    Hello,
    MatchEnd,
    MatchStart,
    Ping,
    PlayerInfo,
    Pong,
    Rejected,
    ServerMessage,
    Welcome,
    clean_note,
)
from google.protobuf.message import DecodeError

import arena.protocol.wireformat as wireformat
from arena.protocol.observations import (
    GAME_KEYS,
    observation_bytes,
    observation_head,
    observation_plan,
    wire_plan,
)
from arena.protocol.wireformat import (
    WIRE_LEN,
    WIRE_VARINT,
    NumberField,
    StringField,
    delimited,
    field_key,
    remember,
    varint,
)
from engine import Action, Event, Observation, Result

# Re-exported: the referee and ``replay ask`` write MatchStart's options with it.
from engine.options import option_to_text as option_to_text

# --------------------------------------------------------------------------------------------
# Bot -> server


def bot_bytes_to_plain(data: bytes) -> BotMessage:
    """Decode what a bot sent, from its wire bytes (as the server reads them).

    The usual message, an Action with an index and nothing else, is read in C when the C module
    is built, without building a protobuf message to read it (the server reads every answer
    cold; figures in docs/performance.md, under "The C module"). Anything else, such as an
    answer with a note, goes through protobuf. Bytes that
    are no BotMessage are :class:`Garbage`, which the bot is told about.
    """
    accel = wireformat.ACCEL
    if accel is not None:
        answer = accel.answer(data)
        if answer is not None:
            return Answer(answer[0], answer[1])
    try:
        msg = pb.BotMessage.FromString(data)
    except DecodeError:
        return Garbage("undecodable message: its bytes are not a BotMessage")
    return bot_proto_to_plain(msg)


def bot_proto_to_plain(msg: pb.BotMessage) -> BotMessage:
    """Decode what a bot sent."""
    kind = msg.WhichOneof("kind")
    if kind == "action":
        a = msg.action
        choice = a.WhichOneof("choice")
        # A note or fallback reason is cleaned and cut here, never a fault (docs/protocol.md).
        note = clean_note(a.note) if a.note else ""
        fallback = clean_note(a.sdk_fallback) if a.sdk_fallback else ""
        if choice == "index":
            return Answer(a.request_id, a.index, None, note, fallback)
        if choice == "text":
            return Answer(a.request_id, None, a.text, note, fallback)
        return Answer(a.request_id, None, None, note, fallback)
    if kind == "ping":
        return Ping(msg.ping.nonce)
    if kind == "hello":
        h = msg.hello
        return Hello(
            h.bot_name,
            h.bot_version,
            h.token,
            h.protocol_version,
            tuple(h.games),
            h.max_matches,
            h.batch_events,
            h.omit_text,
            h.omit_json,
        )
    return Garbage("empty message (no hello, action or ping)")


# --------------------------------------------------------------------------------------------
# Server -> bot: encoding (server side)


def player_to_proto(p: PlayerInfo) -> pb.Player:
    return pb.Player(
        seat=p.seat, seat_name=p.seat_name, bot_name=p.bot_name, bot_version=p.bot_version
    )


def engine_result_to_plain(result: Result) -> messages.Result:
    """The protocol's result from the engine's (its statistics stay in the match's record)."""
    return messages.Result(
        result.scores, result.ranks, result.reason, result.forfeited_by, result.summary
    )


def result_to_proto(result: messages.Result) -> pb.MatchResult:
    return pb.MatchResult(
        scores=list(result.scores),
        ranks=list(result.ranks),
        summary=result.summary,
        reason=result.reason,
        forfeited_by=-1 if result.forfeited_by is None else result.forfeited_by,
    )


def plain_to_proto(value: ServerMessage) -> pb.ServerMessage:
    """Encode any server message but a decision (see :func:`decision_to_bytes`)."""
    if isinstance(value, EventInfo):
        return pb.ServerMessage(
            event=pb.Event(
                match_id=value.match_id,
                seq=value.seq,
                kind=value.kind,
                json=wireformat.dumps(value.data),
                private=value.private,
            )
        )
    if isinstance(value, ErrorInfo):
        return pb.ServerMessage(
            error=pb.Error(
                code=ERROR_CODES.get(value.code, pb.ERROR_CODE_UNSPECIFIED),
                message=value.message,
                strikes=value.strikes,
                match_id=value.match_id,
                request_id=value.request_id,
                fault=value.fault,
                seat=value.seat,
            )
        )
    if isinstance(value, MatchStart):
        return pb.ServerMessage(
            match_start=pb.MatchStart(
                match_id=value.match_id,
                game=value.game,
                game_version=value.game_version,
                options=dict(value.options),
                seats=list(value.seats),
                players=[player_to_proto(p) for p in value.players],
                time_control=pb.TimeControl(
                    move_ms=value.time_control.move_ms, bank_ms=value.time_control.bank_ms
                ),
                fault_policy=value.fault_policy,
                bot_seed=value.bot_seed,
            )
        )
    if isinstance(value, MatchEnd):
        return pb.ServerMessage(match_end=match_end_to_proto(value))
    if isinstance(value, Welcome):
        return pb.ServerMessage(
            welcome=pb.Welcome(
                server_version=value.server_version,
                protocol_version=value.protocol_version,
                session_id=value.session_id,
                resume_token=value.resume_token,
            )
        )
    if isinstance(value, Rejected):
        return pb.ServerMessage(rejected=pb.Rejected(reason=value.reason))
    if isinstance(value, Pong):
        return pb.ServerMessage(pong=pb.Pong(nonce=value.nonce))
    raise TypeError(f"use decision_to_bytes() for {type(value).__name__}")


def match_end_to_proto(value: MatchEnd) -> pb.MatchEnd:
    """The MatchEnd message body."""
    return pb.MatchEnd(
        match_id=value.match_id,
        result=result_to_proto(value.result),
        reason=value.result.reason,
        faults=[pb.Fault(seat=f.seat, kind=f.kind, detail=f.detail) for f in value.faults],
    )


def event_to_plain(match_id: str, seq: int, event: Event) -> EventInfo:
    """The plain form of an engine event for the wire."""
    return EventInfo(match_id, seq, event.kind, dict(event.data), event.to is not None)


_EVENT_FIELDS = pb.Event.DESCRIPTOR.fields_by_name
_EVENT_MATCH_ID = StringField(field_key(_EVENT_FIELDS["match_id"], WIRE_LEN))
_EVENT_SEQ_KEY = field_key(_EVENT_FIELDS["seq"], WIRE_VARINT)
_EVENT_KIND = StringField(field_key(_EVENT_FIELDS["kind"], WIRE_LEN))
_EVENT_JSON_KEY = field_key(_EVENT_FIELDS["json"], WIRE_LEN)
_EVENT_PRIVATE = field_key(_EVENT_FIELDS["private"], WIRE_VARINT) + varint(1)
_SERVER_FIELDS = pb.ServerMessage.DESCRIPTOR.fields_by_name
_EVENT_KEY = field_key(_SERVER_FIELDS["event"], WIRE_LEN)
_DECISION_KEY = field_key(_SERVER_FIELDS["decision"], WIRE_LEN)


#: ``id(event)`` → ``(event, its kind, JSON and privacy as bytes)``: games intern recurring
#: events (whist's card plays), and each is encoded once while cached.
_EVENT_TAILS: dict[int, tuple[Event, bytes]] = {}


def event_to_body(match_id: str, seq: int, event: Event) -> bytes:
    """The wire bytes of the Event message for an engine event: made once per event, then sent
    alone (:func:`event_body_to_bytes`) or inside DecisionRequests (:func:`decision_to_bytes`)."""
    hit = _EVENT_TAILS.get(id(event))
    if hit is not None and hit[0] is event:
        tail = hit[1]
    else:
        tail = _EVENT_KIND[event.kind] + delimited(
            _EVENT_JSON_KEY, wireformat.dumps(event.data).encode()
        )
        if event.to is not None:
            tail += _EVENT_PRIVATE
        remember(_EVENT_TAILS, id(event), (event, tail))
    if seq:
        return _EVENT_MATCH_ID[match_id] + _EVENT_SEQ_KEY + varint(seq) + tail
    return _EVENT_MATCH_ID[match_id] + tail


def event_body_to_bytes(body: bytes) -> bytes:
    """The ServerMessage carrying the Event ``body`` (:func:`event_to_body`), as wire bytes."""
    return delimited(_EVENT_KEY, body)


def event_to_proto(match_id: str, seq: int, event: Event) -> pb.ServerMessage:
    """``plain_to_proto(event_to_plain(match_id, seq, event))``, by the referee's own encoding."""
    return bytes_to_proto(event_body_to_bytes(event_to_body(match_id, seq, event)))


_DECISION_FIELDS = pb.DecisionRequest.DESCRIPTOR.fields_by_name
_REQUEST_ID_KEY = field_key(_DECISION_FIELDS["request_id"], WIRE_VARINT)
_MATCH_ID = StringField(field_key(_DECISION_FIELDS["match_id"], WIRE_LEN))
_SEAT_KEY = field_key(_DECISION_FIELDS["seat"], WIRE_VARINT)
_OBSERVATION_KEY = field_key(_DECISION_FIELDS["observation"], WIRE_LEN)
_LEGAL_KEY = field_key(_DECISION_FIELDS["legal_actions"], WIRE_LEN)
_DEADLINE = NumberField(field_key(_DECISION_FIELDS["deadline_ms"], WIRE_VARINT))
_BANK = NumberField(field_key(_DECISION_FIELDS["bank_ms"], WIRE_VARINT))
_EVENTS_KEY = field_key(_DECISION_FIELDS["events"], WIRE_LEN)
_LEGAL_FIELDS = pb.LegalAction.DESCRIPTOR.fields_by_name
_LEGAL_INDEX_KEY = field_key(_LEGAL_FIELDS["index"], WIRE_VARINT)
_LEGAL_TEXT = StringField(field_key(_LEGAL_FIELDS["text"], WIRE_LEN))
_LEGAL_KIND = StringField(field_key(_LEGAL_FIELDS["kind"], WIRE_LEN))
_LEGAL_ARG = StringField(field_key(_LEGAL_FIELDS["arg"], WIRE_LEN))
#: ``(index, action text)`` → the LegalAction's bytes, key and length included.
_LEGAL_ITEMS: dict[tuple[int, str], bytes] = {}


def _legal_item(index: int, action: Action) -> bytes:
    # Keyed by the text (a str caches its hash), not the Action (a dataclass hashes in Python).
    made = _LEGAL_ITEMS.get((index, action.text))
    if made is None:
        body = _LEGAL_INDEX_KEY + varint(index) if index else b""
        body += _LEGAL_TEXT[action.text] if action.text else b""
        body += _LEGAL_KIND[action.kind] if action.kind else b""
        body += _LEGAL_ARG[action.arg] if action.arg else b""
        made = delimited(_LEGAL_KEY, body)
        remember(_LEGAL_ITEMS, (index, action.text), made)
    return made


#: ``id(legal)`` → ``(legal, the LegalActions' bytes)``: engines hand out the same interned
#: tuples of legal actions again and again (whist's plays of a suit, ``SUIT_PLAYS``).
_LEGAL_LISTS: dict[int, tuple[Sequence[Action], bytes]] = {}


def _legal_bytes(legal: Sequence[Action]) -> bytes:
    hit = _LEGAL_LISTS.get(id(legal))
    if hit is not None and hit[0] is legal:
        return hit[1]
    made = b"".join([_legal_item(i, a) for i, a in enumerate(legal)])
    if isinstance(legal, tuple):  # immutable: safe to know by identity while kept here
        remember(_LEGAL_LISTS, id(legal), (legal, made))
    return made


def decision_to_bytes(
    request_id: int,
    match_id: str,
    seat: int,
    game: str,
    observation: Observation,
    legal: Sequence[Action],
    deadline_ms: int,
    bank_ms: int,
    *,
    events: Sequence[bytes] = (),
    text: bool = True,
    json: bool = True,
) -> bytes:
    """Encode a decision request (a ServerMessage) as wire bytes: the seat's observation and
    every legal action.

    For a bot whose Hello set ``batch_events``, ``events`` are the bodies (:func:`event_to_body`)
    of the events held back for it, oldest first; they ride in the request. ``text`` / ``json``
    are ``False`` for a bot that set ``omit_text`` / ``omit_json``.
    """
    accel = wireformat.ACCEL
    plan = observation_plan(game)
    if accel is not None and plan is not None:
        return accel.decision(  # type: ignore[no-any-return]  # arena/protocol/_wire.pyi: bytes
            request_id,
            _MATCH_ID[match_id],
            seat,
            observation_head(observation, plan, text=text, json=json) if text or json else b"",
            observation,
            wire_plan(plan),
            GAME_KEYS[game],
            _legal_bytes(legal),
            _DEADLINE[deadline_ms] if deadline_ms else b"",
            bank_ms,
            events,
        )
    # In Python: the C encoder's reference, and its stand-in where it is not built.
    out = [_REQUEST_ID_KEY + varint(request_id), _MATCH_ID[match_id]]
    if seat:
        out.append(_SEAT_KEY + varint(seat))
    out.append(
        delimited(_OBSERVATION_KEY, observation_bytes(game, observation, text=text, json=json))
    )
    out.append(_legal_bytes(legal))
    if deadline_ms:
        out.append(_DEADLINE[deadline_ms])
    if bank_ms:
        out.append(_BANK[bank_ms])
    if events:
        out += [delimited(_EVENTS_KEY, e) for e in events]
    return delimited(_DECISION_KEY, b"".join(out))


if wireformat.BUILT is not None:
    wireformat.BUILT.set_keys(
        _DECISION_KEY, _REQUEST_ID_KEY, _SEAT_KEY, _OBSERVATION_KEY, _BANK.key, _EVENTS_KEY
    )


def bytes_to_proto(data: bytes) -> pb.ServerMessage:
    """A message this module encoded as bytes (:func:`decision_to_bytes`,
    :func:`event_body_to_bytes`), as a message object: for tools and tests that handle messages."""
    return pb.ServerMessage.FromString(data)


def proto_to_bytes(msg: pb.ServerMessage | bytes) -> bytes:
    """What the server writes for a message it sends: messages already encoded pass as they
    are (the gRPC serializer of the server's streams)."""
    return msg if isinstance(msg, bytes) else msg.SerializeToString()
