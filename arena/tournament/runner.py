"""Running a tournament on trio: up to ``concurrency`` matches at once over one arena server.

A match is a pure job: :func:`arena.tournament.play.play_match` turns a plan into a result and a
record with no state shared between matches. The runner only decides what to start, and commits
each result with its ``done`` status in one transaction, so the tournament can be killed at any
moment and resumed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import trio

from arena.errors import ArenaError
from arena.records import remove_stale_temps
from arena.seeds import fresh_seed
from arena.tournament.config import TournamentConfig
from arena.tournament.progress import Feedback
from arena.tournament.schedule import MatchPlan, build_schedule
from arena.tournament.store import DB_NAME, Store


@dataclass(frozen=True, slots=True)
class PlayedMatch:
    """What one finished match produced, ready to store."""

    #: ``Result.to_dict()`` (a normal or forfeit result).
    result: dict[str, Any]
    #: Faults charged: ``{"seat", "kind", "detail"}`` each.
    faults: list[dict[str, Any]] = field(default_factory=list)
    #: The record file, relative to the output directory.
    record_path: str | None = None


#: Plays one match: the job the runner schedules.
MatchFn = Callable[[MatchPlan], Awaitable[PlayedMatch]]


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
            [(b.name, b.command) for b in config.bots],
            plans,
            {"name": config.name},
        )
        # Under the lock and before any match starts, every record temp file is the leftover
        # of a runner killed mid-write. (Imported here: play imports this module.)
        from arena.tournament.play import RECORDS_DIR

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
