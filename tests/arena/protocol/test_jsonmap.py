"""arena.protocol.jsonmap gives exactly ``json_format.MessageToDict``'s dict: on every message
type of the protocol (every field filled, each oneof member in turn, zeros where a field has
presence, unknown enum numbers, doubles that JSON cannot spell), and on the decisions of every
game as the referee encodes them; the stdio lines written from it are the same bytes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from cardarena import rpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from arena.protocol import codec
from arena.protocol.jsonmap import message_to_dict
from arena.server.stdio import encode_line
from engine import game_ids, get_game

F = FieldDescriptor


def same(msg: Message) -> None:
    fast, slow = message_to_dict(msg), json_format.MessageToDict(msg)
    # Text compared, not dicts: NaN is never equal to itself, and 1 == True == 1.0.
    assert json.dumps(fast) == json.dumps(slow), msg.DESCRIPTOR.full_name
    assert repr(fast) == repr(slow)


def reachable(*roots: Descriptor) -> list[Descriptor]:
    seen: dict[str, Descriptor] = {}
    todo = list(roots)
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen[d.full_name] = d
        todo.extend(f.message_type for f in d.fields if f.message_type is not None)
    return list(seen.values())


TYPES = reachable(rpc.ServerMessage.DESCRIPTOR, rpc.BotMessage.DESCRIPTOR)


def value(field: FieldDescriptor, i: int, depth: int) -> Any:
    kind = field.type
    if kind == F.TYPE_MESSAGE:
        return None  # filled in place
    if kind == F.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        return numbers[(i + 1) % len(numbers)] if i % 3 < 2 else 99  # 99: an unknown number
    if kind == F.TYPE_BOOL:
        return i % 2 == 0
    if kind == F.TYPE_STRING:
        return ['é\u2028"\\x</', "plain", ""][i % 3]
    if kind == F.TYPE_DOUBLE:
        return [1.5, float("inf"), float("-inf"), float("nan"), -0.0, 1e300, 0.1][i % 7]
    if kind in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return [2**64 - 1, 3, 0][i % 3]
    if kind in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return [-(2**63), 2**53 + 1, 0][i % 3]
    if kind in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return [2**32 - 1, 7, 0][i % 3]
    return [-(2**31), 2**31 - 1, 0][i % 3]


def fill(
    msg: Message, depth: int, zeros: bool = False, k: int = 0, skip_oneofs: bool = True
) -> None:
    """Every field of ``msg`` set (the oneofs' members left to the caller), messages to
    ``depth``, each from :func:`value`'s list shifted by ``k``; ``zeros``: fields with presence
    set to their zero value instead."""
    for field in msg.DESCRIPTOR.fields:
        if skip_oneofs and field.containing_oneof is not None:
            continue
        sub = field.message_type
        if sub is not None and sub.GetOptions().map_entry:
            target = getattr(msg, field.name)
            key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
            for i in range(3):
                key = value(key_field, i + k, depth)
                if value_field.message_type is not None:
                    if depth > 0:
                        fill(target[key], depth - 1, k=k)
                else:
                    target[key] = value(value_field, i + k, depth)
        elif field.is_repeated:
            target = getattr(msg, field.name)
            for i in range(3 if sub is None else 2):
                if sub is None:
                    target.append(value(field, i + k, depth))
                elif depth > 0:
                    fill(target.add(), depth - 1, k=k + i)
        elif sub is not None:
            if depth > 0:
                fill(getattr(msg, field.name), depth - 1, k=k)
        elif zeros and field.has_presence:
            setattr(msg, field.name, type(value(field, 0, depth))())
        else:
            setattr(msg, field.name, value(field, k, depth))


def variants(descriptor: Descriptor) -> Iterator[Message]:
    cls = message_factory.GetMessageClass(descriptor)
    yield cls()
    # Seven shifts: each scalar field takes each value of its list once.
    for zeros, k in [(True, 0)] + [(False, k) for k in range(7)]:
        base = cls()
        fill(base, 3, zeros=zeros, k=k)
        yield base
        for oneof in descriptor.oneofs:
            for member in oneof.fields:
                msg = cls()
                msg.CopyFrom(base)
                if member.message_type is not None:
                    fill(getattr(msg, member.name), 3, k=k)
                    getattr(msg, member.name).SetInParent()
                else:
                    setattr(msg, member.name, value(member, k, 3))
                yield msg


@pytest.mark.parametrize("descriptor", TYPES, ids=[d.full_name for d in TYPES])
def test_every_message_type_maps_as_json_format_maps_it(descriptor: Descriptor) -> None:
    count = 0
    for msg in variants(descriptor):
        same(msg)
        count += 1
    assert count >= 3


def test_every_field_kind_of_the_protocol_is_covered() -> None:
    kinds = {f.type for d in TYPES for f in d.fields}
    assert {F.TYPE_DOUBLE, F.TYPE_ENUM, F.TYPE_UINT64, F.TYPE_MESSAGE, F.TYPE_STRING} <= kinds


def test_a_type_it_does_not_plan_goes_to_json_format_whole() -> None:
    from google.protobuf import timestamp_pb2, wrappers_pb2

    stamp = timestamp_pb2.Timestamp(seconds=5, nanos=1000)
    assert message_to_dict(wrappers_pb2.Int64Value(value=3)) == json_format.MessageToDict(
        wrappers_pb2.Int64Value(value=3)
    )
    assert message_to_dict(stamp) == json_format.MessageToDict(stamp)  # a string, not a dict


def reference_line(data: bytes) -> bytes:
    """What the stdio link wrote before the plan: json_format all the way."""
    body = json_format.MessageToDict(rpc.ServerMessage.FromString(data))
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize("game_id", sorted(game_ids()))
def test_every_decision_of_every_game_is_the_same_line(game_id: str) -> None:
    game = get_game(game_id)
    checked = 0
    for seed in (1, 2):
        state = game.new_match(game.configure(), seed)
        rng = random.Random(seed)
        told = 0
        while (seat := state.to_move) is not None and checked < 400:
            bodies = [
                codec.event_to_body("m", n, e)
                for n, e in enumerate(state.events[told:], start=told)
                if e.to is None or seat in e.to
            ]
            told = len(state.events)
            for text, as_json in ((False, False), (True, True)):
                data = codec.decision_to_bytes(
                    checked,
                    "m",
                    seat,
                    game_id,
                    state.observation(seat),
                    state.legal_actions(),
                    900,
                    50,
                    events=bodies,
                    text=text,
                    json=as_json,
                )
                assert encode_line(data) == reference_line(data)
                checked += 1
            state.apply(rng.choice(state.legal_actions()))
    assert checked > 20


def _dynamic() -> tuple[type[Message], type[Message]]:
    """Two proto3 types the protocol does not have: maps keyed by bool and numbers, and the
    field kinds left to json_format (bytes, float)."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    proto = descriptor_pb2.FileDescriptorProto(
        name="jsonmap_test.proto", package="jsonmaptest", syntax="proto3"
    )
    inner = proto.message_type.add(name="Inner")
    inner.field.add(name="n", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    maps = proto.message_type.add(name="Maps")
    for number, (name, key, val) in enumerate(
        [
            ("flags", F.TYPE_BOOL, F.TYPE_STRING),
            ("by_id", F.TYPE_INT64, F.TYPE_DOUBLE),
            ("inners", F.TYPE_UINT32, F.TYPE_MESSAGE),
        ],
        start=1,
    ):
        entry = maps.nested_type.add(name=f"{name.title().replace('_', '')}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=key, label=F.LABEL_OPTIONAL)
        v = entry.field.add(name="value", number=2, type=val, label=F.LABEL_OPTIONAL)
        if val == F.TYPE_MESSAGE:
            v.type_name = ".jsonmaptest.Inner"
        maps.field.add(
            name=name,
            number=number,
            type=F.TYPE_MESSAGE,
            label=F.LABEL_REPEATED,
            type_name=f".jsonmaptest.Maps.{entry.name}",
        )
    odd = proto.message_type.add(name="Odd")
    odd.field.add(name="blob", number=1, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    odd.field.add(name="f32", number=2, type=F.TYPE_FLOAT, label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    get = message_factory.GetMessageClass
    return get(pool.FindMessageTypeByName("jsonmaptest.Maps")), get(
        pool.FindMessageTypeByName("jsonmaptest.Odd")
    )


def test_maps_by_bool_and_number_and_the_kinds_left_to_json_format() -> None:
    maps_type, odd_type = _dynamic()
    maps: Any = maps_type()
    maps.flags[True] = "yes"
    maps.flags[False] = "no"
    maps.by_id[-(2**62)] = float("nan")
    maps.by_id[3] = 0.25
    maps.inners[7].n = 2**60
    maps.inners[0].SetInParent()
    same(maps)
    assert message_to_dict(maps)["flags"] == {"true": "yes", "false": "no"}
    odd: Any = odd_type(blob=b"\x00\xff", f32=[0.1, 1e39])
    same(odd)
