"""Playing a tournament's matches over the real arena server, one bot process per seat.

:func:`play_match` is the match job: from a plan it registers the match with the server, starts
one process per seat (``ARENA_ADDRESS``, ``ARENA_TOKEN``, ``ARENA_SEED`` in its environment),
lets the referee play it, stops the processes and writes the record. Nothing is shared between
matches but the server's router.

With sandbox limits (the default of ``arena tournament``) every bot command runs boxed
(arena/sandbox.py) and reaches the server through its Unix socket in a per-run directory;
registered image bots always run in locked-down containers (arena/docker_bots.py).
"""

from __future__ import annotations

import functools
from pathlib import Path

import trio

from arena.errors import ArenaError
from arena.home import arena_home
from arena.launcher import Confinement
from arena.match import BotLaunch, run_with_bots
from arena.records import write_record
from arena.sandbox import SOCKET_NAME, Limits, prepare_socket, socket_directory
from arena.server import (
    ArenaServer,
    MatchSpec,
    SeatSpec,
    TimeControl,
    new_token,
    open_arena_server,
)
from arena.tournament.config import TournamentConfig
from arena.tournament.progress import Feedback
from arena.tournament.report import Standings, standings
from arena.tournament.runner import PlayedMatch, open_store, run_matches
from arena.tournament.schedule import MatchPlan
from arena.tournament.store import Store
from engine import EngineError

#: Where the records and bot logs go inside the output directory.
RECORDS_DIR = "records"
LOGS_DIR = "logs"


def confine_bots(config: TournamentConfig, no_sandbox: bool = False) -> Limits | None:
    """The sandbox limits for ``config``'s bot commands (``None`` with ``no_sandbox``); raises
    one line when the bots need a sandbox or a Docker engine this machine lacks."""
    from arena.docker_bots import check_available as check_docker
    from arena.sandbox import check_available, default_limits

    if any(b.image for b in config.bots):
        check_docker()
    if no_sandbox:
        return None
    if any(not b.image for b in config.bots):
        check_available()
    return default_limits()


def match_spec(config: TournamentConfig, plan: MatchPlan) -> MatchSpec:
    """The server's spec for ``plan``, with fresh secret tokens."""
    return MatchSpec(
        match_id=plan.match_id,
        game=config.game.id,
        seats=tuple(SeatSpec(new_token(), bot) for bot in plan.seats),
        seed=plan.seed,
        players=config.match_config.players,
        options=dict(config.match_config.options),
        time_control=TimeControl(config.time_control.move_ms, config.time_control.bank_ms),
        fault_policy="strict" if config.fault_policy == "strict" else "lenient",
    )


async def play_match(
    server: ArenaServer,
    config: TournamentConfig,
    plan: MatchPlan,
    confinement: Confinement | None = None,
) -> PlayedMatch:
    """Play one match with freshly launched bot processes and write its record."""
    spec = match_spec(config, plan)
    bots = {b.name: b for b in config.bots}
    out = config.output
    server.register(spec)
    launches = []
    for seat, name in enumerate(plan.seats):
        bot = bots[name]
        launches.append(
            BotLaunch(
                bot.command,
                out / LOGS_DIR / f"{plan.match_id}.seat{seat}.log",
                image=bot.image or None,
                bot_dir=Path(bot.workdir) if bot.workdir else None,
            )
        )
    outcome = await run_with_bots(server, spec, launches, server.address, confinement)
    if outcome.result.reason == "error":
        # The arena failed, not the bots: no result to rate. Left pending, the match is
        # reported and replayed by the next run.
        raise ArenaError(outcome.result.summary)
    record = Path(RECORDS_DIR) / f"{plan.match_id}.jsonl.gz"
    result = outcome.result_dict()
    # A RecordError (disk full, directory gone) reaches the runner like any ArenaError: the
    # match is reported as not played and stored as pending, so the same command replays it.
    await trio.to_thread.run_sync(
        functools.partial(write_record, out / record, outcome.header, outcome.entries, result)
    )
    return PlayedMatch(
        result=outcome.result.to_dict(),
        faults=[f.to_dict() for f in outcome.faults],
        record_path=str(record),
    )


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
