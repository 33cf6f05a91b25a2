"""``LiveBots``' quota on a real store with the test's clock: an author's live bot past
``limits.live_bots_per_author`` is refused (``TokenRefused``, naming the quota and the connected
bots), a bot just admitted counts until the hub has welcomed it (two Hellos at once cannot both
take the last place), a reconnection of the same version is no new bot, and other authors and
disconnected bots do not count."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.host.live import WELCOME_GRACE_S, LiveBots
from arena.host.store import CompetitionStore
from arena.server import TokenRefused
from tests.arena.host.serving import competition


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_authors_live_bots_past_the_quota_are_refused(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "cup", competition()) as store:
        alice, _ = store.add_author("alice")
        bob, _ = store.add_author("bob")
        t1, t2, t3 = (store.add_live_version(alice.id, n)[1] for n in ("one", "two", "three"))
        _, tb = store.add_live_version(bob.id, "bee")
        connected: set[str] = set()
        clock = Clock()
        live = LiveBots(store, connected.__contains__, lambda: None, 2, clock)
        assert live.owner(t1) == ("one", "1")
        # Not yet welcomed by the hub, but admitted: it counts.
        assert live.owner(t2) == ("two", "1")
        with pytest.raises(TokenRefused) as err:
            live.owner(t3)
        assert str(err.value) == (
            "quota: 2 live bots of one author connected at once (limits.live_bots_per_author); "
            "yours connected: one@1, two@1; stop one first"
        )
        assert live.owner(tb) == ("bee", "1")  # bob's own quota
        assert live.owner(t1) == ("one", "1")  # a reconnection is the same bot
        connected.update((t1, tb))
        clock.now += WELCOME_GRACE_S  # two@1 never came: it stops counting
        assert live.owner(t3) == ("three", "1")
        connected.add(t3)
        with pytest.raises(TokenRefused):
            live.owner(t2)
        connected.discard(t1)  # one@1's bot went away
        assert live.owner(t2) == ("two", "1")
        # 0: no limit.
        free = LiveBots(store, lambda token: True, lambda: None, 0, clock)
        assert all(free.owner(t) is not None for t in (t1, t2, t3))
