"""The ladder: units chosen by matchmaking, played as they are chosen, ratings refitted as they end.

One trio task runs it for the host. Each round it takes the active versions (validated, not
retired; a live one only while its bot is connected), asks :func:`~arena.host.matchmaking.
choose_table` for a table, stores the unit with all its matches in one transaction, and plays
its matches (at most ``concurrency`` at once over all units). A match's result is committed only
while it is pending, so after a kill -9 the host replays exactly the matches not stored and
counts nothing twice. When the host closes the competition, the final follows: a duplicate
round-robin among the ladder's best, rated on its own.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import structlog
import trio

from arena.errors import ArenaError, is_host_trouble
from arena.host.announce import Announcer
from arena.host.config import CompetitionConfig
from arena.host.leaderboard import ProvisionalRule, final_state, final_winners
from arena.host.matchmaking import Candidate, choose_table, unit_matches, unit_seed
from arena.host.play import Entrant, Player, version_program
from arena.host.seasons import fitted_season
from arena.host.store import (
    CompetitionStore,
    CompetitionStoreError,
    Conflict,
    DatabaseLocked,
    Forbidden,
    NotFound,
    Phase,
    StoredMatch,
    Unit,
    UnitPlan,
    Version,
)
from arena.host.supervise import GaveUp, supervised
from arena.ratings import RatingTable, fit_ratings
from arena.rules import PlayedMatch
from arena.seeds import derive_seed
from arena.sqlite import lock_wait_seconds, locked_line, patiently_async

T = TypeVar("T")

log = structlog.get_logger("arena.host.ladder")

#: Seconds between looks at the field while nothing can be played (too few active versions).
IDLE_POLL_S = 1.0
#: Times a match is tried before its unit is marked failed (the arena's own trouble, such as no
#: descriptors left to start a bot, is not counted: it is no reason to fail a unit).
MATCH_ATTEMPTS = 3
#: Seconds before a match that could not be played is tried again, doubled each time up to
#: :data:`MAX_RETRY_PAUSE_S`: a host in trouble is not hammered, nor its units burnt.
RETRY_PAUSE_S = 1.0
MAX_RETRY_PAUSE_S = 60.0
#: A unit's play failing unexpectedly (the host's bug, not the arena's trouble) this many times
#: in a row gives the unit up.
UNIT_ATTEMPTS = 5


def store_unusable(err: BaseException) -> bool:
    """Whether ``err`` means the competition's store cannot be used (damaged, or locked by
    another process past ``ARENA_DB_LOCK_TIMEOUT``): the host then stops in one line rather
    than restart a part that would meet it again. A refused change (a version retired under
    the ladder's feet) is no such error."""
    return isinstance(err, CompetitionStoreError) and not isinstance(
        err, NotFound | Conflict | Forbidden
    )


class Wakeup:
    """A flag a waiting task sleeps on, set when what it waits for may have changed."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def set(self) -> None:
        """Wake the waiter (now or at its next wait)."""
        self._event.set()

    async def wait(self, seconds: float) -> None:
        """Until set or ``seconds`` pass; then cleared."""
        with trio.move_on_after(seconds):
            await self._event.wait()
        self._event = trio.Event()


@dataclass(slots=True)
class Standings:
    """The latest fitted ratings of each phase, for the API (refitted as units end)."""

    ladder: RatingTable
    final: RatingTable


def match_id(phase: Phase, unit: int, rotation: int) -> str:
    """A unit's match id: ``u12-r1`` (ladder) or ``f3-r0`` (final); an event's are
    ``e5-r0`` (:func:`arena.host.store.event_match_id`)."""
    return f"{'u' if phase == 'ladder' else 'f'}{unit}-r{rotation}"


class Ladder:
    """Runs the ladder and the final of one competition."""

    def __init__(
        self,
        store: CompetitionStore,
        config: CompetitionConfig,
        player: Player,
        live_token: Callable[[int], str | None],
        lock_wait_s: float | None = None,
        announcer: Announcer | None = None,
    ) -> None:
        """``live_token(version_id)`` is the token of a live version's connected bot, or
        ``None`` while it is not connected. ``lock_wait_s``: how long a write waits for another
        process's lock on the database (default :func:`arena.sqlite.lock_wait_seconds`).
        ``announcer``: where the final's end is announced (by default, in the log only)."""
        self._store = store
        self._announcer = announcer or Announcer(store, config)
        self._lock_wait_s = (
            lock_wait_seconds(CompetitionStoreError) if lock_wait_s is None else lock_wait_s
        )
        self._config = config
        self._player = player
        self._live_token = live_token
        self._limit = trio.CapacityLimiter(config.ladder.concurrency)
        self._rng = random.Random(derive_seed(store.secret_seed(), "matchmaking"))
        empty = fit_ratings([])
        #: What the API shows.
        self.standings = Standings(empty, empty)
        # Set whenever something the ladder waits for may have changed (a version validated, a
        # live bot connected, the state or pace changed): it looks again at once.
        self._wake = Wakeup()
        # Set (and replaced) at every poke, for each match waiting for a live bot.
        self._arrival = trio.Event()
        self._final_started = False
        #: The first pause before a match that could not be played is tried again.
        self.retry_pause_s = RETRY_PAUSE_S
        self._final_announced = False
        #: The state the loop last acted on: once it is ``paused``, no unit is being started.
        self.state_seen = ""
        #: Set once the units a previous run left pending are being played again (their ids
        #: in ``resumed_units``): only then do events look for units to play (arena/host/events).
        self.resumed = trio.Event()
        self.resumed_units: set[int] = set()
        #: Event matches waiting for a place to play: no ladder unit starts meanwhile.
        self.events_waiting = 0
        #: Units the admin stored (reruns), for the loop to play.
        self._adopted: list[int] = []

    def adopt(self, unit_id: int) -> None:
        """Play ``unit_id``, a unit stored by the admin (a rerun), as one of the ladder's own
        (on the ladder's trio thread)."""
        self._adopted.append(unit_id)
        self._wake.set()

    def poke(self) -> None:
        """Something changed (a live bot may have connected): look at the field again now."""
        self._wake.set()
        self._arrival.set()
        self._arrival = trio.Event()

    async def refit(self) -> None:
        """Refit both phases' ratings from the store (in a thread: the fit is numeric work)."""

        def fit() -> tuple[Standings, int]:
            # The current season's leaderboard: its own matches (reset) or all to date (carry).
            season = self._store.current_season().number
            only = fitted_season(self._config, season)
            ladder, ladder_units = self._store.rated_matches("ladder", only)
            final, final_units = self._store.rated_matches("final")
            fitted = Standings(
                fit_ratings(ladder, clusters=ladder_units),
                fit_ratings(final, clusters=final_units),
            )
            return fitted, season

        self.standings, season = await trio.to_thread.run_sync(fit)

        def keep() -> None:
            self._store.record_ratings("ladder", self.standings.ladder, season)
            self._store.record_ratings("final", self.standings.final, season)

        await self._write(keep)

    async def _write(self, write: Callable[[], T]) -> T:
        """``write()`` in a worker thread, riding out another process's lock on the database as
        every patient writer does (:func:`arena.sqlite.patiently_async`); past the lock wait the
        ladder stops in one line, and the matches not stored stay pending for the next start."""
        path, wait_s = self._store.path, self._lock_wait_s

        def waiting(started: bool) -> None:
            if started:
                log.warning("database locked by another process; waiting", wait_s=wait_s)
            else:
                log.info("database no longer locked")

        def give_up() -> CompetitionStoreError:
            return CompetitionStoreError(
                f"{locked_line(path, wait_s)}; the matches not yet stored stay pending: end that "
                "process, then start the host again"
            )

        return await patiently_async(write, wait_s, DatabaseLocked, give_up, waiting)

    async def run(self) -> None:
        """Forever: finish what a previous run left, then play units as the state allows."""
        await self.refit()
        self._adopted.clear()  # pending, so among the pending matches read next
        async with trio.open_nursery() as nursery:
            # A previous run's pending matches first: nothing is lost or played twice.
            pending = await trio.to_thread.run_sync(self._store.pending_matches)
            for unit_id, group in itertools.groupby(pending, key=lambda m: m.unit_id):
                self.resumed_units.add(unit_id)
                nursery.start_soon(self._play_unit, unit_id, list(group))
            self.resumed.set()
            last_start = -math.inf
            while True:
                while self._adopted:
                    unit_id = self._adopted.pop(0)
                    left = await trio.to_thread.run_sync(self._left, unit_id)
                    nursery.start_soon(self._play_unit, unit_id, left)
                state = await trio.to_thread.run_sync(self._store.ladder_state)
                self.state_seen = state
                if state != "closed":
                    # Reopened: a later close plays (or plans) the final again.
                    self._final_started = False
                if state == "closed":
                    await self._final(nursery)
                    await self._sleep()
                    continue
                if state == "paused":
                    await self._sleep()
                    continue
                pace = await trio.to_thread.run_sync(self._store.units_per_minute)
                if pace > 0:
                    wait = last_start + 60.0 / pace - trio.current_time()
                    if wait > 0:
                        await self._sleep(wait)
                        continue
                # No more units than the matches that can be played at once keep waiting, and
                # an event's matches go first.
                waiting = self._limit.statistics().tasks_waiting
                if waiting >= self._config.ladder.concurrency or self.events_waiting:
                    await self._sleep()
                    continue
                started = await self._start_unit(nursery)
                if started:
                    last_start = trio.current_time()
                else:
                    await self._sleep()

    async def _sleep(self, seconds: float = IDLE_POLL_S) -> None:
        await self._wake.wait(seconds)

    def _candidates(self) -> list[Candidate]:
        activity = self._store.activity("ladder")
        rated = {r.bot: r for r in self.standings.ladder.ratings}
        out = []
        for v in self._store.versions(status="validated"):
            if v.kind == "live" and self._live_token(v.id) is None:
                continue
            seen = activity.get(v.id)
            rating = rated.get(v.ref)
            extra = {}
            if rating is not None and rating.matches > 0:
                extra = {"rating": rating.elo, "uncertainty": rating.plus_minus}
            out.append(
                Candidate(
                    v.id,
                    units_played=seen.units if seen else 0,
                    last_unit=seen.last_unit if seen else None,
                    running=seen.running if seen else 0,
                    **extra,
                )
            )
        return out

    async def _start_unit(self, nursery: trio.Nursery) -> bool:
        store = self._store

        def plan(unit_id: int) -> UnitPlan | None:
            table = choose_table(self._candidates(), len(self._config.places), self._rng, unit_id)
            if table is None:
                return None
            matches = [
                (match_id("ladder", unit_id, rotation), rotation, seats)
                for rotation, seats in unit_matches(table, self._config.places)
            ]
            return unit_seed(store.secret_seed(), unit_id), table, matches

        def create() -> tuple[int, list[StoredMatch]] | None:
            made = store.create_next_unit("ladder", plan)
            return None if made is None else (made, store.unit_matches(made))

        created = await self._write(create)
        if created is None:
            return False
        unit_id, matches = created
        log.info("unit started", unit=unit_id, matches=len(matches))
        nursery.start_soon(self._play_unit, unit_id, matches)
        return True

    async def play_unit(self, unit_id: int, matches: Sequence[StoredMatch]) -> None:
        """Play a unit stored by someone else (an event's), as the ladder plays its own."""
        await self._play_unit(unit_id, matches)

    async def write(self, write: Callable[[], T]) -> T:
        """``write()`` in a worker thread, riding out another process's lock as the ladder's
        own writes do."""
        return await self._write(write)

    async def _play_unit(self, unit_id: int, matches: Sequence[StoredMatch]) -> None:
        given = [matches]

        async def play() -> None:
            todo = given.pop() if given else await trio.to_thread.run_sync(self._left, unit_id)
            async with trio.open_nursery() as nursery:
                for m in todo:
                    nursery.start_soon(self._play_match, unit_id, m)

        # A unit whose play fails unexpectedly plays what it has left again, after a pause,
        # alone: the ladder's other units play on. A failure that repeats is the host's bug met
        # by this unit: it is given up (its matches void, no bot charged) rather than retried
        # for ever.
        try:
            await supervised(
                f"unit {unit_id}",
                play,
                store_unusable,
                pause_s=self.retry_pause_s,
                attempts=UNIT_ATTEMPTS,
            )
        except GaveUp as err:
            reason = f"the host could not play it: {type(err.last).__name__}: {err.last}"
            await self._write(functools.partial(self._store.fail_unit, unit_id, reason[:500]))
            log.error("unit given up", unit=unit_id, reason=reason, exc_info=err.last)
        await self.refit()
        if self._final_started:
            await self._announce_final_end()

    def _left(self, unit_id: int) -> list[StoredMatch]:
        return [m for m in self._store.unit_matches(unit_id) if m.state == "pending"]

    async def _announce_final_end(self) -> None:
        """Once every unit of the final is played: say so in the log, with the winner (once)."""

        def look() -> tuple[list[Unit], bool]:
            # Reopened while it played: not over until its failed units are played again.
            return self._store.units(phase="final"), self._store.final_interrupted()

        units, interrupted = await trio.to_thread.run_sync(look)
        state = final_state(units)
        if state != "finished" or interrupted or self._final_announced:
            return
        self._final_announced = True
        winners = final_winners(state, self.standings.final)
        detail = {"units": len(units), "standings": [r.bot for r in self.standings.final.ratings]}
        # Stored once (a restart does not announce it again), with its webhook delivery.
        await self._write(
            functools.partial(self._announcer.announce, "final", "the final", winners, detail)
        )

    async def _play_match(self, unit_id: int, match: StoredMatch) -> None:
        attempts, pause = 0, self.retry_pause_s
        while attempts < MATCH_ATTEMPTS:
            missing = await self._await_live(match)
            if missing:
                reason = (
                    f"live bot {' and '.join(missing)} not connected within "
                    f"{self._config.ladder.live_grace_s} s"
                )
                if await self._write(functools.partial(self._store.fail_unit, unit_id, reason)):
                    log.warning("unit given up", unit=unit_id, reason=reason)
                return
            # An event's match waiting for a place holds new ladder units back until it has one.
            event = match.phase == "event"
            self.events_waiting += event
            try:
                async with self._limit:
                    self.events_waiting -= event
                    event = False
                    played = await self._try_match(match)
            finally:
                self.events_waiting -= event
            if isinstance(played, PlayedMatch):
                await self._write(
                    functools.partial(
                        self._store.commit_match,
                        match.match_id,
                        played.result,
                        played.faults,
                        played.record_path,
                    )
                )
                return
            attempts += 0 if played else 1
            await trio.sleep(pause)
            pause = min(2 * pause, MAX_RETRY_PAUSE_S)
        reason = f"match {match.match_id} could not be played in {MATCH_ATTEMPTS} attempts"
        await self._write(functools.partial(self._store.fail_unit, unit_id, reason))

    async def _await_live(self, match: StoredMatch) -> list[str]:
        """Wait, up to ``ladder.live_grace_s``, for the bots of the match's live versions to be
        connected (after a restart of the host they reconnect by themselves); those still
        missing then, ``[]`` once all are."""
        live = await trio.to_thread.run_sync(self._live_versions, match.seats)
        deadline = trio.current_time() + self._config.ladder.live_grace_s
        waiting = False
        while True:
            arrival = self._arrival  # taken before the look: an arrival after it wakes the wait
            missing = [v.ref for v in live if self._live_token(v.id) is None]
            if not missing or trio.current_time() >= deadline:
                return missing
            if not waiting:
                waiting = True
                log.warning(
                    "match waits for its live bots",
                    match_id=match.match_id,
                    bots=missing,
                    grace_s=self._config.ladder.live_grace_s,
                )
            # A Hello wakes it; a look a second also sees a bot welcomed just after its poke.
            with trio.move_on_at(min(deadline, trio.current_time() + IDLE_POLL_S)):
                await arrival.wait()

    def _live_versions(self, seats: Sequence[int]) -> list[Version]:
        versions = [self._store.version(v) for v in dict.fromkeys(seats)]
        return [v for v in versions if v.kind == "live"]

    async def _try_match(self, match: StoredMatch) -> PlayedMatch | bool:
        """The match played, or whether it failed for the arena's own trouble (``True``: not
        counted as an attempt) rather than an arena error (``False``)."""
        try:
            entrants = await trio.to_thread.run_sync(self._entrants, match.seats)
            return await self._player.play(match.match_id, match.seed, entrants)
        except (ArenaError, OSError) as err:
            trouble = is_host_trouble(err)
            if not (trouble or isinstance(err, ArenaError)):
                raise
            log.warning(
                "match not played", match_id=match.match_id, host_trouble=trouble, error=str(err)
            )
            return trouble

    def _entrants(self, seats: Sequence[int]) -> list[Entrant]:
        """The entrant of each seat (a version may have several: partners)."""
        made: dict[int, Entrant] = {}
        for version_id in seats:
            if version_id not in made:
                made[version_id] = self._entrant(self._store.version(version_id))
        return [made[v] for v in seats]

    def _entrant(self, version: Version) -> Entrant:
        if version.kind == "live":
            token = self._live_token(version.id)
            if token is None:
                raise ArenaError(f"live bot {version.ref} is not connected")
            return Entrant(version.ref, None, token)
        # Checked against its content address before every match.
        program = version_program(self._store.directory, version)
        snapshot = version.sha256 if version.kind == "archive" else None
        return Entrant(version.ref, program, snapshot=snapshot)

    # --- the final ------------------------------------------------------------------------

    async def _final(self, nursery: trio.Nursery) -> None:
        """Once closed: store the final's units (once), then play whatever of them is pending."""
        store = self._store

        def plan() -> list[tuple[int, list[StoredMatch]]]:
            if not store.units(phase="final"):
                self._plan_final()
            return [
                (u.id, [m for m in store.unit_matches(u.id) if m.state == "pending"])
                for u in store.units(state="pending", phase="final")
            ]

        if self._final_started:
            return
        self._final_started = True
        await self.refit()
        pending = await self._write(plan)
        for unit_id, matches in pending:
            nursery.start_soon(self._play_unit, unit_id, matches)
        if not pending:  # played in full before this start (or no final at all)
            await self._announce_final_end()

    def _plan_final(self) -> None:
        store, cfg = self._store, self._config
        by_ref = {v.ref: v for v in store.versions(status="validated")}
        rated = [r for r in self.standings.ladder.ratings if r.bot in by_ref and r.matches]
        # In the leaderboard's order: no provisional version before an established one.
        provisional = ProvisionalRule.of(cfg.ladder).provisional(rated)
        rated.sort(key=lambda r: r.bot in provisional)
        top = [by_ref[r.bot].id for r in rated[: cfg.final.top]]
        n_places = len(cfg.places)
        if len(top) < 2:
            log.warning("no final: fewer than two rated versions")
            return
        tables = (
            list(itertools.combinations(top, n_places))
            if len(top) >= n_places
            else [tuple(top[p % len(top)] for p in range(n_places))]
        )
        for t, table in enumerate(tables):
            rotations = len(unit_matches(table, cfg.places))
            deals = max(1, math.ceil(cfg.final.matches_per_pairing / rotations))
            for deal in range(deals):
                seed = derive_seed(store.secret_seed(), "final", t, deal)

                def plan(unit_id: int, seed: int = seed, table: Sequence[int] = table) -> UnitPlan:
                    matches = [
                        (match_id("final", unit_id, r), r, seats)
                        for r, seats in unit_matches(table, cfg.places)
                    ]
                    return seed, table, matches

                store.create_next_unit("final", plan)
