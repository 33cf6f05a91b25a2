"""The events part in-process beside a running ladder (matches played by the ladder tests'
stand-in, on a real store): an event begins at its configured start and not before (the clock
injected), its entrants the ladder's best then, and it ends with the winner its rules give."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import trio

from arena.host.config import check_competition
from arena.host.events.runner import EventRunner
from tests.arena.host.test_ladder import SHORT, StandIn, _ladder, _store
from tests.helpers import captured_logs
from tests.waiting import async_wait_until

START = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@pytest.mark.host  # a real host for many seconds: make test-host
def test_an_event_begins_at_its_start_beside_the_ladder_and_ends_with_its_winner(
    tmp_path: Path,
) -> None:
    events = [{"name": "cup", "format": "knockout", "entrants": 2, "start": START.isoformat()}]
    config = check_competition({**SHORT, "events": events}, "t", "cup")
    store = _store(tmp_path, config, 3)
    player = StandIn(config)  # the lowest version id wins: b1@1 rates best
    ladder = _ladder(store, config, player)
    now = [START - dt.timedelta(seconds=1)]
    runner = EventRunner(store, config, ladder, clock=lambda: now[0])

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ladder.run)
            nursery.start_soon(runner.run)
            await async_wait_until(lambda: len(player.played) >= 30, 30, what="a rated ladder")
            assert store.events() == []  # not before its start
            now[0] = START
            runner.wake.set()
            await async_wait_until(
                lambda: store.events() and store.events()[0].state == "finished",
                30,
                what="the event to finish",
            )
            nursery.cancel_scope.cancel()

    with captured_logs() as logs:
        trio.run(main)
    (event,) = store.events()
    refs = [store.version(v).ref for v in event.entrants]
    assert refs == ["b1@1", "b2@1"]  # the ladder's best two, best first
    assert store.version(event.winner or 0).ref == "b1@1"
    assert any(e["event"] == "event started" and e["name"] == "cup" for e in logs)
    (done,) = [e for e in logs if e["event"] == "event finished"]
    assert done["winner"] == "b1@1"
    # The ladder played on beside it; the event's matches were its own (rated by no phase).
    assert store.rated_matches("ladder")[0] and not store.rated_matches("final")[0]
    played = [m for m in player.played if m.startswith("e")]
    assert len(played) == len(set(played)) == 2
