"""A worker's match service: where the Dask tasks of ``arena worker`` play their matches.

Dask runs a task on one of the worker's threads; the match itself is played on the service's
trio thread, which holds what a local tournament holds: an arena server (loopback and a Unix
socket for sandboxed bots), the run's confinement and reaper, and pools of long-lived bot
processes (arena/pool.py), one per run (a tournament, a competition), so a process is seated in
match after match of its run, never twice on one deal, and never in another run. A task blocks
its Dask thread until its match is over: the worker's threads are its match slots.

The bots come from snapshots (:class:`~arena.cluster.bundles.SnapshotCache`): fetched and
checked on the task's thread before the match starts. The record and each seat's log for the
match go back in the :class:`~arena.cluster.task.ClusterResult`; nothing stays on the worker but
its cache and the pooled processes' own logs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio
from cardarena.messages import FaultInfo

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement
from arena.bots.logs import LOG_TAIL
from arena.bots.sandbox import Limits, default_limits
from arena.boxed import boxed_arena
from arena.cluster.bundles import SnapshotCache
from arena.cluster.task import SEAT_LOG_CAP, ClusterMatch, ClusterResult
from arena.errors import ArenaError
from arena.pool import BotPool, PooledBot, play_seated
from arena.records.format import record_bytes
from arena.server import ArenaServer, MatchSpec, SeatSpec
from arena.version import arena_version
from engine import Result

log = structlog.get_logger("arena.cluster")

#: Runs whose pools a worker keeps at once; the least recently used beyond that are stopped.
MAX_RUNS = 4


class TaskRefused(ArenaError):
    """A worker cannot play a task (a snapshot it cannot verify, a sandbox it cannot give, …).
    One plain message, so it crosses the wire as it is."""


@dataclass(eq=False)
class _Run:
    pool: BotPool
    scope: trio.CancelScope
    logs: Path
    #: Bytes of each pooled process's log already sent back.
    sent: dict[PooledBot, int]


class MatchService:
    """The worker's trio thread and what it holds. :meth:`start` it, :meth:`play` from Dask's
    threads, :meth:`stop` at the end."""

    def __init__(
        self,
        directory: Path,
        sandbox: bool,
        name: Callable[[], str] = lambda: "",
    ) -> None:
        """``directory``: the worker's own (its snapshot cache and its processes' logs);
        ``sandbox``: whether bots run boxed (refused tasks otherwise ask for it); ``name``: the
        worker's name, as results report it."""
        self.directory = directory
        self.cache = SnapshotCache(directory / "snapshots")
        self.sandbox = sandbox
        self._name = name
        self._token: trio.lowlevel.TrioToken | None = None
        self._ready = threading.Event()
        self._stopping: trio.Event | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        self._server: ArenaServer | None = None
        self._confinement: Confinement | None = None
        self._nursery: trio.Nursery | None = None

    # --- lifetime ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the trio thread and wait until its server listens (raises what stopped it)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run_trio, name="arena-matches", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Stop every pooled process and the server (blocking)."""
        if self._token is not None and self._stopping is not None:
            stopping = self._stopping
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(stopping.set, trio_token=self._token)
        if self._thread is not None:
            self._thread.join()

    def _run_trio(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as err:  # reported to start() or logged: the thread has no caller
            self._error = err
            log.error("match service stopped", error=str(err))
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stopping = trio.Event()
        limits = default_limits() if self.sandbox else None
        # A worker plays a host's duplicate deals: nothing is shown as it is played.
        async with boxed_arena(limits, (self.directory,), spectators=False) as arena:
            self._confinement = arena.box.confinement
            self._server = arena.server
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._ready.set()
                await self._stopping.wait()
                for key in list(self._runs):
                    await self._close_run(key)
                nursery.cancel_scope.cancel()

    # --- matches ----------------------------------------------------------------------------

    def play(self, task: ClusterMatch, offered: Mapping[str, bytes]) -> ClusterResult:
        """Play ``task`` (on a Dask thread: blocks until its match is over), its bots'
        snapshots packed in ``offered`` by key (used only if not cached). Raises
        :class:`TaskRefused` in one line when this worker cannot play it."""
        if task.version and task.version != arena_version():
            raise TaskRefused(
                f"worker {self._name()} runs arena {arena_version()}, the coordinator "
                f"{task.version}"
            )
        if task.sandbox is not None and not self.sandbox:
            raise TaskRefused(
                f"worker {self._name()} runs bots unsandboxed (--no-sandbox); this run requires "
                "the sandbox"
            )
        programs: dict[str, BotProgram] = {}
        for bot in dict.fromkeys(task.seats):
            try:
                programs[bot] = self.cache.program(
                    task.bots[bot], functools.partial(_offer, offered)
                )
            except ArenaError as err:
                raise TaskRefused(f'bot "{bot}": {err}') from None
        if self._token is None:
            raise TaskRefused("the worker's match service is not running")
        t0 = time.monotonic()
        try:
            played = trio.from_thread.run(
                functools.partial(self._play, task, programs, task.sandbox), trio_token=self._token
            )
        except TaskRefused:
            raise
        except ArenaError as err:  # as one plain message: it crosses the wire
            raise TaskRefused(str(err)) from None
        return ClusterResult(
            match_id=task.match_id,
            result=played[0],
            faults=played[1],
            record=played[2],
            logs=played[3],
            worker=self._name(),
            seconds=time.monotonic() - t0,
        )

    async def _play(
        self, task: ClusterMatch, programs: dict[str, BotProgram], limits: Limits | None
    ) -> tuple[Result, tuple[FaultInfo, ...], bytes, tuple[bytes, ...]]:
        run = await self._run_for(task, limits)
        for bot, program in programs.items():
            run.pool.add_program(bot, program)

        def spec_for(tokens: Sequence[str]) -> MatchSpec:
            seats = [SeatSpec(t, b) for t, b in zip(tokens, task.seats, strict=True)]
            return MatchSpec.of(task.rules, task.match_id, seats, task.seed, task.connect_timeout_s)

        assert self._server is not None
        seated: list[PooledBot] = []
        outcome = await play_seated(
            self._server, run.pool, task.seats, task.seed, spec_for, seated=seated
        )
        if outcome.result.reason == "error":
            raise TaskRefused(outcome.result.summary)
        data = record_bytes(outcome.header, outcome.entries, outcome.result_dict())
        logs = tuple([await trio.to_thread.run_sync(self._log_since, run, p) for p in seated])
        return outcome.result, outcome.faults, data, logs

    def _log_since(self, run: _Run, p: PooledBot) -> bytes:
        """What ``p`` wrote since its last match, bounded (its start and its end)."""
        start = run.sent.get(p, 0)
        try:
            with open(p.log_path, "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:
            return b""
        run.sent[p] = start + len(data)
        if len(data) > SEAT_LOG_CAP:
            cut = len(data) - SEAT_LOG_CAP
            note = f"\n[... {cut} bytes of this match's output left out ...]\n".encode()
            data = data[: SEAT_LOG_CAP - LOG_TAIL] + note + data[-LOG_TAIL:]
        return data

    async def _run_for(self, task: ClusterMatch, limits: Limits | None) -> _Run:
        run = self._runs.get(task.run)
        if run is not None:
            self._runs.move_to_end(task.run)
            return run
        while len(self._runs) >= MAX_RUNS:
            await self._close_run(next(iter(self._runs)))
        assert self._server is not None and self._nursery is not None
        assert self._confinement is not None
        confinement = self._confinement
        if limits is not None:  # the coordinator's limits, where it sets them
            confinement = Confinement(
                confinement.socket_dir,
                limits,
                confinement.container_limits,
                confinement.hide,
                confinement.run_group,
            )
        logs = self.directory / "runs" / _safe(task.run) / "logs"
        await trio.to_thread.run_sync(functools.partial(logs.mkdir, parents=True, exist_ok=True))
        scope = trio.CancelScope()
        holder: list[BotPool] = []

        async def keep(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            # The pool's watchers live in a nursery of their own, cancelled with the run.
            with scope:
                async with trio.open_nursery() as processes:
                    assert self._server is not None
                    holder.append(
                        BotPool(self._server, {}, logs, task.run_seed, processes, confinement)
                    )
                    task_status.started()
                    await trio.sleep_forever()

        await self._nursery.start(keep)
        run = _Run(holder[0], scope, logs, {})
        self._runs[task.run] = run
        return run

    async def _close_run(self, key: str) -> None:
        run = self._runs.pop(key)
        await run.pool.close()
        run.scope.cancel()
        await trio.to_thread.run_sync(shutil.rmtree, run.logs.parent, True)


def _safe(run: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in run)[:80] or "run"


#: The service of this process's ``arena worker``, if it is one.
_SERVICE: MatchService | None = None


def install(service: MatchService | None) -> None:
    """Make ``service`` the one this process's tasks play on (``arena worker`` does)."""
    global _SERVICE
    _SERVICE = service


def _offer(offered: Mapping[str, bytes], key: str) -> bytes:
    data = offered.get(key)
    if not isinstance(data, bytes):
        raise TaskRefused(f"the task did not bring snapshot {key}")
    return data


def run_match_task(task: ClusterMatch, offered: Mapping[str, bytes]) -> ClusterResult:
    """The Dask task: play ``task`` on this worker's service. ``offered``: the packed snapshots
    of its bots, by key (Dask brings them to the worker from wherever they are held)."""
    service = _SERVICE
    if service is None:
        raise TaskRefused(f"process {os.getpid()} is a Dask worker not started by `arena worker`")
    return service.play(task, offered)
