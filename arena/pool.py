"""Bot processes kept alive across matches (a tournament's, ``arena match --games N``), as chess
tournament managers keep engines (cutechess-cli, fastchess): a process connects once and is
seated in match after match over the same stream, so the run spends its time playing, not
starting bots.

A :class:`BotPool` starts processes as matches need them and hands them out (:meth:`BotPool.
lease`) under two rules:

- **Partners never share a process**: a match's seats get distinct processes.
- **No process sees a deal twice**: with duplicate deals the same cards come back in other seats
  (and at other tables), so a process that played a deal is never seated on it again; the deal
  is known by its engine seed, which is what fixes the cards.

A process whose seat crashed or forfeited, or that exited, is stopped and replaced by a new one
for the next match; a healthy one goes back to the pool. Each process's output goes to its own
log (``logs/BOT-pN.log``), and its ``ARENA_SEED`` is derived from the tournament's seed, the bot
and its number; each match's ``MatchStart.bot_seed`` reseeds the SDK's generator, so seeded bots
play the same moves whichever process they run in. What a bot may keep between matches is in
docs/tournaments.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog
import trio
from cardarena.messages import FaultInfo

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement, start_bot
from arena.bots.process import EXIT_GRACE_S, RunningBot, bot_environment
from arena.errors import ArenaError, HostTrouble, is_host_trouble
from arena.seeds import derive_seed
from arena.server import ArenaServer, MatchOutcome, MatchSpec, new_token

log = structlog.get_logger("arena.pool")


@dataclass(eq=False)
class PooledBot:
    """One long-lived bot process."""

    #: The tournament bot it runs.
    bot: str
    #: Its number among that bot's processes, from 1 (its log is ``BOT-pN.log``).
    number: int
    #: Its connection token, known to the server for the whole run.
    token: str = field(repr=False)
    #: Where its output goes.
    log_path: Path
    #: The process, once started.
    proc: RunningBot | None = None
    #: Deals (engine seeds) it has been seated on.
    deals: set[int] = field(default_factory=set)
    #: ``(match_id, seat)`` while it is seated.
    seat: tuple[str, int] | None = None
    #: Set once its process is gone (or is to be stopped).
    dead: bool = False
    #: Why its command did not start, if it did not.
    start_error: str | None = None
    #: Set when its process has exited.
    exited: trio.Event = field(default_factory=trio.Event)


class BotPool:
    """The run's long-lived bot processes, by bot; their watchers run in ``nursery``."""

    def __init__(
        self,
        server: ArenaServer,
        programs: dict[str, BotProgram],
        logs_dir: Path,
        seed: int,
        nursery: trio.Nursery,
        confinement: Confinement | None = None,
        address: str | None = None,
    ) -> None:
        """``address``: where plain processes reach the server (default its TCP address);
        sandboxed and containerised ones always get the confinement's Unix socket."""
        self._server = server
        self._programs = dict(programs)
        self._logs = logs_dir
        self._seed = seed
        self._nursery = nursery
        self._confinement = confinement
        self._idle: dict[str, list[PooledBot]] = {name: [] for name in programs}
        self._count: dict[str, int] = dict.fromkeys(programs, 0)
        self._all: list[PooledBot] = []
        self._address = address or server.address

    def add_program(self, name: str, program: BotProgram) -> None:
        """Let the pool start ``name`` too (a cluster worker learns a run's bots as its matches
        name them); a name it knows keeps its program."""
        if name not in self._programs:
            self._programs[name] = program
            self._idle[name] = []
            self._count[name] = 0

    def logs(self, bots: Sequence[str]) -> tuple[Path, ...]:
        """The log of each bot's newest process (one process per bot: a seat of a series)."""
        newest: dict[str, Path] = {}
        for p in self._all:
            newest[p.bot] = p.log_path
        return tuple(newest[b] for b in bots)

    async def lease(self, bot: str, deal: int, taken: Sequence[PooledBot] = ()) -> PooledBot:
        """A live process of ``bot`` that has not played ``deal`` and is not among ``taken``
        (the match's other seats); a new one when no idle process qualifies."""
        p = pick(self._idle[bot], deal, taken)
        if p is None:
            p = await self._start(bot)
        else:
            self._idle[bot].remove(p)
        p.deals.add(deal)
        return p

    async def _start(self, bot: str) -> PooledBot:
        self._count[bot] += 1
        number = self._count[bot]
        p = PooledBot(bot, number, new_token(), self._logs / f"{bot}-p{number}.log")
        self._all.append(p)
        # Known before the process says Hello, and kept between its matches.
        self._server.add_token(p.token)
        env = bot_environment(
            self._address, p.token, derive_seed(self._seed, "process", bot, number)
        )
        try:
            p.proc = await start_bot(
                self._programs[bot],
                env,
                p.log_path,
                self._confinement,
                self._server.attach_stdio,
            )
        except (OSError, ArenaError) as err:
            p.dead = True
            if is_host_trouble(err):
                # The arena is out of descriptors, disk or memory: the match is not played (and
                # stays pending), no seat is charged.
                raise HostTrouble(f"the arena could not start a bot: {err}") from err
            # Seated anyway: its match charges the seat a crash at once, as for a launch.
            p.start_error = f"bot command did not start: {err}"
            return p
        self._nursery.start_soon(self._watch, p)
        log.debug("bot process started", bot=bot, number=number)
        return p

    async def _watch(self, p: PooledBot) -> None:
        assert p.proc is not None
        await p.proc.wait()
        p.dead = True
        p.exited.set()
        if p.seat is not None:
            match_id, seat = p.seat
            # Its output stays in its log: it may name the bot's private cards.
            self._server.seat_crashed(match_id, seat, p.proc.exit_detail())

    def crash_detail(self, p: PooledBot) -> str | None:
        """Why a leased process cannot play (it did not start, or has exited), else ``None``."""
        if not p.dead:
            return None
        detail = p.start_error
        if detail is None and p.proc is not None:
            detail = p.proc.exit_detail()
        return detail or "bot process exited"

    def give_back(self, p: PooledBot, healthy: bool) -> None:
        """After its match: back to the pool, or stopped when it crashed, forfeited or exited
        (the next match gets a fresh process)."""
        p.seat = None
        if healthy and not p.dead:
            self._idle[p.bot].append(p)
            return
        p.dead = True
        if p.proc is not None:
            self._nursery.start_soon(p.proc.stop)

    async def close(self) -> None:
        """End every process's stream and give it :data:`EXIT_GRACE_S` to exit on its own (its
        last end_match may still be running), then stop what is left. Shielded: also when the
        run is cancelled, which skips the grace."""
        cancelled = trio.current_effective_deadline() == -math.inf
        with trio.CancelScope(shield=True):
            live = [p for p in self._all if p.proc is not None and not p.dead]
            for p in live:
                self._server.dismiss(p.token)
            if not cancelled:
                with trio.move_on_after(EXIT_GRACE_S):
                    for p in live:
                        await p.exited.wait()
            async with trio.open_nursery() as stopper:
                for p in self._all:
                    if p.proc is not None:
                        stopper.start_soon(p.proc.stop)


async def play_seated(
    server: ArenaServer,
    pool: BotPool,
    bots: Sequence[str],
    deal: int,
    spec_for: Callable[[Sequence[str]], MatchSpec],
    seated: list[PooledBot] | None = None,
) -> MatchOutcome:
    """Play one match on the pool's processes: a process of ``bots[seat]`` per seat (never two
    seats on one, never one on ``deal`` again), the match ``spec_for(tokens)`` registered with
    their tokens; processes whose seat crashed or forfeited are replaced afterwards. ``seated``,
    if given, receives the processes in seat order (a cluster worker reads their logs)."""
    if seated is None:
        seated = []
    try:
        for bot in bots:
            seated.append(await pool.lease(bot, deal, seated))
        spec = spec_for([p.token for p in seated])
        server.register(spec)
        for seat, p in enumerate(seated):
            p.seat = (spec.match_id, seat)
            # Gone before its seat was known: charged now (its watcher found no seat to charge).
            if (why := pool.crash_detail(p)) is not None:
                server.seat_crashed(spec.match_id, seat, why)
        outcome = await server.run_match(spec)
    except BaseException:
        for p in seated:
            pool.give_back(p, healthy=False)
        raise
    replace = restart_seats(outcome.faults, outcome.result.forfeited_by)
    for seat, p in enumerate(seated):
        pool.give_back(p, healthy=seat not in replace)
    return outcome


def pick(idle: Sequence[PooledBot], deal: int, taken: Sequence[PooledBot]) -> PooledBot | None:
    """The idle process to seat on ``deal`` (the one idle longest): alive, never on that deal,
    not already at this table; ``None`` when none qualifies (a new one is started)."""
    for p in idle:
        if not p.dead and deal not in p.deals and p not in taken:
            return p
    return None


def restart_seats(faults: Sequence[FaultInfo], forfeited_by: int | None) -> set[int]:
    """The seats whose process is replaced after a match: those charged a crash, and the seat
    that forfeited."""
    seats = {f.seat for f in faults if f.kind == "crash"}
    if forfeited_by is not None:
        seats.add(forfeited_by)
    return seats
