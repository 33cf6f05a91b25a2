"""What one stranger may ask of the host (``[limits]``, docs/hosting.md): request rates per client
address and per API token, failed-auth lock-outs per address, and the per-author quota on new
versions.

Pure and clock-driven: nothing here sleeps or reads a clock of its own (:class:`Throttle` is
given one), so tests move time by hand. Every table is capped at :data:`MAX_TRACKED` keys, the
least recently seen forgotten first: a flood of distinct addresses or tokens costs bounded memory
(and an address forgotten that way merely starts afresh).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from arena.host.config import LimitsConfig
from arena.registry import hash_token

#: Keys each table keeps at most.
MAX_TRACKED = 10_000
#: The longest lock-out: each one that follows another doubles, up to this.
MAX_LOCKOUT_S = 3600.0
#: Seconds after a lock-out ends past which the address's earlier lock-outs are forgiven.
STRIKE_MEMORY_S = 86_400.0
#: The window of ``limits.versions_per_day``.
DAY_S = 86_400.0

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused for now: why (one line) and the whole seconds until it may be retried."""

    detail: str
    retry_after: int


def whole_seconds(seconds: float) -> int:
    """``seconds`` as a ``Retry-After``: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(seconds))


def client_key(address: str) -> str:
    """Whom a client address stands for: an IPv4 address itself, an IPv6 address its /64 (what
    one subscriber holds), anything else (a Unix socket) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Capped(Generic[V]):
    """A dict of at most ``capacity`` keys, the least recently used dropped first."""

    def __init__(self, capacity: int, new: Callable[[], V]) -> None:
        self._items: OrderedDict[str, V] = OrderedDict()
        self._capacity = capacity
        self._new = new

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> V | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def setdefault(self, key: str) -> V:
        item = self.get(key)
        if item is None:
            item = self._items[key] = self._new()
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        return item


@dataclass(slots=True)
class _Bucket:
    level: float = math.inf
    stamp: float = 0.0


class Buckets:
    """Token buckets by key: ``per_minute`` requests a minute, ``burst`` at once; 0 per minute:
    no limit."""

    def __init__(self, per_minute: int, burst: int, capacity: int = MAX_TRACKED) -> None:
        self.rate = per_minute / 60.0
        self.size = float(max(burst, 1))
        self._buckets: Capped[_Bucket] = Capped(capacity, _Bucket)

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float) -> float:
        """0 when ``key`` may make a request now (and it is counted), else the seconds to wait."""
        if self.rate <= 0:
            return 0.0
        bucket = self._buckets.setdefault(key)
        bucket.level = min(self.size, bucket.level + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        if bucket.level >= 1.0:
            bucket.level -= 1.0
            return 0.0
        return (1.0 - bucket.level) / self.rate


@dataclass(slots=True)
class _Failures:
    times: deque[float] = field(default_factory=deque)
    until: float = -math.inf
    strikes: int = 0


class AuthGuard:
    """Failed authentications by address: ``failures`` within ``window_s`` lock the address out
    for ``lockout_s``, doubled for each lock-out that follows another (up to
    :data:`MAX_LOCKOUT_S`); 0 failures: no lock-out."""

    def __init__(
        self, failures: int, window_s: float, lockout_s: float, capacity: int = MAX_TRACKED
    ) -> None:
        self.failures, self.window_s, self.lockout_s = failures, window_s, lockout_s
        self._records: Capped[_Failures] = Capped(capacity, _Failures)

    def __len__(self) -> int:
        return len(self._records)

    def locked(self, key: str, now: float) -> float:
        """The seconds ``key`` stays locked out; 0 when it is not."""
        record = self._records.get(key)
        return 0.0 if record is None else max(0.0, record.until - now)

    def failed(self, key: str, now: float) -> float:
        """Count a failure of ``key``; the lock-out it started (seconds), or 0."""
        if self.failures <= 0:
            return 0.0
        record = self._records.setdefault(key)
        if record.until > now:
            return 0.0
        if now - record.until > STRIKE_MEMORY_S:
            record.strikes = 0
        times = record.times
        times.append(now)
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if len(times) < self.failures:
            return 0.0
        times.clear()
        duration = min(self.lockout_s * 2.0**record.strikes, max(MAX_LOCKOUT_S, self.lockout_s))
        record.strikes += 1
        record.until = now + duration
        return duration


class Throttle:
    """The host's limits on requests and authentication, thread-safe (the API checks them from
    its worker threads and its event loop alike)."""

    def __init__(
        self,
        limits: LimitsConfig,
        clock: Callable[[], float] = time.monotonic,
        capacity: int = MAX_TRACKED,
    ) -> None:
        self.limits = limits
        self.clock = clock
        self._by_address = Buckets(
            limits.address_requests_per_minute, limits.address_burst, capacity
        )
        self._by_token = Buckets(limits.token_requests_per_minute, limits.token_burst, capacity)
        self._auth = AuthGuard(
            limits.auth_failures, limits.auth_window_s, limits.auth_lockout_s, capacity
        )
        self._lock = threading.Lock()

    def tracked(self) -> int:
        """Keys held in all tables (bounded by three times the capacity)."""
        with self._lock:
            return len(self._by_address) + len(self._by_token) + len(self._auth)

    def request(self, address: str, token: str) -> Refusal | None:
        """Count a request from ``address`` (carrying ``token``, or ``""``); a refusal when
        either is over its rate. A refused request is not counted against the other."""
        now = self.clock()
        with self._lock:
            wait = self._by_address.take(client_key(address), now)
            if wait:
                return Refusal(
                    f"too many requests from your address; try again in {whole_seconds(wait)} s",
                    whole_seconds(wait),
                )
            # Keyed by the token's hash: the table never holds a secret.
            wait = self._by_token.take(hash_token(token), now) if token else 0.0
        if wait:
            return Refusal(
                f"too many requests with this token; try again in {whole_seconds(wait)} s",
                whole_seconds(wait),
            )
        return None

    def auth_locked(self, address: str) -> Refusal | None:
        """A refusal while ``address`` is locked out of authenticating."""
        with self._lock:
            left = self._auth.locked(client_key(address), self.clock())
        return _locked_out(left) if left else None

    def auth_failed(self, address: str) -> Refusal | None:
        """Count a failed token check or invite code from ``address``; the refusal from now on
        when this one locked it out."""
        with self._lock:
            duration = self._auth.failed(client_key(address), self.clock())
        return _locked_out(duration) if duration else None


class TokenGate:
    """The throttle's failed-auth lock-out for the arena's gRPC Hellos
    (:class:`arena.server.hub.AuthGate`): a live bot's unknown token counts as a wrong API token
    does, from the same address, in the same table."""

    def __init__(self, throttle: Throttle) -> None:
        self._throttle = throttle

    def locked(self, address: str) -> str | None:
        refusal = self._throttle.auth_locked(address)
        return None if refusal is None else refusal.detail

    def failed(self, address: str) -> None:
        self._throttle.auth_failed(address)


def _locked_out(seconds: float) -> Refusal:
    n = whole_seconds(seconds)
    return Refusal(f"too many failed authentications from your address; try again in {n} s", n)


def next_version_in(created: Sequence[float], now: float, per_day: int) -> float:
    """Seconds until an author whose versions were created at ``created`` (epoch seconds) may
    add one more under ``per_day`` in any :data:`DAY_S`; 0: now (per_day 0: no limit)."""
    if per_day <= 0:
        return 0.0
    recent = sorted(t for t in created if t > now - DAY_S)
    if len(recent) < per_day:
        return 0.0
    # The oldest of the last per_day versions leaves the window first.
    return recent[-per_day] + DAY_S - now
