"""Protobuf's canonical JSON mapping of a message, as ``json_format.MessageToDict`` gives it (its
defaults: lowerCamelCase names, enums by name, 64-bit integers as text, fields left out when
they carry no value), from a plan made once per message type instead of ``json_format``'s walk
of each field's descriptor on every message.

The stdio transport writes every ServerMessage this way (arena/server/stdio.py), where
``MessageToDict`` was most of the cost of a line (docs/performance.md, "Transports"). The field
kinds the protocol uses are converted here; a message type with any other (bytes, 32-bit
floats, closed enums, well-known types, extensions) is handed to ``MessageToDict`` whole, so
the output is the same for every message (tests/arena/protocol/test_jsonmap.py compares the
two on every message type of the protocol and on real decisions of every game).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from google.protobuf import descriptor_pool, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

#: One field's conversion: its JSON name, the conversion of one value (``None``: the value as it
#: is), and its shape.
Step = tuple[str, Callable[[Any], Any] | None, int]
_SINGLE, _REPEATED, _MAP = range(3)
#: Per message class, its fields' steps by field (descriptor); ``None``: ``MessageToDict``
#: converts it.
_PLANS: dict[type, dict[FieldDescriptor, Step] | None] = {}

_INTEGERS_AS_IS = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_STRING,
    }
)
_INTEGERS_AS_TEXT = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)


class _Unplanned(Exception):
    """A field kind this module leaves to ``json_format``."""


def message_to_dict(message: Message) -> dict[str, Any]:
    """``json_format.MessageToDict(message)``, the same dict."""
    try:
        plan = _PLANS[type(message)]
    except KeyError:
        plan = _PLANS[type(message)] = _plan(cast(Descriptor, message.DESCRIPTOR))
    if plan is None:
        return json_format.MessageToDict(message)
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        step = plan.get(field)  # an extension finds none
        if step is None:
            return json_format.MessageToDict(message)
        name, convert, shape = step
        if shape == _SINGLE:
            out[name] = value if convert is None else convert(value)
        elif shape == _REPEATED:
            out[name] = list(value) if convert is None else [convert(v) for v in value]
        else:
            out[name] = {
                _map_key(k): v if convert is None else convert(v) for k, v in value.items()
            }
    return out


def _map_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _plan(descriptor: Descriptor) -> dict[FieldDescriptor, Step] | None:
    """``descriptor``'s plan (``None`` when some field is not planned)."""
    try:
        if descriptor.full_name.startswith("google.protobuf.") or _enum_json_options():
            raise _Unplanned(descriptor.full_name)
        return {f: _step(f) for f in descriptor.fields}
    except _Unplanned:
        return None


def _step(field: FieldDescriptor) -> Step:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        value_field = message.fields_by_name["value"]
        key_field = message.fields_by_name["key"]
        if key_field.type not in _INTEGERS_AS_IS | _INTEGERS_AS_TEXT:
            raise _Unplanned(field.full_name)
        return field.json_name, _convert(value_field), _MAP
    shape = _REPEATED if field.is_repeated else _SINGLE
    return field.json_name, _convert(field), shape


def _convert(field: FieldDescriptor) -> Callable[[Any], Any] | None:
    """One value's conversion, as ``json_format`` converts a value of ``field``'s type."""
    kind = field.type
    if kind in _INTEGERS_AS_IS:
        return None
    if kind in _INTEGERS_AS_TEXT:
        return str
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return _double
    if kind == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None
        if enum.is_closed or enum.full_name == "google.protobuf.NullValue":
            raise _Unplanned(field.full_name)
        names = {v.number: v.name for v in enum.values}
        return lambda n: names.get(n, n)
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return message_to_dict
    raise _Unplanned(field.full_name)  # bytes, float, groups


def _double(value: float) -> float | str:
    if math.isinf(value):
        return "-Infinity" if value < 0 else "Infinity"
    if math.isnan(value):
        return "NaN"
    return value


_ENUM_JSON_OPTIONS: list[bool] = []


def _enum_json_options() -> bool:
    """Whether enum values may carry their own JSON names (the ``pb.enumvalue.json`` option,
    which ``json_format`` honours): then enums are left to it."""
    if not _ENUM_JSON_OPTIONS:
        try:
            descriptor_pool.Default().FindExtensionByName("pb.enumvalue.json")
            _ENUM_JSON_OPTIONS.append(True)
        except KeyError:
            _ENUM_JSON_OPTIONS.append(False)
    return _ENUM_JSON_OPTIONS[0]
