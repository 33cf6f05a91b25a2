"""Fault kinds, the error code each is reported with, and the rate limiter against floods."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# The policy's rule (strikes that forfeit, the forfeit's reason) lives with the records, so that
# `arena replay verify` checks a recorded forfeit against it without importing the server.
from arena.records import STRIKES_TO_FORFEIT as STRIKES_TO_FORFEIT
from arena.records import forfeit_reason as forfeit_reason

#: Every fault kind (see Fault.kind in the proto) and the Error code it is sent with.
ERROR_CODE: Final = {
    "timeout": "timeout",
    "illegal": "illegal_action",
    "garbage": "protocol",
    "unknown_request": "unknown_request",
    "wrong_seat": "wrong_seat",
    "disconnect": "disconnected",
    "crash": "disconnected",
    "flood": "flood",
}

#: Unsolicited messages (anything but the answer to an open request) a connection may send in a
#: burst, and how many more per second: a bot needs one Hello and a few Pings, nothing else.
FLOOD_BURST: Final = 64
FLOOD_RATE: Final = 32.0
#: At most one flood strike per this many seconds: the Error is the warning, not a punishment
#: per message (which would only feed the flood back to the bot).
FLOOD_STRIKE_INTERVAL_S: Final = 1.0
#: Messages dropped for flooding after which the server closes the connection.
FLOOD_DISCONNECT: Final = 256


@dataclass(slots=True)
class TokenBucket:
    """A token bucket: ``take`` succeeds while the burst lasts, refilling at ``rate`` per second."""

    #: Maximum tokens (the burst allowed).
    capacity: float = FLOOD_BURST
    #: Tokens added per second.
    rate: float = FLOOD_RATE
    #: Tokens now.
    tokens: float = FLOOD_BURST
    #: Time of the last refill, seconds on the caller's clock.
    stamp: float = 0.0

    def take(self, now: float) -> bool:
        """Spend one token at time ``now``; ``False`` when the bucket is empty."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
