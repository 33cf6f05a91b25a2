"""Observations as a bot reads them: a game's typed message (``WhistObservation``) mirrors its
engine dataclass field by field, nested dataclasses becoming nested messages, and is read back
along the message's descriptor into exactly the dict of the engine's ``Observation.to_dict()``,
so a strategy sees the same data in-process and over the wire (the arena's tests check the
mirror for every game). A field is named as the engine names it, but for those in
:data:`ENGINE_NAMES`. The arena's server writes observations along the same :class:`Plan`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from cardarena._pb import arena_pb2 as pb

SCALAR, OPTIONAL, REPEATED, MESSAGE, REPEATED_MESSAGE = range(5)

#: Fields the .proto names otherwise than the engine (full field name: the engine's attribute
#: and ``to_dict()`` key). C++ code generated for a repeated field ``hand`` has an accessor
#: ``hand_size()``, so a field ``hand_size`` beside it does not compile. The SDK's dicts keep the
#: engine's name, so that a strategy sees the same keys in-process and over the wire.
ENGINE_NAMES: dict[str, str] = {
    "cardarena.v1.TennisWhistObservation.hand_count": "hand_size",
    "cardarena.v1.TennisPlayerView.hand_count": "hand_size",
}


def engine_name(f: FieldDescriptor) -> str:
    """The engine's name for the observation field ``f``."""
    return ENGINE_NAMES.get(f.full_name, f.name)


@dataclass(frozen=True, slots=True)
class Plan:
    """How to copy one message type: (field name, engine attribute, mode, nested plan) per
    field, in order."""

    fields: tuple[tuple[str, str, int, Plan | None], ...]
    #: The message type.
    descriptor: Descriptor


_PLANS: dict[str, Plan] = {}


def plan_of(descriptor: Descriptor) -> Plan:
    plan = _PLANS.get(descriptor.full_name)
    if plan is not None:
        return plan
    fields: list[tuple[str, str, int, Plan | None]] = []
    for f in descriptor.fields:
        attr = engine_name(f)
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            mode = REPEATED_MESSAGE if f.is_repeated else MESSAGE
            assert f.message_type is not None
            fields.append((f.name, attr, mode, plan_of(f.message_type)))
        elif f.is_repeated:
            fields.append((f.name, attr, REPEATED, None))
        else:
            fields.append((f.name, attr, OPTIONAL if f.has_presence else SCALAR, None))
    plan = Plan(tuple(fields), descriptor)
    _PLANS[descriptor.full_name] = plan
    return plan


_READERS: dict[int, Callable[[Any], dict[str, Any]]] = {}


def reader(plan: Plan) -> Callable[[Any], dict[str, Any]]:
    """``read(msg)``: the dict of the message ``msg`` along ``plan``, as the engine's
    ``to_dict()`` gives it (lists for repeated fields, ``None`` for an absent optional one).

    Compiled to one dict display per message type, like :func:`encoder`: what a bot does with
    every observation it is sent, so the SDK's cost per decision.
    """
    read = _READERS.get(id(plan))
    if read is not None:
        return read
    env: dict[str, Any] = {}
    items: list[str] = []
    pre: list[str] = []
    for i, (name, attr, mode, sub) in enumerate(plan.fields):
        if mode == SCALAR:
            items.append(f"{attr!r}: msg.{name}")
        elif mode == REPEATED:
            items.append(f"{attr!r}: list(msg.{name})")
        elif mode == REPEATED_MESSAGE:
            assert sub is not None
            env[f"read{i}"] = reader(sub)
            items.append(f"{attr!r}: [read{i}(m) for m in msg.{name}]")
        elif mode == OPTIONAL:
            pre.append(f"    v{i} = msg.{name} if msg.HasField({name!r}) else None")
            items.append(f"{attr!r}: v{i}")
        else:
            assert sub is not None
            env[f"read{i}"] = reader(sub)
            pre.append(f"    v{i} = read{i}(msg.{name}) if msg.HasField({name!r}) else None")
            items.append(f"{attr!r}: v{i}")
    source = "def read(msg):\n" + "".join(line + "\n" for line in pre)
    source += "    return {" + ", ".join(items) + "}"
    exec(source, env)  # built above from the descriptor's field names (checked identifiers)
    compiled: Callable[[Any], dict[str, Any]] = env["read"]
    _READERS[id(plan)] = compiled
    return compiled


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
    return game, reader(plan_of(typed.DESCRIPTOR))(typed)
