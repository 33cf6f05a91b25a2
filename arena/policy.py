"""The fault policy: what a bot can be charged with, and when its faults forfeit the match.

One definition for the referee (arena/server), the record checker (``arena replay verify``) and
the configs (tournaments, ``arena match --strict``), so a recorded forfeit is held to the very
rule that produced it. Plain values only: no gRPC, no protobuf.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class FaultPolicy(StrEnum):
    """How faults are punished (../shared/rules/README.md)."""

    #: The referee plays the seat's fallback action and charges a strike; 3 strikes forfeit.
    LENIENT = "lenient"
    #: The first fault forfeits.
    STRICT = "strict"


class FaultKind(StrEnum):
    """What a seat can be charged with (the proto's ``Fault.kind``)."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    GARBAGE = "garbage"
    UNKNOWN_REQUEST = "unknown_request"
    WRONG_SEAT = "wrong_seat"
    DISCONNECT = "disconnect"
    CRASH = "crash"
    FLOOD = "flood"


#: Every policy, in the order configs list them.
FAULT_POLICIES: Final = tuple(FaultPolicy)

#: The Error code each fault kind is reported to the bot with (the proto's ``ErrorCode``).
ERROR_CODE: Final = {
    FaultKind.TIMEOUT: "timeout",
    FaultKind.ILLEGAL: "illegal_action",
    FaultKind.GARBAGE: "protocol",
    FaultKind.UNKNOWN_REQUEST: "unknown_request",
    FaultKind.WRONG_SEAT: "wrong_seat",
    FaultKind.DISCONNECT: "disconnected",
    FaultKind.CRASH: "disconnected",
    FaultKind.FLOOD: "flood",
}

#: Faults after which a bot's process is gone: its own output says why.
GONE: Final = frozenset({FaultKind.CRASH, FaultKind.DISCONNECT})

#: Strikes that forfeit a match under the lenient policy.
STRIKES_TO_FORFEIT: Final = 3

#: A seat whose bot has lost its connection keeps this share of the time its clock allows the
#: decision (move time plus bank left) to come back before the decision faults as a
#: ``disconnect``; a seat whose bot process is known to have exited faults at once (``crash``).
RECONNECT_GRACE: Final = 0.5


def forfeit_reason(policy: str, strikes: int, kind: str, detail: str) -> str | None:
    """Why a seat forfeits when charged its ``strikes``-th fault of the match, ``kind`` with
    ``detail``, under the fault ``policy``; ``None`` when it plays on.

    The referee's rule (the first charge that returns a reason forfeits that seat, with this
    reason as the forfeit event's ``why``) and what ``arena replay verify`` holds a recorded
    forfeit to: ``strict`` forfeits on the first fault, ``lenient`` on the
    :data:`STRIKES_TO_FORFEIT`-th.
    """
    if policy == FaultPolicy.STRICT:
        return f"{kind}: {detail}"
    if strikes >= STRIKES_TO_FORFEIT:
        return f"{kind}: {detail} ({strikes} strikes)"
    return None
