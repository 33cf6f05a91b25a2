"""Observations on the wire: a game's typed message (``WhistObservation``) mirrors its engine
dataclass field by field, nested dataclasses becoming nested messages, and the translation walks
the message descriptor. A field is named as the engine names it, but for those in
:data:`ENGINE_NAMES`. Both directions: the referee writes an observation's bytes (in Python,
or in C along the same wire plan), and the SDK reads a message back into exactly the dict of the
engine's ``Observation.to_dict()``, so strategies see the same data in-process and over the
wire. ``tests/arena/protocol/test_codec.py`` checks the mirror for every game.
"""

from __future__ import annotations

import keyword
import sys
from collections.abc import Callable
from typing import Any

from cardarena._pb import arena_pb2 as pb
from cardarena.observations import (
    MESSAGE,
    OPTIONAL,
    REPEATED,
    REPEATED_MESSAGE,
    SCALAR,
    Plan,
    plan_of,
)
from google.protobuf.descriptor import Descriptor, FieldDescriptor

import arena.protocol.wireformat as wireformat
from arena.protocol.wireformat import (
    VARINT_TYPES,
    WIRE_LEN,
    WIRE_VARINT,
    NumberField,
    PackedField,
    StringField,
    delimited,
    field_key,
    remember,
)
from engine import Observation

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


def wire_plan(plan: Plan) -> WirePlan:
    """How each field of ``plan`` is written, decided once from its descriptor: what both the
    Python encoder (:func:`encoder`) and the C one (arena/protocol/_wire.c) follow."""
    made = _WIRE_PLANS.get(id(plan))
    if made is not None:
        return made
    fields = plan.descriptor.fields_by_name
    out: list[tuple[str, int, bytes, Any]] = []
    for name, engine_attr, mode, sub in plan.fields:
        f = fields[name]
        attr = sys.intern(engine_attr)
        if mode in (MESSAGE, REPEATED_MESSAGE):
            assert sub is not None
            kind = _W_MESSAGE if mode == MESSAGE else _W_MESSAGES
            out.append((attr, kind, field_key(f, WIRE_LEN), wire_plan(sub)))
        elif f.type == FieldDescriptor.TYPE_STRING:
            kind = {SCALAR: _W_STRING, OPTIONAL: _W_STRING_OPTIONAL}.get(mode, _W_STRINGS)
            out.append((attr, kind, field_key(f, WIRE_LEN), None))
        elif f.type in VARINT_TYPES:
            if mode == REPEATED:
                out.append((attr, _W_NUMBERS, field_key(f, WIRE_LEN), None))
            else:
                kind = _W_NUMBER if mode == SCALAR else _W_NUMBER_OPTIONAL
                out.append((attr, kind, field_key(f, WIRE_VARINT), None))
        else:
            raise ValueError(f"no wire encoding for field {f.full_name} (type {f.type})")
    made = tuple(out)
    _WIRE_PLANS[id(plan)] = made
    return made


def encoder(plan: Plan) -> Callable[[Any], bytes]:
    """``encode(obj)``: the wire bytes of the message of the dataclass ``obj`` along ``plan``."""
    return compiled_encoder(wire_plan(plan))


def compiled_encoder(wplan: WirePlan) -> Callable[[Any], bytes]:
    """:func:`encoder` for a wire plan.

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
    env: dict[str, Any] = {"delimited": delimited}
    lines = ["def encode(obj):", "    out = []", "    add = out.append"]
    for i, (name, kind, key, sub) in enumerate(wplan):
        lines.append(f"    v = obj.{name}")
        test = "if v is not None" if kind in (_W_STRING_OPTIONAL, _W_NUMBER_OPTIONAL) else "if v"
        if kind == _W_MESSAGE:
            env[f"k{i}"], env[f"enc{i}"] = key, compiled_encoder(sub)
            lines += ["    if v is not None:", f"        add(delimited(k{i}, enc{i}(v)))"]
        elif kind == _W_MESSAGES:
            env[f"k{i}"], env[f"enc{i}"] = key, compiled_encoder(sub)
            if all(k not in (_W_MESSAGE, _W_MESSAGES) for _, k, _, _ in sub):
                env[f"item{i}"] = item_encoder(key, env[f"enc{i}"])
                lines += ["    if v:", f"        out.extend([item{i}(x) for x in v])"]
            else:
                lines += ["    for x in v:", f"        add(delimited(k{i}, enc{i}(x)))"]
        elif kind == _W_STRINGS:
            env[f"s{i}"] = StringField(key)
            lines += ["    if v:", f"        out.extend([s{i}[x] for x in v])"]
        elif kind in (_W_STRING, _W_STRING_OPTIONAL):
            env[f"s{i}"] = StringField(key)
            lines += [f"    {test}:", f"        add(s{i}[v])"]
        elif kind == _W_NUMBERS:
            env[f"p{i}"] = PackedField(key)
            lines += ["    if v:", f"        add(p{i}[tuple(v)])"]
        else:
            env[f"n{i}"] = NumberField(key)
            lines += [f"    {test}:", f"        add(n{i}[v])"]
    lines.append("    return b''.join(out)")
    exec("\n".join(lines), env)  # source built above from the descriptor's field names
    compiled: Callable[[Any], bytes] = env["encode"]
    _ENCODERS[id(wplan)] = compiled
    return compiled


def item_encoder(key: bytes, encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """``item(x)``: one element of a repeated message field, key and length included, kept by
    the identity of ``x`` (an immutable engine object)."""
    cache: dict[int, tuple[Any, bytes]] = {}

    def item(x: Any) -> bytes:
        hit = cache.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        made = delimited(key, encode(x))
        remember(cache, id(x), (x, made))
        return made

    return item


def as_dict(obj: Any, plan: Plan) -> dict[str, Any]:
    """The JSON object of ``obj`` (``Observation.json``): ``obj.to_dict()`` under the message's
    field names, computed along the plan, which knows each field's kind, instead of
    ``dataclasses.asdict``'s generic walk and copies (the mirror test guarantees the same values;
    docs/performance.md has the figure)."""
    out: dict[str, Any] = {}
    for name, attr, mode, sub in plan.fields:
        value = getattr(obj, attr)
        if mode == REPEATED:
            out[name] = list(value)
        elif mode == REPEATED_MESSAGE:
            assert sub is not None
            out[name] = [as_dict(item, sub) for item in value]
        elif mode == MESSAGE and value is not None:
            assert sub is not None
            out[name] = as_dict(value, sub)
        else:
            out[name] = value
    return out


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
_OBSERVATION_PLANS: dict[str, Plan | None] = {}


def observation_plan(game: str) -> Plan | None:
    try:
        return _OBSERVATION_PLANS[game]
    except KeyError:
        descriptor = observation_descriptor(game)
        plan = None if descriptor is None else plan_of(descriptor)
        _OBSERVATION_PLANS[game] = plan
        return plan


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
_OBSERVATION_TEXT_KEY = field_key(_OBSERVATION_FIELDS["text"], WIRE_LEN)
_OBSERVATION_JSON_KEY = field_key(_OBSERVATION_FIELDS["json"], WIRE_LEN)
#: Per game id: the key of its typed observation (a field of the ``game`` oneof).
GAME_KEYS: dict[str, bytes] = {f.name: field_key(f, WIRE_LEN) for f in _OBSERVATION_ONEOF.fields}


def observation_bytes(
    game: str, obs: Observation, *, text: bool = True, json: bool = True
) -> bytes:
    """:func:`observation_message`, as wire bytes."""
    plan = observation_plan(game)
    if plan is None:
        data = wireformat.dumps(obs.to_dict())
        head = observation_head(obs, None, text=text, json=False)
        return head + delimited(_OBSERVATION_JSON_KEY, data.encode())
    head = observation_head(obs, plan, text=text, json=json) if text or json else b""
    accel = wireformat.ACCEL
    typed = encoder(plan)(obs) if accel is None else accel.encode(obs, wire_plan(plan))
    return head + delimited(GAME_KEYS[game], typed)


def observation_head(obs: Observation, plan: Plan | None, *, text: bool, json: bool) -> bytes:
    """The observation's rendered text and JSON fields, each when asked for: what precedes its
    typed message."""
    out = b""
    if text:
        rendered = obs.render()
        if rendered:
            out = delimited(_OBSERVATION_TEXT_KEY, rendered.encode())
    if json and plan is not None:
        out += delimited(_OBSERVATION_JSON_KEY, wireformat.dumps(as_dict(obs, plan)).encode())
    return out
