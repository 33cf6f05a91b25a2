"""Running a tournament on trio: up to ``concurrency`` matches at once over one arena server.

A match is a job: a plan in, a result and a record out (arena/tournament/job.py), played on
long-lived bot processes from a :class:`~arena.pool.BotPool` (or, with ``restart =
"per_match"``, on processes started for it). The runner only decides what to start, and commits
each result with its ``done`` status in one transaction, so the tournament can be killed at any
moment and resumed.

The database is never touched from the trio loop itself: one writer task takes every write (a
match started, a match finished) in order from a channel and makes it in a worker thread
(``trio.to_thread.run_sync``; the store serializes its connection). When another process holds
the results file's write lock, the writer retries with backoff for up to
:func:`arena.tournament.store.lock_wait_seconds` (``ARENA_DB_LOCK_TIMEOUT``) while the matches
go on and their results wait in the channel, then stores them all once the lock is gone; if the
lock outlasts that wait, the tournament stops with one line, and every match not yet stored is
still pending, so running the same command again plays it.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import trio

from arena.bots.sandbox import Limits
from arena.boxed import Box, open_box
from arena.cluster.task import Cluster, ClusterLost, SlotsLike
from arena.errors import ArenaError, one_error
from arena.layout import LOGS_DIR, RECORDS_DIR, arena_home
from arena.pool import BotPool
from arena.records.format import remove_stale_temps
from arena.rules import PlayedMatch
from arena.seeds import fresh_seed
from arena.sqlite import patiently, patiently_async
from arena.tournament.config import TournamentConfig
from arena.tournament.job import MatchFn, play_match, play_pooled_match
from arena.tournament.progress import Feedback
from arena.tournament.remote import RemoteRun
from arena.tournament.report import Standings, standings
from arena.tournament.schedule import MatchPlan, build_schedule
from arena.tournament.store import (
    DB_NAME,
    Store,
    StoreLocked,
    lock_wait_seconds,
    locked_error,
    open_to_run,
)

T = TypeVar("T")

#: Called as each match is played; true ends the run early (see :func:`run_matches`).
StopFn = Callable[[MatchPlan, PlayedMatch], bool]


class MatchFailed(ArenaError):
    """Some matches could not be played (an arena-side error); rerunning retries them."""


def plan_tournament(config: TournamentConfig) -> list[MatchPlan]:
    """The full schedule of ``config`` (its seed settled: see :func:`open_store`)."""
    if config.seed is None:
        raise ValueError("plan_tournament needs the tournament's seed; open_store settles it")
    return build_schedule(
        config.rules.game,
        config.rules.config,
        [b.name for b in config.bots],
        config.format,
        config.matches_per_pairing,
        config.duplicate,
        config.seed,
    )


def open_store(config: TournamentConfig) -> tuple[Store, TournamentConfig, list[MatchPlan]]:
    """The tournament's store, created or checked against ``config`` (a different config is an
    error: results are never mixed), locked against a second ``arena tournament`` on the same
    directory; with the config, its seed settled, and its schedule.

    A config without a seed resumes with the stored tournament's, or starts a new tournament on
    a fresh secret one: a seed the bots could guess would deal them every hand.
    """
    lock_wait = lock_wait_seconds()  # a malformed ARENA_DB_LOCK_TIMEOUT stops before anything
    store = open_to_run(config.output / DB_NAME)
    try:
        if config.seed is None:
            stored = (store.stored_config() or {}).get("seed")
            seed = stored if isinstance(stored, int) else fresh_seed()
            config = replace(config, seed=seed)
        plans = plan_tournament(config)
        args = (
            config.identity(),
            [(b.name, b.program.command) for b in config.bots],
            plans,
            {"name": config.name},
        )
        _patiently(store, lock_wait, functools.partial(store.initialize, *args))
        # Under the lock and before any match starts, every record temp file is the leftover
        # of a runner killed mid-write.
        remove_stale_temps(config.output / RECORDS_DIR)
    except BaseException:
        store.close()
        raise
    return store, config, plans


def summary_line(plan: MatchPlan, played: PlayedMatch) -> str:
    """``rules,random,rules,random: N+S win the rubber 2-1``."""
    text = played.result.summary or played.result.reason
    return f"{','.join(plan.seats)}: {text}"


def _patiently(store: Store, wait_s: float, write: Callable[[], T]) -> T:
    """``write()``, retried while another process holds the file's lock, for up to ``wait_s``
    seconds (outside the trio loop: opening a tournament)."""
    return patiently(write, wait_s, StoreLocked, lambda: locked_error(store.path, wait_s))


@dataclass(frozen=True, slots=True)
class _Started:
    """A match started: count its attempt."""

    plan: MatchPlan


@dataclass(frozen=True, slots=True)
class _Finished:
    """A match played: store its result with its ``done`` status."""

    plan: MatchPlan
    played: PlayedMatch
    seconds: float


async def _write(store: Store, feedback: Feedback, wait_s: float, write: Callable[[], T]) -> T:
    """``write()`` in a worker thread, retried with backoff while another process holds the
    file's lock; after ``wait_s`` seconds of that, the one-line error that stops the run."""

    def waiting(started: bool) -> None:
        if started:
            feedback.note(
                f"{store.path} is locked by another process; waiting up to {wait_s:g} s to "
                "store results (matches go on meanwhile)"
            )
        else:
            feedback.note(f"{store.path} is no longer locked; storing results again")

    give_up = functools.partial(locked_error, store.path, wait_s)
    return await patiently_async(write, wait_s, StoreLocked, give_up, waiting)


async def _store_writes(
    writes: trio.MemoryReceiveChannel[_Started | _Finished],
    store: Store,
    feedback: Feedback,
    wait_s: float,
) -> None:
    """The writer task: every write, in the order the matches made them, one at a time. A
    result is reported when it is stored (not when it is played)."""
    async for item in writes:
        match_id = item.plan.match_id
        if isinstance(item, _Started):
            await _write(store, feedback, wait_s, functools.partial(store.mark_started, match_id))
            continue
        played = item.played
        finish = functools.partial(
            store.finish,
            match_id,
            played.result,
            played.faults,
            played.record_path,
            item.seconds,
        )
        if await _write(store, feedback, wait_s, finish):
            feedback.finished(match_id, summary_line(item.plan, played), len(played.faults))


async def run_matches(
    plans: Sequence[MatchPlan],
    store: Store,
    play: MatchFn,
    concurrency: int | SlotsLike,
    feedback: Feedback,
    lock_wait_s: float | None = None,
    stop: StopFn | None = None,
) -> int:
    """Play every pending plan, ``concurrency`` at a time (or as ``concurrency``'s slots allow:
    a cluster's), in schedule order; return how many were started. A match that raises is left
    pending (and reported); the others go on. A :class:`ClusterLost` stops the run: the matches
    in flight are abandoned (left pending), those played are stored, then it is raised.

    ``lock_wait_s``: how long writes wait for another process's lock on the results file
    (default :func:`lock_wait_seconds`); the run then stops with one :class:`StoreError`,
    every match whose result was not stored left pending. ``stop(plan, played)``, called as
    each match is played, ends the run early when it returns true (an SPRT that has decided):
    no other match starts, those running finish and are stored, the rest stay pending."""
    wait_s = lock_wait_seconds() if lock_wait_s is None else lock_wait_s
    pending = await trio.to_thread.run_sync(store.pending_ids)
    todo = [p for p in plans if p.match_id in pending]
    failures: list[str] = []
    lost: list[ClusterLost] = []
    slots: SlotsLike = trio.Semaphore(concurrency) if isinstance(concurrency, int) else concurrency
    # Unbounded: a match never waits for the database; while another process holds the lock
    # the results wait here (bounded by the lock wait, after which the run stops).
    send, receive = trio.open_memory_channel[_Started | _Finished](math.inf)

    stopped = False
    started = 0

    async def one(plan: MatchPlan) -> None:
        nonlocal stopped
        try:
            send.send_nowait(_Started(plan))
            t0 = time.monotonic()
            try:
                played = await play(plan)
            except ClusterLost as err:
                if not lost:
                    lost.append(err)
                matches.cancel_scope.cancel()
                return
            except ArenaError as err:
                failures.append(f"{plan.match_id}: {err}")
                feedback.note(f"match {plan.match_id} failed: {err}")
                return
            send.send_nowait(_Finished(plan, played, time.monotonic() - t0))
            if stop is not None and stop(plan, played):
                stopped = True
        finally:
            slots.release()

    # The writer is the only task that raises for the database, so a run it stops ends in one
    # error (the matches it cancels end quietly).
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_store_writes, receive, store, feedback, wait_s)
        # `send` is closed once every match is done: the writer drains the channel and ends.
        async with send, trio.open_nursery() as matches:
            for plan in todo:
                await slots.acquire()
                if stopped:
                    slots.release()
                    break
                started += 1
                matches.start_soon(one, plan)
    if lost:
        raise lost[0]
    if failures:
        raise MatchFailed(
            f"{len(failures)} match(es) could not be played (first: {failures[0]}); "
            "run the same command again to retry them"
        )
    return started


def _play_pending(
    config: TournamentConfig,
    store: Store,
    plans: list[MatchPlan],
    feedback: Feedback,
    box: Box,
    stop: StopFn | None = None,
    remote: RemoteRun | None = None,
) -> None:
    async def main() -> None:
        if remote is not None:
            await run_matches(plans, store, remote.play, remote.slots(), feedback, lock_wait, stop)
            return
        confinement = box.confinement
        # Duplicate deals: no bot may watch another rotation of its deal as it is played.
        async with box.serve(spectators=False) as server:
            if config.restart == "per_match":
                job = functools.partial(play_match, server, config, confinement=confinement)
                await run_matches(plans, store, job, config.concurrency, feedback, lock_wait, stop)
                return
            assert config.seed is not None  # settled by open_store
            (config.output / LOGS_DIR).mkdir(parents=True, exist_ok=True)
            async with trio.open_nursery() as processes:
                programs = {b.name: b.program for b in config.bots}
                pool = BotPool(
                    server, programs, config.output / LOGS_DIR, config.seed, processes, confinement
                )
                try:
                    pooled = functools.partial(play_pooled_match, server, config, pool=pool)
                    await run_matches(
                        plans, store, pooled, config.concurrency, feedback, lock_wait, stop
                    )
                finally:
                    await pool.close()
                    processes.cancel_scope.cancel()

    lock_wait = lock_wait_seconds()

    try:
        trio.run(main)
    except BaseExceptionGroup as group:
        raise one_error(group) from None


def check_bots(config: TournamentConfig, box: Box) -> None:
    """Refuse, in one line, a boxed bot whose command names what its box does not show: it
    would forfeit every match (:func:`~arena.bots.launch.check_in_box`)."""
    box.check([(f'bot "{b.name}"', b.program) for b in config.bots])


def run_tournament(
    config: TournamentConfig,
    feedback: Feedback,
    sandbox: Limits | None = None,
    stop_for: Callable[[Store], StopFn | None] | None = None,
    cluster: Cluster | None = None,
) -> Standings:
    """Run (or resume, or just report) the tournament of ``config``; its final standings.

    ``sandbox``: limits for boxing every bot command (``None``: plain processes). Before any
    match, and before a new tournament's store is made, a boxed command that names what its box
    does not show is refused (:class:`~arena.bots.launch.NotInBox`). Nothing the run starts
    outlives it, however it ends (:func:`~arena.bots.reaper.bot_run`).

    ``stop_for(store)``, given the opened store, returns the run's early stop (see
    :func:`run_matches`), or ``None`` to play nothing more (a sequential test already decided).

    ``cluster``: play the matches there (arena/tournament/remote.py), not here; ``sandbox``
    then says what the workers must box the bots in.
    """
    with open_box(sandbox, (config.output, arena_home())) as box:
        fresh = not (config.output / DB_NAME).exists()
        if fresh:  # refused before the store holds this config: a fixed command is a new one
            check_bots(config, box)
        store, config, plans = open_store(config)
        with store:
            done, total = store.counts()
            stop = stop_for(store) if stop_for is not None else None
            if done < total and (stop_for is None or stop is not None):
                if not fresh:
                    check_bots(config, box)
                remote = None
                if cluster is not None:
                    remote = RemoteRun(cluster, config, sandbox)
                    remote.offer_bots()
                feedback.start(config.name, total, done)
                try:
                    _play_pending(config, store, plans, feedback, box, stop, remote)
                except KeyboardInterrupt:
                    done, total = store.counts()
                    feedback.note(
                        f"{config.name}: stopped with {done}/{total} matches stored; run the "
                        "same command again to resume"
                    )
                    raise
                finally:
                    feedback.close()
            return standings(store)
