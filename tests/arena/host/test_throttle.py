"""The host's limits as mechanics (arena/host/throttle.py), on a clock the test moves: request
rates per address and per token, failed-auth lock-outs that double, the versions-per-day window,
tables that stay bounded under a flood of distinct keys; and ``[limits]`` read key by key."""

from __future__ import annotations

import pytest

from arena.host.config import CompetitionConfigError, LimitsConfig, check_competition
from arena.host.throttle import (
    DAY_S,
    MAX_LOCKOUT_S,
    Buckets,
    Throttle,
    client_key,
    next_version_in,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _throttle(**limits: int) -> tuple[Throttle, Clock]:
    clock = Clock()
    return Throttle(LimitsConfig(**limits), clock), clock


def test_a_bucket_allows_its_burst_then_its_rate() -> None:
    b = Buckets(per_minute=60, burst=3)
    assert [b.take("a", 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert b.take("a", 0.0) == pytest.approx(1.0)
    assert b.take("b", 0.0) == 0.0  # another key has its own bucket
    assert b.take("a", 0.5) == pytest.approx(0.5)
    assert b.take("a", 1.0) == 0.0
    assert b.take("a", 1.0) > 0
    assert Buckets(per_minute=0, burst=0).take("a", 0.0) == 0.0  # 0: no limit


def test_rates_per_address_and_per_token() -> None:
    t, clock = _throttle(address_burst=2, address_requests_per_minute=60, token_burst=3)
    assert t.request("10.0.0.1", "") is None
    assert t.request("10.0.0.1", "") is None
    refused = t.request("10.0.0.1", "")
    assert refused is not None and refused.retry_after == 1
    assert refused.detail == "too many requests from your address; try again in 1 s"
    clock.now += 1
    assert t.request("10.0.0.1", "") is None
    # One token from many addresses: its own limit.
    assert [t.request(f"10.0.1.{i}", "cau_x") for i in range(3)] == [None] * 3
    refused = t.request("10.0.1.9", "cau_x")
    assert refused is not None and "with this token" in refused.detail
    assert refused.retry_after == 1  # 600 a minute: 0.1 s, rounded up to whole seconds
    # An IPv6 client is its /64: rotating addresses inside it does not buy requests.
    t, clock = _throttle(address_burst=1)
    assert t.request("2001:db8::1", "") is None
    assert t.request("2001:db8::2", "") is not None
    assert t.request("2001:db8:0:1::1", "") is None
    assert client_key("::ffff:10.0.0.1") == "10.0.0.1"


def test_failed_auth_locks_an_address_out_and_lock_outs_double() -> None:
    t, clock = _throttle(auth_failures=3, auth_window_s=60, auth_lockout_s=30)
    assert t.auth_failed("10.0.0.1") is None
    clock.now += 61  # out of the window: forgotten
    assert t.auth_failed("10.0.0.1") is None
    assert t.auth_failed("10.0.0.1") is None
    assert t.auth_locked("10.0.0.1") is None
    locked = t.auth_failed("10.0.0.1")
    assert locked is not None and locked.retry_after == 30
    assert locked.detail == "too many failed authentications from your address; try again in 30 s"
    assert t.auth_locked("10.0.0.2") is None  # others go on
    clock.now += 20
    still = t.auth_locked("10.0.0.1")
    assert still is not None and still.retry_after == 10
    clock.now += 10
    assert t.auth_locked("10.0.0.1") is None
    for _ in range(2):
        assert t.auth_failed("10.0.0.1") is None
    again = t.auth_failed("10.0.0.1")
    assert again is not None and again.retry_after == 60  # the second lock-out: doubled
    for _ in range(10):  # doubling stops at the cap
        clock.now += MAX_LOCKOUT_S
        for _ in range(3):
            last = t.auth_failed("10.0.0.1")
    assert last is not None and last.retry_after == MAX_LOCKOUT_S
    clock.now += MAX_LOCKOUT_S + 2 * DAY_S  # a day clean: forgiven
    for _ in range(3):
        last = t.auth_failed("10.0.0.1")
    assert last is not None and last.retry_after == 30
    # 0 failures: no lock-out at all.
    off, _ = _throttle(auth_failures=0)
    assert all(off.auth_failed("10.0.0.1") is None for _ in range(100))


def test_tables_stay_bounded_under_a_flood_of_distinct_keys() -> None:
    clock = Clock()
    t = Throttle(LimitsConfig(), clock, capacity=100)
    for i in range(5000):
        t.request(f"10.{i // 65536}.{i // 256 % 256}.{i % 256}", f"cau_{i}")
        t.auth_failed(f"10.{i // 65536}.{i // 256 % 256}.{i % 256}")
    assert t.tracked() <= 300
    # The most recent keys are the ones kept.
    for _ in range(LimitsConfig().auth_failures):
        t.auth_failed("10.9.9.9")
    assert t.auth_locked("10.9.9.9") is not None


def test_versions_per_day_is_a_rolling_window() -> None:
    now = 10 * DAY_S
    assert next_version_in([], now, 2) == 0
    assert next_version_in([now - 10], now, 2) == 0
    assert next_version_in([now - 100, now - 10], now, 2) == pytest.approx(DAY_S - 100)
    assert next_version_in([now - DAY_S - 1, now - 10], now, 2) == 0
    assert next_version_in([now] * 50, now, 0) == 0  # 0: no limit


def test_limits_section_is_checked_key_by_key() -> None:
    base = {"game": "whist"}
    config = check_competition(base, "cup.toml", "cup")
    assert config.limits == LimitsConfig()
    config = check_competition({**base, "limits": {"versions_per_day": 3}}, "cup.toml", "cup")
    assert config.limits.versions_per_day == 3
    bad = {
        "versions_per_day": -1,
        "address_burst": "lots",
        "stored_mib_per_author": 10**12,
        "per_hour": 3,
        "auth_window_s": 0,
    }
    for key, value in bad.items():
        with pytest.raises(CompetitionConfigError) as err:
            check_competition({**base, "limits": {key: value}}, "cup.toml", "cup")
        line = str(err.value)
        assert line.startswith(f"cup.toml: limits.{key}: ") and "\n" not in line, line
    with pytest.raises(CompetitionConfigError, match=r"^cup.toml: limits: must be a table"):
        check_competition({**base, "limits": 3}, "cup.toml", "cup")
