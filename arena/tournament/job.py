"""One tournament match as a job: a plan in, a result and a record out, over the real arena
server.

:func:`play_pooled_match` (the default, ``restart = "on_failure"``) seats the pool's long-lived
processes (arena/pool.py): the match is registered with their tokens and the referee
plays it on their open streams. :func:`play_match` (``restart = "per_match"``) starts one
process per seat (``ARENA_ADDRESS``, ``ARENA_TOKEN``, ``ARENA_SEED`` in its environment), lets
the referee play, stops the processes: nothing is shared between matches but the server's router.
Both write the record.

With sandbox limits (the default of ``arena tournament``) every bot command runs boxed
(arena/bots/sandbox.py) and reaches the server through its Unix socket in a per-run directory;
registered image bots always run in locked-down containers (arena/bots/docker.py).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence

from arena.bots.launch import Confinement, confine
from arena.bots.sandbox import Limits
from arena.layout import LOGS_DIR, seat_log_name
from arena.match import BotLaunch, run_with_bots, save_record
from arena.pool import BotPool, play_seated
from arena.rules import PlayedMatch
from arena.server import ArenaServer, MatchOutcome, MatchSpec, SeatSpec, new_token
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import MatchPlan

#: Plays one match: the job the runner schedules.
MatchFn = Callable[[MatchPlan], Awaitable[PlayedMatch]]


def confine_bots(config: TournamentConfig, no_sandbox: bool = False) -> Limits | None:
    """The sandbox limits for ``config``'s bot commands (``None`` with ``no_sandbox``); raises
    one line when the bots need a sandbox or a Docker engine this machine lacks."""
    return confine([b.program for b in config.bots], no_sandbox)


def match_spec(
    config: TournamentConfig, plan: MatchPlan, tokens: Sequence[str] | None = None
) -> MatchSpec:
    """The server's spec for ``plan``, with fresh secret tokens (or the seats' ``tokens``: the
    pooled processes that play them)."""
    seat_tokens = list(tokens) if tokens is not None else [new_token() for _ in plan.seats]
    seats = [SeatSpec(t, bot) for t, bot in zip(seat_tokens, plan.seats, strict=True)]
    return MatchSpec.of(config.rules, plan.match_id, seats, plan.seed)


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
        launches.append(BotLaunch(bot.program, out / LOGS_DIR / seat_log_name(plan.match_id, seat)))
    outcome = await run_with_bots(server, spec, launches, server.address, confinement)
    return await _finish(config, plan, outcome)


async def play_pooled_match(
    server: ArenaServer, config: TournamentConfig, plan: MatchPlan, pool: BotPool
) -> PlayedMatch:
    """Play one match on the pool's long-lived processes (no two seats on one process, no
    process on a deal it has played) and write its record; processes whose seat crashed or
    forfeited are replaced."""
    outcome = await play_seated(
        server, pool, plan.seats, plan.seed, functools.partial(match_spec, config, plan)
    )
    return await _finish(config, plan, outcome)


async def _finish(config: TournamentConfig, plan: MatchPlan, outcome: MatchOutcome) -> PlayedMatch:
    # An arena error or a RecordError (disk full, directory gone) reaches the runner as an
    # ArenaError: the match is reported as not played and stays pending, so the same command
    # replays it.
    record = await save_record(outcome, config.output)
    return PlayedMatch(outcome.result, outcome.faults, record)
