"""The ladder's bookkeeping on a real store, with matches played by a stand-in (the real play is
tests/arena/host/test_host_service.py): every version keeps playing, a restart finishes exactly
what was left, pausing stops new units, and closing plays the final among the best."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import structlog
import trio

from arena.errors import ArenaError, HostTrouble, one_error
from arena.host.config import CompetitionConfig, check_competition
from arena.host.ladder import MATCH_ATTEMPTS, UNIT_ATTEMPTS, Ladder
from arena.host.matchmaking import unit_matches
from arena.host.play import Entrant
from arena.host.store import CompetitionStore, CompetitionStoreError, Conflict, LadderState
from arena.rules import PlayedMatch
from engine import Result
from tests.helpers import captured_logs
from tests.waiting import async_wait_until

SHORT = {"game": "whist", "options": {"points_to_win": 1, "games_per_rubber": 1}}


class StandIn:
    """Plays a match at once: the seat whose version has the lowest id wins (so ratings order
    the versions by id)."""

    def __init__(self, config: CompetitionConfig) -> None:
        self.places = config.places
        self.played: list[str] = []

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        await trio.sleep(0)
        self.played.append(match_id)
        ids = [int(e.name.split("@")[0].removeprefix("b")) for e in entrants]
        best = min(ids)
        ranks = [1 if i == best else 2 for i in ids]
        scores = tuple(1.0 if r == 1 else 0.0 for r in ranks)
        result = Result(scores, tuple(ranks), summary="stand-in")
        return PlayedMatch(result, (), f"records/{match_id}.jsonl.gz", (None,) * len(entrants))


def _store(tmp_path: Path, config: CompetitionConfig, versions: int) -> CompetitionStore:
    store = CompetitionStore(tmp_path / "cup", config)
    author, _ = store.add_author("alice")
    for n in range(1, versions + 1):
        v = store.add_version(author.id, f"b{n}", "archive", f"{n:064x}", {"command": "x"})
        store.set_status(v.id, "validating")
        store.set_status(v.id, "validated")
    return store


def _ladder(
    store: CompetitionStore,
    config: CompetitionConfig,
    player: StandIn,
    lock_wait_s: float | None = None,
) -> Ladder:
    ladder = Ladder(store, config, player, lambda version_id: None, lock_wait_s)  # type: ignore[arg-type]
    # Versions are stand-ins: nothing to start.
    ladder._entrant = lambda version: Entrant(version.ref)  # type: ignore[method-assign]
    return ladder


class Looks:
    """Counts the ladder's looks at the field: each begins with a read of the ladder's state,
    in a worker thread (the test's own reads, on the trio thread, are not counted)."""

    def __init__(self, store: CompetitionStore) -> None:
        self.count = 0
        read = store.ladder_state

        def counted() -> LadderState:
            if threading.current_thread() is not threading.main_thread():
                self.count += 1
            return read()

        store.ladder_state = counted  # type: ignore[method-assign]

    async def again(self, ladder: Ladder, times: int = 3) -> None:
        """Wake the ladder ``times`` times, each time until it has begun another look (so at
        least ``times - 1`` whole looks happen): what it does when it looks, not when a clock
        says so."""
        for _ in range(times):
            seen = self.count
            ladder.poke()
            await async_wait_until(
                lambda seen=seen: self.count > seen, 10, what="the ladder to look again"
            )


async def _run_until(ladder: Ladder, done: Callable[[], object], what: str) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ladder.run)
        await async_wait_until(done, 30, what=what)
        nursery.cancel_scope.cancel()


def test_every_version_plays_and_a_restart_finishes_exactly_what_was_left(tmp_path: Path) -> None:
    config = check_competition({**SHORT, "ladder": {"concurrency": 2}}, "t", "cup")
    store = _store(tmp_path, config, 5)
    player = StandIn(config)
    ladder = _ladder(store, config, player)
    trio.run(_run_until, ladder, lambda: len(player.played) >= 40, "40 matches played")
    counts = store.match_counts("ladder")
    assert set(counts) == {1, 2, 3, 4, 5} and min(counts.values()) > 0
    # Cancelled mid-unit: what was not committed is still pending, and only that is replayed.
    pending = {m.match_id for m in store.pending_matches()}
    done = {m.match_id for m in store.finished_matches()}
    assert not pending & done
    again = StandIn(config)
    ladder = _ladder(store, config, again)
    trio.run(_run_until, ladder, lambda: pending <= set(again.played), "the pending matches")
    assert not set(again.played) & done
    assert len({m.match_id for m in store.finished_matches()}) == len(store.finished_matches())


def test_pausing_stops_new_units_and_closing_plays_the_final_among_the_best(
    tmp_path: Path,
) -> None:
    # Nothing provisional: which versions have their ten matches when the ladder closes is
    # chance, and a provisional third would rightly give its place to an established fourth
    # (the provisional rule's own tests are test_leaderboard's). Here the final takes the best.
    everyone = {"provisional_matches": 0, "provisional_interval": 100_000}
    config = check_competition({**SHORT, "final": {"top": 3}, "ladder": everyone}, "t", "cup")
    store = _store(tmp_path, config, 4)
    player = StandIn(config)
    ladder = _ladder(store, config, player)
    looks = Looks(store)

    def final_done() -> bool:
        return bool(store.units(phase="final")) and not store.units(state="pending", phase="final")

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ladder.run)
            await async_wait_until(
                lambda: len(store.units(state="done", phase="ladder")) >= 12,
                60,
                what="12 ladder units done",
            )
            store.set_ladder_state("paused")
            ladder.poke()
            # Units already started finish; then nothing new starts.
            await async_wait_until(
                lambda: ladder.state_seen == "paused" and not store.pending_matches(),
                60,
                what="the ladder paused with nothing pending",
            )
            await ladder.refit()
            units = len(store.units(phase="ladder"))
            await looks.again(ladder)
            assert len(store.units(phase="ladder")) == units
            store.set_ladder_state("closed")
            ladder.poke()
            await async_wait_until(final_done, 60, what="the final played")
            # The ladder announces the end at its next look at the final, not at once.
            await async_wait_until(
                lambda: any(e["event"] == "final finished" for e in logs),
                60,
                what="the final's end announced",
            )
            await ladder.refit()
            nursery.cancel_scope.cancel()

    with captured_logs() as logs:  # the final's end is an info line
        trio.run(main)
    # The final's end is announced once, with its winner.
    ended = [e for e in logs if e["event"] == "final finished"]
    final = store.units(phase="final")
    assert [(e["winner"], e["units"]) for e in ended] == [("b1@1", len(final))]
    # A result, kept once: /status lists it, a webhook would be sent it.
    assert [(r.kind, r.subject, r.winners) for r in store.results()] == [
        ("final", "the final", ["b1@1"])
    ]
    finalists = {v for u in final for v in u.table}
    # The ladder's best three (the stand-in makes lower ids stronger), every pair at a table.
    assert finalists == {1, 2, 3}
    assert {tuple(sorted(u.table)) for u in final} == {(1, 2), (1, 3), (2, 3)}
    assert all(u.state == "done" for u in final)
    assert [r.bot for r in ladder.standings.final.ratings] == ["b1@1", "b2@1", "b3@1"]


@pytest.mark.parametrize("versions", [1])
def test_a_lone_version_waits_for_company(tmp_path: Path, versions: int) -> None:
    config = check_competition(SHORT, "t", "cup")
    store = _store(tmp_path, config, versions)
    player = StandIn(config)
    ladder = _ladder(store, config, player)
    looks = Looks(store)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ladder.run)
            await looks.again(ladder)  # each look finds no company: nothing starts
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert player.played == [] and store.units() == []


class Locking(StandIn):
    """A stand-in that, as its first match ends, takes the database's write lock from another
    connection (an ``sqlite3`` shell's ``BEGIN IMMEDIATE``, say) and keeps it until released."""

    def __init__(self, config: CompetitionConfig, db: Path) -> None:
        super().__init__(config)
        self._db = db
        self.lock: sqlite3.Connection | None = None
        self.first = ""

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        played = await super().play(match_id, seed, entrants)
        if self.lock is None:
            self.first = match_id
            self.lock = sqlite3.connect(self._db, isolation_level=None)
            self.lock.execute("BEGIN IMMEDIATE")
        return played

    def release(self) -> None:
        assert self.lock is not None
        self.lock.execute("ROLLBACK")
        self.lock.close()


def test_a_match_result_waits_out_another_process_s_lock_and_is_stored(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    store = _store(tmp_path, config, 2)
    player = Locking(config, store.path)
    ladder = _ladder(store, config, player, lock_wait_s=30.0)

    def done() -> bool:
        return bool(player.first) and store.match(player.first).state == "done"

    async def main() -> None:
        with structlog.testing.capture_logs() as logs, trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ladder.run)
                await async_wait_until(
                    lambda: any("locked" in e["event"] for e in logs), 30, what="the lock met"
                )
                # The ladder waits (its result kept, not lost): nothing is stored meanwhile.
                assert store.match(player.first).state == "pending"
                player.release()
                await async_wait_until(done, 30, what="the result stored")
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert store.match(player.first).result is not None


def test_a_lock_held_past_the_wait_stops_the_ladder_in_one_line(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    store = _store(tmp_path, config, 2)
    player = Locking(config, store.path)
    ladder = _ladder(store, config, player, lock_wait_s=0.5)
    try:
        with pytest.raises(BaseExceptionGroup) as info:
            trio.run(_run_until, ladder, lambda: False, "the ladder stopped by the lock")
    finally:
        player.release()
    err = one_error(info.value)
    assert isinstance(err, CompetitionStoreError), info.value
    line = str(err)
    assert "\n" not in line and line.startswith(f"{store.path}: the database is locked by another")
    assert "waited 0.5 s; ARENA_DB_LOCK_TIMEOUT sets how long" in line
    assert store.match(player.first).state == "pending"  # played again at the next start


class Troubled(StandIn):
    """A stand-in whose first ``fails`` calls fail with ``error``."""

    def __init__(self, config: CompetitionConfig, error: Exception, fails: int) -> None:
        super().__init__(config)
        self.error, self.fails, self.calls = error, fails, 0

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.error
        return await super().play(match_id, seed, entrants)


class Cursed(StandIn):
    """A stand-in whose every match of one unit fails with ``error``."""

    def __init__(self, config: CompetitionConfig, error: Exception, unit: int) -> None:
        super().__init__(config)
        self.error, self.prefix = error, f"u{unit}-"

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        if match_id.startswith(self.prefix):
            raise self.error
        return await super().play(match_id, seed, entrants)


def _one_unit(tmp_path: Path, player: StandIn) -> tuple[CompetitionStore, Ladder]:
    config = check_competition({**SHORT, "ladder": {"concurrency": 1}}, "t", "cup")
    store = _store(tmp_path, config, 2)
    ladder = _ladder(store, config, player)
    ladder.retry_pause_s = 0.01
    return store, ladder


def test_the_arena_s_own_trouble_is_waited_out_and_never_fails_a_unit(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    error = HostTrouble("the arena could not start a bot: [Errno 24] Too many open files")
    player = Troubled(config, error, fails=MATCH_ATTEMPTS + 3)
    store, ladder = _one_unit(tmp_path, player)
    # Both of the unit's matches (played side by side): a call still under way when the first
    # is played would otherwise be neither failed nor played.
    trio.run(
        _run_until, ladder, lambda: len(player.played) == 2, "the matches played after the trouble"
    )
    # Every failed call was the trouble, past the attempts a unit has, and none failed a unit.
    assert player.calls == player.fails + len(player.played)
    assert [u.state for u in store.units()] != [] and "failed" not in [
        u.state for u in store.units()
    ]
    played = [store.match(m) for m in player.played]
    assert all(m.state == "done" and m.faults == [] for m in played)


def test_an_arena_error_fails_the_unit_after_its_attempts_with_pauses(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    player = Troubled(config, ArenaError("the record could not be written"), fails=10**6)
    store, ladder = _one_unit(tmp_path, player)
    trio.run(
        _run_until,
        ladder,
        lambda: store.units() and store.units()[0].state == "failed",
        "the unit failed",
    )
    # Each of the unit's matches was tried its attempts, and no more.
    matches = len(store.unit_matches(store.units()[0].id))
    assert player.calls <= matches * MATCH_ATTEMPTS


def _left_with_a_live_bot(
    tmp_path: Path, grace_s: int
) -> tuple[CompetitionStore, CompetitionConfig, int, int]:
    """A store as a killed host leaves it: a pending unit of an archive version (b1) and a live
    one (b2); the config, the unit's id and the live version's id."""
    config = check_competition(
        {**SHORT, "ladder": {"concurrency": 2, "live_grace_s": grace_s}}, "t", "cup"
    )
    store = _store(tmp_path, config, 1)
    live, _ = store.add_live_version(store.authors()[0].id, "b2")
    store.set_status(live.id, "validating")
    store.set_status(live.id, "validated")
    table = (1, live.id)
    matches = [(f"u1-r{r}", r, seats) for r, seats in unit_matches(table, config.places)]
    unit = store.create_unit("ladder", 7, table, matches, unit_id=1)
    return store, config, unit, live.id


def _live_ladder(
    store: CompetitionStore, config: CompetitionConfig, player: StandIn, tokens: dict[int, str]
) -> Ladder:
    """A ladder whose live bots are connected while ``tokens`` holds theirs; archive versions
    are stand-ins, a live version's entrant is the ladder's own (it refuses a missing bot)."""
    ladder = Ladder(store, config, player, tokens.get)  # type: ignore[arg-type]
    real = ladder._entrant
    ladder._entrant = lambda v: real(v) if v.kind == "live" else Entrant(v.ref)  # type: ignore[method-assign]
    ladder.retry_pause_s = 0.01
    return ladder


def test_after_a_restart_a_unit_waits_for_its_live_bot_and_is_played_when_it_is_back(
    tmp_path: Path,
) -> None:
    store, config, unit, live = _left_with_a_live_bot(tmp_path, grace_s=60)
    player = StandIn(config)
    tokens: dict[int, str] = {}
    ladder = _live_ladder(store, config, player, tokens)

    async def main() -> None:
        with captured_logs() as logs, trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ladder.run)
                await async_wait_until(
                    lambda: any(e["event"] == "match waits for its live bots" for e in logs),
                    30,
                    what="the unit to wait for its live bot",
                )
                assert store.unit(unit).state == "pending" and not player.played
                tokens[live] = "cal_back"  # the bot says Hello again
                ladder.poke()
                await async_wait_until(
                    lambda: store.unit(unit).state != "pending", 30, what="the unit played"
                )
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert store.unit(unit).state == "done"
    assert all(m.state == "done" for m in store.unit_matches(unit))


def test_a_live_bot_that_never_comes_back_fails_its_unit_after_the_grace_and_no_match_pends(
    tmp_path: Path,
) -> None:
    store, config, unit, _ = _left_with_a_live_bot(tmp_path, grace_s=1)
    player = StandIn(config)
    ladder = _live_ladder(store, config, player, {})
    trio.run(_run_until, ladder, lambda: store.unit(unit).state != "pending", "the unit given up")
    given_up = store.unit(unit)
    assert given_up.state == "failed"
    assert given_up.reason == "live bot b2@1 not connected within 1 s"
    # Its matches say what they are: never to be played, not pending.
    assert {m.state for m in store.unit_matches(unit)} == {"void"}
    assert store.pending_matches() == [] and player.played == []


def test_a_unit_whose_play_fails_unexpectedly_is_played_again_alone(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    player = Troubled(config, RuntimeError("a bug met by one deal"), fails=1)
    store, ladder = _one_unit(tmp_path, player)
    with captured_logs() as logs:
        # The ladder itself runs unsupervised here: the failure never reaches it.
        trio.run(_run_until, ladder, lambda: len(player.played) >= 6, "the ladder to play on")
    failed = [e for e in logs if e["event"] == "part failed; restarting"]
    assert [e["part"] for e in failed] == ["unit 1"] and failed[0]["exc_info"] is True
    assert store.unit(1).state == "done"  # played again, in full, and counted once
    assert [m.state for m in store.unit_matches(1)] == ["done"] * len(store.unit_matches(1))


def test_a_unit_id_another_part_takes_meanwhile_is_drawn_again(tmp_path: Path) -> None:
    # An event's round stores its units while the ladder is between reading the next id and
    # creating its unit (they share the store): the ladder takes the next id, not a crash.
    # (Two units at once, and versions to spare: the rival's matches are never played here.)
    config = check_competition({**SHORT, "ladder": {"concurrency": 2}}, "t", "cup")
    store = _store(tmp_path, config, 8)
    player = StandIn(config)
    ladder = _ladder(store, config, player)
    create = store.create_unit
    rivals: list[int] = []

    def racing(phase: str, seed: int, table: Sequence[int], matches: object, unit_id: int) -> int:
        if not rivals:
            rival = [
                (f"rival-{unit_id}-{r}", r, seats)
                for r, seats in unit_matches(table, config.places)
            ]
            rivals.append(create("ladder", seed, table, rival, unit_id=unit_id))
        return create(phase, seed, table, matches, unit_id=unit_id)  # type: ignore[arg-type]

    store.create_unit = racing  # type: ignore[method-assign,assignment]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ladder.run)
            await async_wait_until(lambda: player.played, 30, what="a ladder match played")
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert rivals == [1]
    # The ladder's unit took the next id; the rival's matches stayed its own.
    (first, *_) = player.played
    assert not first.startswith("rival")
    assert {m.match_id for m in store.unit_matches(2)} >= {first}


def test_the_next_unit_is_planned_again_when_another_part_takes_its_id(tmp_path: Path) -> None:
    # The store's side of the race above, as the final's units meet it too.
    config = check_competition(SHORT, "t", "cup")
    store = _store(tmp_path, config, 3)
    table = (1, 2)
    planned: list[int] = []

    def matches(name: str, unit_id: int) -> list[tuple[str, int, tuple[int, ...]]]:
        return [(f"{name}-{unit_id}-{r}", r, s) for r, s in unit_matches(table, config.places)]

    def plan(unit_id: int) -> tuple[int, tuple[int, int], list[tuple[str, int, tuple[int, ...]]]]:
        planned.append(unit_id)
        if len(planned) == 1:  # an event's round stores its unit first
            store.create_unit("ladder", 1, table, matches("rival", unit_id), unit_id=unit_id)
        return 2, table, matches("final", unit_id)

    assert store.create_next_unit("final", plan) == 2
    assert planned == [1, 2] and store.unit(2).phase == "final"
    assert {m.match_id for m in store.unit_matches(2)} == {m[0] for m in matches("final", 2)}
    assert store.create_next_unit("final", lambda unit_id: None) is None
    # A conflict of another kind (a match id already stored) is not drawn again.
    with pytest.raises(Conflict, match="already exists"):
        store.create_next_unit("final", lambda unit_id: (3, table, matches("final", 2)))


def test_a_unit_whose_play_always_fails_is_given_up_and_charged_to_no_bot(tmp_path: Path) -> None:
    config = check_competition(SHORT, "t", "cup")
    player = Cursed(config, RuntimeError("a bug met by this deal every time"), unit=1)
    store, ladder = _one_unit(tmp_path, player)
    with captured_logs() as logs:
        trio.run(_run_until, ladder, lambda: len(player.played) >= 2, "the next unit played")
    given_up = store.unit(1)
    assert given_up.state == "failed"
    assert given_up.reason == (
        "the host could not play it: RuntimeError: a bug met by this deal every time"
    )
    assert {m.state for m in store.unit_matches(1)} == {"void"}
    restarts = [e["part"] for e in logs if e["event"] == "part failed; restarting"]
    assert restarts == ["unit 1"] * (UNIT_ATTEMPTS - 1)
    assert [e["unit"] for e in logs if e["event"] == "unit given up"] == [1]
    # The next unit is played, and no result of the failed one is rated.
    assert store.unit(2).state in ("pending", "done")
    assert all(m.unit_id != 1 for m in store.finished_matches())
