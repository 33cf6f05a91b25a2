"""The protobuf wire format, written by hand for what the referee sends at every decision, and
the C encoder (``_wire.c``) that writes the same bytes where it was built.

The referee sends a DecisionRequest per decision, carrying the seat's observation and the
events since the seat's previous request: the server's hottest path. Rather than build protobuf
objects per decision only to serialize them, these messages are written straight in the
protobuf wire format (https://protobuf.dev/programming-guides/encoding/), from bytes cached for
the values that recur (cards, small numbers, finished tricks, legal actions; docs/performance.md
has the figures). Parsing the result gives exactly the message protobuf's own API builds
(tests/arena/protocol/test_codec.py compares the two for every game), and the observation
round-trip tests pin it to the engine's ``to_dict()``.

Public names here are the protocol package's own (``observations``, ``codec``), not the
arena's: only :mod:`arena.protocol` uses them.
"""

from __future__ import annotations

import json
import os
from types import ModuleType
from typing import Any, Final, TypeVar

from google.protobuf.descriptor import FieldDescriptor

try:  # the C encoder (arena/protocol/_wire.c), built by pip where a C compiler is at hand
    import arena.protocol._wire as _built
except ImportError:  # no compiler at install time: the Python encoders serve
    _built = None  # type: ignore[assignment]

WIRE_VARINT, WIRE_LEN = 0, 2

VARINT_TYPES: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    }
)


def varint_of(n: int) -> bytes:
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
SMALL_VARINTS: Final = tuple(varint_of(i) for i in range(1024))


def varint(n: int) -> bytes:
    return SMALL_VARINTS[n] if 0 <= n < 1024 else varint_of(n)


def field_key(field: FieldDescriptor, wire_type: int) -> bytes:
    return varint((field.number << 3) | wire_type)


def delimited(key: bytes, body: bytes) -> bytes:
    n = len(body)
    return key + (SMALL_VARINTS[n] if n < 1024 else varint_of(n)) + body


#: Values kept per cache below; a cache is cleared when full.
WIRE_CACHE_SIZE: Final = 4096


K = TypeVar("K")


def remember(cache: dict[K, Any], key: K, value: Any) -> None:
    """Keep ``value`` in a cache of at most :data:`WIRE_CACHE_SIZE` entries (cleared when
    full: the values that recur come straight back)."""
    if len(cache) >= WIRE_CACHE_SIZE:
        cache.clear()
    cache[key] = value


class FieldCache(dict[K, bytes]):
    """``cache[value]``: one field's wire bytes for ``value``, key included, made on first use
    (:meth:`encode`) and kept."""

    def __init__(self, key: bytes) -> None:
        super().__init__()
        self.key = key

    def encode(self, value: K) -> bytes:
        raise NotImplementedError

    def __missing__(self, value: K) -> bytes:
        encoded = self.encode(value)
        remember(self, value, encoded)
        return encoded


class NumberField(FieldCache[int]):
    """A varint field (seats, counts, small scores)."""

    def encode(self, value: int) -> bytes:
        return self.key + varint(value)


class PackedField(FieldCache[tuple[int, ...]]):
    """A packed repeated varint field (scores, tricks won: the same few tuples over and over)."""

    def encode(self, value: tuple[int, ...]) -> bytes:
        return delimited(self.key, b"".join([varint(x) for x in value]))


class StringField(FieldCache[str]):
    """A string field (cards, suits, kinds), its length included."""

    def encode(self, value: str) -> bytes:
        return delimited(self.key, value.encode())


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


def dumps(data: Any) -> str:
    if _c_json is None or isinstance(data, str):
        return _encode_json(data)
    return "".join(_c_json(data, 0))


# --- the C encoder ----------------------------------------------------------------------------
#
# arena/protocol/_wire.c writes the same bytes as the Python encoders of observations and codec
# (tests/arena/protocol/test_wire.py compares them on every game), without the interpreter. That
# matters live more than in a warm loop: the server's loop thread wakes cold after every round
# trip, and cold caches hurt interpreted code most, so the C encoder shortens the referee's path
# from an answer to the next request (docs/performance.md has the figures, under "The C module").
# The Python encoders stay, for a machine without a C compiler and as the C one's reference.

#: The C module as built, or ``None``.
BUILT: ModuleType | None = _built
#: The C encoder in use, or ``None`` (not built, or ``ARENA_PURE_PYTHON=1`` in the environment).
ACCEL: ModuleType | None = None if os.environ.get("ARENA_PURE_PYTHON") == "1" else _built


def accelerated() -> bool:
    """Whether observations and decision requests are encoded in C."""
    return ACCEL is not None


def encoder_name() -> str:
    """Which encoder writes the requests, in words (for logs and benchmark reports)."""
    if ACCEL is not None:
        return "C (arena/protocol/_wire.c)"
    if BUILT is not None:
        return "Python (ARENA_PURE_PYTHON=1)"
    return "Python (arena/protocol/_wire.c is not built: no C compiler at install)"
