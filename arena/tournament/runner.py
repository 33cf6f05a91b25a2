"""Running a tournament on trio: up to ``concurrency`` matches at once over one arena server.

A match is a pure job: :func:`arena.tournament.job.play_match` turns a plan into a result and a
record with no state shared between matches. The runner only decides what to start, and commits
each result with its ``done`` status in one transaction, so the tournament can be killed at any
moment and resumed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import trio

from arena.bots.launch import Confinement
from arena.bots.sandbox import SOCKET_NAME, Limits, prepare_socket, socket_directory
from arena.errors import ArenaError
from arena.layout import RECORDS_DIR, arena_home
from arena.records.format import remove_stale_temps
from arena.seeds import fresh_seed
from arena.server import open_arena_server
from arena.tournament.config import TournamentConfig
from arena.tournament.job import MatchFn, PlayedMatch, play_match
from arena.tournament.progress import Feedback
from arena.tournament.report import Standings, standings
from arena.tournament.schedule import MatchPlan, build_schedule
from arena.tournament.store import DB_NAME, Store
from engine import EngineError


class MatchFailed(ArenaError):
    """Some matches could not be played (an arena-side error); rerunning retries them."""


def plan_tournament(config: TournamentConfig) -> list[MatchPlan]:
    """The full schedule of ``config`` (its seed settled: see :func:`open_store`)."""
    if config.seed is None:
        raise ValueError("plan_tournament needs the tournament's seed; open_store settles it")
    return build_schedule(
        config.game,
        config.match_config,
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
    store = Store(config.output / DB_NAME)
    try:
        store.lock()
        if config.seed is None:
            stored = (store.stored_config() or {}).get("seed")
            seed = stored if isinstance(stored, int) else fresh_seed()
            config = replace(config, seed=seed)
        plans = plan_tournament(config)
        store.initialize(
            config.identity(),
            [(b.name, b.program.command) for b in config.bots],
            plans,
            {"name": config.name},
        )
        # Under the lock and before any match starts, every record temp file is the leftover
        # of a runner killed mid-write.
        remove_stale_temps(config.output / RECORDS_DIR)
    except BaseException:
        store.close()
        raise
    return store, config, plans


def summary_line(plan: MatchPlan, played: PlayedMatch) -> str:
    """``rules,random,rules,random: N+S win the rubber 2-1``."""
    text = str(played.result.get("summary") or played.result.get("reason", ""))
    return f"{','.join(plan.seats)}: {text}"


async def run_matches(
    plans: Sequence[MatchPlan],
    store: Store,
    play: MatchFn,
    concurrency: int,
    feedback: Feedback,
) -> int:
    """Play every pending plan, ``concurrency`` at a time, in schedule order; return how many
    were played. A match that raises is left pending (and reported); the others go on."""
    pending = store.pending_ids()
    todo = [p for p in plans if p.match_id in pending]
    failures: list[str] = []
    slots = trio.Semaphore(concurrency)

    async def one(plan: MatchPlan) -> None:
        try:
            store.mark_started(plan.match_id)
            t0 = time.monotonic()
            try:
                played = await play(plan)
            except ArenaError as err:
                failures.append(f"{plan.match_id}: {err}")
                feedback.note(f"match {plan.match_id} failed: {err}")
                return
            if store.finish(
                plan.match_id,
                played.result,
                played.faults,
                played.record_path,
                time.monotonic() - t0,
            ):
                feedback.finished(plan.match_id, summary_line(plan, played), len(played.faults))
        finally:
            slots.release()

    async with trio.open_nursery() as nursery:
        for plan in todo:
            await slots.acquire()
            nursery.start_soon(one, plan)
    if failures:
        raise MatchFailed(
            f"{len(failures)} match(es) could not be played (first: {failures[0]}); "
            "run the same command again to retry them"
        )
    return len(todo)


def _unwrap(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """What a user should see of an exception group escaping trio: Ctrl-C as KeyboardInterrupt,
    a single arena or engine error as itself (the CLI prints it as one line)."""
    if group.subgroup(KeyboardInterrupt) is not None:
        return KeyboardInterrupt()
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        else:
            leaves.append(exc)
    if len(leaves) == 1 and isinstance(leaves[0], ArenaError | EngineError):
        return leaves[0]
    return group


def _play_pending(
    config: TournamentConfig,
    store: Store,
    plans: list[MatchPlan],
    feedback: Feedback,
    sandbox: Limits | None = None,
) -> None:
    async def main(sockets: Path) -> None:
        async with open_arena_server("127.0.0.1:0", unix=sockets / SOCKET_NAME) as server:
            prepare_socket(sockets / SOCKET_NAME)  # boxed bots run as uid nobody
            confinement = Confinement(sockets, sandbox, hide=(config.output, arena_home()))
            job = functools.partial(play_match, server, config, confinement=confinement)
            await run_matches(plans, store, job, config.concurrency, feedback)

    try:
        with socket_directory() as sockets:
            trio.run(main, sockets)
    except BaseExceptionGroup as group:
        raise _unwrap(group) from None


def run_tournament(
    config: TournamentConfig, feedback: Feedback, sandbox: Limits | None = None
) -> Standings:
    """Run (or resume, or just report) the tournament of ``config``; its final standings.

    ``sandbox``: limits for boxing every bot command (``None``: plain processes).
    """
    store, config, plans = open_store(config)
    with store:
        done, total = store.counts()
        if done < total:
            feedback.start(config.name, total, done)
            try:
                _play_pending(config, store, plans, feedback, sandbox)
            except KeyboardInterrupt:
                done, total = store.counts()
                feedback.note(
                    f"{config.name}: stopped with {done}/{total} matches stored; run the same "
                    "command again to resume"
                )
                raise
            finally:
                feedback.close()
        return standings(store)
