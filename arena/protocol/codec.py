"""Translation between the arena's plain values and the protocol's messages.

This is the only module that builds or reads protobuf message fields; everything else works on
engine values (:class:`~engine.Observation`, :class:`~engine.Action`, :class:`~engine.Event`,
:class:`~engine.Result`) and on the small frozen dataclasses below, one per message kind.

Observations are translated generically: a game's typed message (``WhistObservation``) mirrors
its engine dataclass field by field, nested dataclasses becoming nested messages, and the
translation walks the message descriptor. The reverse direction (for the Python SDK) rebuilds
exactly the dict of the engine's ``Observation.to_dict()``, so rule-based strategies see the same
data in-process and over the wire. ``tests/arena/protocol/test_codec.py`` checks the mirror for
every game.
"""

from __future__ import annotations

import json
import keyword
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError

from arena.protocol._pb import arena_pb2 as pb
from arena.protocol.messages import (
    Answer,
    BotMessage,
    Decision,
    ErrorInfo,
    EventInfo,
    FaultInfo,
    Garbage,
    Hello,
    MatchEnd,
    MatchStart,
    MatchSummary,
    Ping,
    PlayerInfo,
    Pong,
    Rejected,
    ServerMessage,
    Standing,
    TimeControl,
    Welcome,
)
from engine import Action, Event, Observation, OptionValue, Result

try:  # the C encoder (arena/protocol/_wire.c), built by pip where a C compiler is at hand
    from arena.protocol import _wire as _built_wire
except ImportError:  # no compiler at install time: the Python encoders below serve
    _built_wire = None  # type: ignore[assignment]

# --------------------------------------------------------------------------------------------
# Observations: generic mirror of the engine dataclasses

_SCALAR, _OPTIONAL, _REPEATED, _MESSAGE, _REPEATED_MESSAGE = range(5)


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to copy one message type: (field name, mode, nested plan) per field, in order."""

    fields: tuple[tuple[str, int, _Plan | None], ...]
    #: The message type.
    descriptor: Descriptor


_PLANS: dict[str, _Plan] = {}


def _plan(descriptor: Descriptor) -> _Plan:
    plan = _PLANS.get(descriptor.full_name)
    if plan is not None:
        return plan
    fields: list[tuple[str, int, _Plan | None]] = []
    for f in descriptor.fields:
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            mode = _REPEATED_MESSAGE if f.is_repeated else _MESSAGE
            assert f.message_type is not None
            fields.append((f.name, mode, _plan(f.message_type)))
        elif f.is_repeated:
            fields.append((f.name, _REPEATED, None))
        else:
            fields.append((f.name, _OPTIONAL if f.has_presence else _SCALAR, None))
    plan = _Plan(tuple(fields), descriptor)
    _PLANS[descriptor.full_name] = plan
    return plan


# --------------------------------------------------------------------------------------------
# Wire encoding of what the referee sends at every decision
#
# The referee sends a DecisionRequest per decision, carrying the seat's observation and the
# events since the seat's previous request: the server's hottest path. Rather than build protobuf
# objects per decision only to serialize them, these messages are written straight in the
# protobuf wire format (https://protobuf.dev/programming-guides/encoding/), from bytes cached for
# the values that recur (cards, small numbers, finished tricks, legal actions; docs/performance.md
# has the figures). Parsing the result gives exactly the message protobuf's own API builds
# (tests/arena/protocol/test_codec.py compares the two for every game), and the observation
# round-trip tests pin it to the engine's ``to_dict()``.

_WIRE_VARINT, _WIRE_LEN = 0, 2

_VARINT_TYPES: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    }
)


def _varint_of(n: int) -> bytes:
    if 0 <= n < 0x4000:
        return bytes(((n & 0x7F) | 0x80, n >> 7)) if n > 0x7F else bytes((n,))
    if n < 0:  # int32/int64: two's complement on 64 bits
        n += 1 << 64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: Varints of the small numbers every message is full of.
_SMALL_VARINTS: Final = tuple(_varint_of(i) for i in range(1024))


def _varint(n: int) -> bytes:
    return _SMALL_VARINTS[n] if 0 <= n < 1024 else _varint_of(n)


def _key(field: FieldDescriptor, wire_type: int) -> bytes:
    return _varint((field.number << 3) | wire_type)


def _delimited(key: bytes, body: bytes) -> bytes:
    n = len(body)
    return key + (_SMALL_VARINTS[n] if n < 1024 else _varint_of(n)) + body


#: Values kept per cache below; a cache is cleared when full.
WIRE_CACHE_SIZE: Final = 4096


K = TypeVar("K")


def _remember(cache: dict[K, Any], key: K, value: Any) -> None:
    """Keep ``value`` in a cache of at most :data:`WIRE_CACHE_SIZE` entries (cleared when
    full: the values that recur come straight back)."""
    if len(cache) >= WIRE_CACHE_SIZE:
        cache.clear()
    cache[key] = value


class _FieldCache(dict[K, bytes]):
    """``cache[value]``: one field's wire bytes for ``value``, key included, made on first use
    (:meth:`encode`) and kept."""

    def __init__(self, key: bytes) -> None:
        super().__init__()
        self.key = key

    def encode(self, value: K) -> bytes:
        raise NotImplementedError

    def __missing__(self, value: K) -> bytes:
        encoded = self.encode(value)
        _remember(self, value, encoded)
        return encoded


class _NumberField(_FieldCache[int]):
    """A varint field (seats, counts, small scores)."""

    def encode(self, value: int) -> bytes:
        return self.key + _varint(value)


class _PackedField(_FieldCache[tuple[int, ...]]):
    """A packed repeated varint field (scores, tricks won: the same few tuples over and over)."""

    def encode(self, value: tuple[int, ...]) -> bytes:
        return _delimited(self.key, b"".join([_varint(x) for x in value]))


class _StringField(_FieldCache[str]):
    """A string field (cards, suits, kinds), its length included."""

    def encode(self, value: str) -> bytes:
        return _delimited(self.key, value.encode())


_ENCODERS: dict[int, Callable[[Any], bytes]] = {}


#: Wire kinds of a field: how it is written. arena/protocol/_wire.c has the same numbers.
(
    _W_STRING,  # a string, left out when empty
    _W_STRING_OPTIONAL,  # a string with presence, left out when None
    _W_STRINGS,  # repeated strings
    _W_NUMBER,  # a varint (int, bool), left out when 0
    _W_NUMBER_OPTIONAL,  # a varint with presence, left out when None
    _W_NUMBERS,  # repeated varints, packed as proto3 writes them
    _W_MESSAGE,  # a nested message, left out when None
    _W_MESSAGES,  # repeated nested messages
) = range(8)

#: A wire plan: ``(attribute, wire kind, key, sub-plan or None)`` per field, in order.
WirePlan = tuple[tuple[str, int, bytes, Any], ...]

#: Wire plans, by the identity of the copy plan they are made from (plans live forever).
_WIRE_PLANS: dict[int, WirePlan] = {}


def _wire_plan(plan: _Plan) -> WirePlan:
    """How each field of ``plan`` is written, decided once from its descriptor: what both the
    Python encoder (:func:`_encoder`) and the C one (arena/protocol/_wire.c) follow."""
    made = _WIRE_PLANS.get(id(plan))
    if made is not None:
        return made
    fields = plan.descriptor.fields_by_name
    out: list[tuple[str, int, bytes, Any]] = []
    for name, mode, sub in plan.fields:
        f = fields[name]
        attr = sys.intern(name)
        if mode in (_MESSAGE, _REPEATED_MESSAGE):
            assert sub is not None
            kind = _W_MESSAGE if mode == _MESSAGE else _W_MESSAGES
            out.append((attr, kind, _key(f, _WIRE_LEN), _wire_plan(sub)))
        elif f.type == FieldDescriptor.TYPE_STRING:
            kind = {_SCALAR: _W_STRING, _OPTIONAL: _W_STRING_OPTIONAL}.get(mode, _W_STRINGS)
            out.append((attr, kind, _key(f, _WIRE_LEN), None))
        elif f.type in _VARINT_TYPES:
            if mode == _REPEATED:
                out.append((attr, _W_NUMBERS, _key(f, _WIRE_LEN), None))
            else:
                kind = _W_NUMBER if mode == _SCALAR else _W_NUMBER_OPTIONAL
                out.append((attr, kind, _key(f, _WIRE_VARINT), None))
        else:
            raise ValueError(f"no wire encoding for field {f.full_name} (type {f.type})")
    made = tuple(out)
    _WIRE_PLANS[id(plan)] = made
    return made


def _encoder(plan: _Plan) -> Callable[[Any], bytes]:
    """``encode(obj)``: the wire bytes of the message of the dataclass ``obj`` along ``plan``."""
    return _compiled_encoder(_wire_plan(plan))


def _compiled_encoder(wplan: WirePlan) -> Callable[[Any], bytes]:
    """:func:`_encoder` for a wire plan.

    Compiled to straight-line Python once per message type (as ``dataclasses`` does for
    ``__init__``), so that no loop dispatches on each field's kind at every call (figures in
    docs/performance.md). Items of plain fields (a trick: leader, cards, seats, winner) recur at
    every decision of a deal as the very same immutable objects: their bytes are kept, keyed by
    identity (the item is kept alongside, so an id is never reused while cached).
    """
    encode = _ENCODERS.get(id(wplan))
    if encode is not None:
        return encode
    names = [name for name, _, _, _ in wplan]
    if any(keyword.iskeyword(n) or not n.isidentifier() for n in names):
        raise ValueError(f"observation field names must be Python identifiers: {names}")
    env: dict[str, Any] = {"delimited": _delimited}
    lines = ["def encode(obj):", "    out = []", "    add = out.append"]
    for i, (name, kind, key, sub) in enumerate(wplan):
        lines.append(f"    v = obj.{name}")
        test = "if v is not None" if kind in (_W_STRING_OPTIONAL, _W_NUMBER_OPTIONAL) else "if v"
        if kind == _W_MESSAGE:
            env[f"k{i}"], env[f"enc{i}"] = key, _compiled_encoder(sub)
            lines += ["    if v is not None:", f"        add(delimited(k{i}, enc{i}(v)))"]
        elif kind == _W_MESSAGES:
            env[f"k{i}"], env[f"enc{i}"] = key, _compiled_encoder(sub)
            if all(k not in (_W_MESSAGE, _W_MESSAGES) for _, k, _, _ in sub):
                env[f"item{i}"] = _item_encoder(key, env[f"enc{i}"])
                lines += ["    if v:", f"        out.extend([item{i}(x) for x in v])"]
            else:
                lines += ["    for x in v:", f"        add(delimited(k{i}, enc{i}(x)))"]
        elif kind == _W_STRINGS:
            env[f"s{i}"] = _StringField(key)
            lines += ["    if v:", f"        out.extend([s{i}[x] for x in v])"]
        elif kind in (_W_STRING, _W_STRING_OPTIONAL):
            env[f"s{i}"] = _StringField(key)
            lines += [f"    {test}:", f"        add(s{i}[v])"]
        elif kind == _W_NUMBERS:
            env[f"p{i}"] = _PackedField(key)
            lines += ["    if v:", f"        add(p{i}[tuple(v)])"]
        else:
            env[f"n{i}"] = _NumberField(key)
            lines += [f"    {test}:", f"        add(n{i}[v])"]
    lines.append("    return b''.join(out)")
    exec("\n".join(lines), env)  # source built above from the descriptor's field names
    compiled: Callable[[Any], bytes] = env["encode"]
    _ENCODERS[id(wplan)] = compiled
    return compiled


def _item_encoder(key: bytes, encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """``item(x)``: one element of a repeated message field, key and length included, kept by
    the identity of ``x`` (an immutable engine object)."""
    cache: dict[int, tuple[Any, bytes]] = {}

    def item(x: Any) -> bytes:
        hit = cache.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        made = _delimited(key, encode(x))
        _remember(cache, id(x), (x, made))
        return made

    return item


def _as_dict(obj: Any, plan: _Plan) -> dict[str, Any]:
    """``obj.to_dict()`` computed along the plan, which knows each field's kind, instead of
    ``dataclasses.asdict``'s generic walk and copies (the mirror test guarantees the same result;
    docs/performance.md has the figure)."""
    out: dict[str, Any] = {}
    for name, mode, sub in plan.fields:
        value = getattr(obj, name)
        if mode == _REPEATED:
            out[name] = list(value)
        elif mode == _REPEATED_MESSAGE:
            assert sub is not None
            out[name] = [_as_dict(item, sub) for item in value]
        elif mode == _MESSAGE and value is not None:
            assert sub is not None
            out[name] = _as_dict(value, sub)
        else:
            out[name] = value
    return out


_READERS: dict[int, Callable[[Any], dict[str, Any]]] = {}


def _reader(plan: _Plan) -> Callable[[Any], dict[str, Any]]:
    """``read(msg)``: the dict of the message ``msg`` along ``plan``, as the engine's
    ``to_dict()`` gives it (lists for repeated fields, ``None`` for an absent optional one).

    Compiled to one dict display per message type, like :func:`_encoder`: what a bot does with
    every observation it is sent, so the SDK's cost per decision.
    """
    read = _READERS.get(id(plan))
    if read is not None:
        return read
    env: dict[str, Any] = {}
    items: list[str] = []
    pre: list[str] = []
    for i, (name, mode, sub) in enumerate(plan.fields):
        if mode == _SCALAR:
            items.append(f"{name!r}: msg.{name}")
        elif mode == _REPEATED:
            items.append(f"{name!r}: list(msg.{name})")
        elif mode == _REPEATED_MESSAGE:
            assert sub is not None
            env[f"read{i}"] = _reader(sub)
            items.append(f"{name!r}: [read{i}(m) for m in msg.{name}]")
        elif mode == _OPTIONAL:
            pre.append(f"    v{i} = msg.{name} if msg.HasField({name!r}) else None")
            items.append(f"{name!r}: v{i}")
        else:
            assert sub is not None
            env[f"read{i}"] = _reader(sub)
            pre.append(f"    v{i} = read{i}(msg.{name}) if msg.HasField({name!r}) else None")
            items.append(f"{name!r}: v{i}")
    source = "def read(msg):\n" + "".join(line + "\n" for line in pre)
    source += "    return {" + ", ".join(items) + "}"
    exec(source, env)  # built above from the descriptor's field names (checked identifiers)
    compiled: Callable[[Any], dict[str, Any]] = env["read"]
    _READERS[id(plan)] = compiled
    return compiled


_OBSERVATION_ONEOF = pb.Observation.DESCRIPTOR.oneofs_by_name["game"]


def typed_observation_games() -> tuple[str, ...]:
    """Game ids that have a typed observation message in the protocol."""
    return tuple(f.name for f in _OBSERVATION_ONEOF.fields)


def observation_descriptor(game: str) -> Descriptor | None:
    """The typed observation message's descriptor for ``game``, or ``None``."""
    f = pb.Observation.DESCRIPTOR.fields_by_name.get(game)
    if f is None or f.containing_oneof is not _OBSERVATION_ONEOF:
        return None
    return f.message_type


#: Per game id: the typed observation's copy plan, or ``None`` when the game has no typed
#: message (looked up once: a decision is the server's hottest path).
_OBSERVATION_PLANS: dict[str, _Plan | None] = {}


def _observation_plan(game: str) -> _Plan | None:
    try:
        return _OBSERVATION_PLANS[game]
    except KeyError:
        descriptor = observation_descriptor(game)
        plan = None if descriptor is None else _plan(descriptor)
        _OBSERVATION_PLANS[game] = plan
        return plan


#: Compact JSON; one encoder for the process, because ``json.dumps`` with options builds a new
#: one per call, for every Event message (docs/performance.md has what that cost).
_encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
# ``JSONEncoder.encode`` still makes its C encoder anew at every call, work repeated for every
# event however few its fields (docs/performance.md). Made once here, with the options above
# (engine data is acyclic, hence no circular check); where the C accelerator is missing the
# encoder above serves.
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_c_json: Any = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(
        None,
        json.JSONEncoder().default,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        False,
        False,
        True,
    )
)


def _dumps(data: Any) -> str:
    if _c_json is None or isinstance(data, str):
        return _encode_json(data)
    return "".join(_c_json(data, 0))


def observation_message(
    game: str, obs: Observation, *, text: bool = True, json: bool = True
) -> pb.Observation:
    """The protocol Observation: typed per-game message, JSON, and rendered text.

    ``text=False`` / ``json=False`` (a bot's Hello ``omit_text`` / ``omit_json``) leave that
    rendering empty without computing it. A game with no typed message always gets its JSON: it
    is then the only machine-readable form.
    """
    return pb.Observation.FromString(observation_bytes(game, obs, text=text, json=json))


_OBSERVATION_FIELDS = pb.Observation.DESCRIPTOR.fields_by_name
_OBSERVATION_TEXT_KEY = _key(_OBSERVATION_FIELDS["text"], _WIRE_LEN)
_OBSERVATION_JSON_KEY = _key(_OBSERVATION_FIELDS["json"], _WIRE_LEN)
#: Per game id: the key of its typed observation (a field of the ``game`` oneof).
_GAME_KEYS: dict[str, bytes] = {f.name: _key(f, _WIRE_LEN) for f in _OBSERVATION_ONEOF.fields}


def observation_bytes(
    game: str, obs: Observation, *, text: bool = True, json: bool = True
) -> bytes:
    """:func:`observation_message`, as wire bytes."""
    plan = _observation_plan(game)
    if plan is None:
        data = _dumps(obs.to_dict())
        head = _observation_head(obs, None, text=text, json=False)
        return head + _delimited(_OBSERVATION_JSON_KEY, data.encode())
    head = _observation_head(obs, plan, text=text, json=json) if text or json else b""
    accel = _ACCEL
    typed = _encoder(plan)(obs) if accel is None else accel.encode(obs, _wire_plan(plan))
    return head + _delimited(_GAME_KEYS[game], typed)


def _observation_head(obs: Observation, plan: _Plan | None, *, text: bool, json: bool) -> bytes:
    """The observation's rendered text and JSON fields, each when asked for: what precedes its
    typed message."""
    out = b""
    if text:
        rendered = obs.render()
        if rendered:
            out = _delimited(_OBSERVATION_TEXT_KEY, rendered.encode())
    if json and plan is not None:
        out += _delimited(_OBSERVATION_JSON_KEY, _dumps(_as_dict(obs, plan)).encode())
    return out


# --- the C encoder ----------------------------------------------------------------------------
#
# arena/protocol/_wire.c writes the same bytes as the Python encoders above
# (tests/arena/protocol/test_wire.py compares them on every game), without the interpreter. That
# matters live more than in a warm loop: the server's loop thread wakes cold after every round
# trip, and cold caches hurt interpreted code most, so the C encoder shortens the referee's path
# from an answer to the next request (docs/performance.md has the figures, under "The C module").
# The Python encoders stay, for a machine without a C compiler and as the C one's reference.

#: The C encoder in use, or ``None`` (not built, or ``ARENA_PURE_PYTHON=1`` in the environment).
_ACCEL: ModuleType | None = None if os.environ.get("ARENA_PURE_PYTHON") == "1" else _built_wire


def accelerated() -> bool:
    """Whether observations and decision requests are encoded in C."""
    return _ACCEL is not None


def encoder_name() -> str:
    """Which encoder writes the requests, in words (for logs and benchmark reports)."""
    if _ACCEL is not None:
        return "C (arena/protocol/_wire.c)"
    if _built_wire is not None:
        return "Python (ARENA_PURE_PYTHON=1)"
    return "Python (arena/protocol/_wire.c is not built: no C compiler at install)"


def observation_dict(msg: pb.Observation) -> tuple[str, dict[str, Any]]:
    """The game id and the observation as the engine's ``to_dict()`` would give it.

    Read from the typed message when there is one, else from the JSON (a game newer than this
    copy of the protocol).
    """
    game = msg.WhichOneof("game")
    if game is None:
        data = json.loads(msg.json) if msg.json else {}
        return "", data if isinstance(data, dict) else {}
    typed = getattr(msg, game)
    return game, _reader(_plan(typed.DESCRIPTOR))(typed)


# --------------------------------------------------------------------------------------------
# Bot -> server


def read_bot_bytes(data: bytes) -> BotMessage:
    """Decode what a bot sent, from its wire bytes (as the server reads them).

    The usual message, an Action with an index, is read in C when the C module is built, without
    building a protobuf message to read it (the server reads every answer cold; figures in
    docs/performance.md, under "The C module"). Anything else goes through protobuf. Bytes that
    are no BotMessage are :class:`Garbage`, which the bot is told about.
    """
    accel = _ACCEL
    if accel is not None:
        answer = accel.answer(data)
        if answer is not None:
            return Answer(answer[0], answer[1])
    try:
        msg = pb.BotMessage.FromString(data)
    except DecodeError:
        return Garbage("undecodable message: its bytes are not a BotMessage")
    return read_bot_message(msg)


def read_bot_message(msg: pb.BotMessage) -> BotMessage:
    """Decode what a bot sent."""
    kind = msg.WhichOneof("kind")
    if kind == "action":
        a = msg.action
        choice = a.WhichOneof("choice")
        if choice == "index":
            return Answer(a.request_id, index=a.index)
        if choice == "text":
            return Answer(a.request_id, text=a.text)
        return Answer(a.request_id)
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


def hello_message(hello: Hello) -> pb.BotMessage:
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


def answer_message(
    request_id: int, index: int | None = None, text: str | None = None
) -> pb.BotMessage:
    """Encode an answer (bot side): by index (preferred) or by text."""
    if index is not None:
        return pb.BotMessage(action=pb.Action(request_id=request_id, index=index))
    if text is not None:
        return pb.BotMessage(action=pb.Action(request_id=request_id, text=text))
    return pb.BotMessage(action=pb.Action(request_id=request_id))


def ping_message(nonce: int) -> pb.BotMessage:
    """Encode a Ping (bot side)."""
    return pb.BotMessage(ping=pb.Ping(nonce=nonce))


# --------------------------------------------------------------------------------------------
# Server -> bot: encoding (server side)


def option_text(value: OptionValue) -> str:
    """An option value as protocol text: ``true``/``false`` for booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _player(p: PlayerInfo) -> pb.Player:
    return pb.Player(
        seat=p.seat, seat_name=p.seat_name, bot_name=p.bot_name, bot_version=p.bot_version
    )


def _result(result: Result) -> pb.MatchResult:
    return pb.MatchResult(
        scores=list(result.scores),
        ranks=list(result.ranks),
        summary=result.summary,
        reason=result.reason,
        forfeited_by=-1 if result.forfeited_by is None else result.forfeited_by,
    )


_ERROR_CODES: Final = {
    "illegal_action": pb.ERROR_CODE_ILLEGAL_ACTION,
    "timeout": pb.ERROR_CODE_TIMEOUT,
    "protocol": pb.ERROR_CODE_PROTOCOL,
    "unknown_request": pb.ERROR_CODE_UNKNOWN_REQUEST,
    "flood": pb.ERROR_CODE_FLOOD,
    "disconnected": pb.ERROR_CODE_DISCONNECTED,
    "wrong_seat": pb.ERROR_CODE_WRONG_SEAT,
}
_ERROR_NAMES: Final = {v: k for k, v in _ERROR_CODES.items()}


def server_message(value: ServerMessage) -> pb.ServerMessage:
    """Encode any server message but a decision (see :func:`decision_bytes`)."""
    if isinstance(value, EventInfo):
        return pb.ServerMessage(
            event=pb.Event(
                match_id=value.match_id,
                seq=value.seq,
                kind=value.kind,
                json=_dumps(value.data),
                private=value.private,
            )
        )
    if isinstance(value, ErrorInfo):
        return pb.ServerMessage(
            error=pb.Error(
                code=_ERROR_CODES.get(value.code, pb.ERROR_CODE_UNSPECIFIED),
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
                players=[_player(p) for p in value.players],
                time_control=pb.TimeControl(
                    move_ms=value.time_control.move_ms, bank_ms=value.time_control.bank_ms
                ),
                fault_policy=value.fault_policy,
                bot_seed=value.bot_seed,
            )
        )
    if isinstance(value, MatchEnd):
        return pb.ServerMessage(match_end=match_end_message(value))
    if isinstance(value, Welcome):
        return pb.ServerMessage(
            welcome=pb.Welcome(
                server_version=value.server_version,
                protocol_version=value.protocol_version,
                session_id=value.session_id,
            )
        )
    if isinstance(value, Rejected):
        return pb.ServerMessage(rejected=pb.Rejected(reason=value.reason))
    if isinstance(value, Pong):
        return pb.ServerMessage(pong=pb.Pong(nonce=value.nonce))
    raise TypeError(f"use decision_bytes() for {type(value).__name__}")


def match_end_message(value: MatchEnd) -> pb.MatchEnd:
    """The MatchEnd message body."""
    return pb.MatchEnd(
        match_id=value.match_id,
        result=_result(value.result),
        reason=value.result.reason,
        faults=[pb.Fault(seat=f.seat, kind=f.kind, detail=f.detail) for f in value.faults],
    )


def event_info(match_id: str, seq: int, event: Event) -> EventInfo:
    """The plain form of an engine event for the wire."""
    return EventInfo(match_id, seq, event.kind, dict(event.data), event.to is not None)


_EVENT_FIELDS = pb.Event.DESCRIPTOR.fields_by_name
_EVENT_MATCH_ID = _StringField(_key(_EVENT_FIELDS["match_id"], _WIRE_LEN))
_EVENT_SEQ_KEY = _key(_EVENT_FIELDS["seq"], _WIRE_VARINT)
_EVENT_KIND = _StringField(_key(_EVENT_FIELDS["kind"], _WIRE_LEN))
_EVENT_JSON_KEY = _key(_EVENT_FIELDS["json"], _WIRE_LEN)
_EVENT_PRIVATE = _key(_EVENT_FIELDS["private"], _WIRE_VARINT) + _varint(1)
_SERVER_FIELDS = pb.ServerMessage.DESCRIPTOR.fields_by_name
_EVENT_KEY = _key(_SERVER_FIELDS["event"], _WIRE_LEN)
_DECISION_KEY = _key(_SERVER_FIELDS["decision"], _WIRE_LEN)


#: ``id(event)`` → ``(event, its kind, JSON and privacy as bytes)``: games intern recurring
#: events (whist's card plays), and each is encoded once while cached.
_EVENT_TAILS: dict[int, tuple[Event, bytes]] = {}


def event_body(match_id: str, seq: int, event: Event) -> bytes:
    """The wire bytes of the Event message for an engine event: made once per event, then sent
    alone (:func:`event_bytes`) or inside DecisionRequests (:func:`decision_bytes`)."""
    hit = _EVENT_TAILS.get(id(event))
    if hit is not None and hit[0] is event:
        tail = hit[1]
    else:
        tail = _EVENT_KIND[event.kind] + _delimited(_EVENT_JSON_KEY, _dumps(event.data).encode())
        if event.to is not None:
            tail += _EVENT_PRIVATE
        _remember(_EVENT_TAILS, id(event), (event, tail))
    if seq:
        return _EVENT_MATCH_ID[match_id] + _EVENT_SEQ_KEY + _varint(seq) + tail
    return _EVENT_MATCH_ID[match_id] + tail


def event_bytes(body: bytes) -> bytes:
    """The ServerMessage carrying the Event ``body`` (:func:`event_body`), as wire bytes."""
    return _delimited(_EVENT_KEY, body)


def event_message(match_id: str, seq: int, event: Event) -> pb.ServerMessage:
    """``server_message(event_info(match_id, seq, event))``, by the referee's own encoding."""
    return server_message_of(event_bytes(event_body(match_id, seq, event)))


_DECISION_FIELDS = pb.DecisionRequest.DESCRIPTOR.fields_by_name
_REQUEST_ID_KEY = _key(_DECISION_FIELDS["request_id"], _WIRE_VARINT)
_MATCH_ID = _StringField(_key(_DECISION_FIELDS["match_id"], _WIRE_LEN))
_SEAT_KEY = _key(_DECISION_FIELDS["seat"], _WIRE_VARINT)
_OBSERVATION_KEY = _key(_DECISION_FIELDS["observation"], _WIRE_LEN)
_LEGAL_KEY = _key(_DECISION_FIELDS["legal_actions"], _WIRE_LEN)
_DEADLINE = _NumberField(_key(_DECISION_FIELDS["deadline_ms"], _WIRE_VARINT))
_BANK = _NumberField(_key(_DECISION_FIELDS["bank_ms"], _WIRE_VARINT))
_EVENTS_KEY = _key(_DECISION_FIELDS["events"], _WIRE_LEN)
_LEGAL_FIELDS = pb.LegalAction.DESCRIPTOR.fields_by_name
_LEGAL_INDEX_KEY = _key(_LEGAL_FIELDS["index"], _WIRE_VARINT)
_LEGAL_TEXT = _StringField(_key(_LEGAL_FIELDS["text"], _WIRE_LEN))
_LEGAL_KIND = _StringField(_key(_LEGAL_FIELDS["kind"], _WIRE_LEN))
_LEGAL_ARG = _StringField(_key(_LEGAL_FIELDS["arg"], _WIRE_LEN))
#: ``(index, action text)`` → the LegalAction's bytes, key and length included.
_LEGAL_ITEMS: dict[tuple[int, str], bytes] = {}


def _legal_item(index: int, action: Action) -> bytes:
    # Keyed by the text (a str caches its hash), not the Action (a dataclass hashes in Python).
    made = _LEGAL_ITEMS.get((index, action.text))
    if made is None:
        body = _LEGAL_INDEX_KEY + _varint(index) if index else b""
        body += _LEGAL_TEXT[action.text] if action.text else b""
        body += _LEGAL_KIND[action.kind] if action.kind else b""
        body += _LEGAL_ARG[action.arg] if action.arg else b""
        made = _delimited(_LEGAL_KEY, body)
        _remember(_LEGAL_ITEMS, (index, action.text), made)
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
        _remember(_LEGAL_LISTS, id(legal), (legal, made))
    return made


def decision_bytes(
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

    For a bot whose Hello set ``batch_events``, ``events`` are the bodies (:func:`event_body`)
    of the events held back for it, oldest first; they ride in the request. ``text`` / ``json``
    are ``False`` for a bot that set ``omit_text`` / ``omit_json``.
    """
    accel = _ACCEL
    plan = _observation_plan(game)
    if accel is not None and plan is not None:
        return accel.decision(  # type: ignore[no-any-return]  # arena/protocol/_wire.pyi: bytes
            request_id,
            _MATCH_ID[match_id],
            seat,
            _observation_head(observation, plan, text=text, json=json) if text or json else b"",
            observation,
            _wire_plan(plan),
            _GAME_KEYS[game],
            _legal_bytes(legal),
            _DEADLINE[deadline_ms] if deadline_ms else b"",
            bank_ms,
            events,
        )
    # In Python: the C encoder's reference, and its stand-in where it is not built.
    out = [_REQUEST_ID_KEY + _varint(request_id), _MATCH_ID[match_id]]
    if seat:
        out.append(_SEAT_KEY + _varint(seat))
    out.append(
        _delimited(_OBSERVATION_KEY, observation_bytes(game, observation, text=text, json=json))
    )
    out.append(_legal_bytes(legal))
    if deadline_ms:
        out.append(_DEADLINE[deadline_ms])
    if bank_ms:
        out.append(_BANK[bank_ms])
    if events:
        out += [_delimited(_EVENTS_KEY, e) for e in events]
    return _delimited(_DECISION_KEY, b"".join(out))


if _built_wire is not None:
    _built_wire.set_keys(
        _DECISION_KEY, _REQUEST_ID_KEY, _SEAT_KEY, _OBSERVATION_KEY, _BANK.key, _EVENTS_KEY
    )


def server_message_of(data: bytes) -> pb.ServerMessage:
    """A message this module encoded as bytes (:func:`decision_bytes`, :func:`event_bytes`), as
    a message object: for tools and tests that handle messages."""
    return pb.ServerMessage.FromString(data)


def wire(msg: pb.ServerMessage | bytes) -> bytes:
    """What the server writes for a message it sends: messages already encoded pass as they
    are (the gRPC serializer of the server's streams)."""
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


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


def _read_result(msg: pb.MatchResult) -> Result:
    return Result(
        scores=tuple(msg.scores),
        ranks=tuple(msg.ranks),
        reason=msg.reason or "normal",
        forfeited_by=None if msg.forfeited_by < 0 or msg.reason != "forfeit" else msg.forfeited_by,
        summary=msg.summary,
    )


def _read_event(e: pb.Event) -> EventInfo:
    return EventInfo(e.match_id, e.seq, e.kind, json.loads(e.json) if e.json else {}, e.private)


def _read_player(p: pb.Player) -> PlayerInfo:
    return PlayerInfo(p.seat, p.seat_name, p.bot_name, p.bot_version)


def read_server_message(msg: pb.ServerMessage, *, events: bool = True) -> ServerMessage | None:
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
            tuple(_read_event(e) for e in d.events) if events and d.events else (),
        )
    if kind == "event":
        return _read_event(msg.event)
    if kind == "match_start":
        s = msg.match_start
        return MatchStart(
            match_id=s.match_id,
            game=s.game,
            game_version=s.game_version,
            options=dict(s.options),
            seats=tuple(s.seats),
            players=tuple(_read_player(p) for p in s.players),
            time_control=TimeControl(s.time_control.move_ms, s.time_control.bank_ms),
            fault_policy=s.fault_policy,
            bot_seed=s.bot_seed,
        )
    if kind == "match_end":
        return read_match_end(msg.match_end)
    if kind == "error":
        r = msg.error
        return ErrorInfo(
            _ERROR_NAMES.get(r.code, "unspecified"),
            r.message,
            r.strikes,
            r.match_id,
            r.request_id,
            r.fault,
            r.seat,
        )
    if kind == "welcome":
        w = msg.welcome
        return Welcome(w.server_version, w.session_id, w.protocol_version)
    if kind == "rejected":
        return Rejected(msg.rejected.reason)
    if kind == "pong":
        return Pong(msg.pong.nonce)
    return None


def read_match_end(m: pb.MatchEnd) -> MatchEnd:
    """Decode a MatchEnd body."""
    faults = tuple(FaultInfo(f.seat, f.kind, f.detail) for f in m.faults)
    return MatchEnd(m.match_id, _read_result(m.result), faults)


# --------------------------------------------------------------------------------------------
# Spectator service


def list_matches_request(running_only: bool = False) -> pb.ListMatchesRequest:
    """Encode a ListMatches request (client side)."""
    return pb.ListMatchesRequest(running_only=running_only)


def read_list_matches_request(msg: pb.ListMatchesRequest) -> bool:
    """Whether only running matches are asked for."""
    return msg.running_only


def list_matches_response(matches: Iterable[MatchSummary]) -> pb.ListMatchesResponse:
    """Encode the match list."""
    out = pb.ListMatchesResponse()
    for m in matches:
        item = out.matches.add(match_id=m.match_id, game=m.game, status=m.status)
        item.players.extend(_player(p) for p in m.players)
        if m.result is not None:
            item.result.CopyFrom(_result(m.result))
    return out


def read_list_matches_response(msg: pb.ListMatchesResponse) -> list[MatchSummary]:
    """Decode the match list (client side)."""
    return [
        MatchSummary(
            m.match_id,
            m.game,
            tuple(_read_player(p) for p in m.players),
            m.status,
            _read_result(m.result) if m.HasField("result") else None,
        )
        for m in msg.matches
    ]


def watch_request(match_id: str) -> pb.WatchMatchRequest:
    """Encode a WatchMatch request (client side)."""
    return pb.WatchMatchRequest(match_id=match_id)


def read_watch_request(msg: pb.WatchMatchRequest) -> str:
    """The match a spectator wants to watch."""
    return msg.match_id


def standings_request(game: str = "") -> pb.StandingsRequest:
    """Encode a Standings request (client side)."""
    return pb.StandingsRequest(game=game)


def read_standings_request(msg: pb.StandingsRequest) -> str:
    """The game asked for, or ``""`` for all."""
    return msg.game


def standings_response(rows: Iterable[Standing]) -> pb.StandingsResponse:
    """Encode standings."""
    return pb.StandingsResponse(
        standings=[
            pb.Standing(
                bot_name=r.bot_name,
                game=r.game,
                matches=r.matches,
                wins=r.wins,
                mean_score=r.mean_score,
                faults=r.faults,
            )
            for r in rows
        ]
    )


def read_standings_response(msg: pb.StandingsResponse) -> list[Standing]:
    """Decode standings (client side)."""
    return [
        Standing(r.bot_name, r.game, r.matches, r.wins, r.mean_score, r.faults)
        for r in msg.standings
    ]
