"""Types of the C encoder (arena/protocol/_wire.c); arena.protocol.codec is its only user."""

from collections.abc import Sequence
from typing import Any

def encode(obj: object, plan: tuple[tuple[str, int, bytes, Any], ...], /) -> bytes: ...
def set_keys(
    decision: bytes,
    request_id: bytes,
    seat: bytes,
    observation: bytes,
    bank: bytes,
    events: bytes,
    /,
) -> None: ...
def decision(
    request_id: int,
    match_id_field: bytes,
    seat: int,
    head: bytes,
    obs: object,
    plan: tuple[tuple[str, int, bytes, Any], ...],
    game_key: bytes,
    legal: bytes,
    deadline_field: bytes,
    bank_ms: int,
    events: Sequence[bytes],
    /,
) -> bytes: ...
def answer(data: bytes, /) -> tuple[int, int] | None: ...
