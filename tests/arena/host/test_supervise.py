"""The host's supervisor (arena/host/supervise.py) on trio's MockClock: a failed part is logged
with its traceback and started again after a pause that doubles, is capped, and is forgotten
once the part ran well; what must stop the host (the store unusable) and cancellation pass."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from arena.host.ladder import store_unusable
from arena.host.store import CompetitionStoreError, Conflict, DatabaseLocked, NotFound
from arena.host.supervise import GaveUp, PartStates, supervised
from tests.helpers import captured_logs


class Flaky:
    """A part that fails its first ``fails`` runs (after running ``runs_s`` seconds), then
    returns; it notes when each run began."""

    def __init__(self, fails: int, runs_s: float = 0.0, error: Exception | None = None) -> None:
        self.fails, self.runs_s = fails, runs_s
        self.error = error or RuntimeError("a bug met by an unusual submission")
        self.starts: list[float] = []

    async def __call__(self) -> None:
        self.starts.append(trio.current_time())
        await trio.sleep(self.runs_s)
        if len(self.starts) <= self.fails:
            raise self.error


def _run(part: Flaky, **kwargs: float) -> None:
    async def main() -> None:
        await supervised("ladder", part, store_unusable, **kwargs)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_failed_part_is_logged_and_started_again_after_doubling_capped_pauses() -> None:
    part = Flaky(fails=5)
    with captured_logs() as logs:
        _run(part, pause_s=1.0, max_pause_s=4.0)
    assert part.starts == [0.0, 1.0, 3.0, 7.0, 11.0, 15.0]  # pauses 1, 2, 4, then capped at 4
    failed = [e for e in logs if e["event"] == "part failed; restarting"]
    assert len(failed) == 5
    assert all(e["part"] == "ladder" and e["log_level"] == "error" for e in failed)
    assert all(e["exc_info"] is True for e in failed)  # the traceback goes to the log
    assert [e["restart_in_s"] for e in failed] == [1.0, 2.0, 4.0, 4.0, 4.0]


def test_a_part_that_ran_well_starts_again_after_the_first_pause() -> None:
    part = Flaky(fails=3, runs_s=10.0)
    _run(part, pause_s=1.0, healthy_s=10.0)
    # Each run lasted the healthy time: the pause never grows.
    assert part.starts == [0.0, 11.0, 22.0, 33.0]


@pytest.mark.parametrize(
    "error",
    [
        CompetitionStoreError("cup/competition.sqlite: the database is damaged"),
        DatabaseLocked("cup/competition.sqlite: the database is locked by another process"),
    ],
)
def test_an_unusable_store_stops_the_part_even_inside_a_group(error: Exception) -> None:
    for raised in (error, ExceptionGroup("a nursery's", [error])):
        part = Flaky(fails=1, error=raised)
        with pytest.raises(type(raised)):
            _run(part)
        assert len(part.starts) == 1


@pytest.mark.parametrize("error", [Conflict("version b@1 is retired"), NotFound("no unit 3")])
def test_a_refused_change_is_no_reason_to_stop(error: Exception) -> None:
    part = Flaky(fails=1, error=error)
    _run(part)
    assert len(part.starts) == 2


def test_cancellation_passes_through_a_part_and_its_pause() -> None:
    part = Flaky(fails=10**6)

    async def main() -> None:
        with trio.move_on_after(2.5) as scope:
            await supervised("validator", part)
        assert scope.cancelled_caught

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert part.starts == [0.0, 1.0]


def test_the_states_say_which_part_is_in_its_restart_pause() -> None:
    states = PartStates()
    seen: list[dict[str, str]] = []

    async def main() -> None:
        part = Flaky(fails=1, runs_s=1.0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: supervised("ladder", part, store_unusable, pause_s=10.0, states=states)
            )
            for at in (0.5, 5.0, 11.5):  # running, in its pause, running again
                await trio.sleep_until(at)
                seen.append(states.states())
        seen.append(states.states())

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert [s["ladder"] for s in seen] == ["running", "restarting", "running", "done"]


def test_with_attempts_a_part_failing_that_often_in_a_row_is_given_up() -> None:
    part = Flaky(fails=10)
    states = PartStates()
    with pytest.raises(GaveUp) as raised:

        async def main() -> None:
            await supervised("unit 3", part, pause_s=1.0, attempts=3, states=states)

        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert part.starts == [0.0, 1.0, 3.0]  # no pause after the last failure
    assert raised.value.last is part.error and states.states() == {"unit 3": "failed"}
    assert str(raised.value) == (
        "unit 3 failed 3 times; the last: RuntimeError: a bug met by an unusual submission"
    )


def test_attempts_count_only_failures_since_the_part_last_ran_well() -> None:
    part = Flaky(fails=4, runs_s=10.0)
    _run(part, pause_s=1.0, healthy_s=10.0, attempts=2)
    assert len(part.starts) == 5  # four failures, none after less than a healthy run
