"""A competition's ladder matches on a Dask cluster (``[workers] dask = ADDR``).

The host connects to the scheduler (``arena.cluster.coordinator.DaskCluster``, imported where
the host starts, so a host without ``[workers]`` needs no Dask), and :class:`ClusterPlayer`
plays there every match whose seats can all leave the host: versions submitted as archives
(already content-addressed snapshots, offered once as they are) and reference bots (a plain
command, offered as a manifest-only snapshot). A match with a live bot (it connects to this
host) or an image version (it runs in this host's Docker engine) is played here, as are the
validation matches (short, one per new version, and their verdict needs the version's own log
at once). Workers are started on any machine with ``arena worker --scheduler ADDR``.

The record and the seat logs a worker sends back are written where a local match writes them
(``records/``, ``logs/``, the same relative paths); the ladder stores the result as it would a
local one: the host alone writes its store.

**The scheduler lost** (:class:`~arena.cluster.task.ClusterLost`) does not stop the host: the
API, validation and local matches go on; the cluster's matches stay pending (not counted as
failed attempts) and wait while the host reconnects every :data:`RECONNECT_S` seconds, saying
so once in its log; once the scheduler is back it offers the snapshots again and plays on. A
scheduler unreachable at start is handled the same way. A match the cluster could not play
(its workers kept dying, a worker refused it) is an ordinary failed attempt, retried as a local
one is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog
import trio

from arena.bots.sandbox import Limits
from arena.cluster.bundles import bundle_bot
from arena.cluster.results import keep_result
from arena.cluster.task import BotRef, Cluster, ClusterLost, ClusterRun, SlotsLike
from arena.host.config import CompetitionConfig
from arena.host.play import CONNECT_TIMEOUT_S, Entrant, Player
from arena.layout import PRIVATE_DIR, SNAPSHOTS_DIR
from arena.rules import PlayedMatch
from arena.seeds import derive_seed
from arena.snapshots.tree import Snapshot, open_snapshot

log = structlog.get_logger("arena.host.remote")

#: Seconds between two attempts to reach a scheduler that is not (or no longer) there.
RECONNECT_S = 5.0
#: Where reference bots' manifest-only snapshots are made: the host's own files.
REFERENCE_SNAPSHOTS = Path(PRIVATE_DIR) / "cluster-snapshots"


def on_cluster(entrant: Entrant) -> bool:
    """Whether ``entrant`` can play on a worker: a stored snapshot, or a plain command (a
    reference bot, whose command the workers have too)."""
    program = entrant.program
    if program is None or program.kind == "image":
        return False  # a live bot connects to this host; an image runs in its Docker engine
    return entrant.snapshot is not None or not program.workdir


def run_key(secret_seed: int) -> tuple[str, int]:
    """The competition's run on the workers (a pool of bot processes per run) and its seed:
    stable across restarts, unique per competition, and telling nothing of its secret seed."""
    return f"c-{derive_seed(secret_seed, 'cluster-run'):016x}", derive_seed(secret_seed, "cluster")


@dataclass(eq=False)
class _Connection:
    cluster: Cluster
    slots: SlotsLike
    #: Each bot offered on this connection, by its name in matches.
    refs: dict[str, BotRef] = field(default_factory=dict)
    lost: bool = False


class ClusterPlayer:
    """Plays what can leave the host on the cluster ``connect()`` reaches, the rest on
    ``local``."""

    def __init__(
        self,
        connect: Callable[[], Cluster],
        local: Player,
        config: CompetitionConfig,
        directory: Path,
        secret_seed: int,
        sandbox: Limits | None,
    ) -> None:
        """``sandbox``: the limits the workers must box the bots in (``None``: the host runs
        them unsandboxed, and so may the workers)."""
        self._connect = connect
        self._local = local
        self._config = config
        self._directory = directory
        run, run_seed = run_key(secret_seed)
        self._run = ClusterRun(run, run_seed, config.rules, sandbox, CONNECT_TIMEOUT_S)
        self._conn: _Connection | None = None
        self._connecting = trio.Lock()
        self._offering = trio.Lock()
        self._said_down = False

    # --- the connection ---------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect now (the host's start: a mistyped address shows in the log at once)."""
        await self._connection()

    async def _connection(self) -> _Connection:
        async with self._connecting:
            while self._conn is None or self._conn.lost:
                address = self._config.workers.dask
                try:
                    # Abandoned on a stop: the host is going away, and its client with it.
                    cluster = await trio.to_thread.run_sync(self._connect, abandon_on_cancel=True)
                except ClusterLost as err:
                    if not self._said_down:
                        log.warning(
                            "cluster unreachable: its matches wait for it",
                            error=str(err),
                            retry_s=RECONNECT_S,
                        )
                        self._said_down = True
                    await trio.sleep(RECONNECT_S)
                    continue
                log.info("cluster connected", address=address)
                self._said_down = False
                self._conn = _Connection(cluster, cluster.slots())
            return self._conn

    async def _lose(self, conn: _Connection, why: str) -> None:
        if conn.lost:
            return  # another match saw it first
        conn.lost = True
        log.warning("cluster lost: its matches wait for it", error=why, retry_s=RECONNECT_S)
        await trio.to_thread.run_sync(conn.cluster.close)

    def close(self) -> None:
        """Disconnect (blocking)."""
        if self._conn is not None:
            self._conn.cluster.close()

    # --- matches ----------------------------------------------------------------------------

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        """Play one match, on the cluster when every seat can go there; an
        :class:`~arena.errors.ArenaError` when it could not be played (left pending by the
        caller). While the cluster is lost the match waits for it."""
        if not all(on_cluster(e) for e in entrants):
            return await self._local.play(match_id, seed, entrants)
        while True:
            conn = await self._connection()
            try:
                return await self._play_on(conn, match_id, seed, entrants)
            except ClusterLost as err:
                await self._lose(conn, str(err))

    async def _play_on(
        self, conn: _Connection, match_id: str, seed: int, entrants: Sequence[Entrant]
    ) -> PlayedMatch:
        async with self._offering:  # one offer per bot and connection, however many matches
            for entrant in {e.name: e for e in entrants}.values():
                if entrant.name not in conn.refs:
                    snapshot = await trio.to_thread.run_sync(self._snapshot, entrant)
                    conn.refs[entrant.name] = await trio.to_thread.run_sync(
                        conn.cluster.offer, entrant.name, snapshot
                    )
        seats = tuple(e.name for e in entrants)
        task = self._run.task(match_id, seed, seats, conn.refs)
        await self._acquire(conn)
        try:
            got = await conn.cluster.play(task)
        finally:
            conn.slots.release()
        # A RecordError (disk full) is an ArenaError: the match stays pending, as locally.
        record, logs = await trio.to_thread.run_sync(keep_result, self._directory, got)
        paths: list[str | None] = list(logs)
        paths += [None] * (len(seats) - len(paths))
        return PlayedMatch(got.result, got.faults, record, tuple(paths))

    def _snapshot(self, entrant: Entrant) -> Snapshot:
        if entrant.snapshot is not None:  # checked against its address once more
            return open_snapshot(self._directory / SNAPSHOTS_DIR, entrant.snapshot)
        assert entrant.program is not None
        return bundle_bot(
            entrant.name, entrant.program.command, [], self._directory / REFERENCE_SNAPSHOTS
        )

    async def _acquire(self, conn: _Connection) -> None:
        """A worker's slot; :class:`ClusterLost` when the connection is lost meanwhile (the
        capacity raises it once its client is closed)."""
        if conn.lost:
            raise ClusterLost(f"lost the Dask scheduler at {conn.cluster.address}")
        await conn.slots.acquire()
