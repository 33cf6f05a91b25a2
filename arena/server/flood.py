"""The rate limiter against floods: how many unsolicited messages a connection may send."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

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
