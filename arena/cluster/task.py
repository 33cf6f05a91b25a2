"""What crosses the wire between a coordinator and a worker: plain, picklable values.

A :class:`ClusterMatch` holds everything that fixes one match and names its bots by their
snapshots' SHA-256; a :class:`ClusterResult` holds what the match left: the result and faults,
the record's bytes and each seat's log for that match, bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cardarena.messages import FaultInfo

from arena.bots.sandbox import Limits
from arena.errors import ArenaError
from arena.rules import MatchRules
from arena.version import arena_version
from engine import Result

#: The Dask resource an ``arena worker`` offers, one unit per match it plays at once; tasks ask
#: for one, so they land only on arena workers, never more at once than their slots.
RESOURCE = "arena-match"
#: Most bytes of one seat's log a task sends back per match (its start and its end kept).
SEAT_LOG_CAP = 256 * 1024


@dataclass(frozen=True, slots=True)
class BotRef:
    """A bot as a worker gets it: a snapshot, and the key under which the coordinator offers its
    packed bytes on the cluster."""

    #: The snapshot's content address (arena/snapshots/tree.py).
    sha256: str
    #: The Dask key of its packed bytes.
    key: str


@dataclass(frozen=True, slots=True)
class ClusterMatch:
    """One match, as a task: everything that fixes it."""

    #: The run it belongs to (a tournament, a competition): a worker keeps one pool of bot
    #: processes per run, so processes never cross runs.
    run: str
    #: The run's seed (each pooled process's ``ARENA_SEED`` derives from it).
    run_seed: int
    match_id: str
    #: The game, its configuration, the time control and the fault policy.
    rules: MatchRules
    #: The engine's seed: the deal (a process never plays the same deal twice).
    seed: int
    #: Each seat's bot, by name.
    seats: tuple[str, ...]
    #: Each bot named in :attr:`seats`.
    bots: Mapping[str, BotRef]
    #: Seconds the match waits for its bots to connect.
    connect_timeout_s: float = 10.0
    #: The sandbox the coordinator requires (``None``: it allows plain processes). A worker that
    #: runs bots unsandboxed refuses a task that requires one.
    sandbox: Limits | None = None
    #: The coordinator's arena version: a worker of another version refuses the task.
    version: str = ""


@dataclass(frozen=True, slots=True)
class ClusterRun:
    r"""What every match of one run (a tournament, a competition) sent to a cluster shares: the
    one builder of its :class:`ClusterMatch`\ es."""

    #: The run's key and seed on the workers (:attr:`ClusterMatch.run`, ``run_seed``).
    run: str
    run_seed: int
    rules: MatchRules
    #: The sandbox the workers must box the bots in (``None``: plain processes allowed).
    sandbox: Limits | None
    #: Seconds a match waits for its bots to connect.
    connect_timeout_s: float = 10.0

    def task(
        self, match_id: str, seed: int, seats: tuple[str, ...], refs: Mapping[str, BotRef]
    ) -> ClusterMatch:
        """The match ``match_id`` as a task: ``seats`` name bots offered as ``refs``."""
        return ClusterMatch(
            run=self.run,
            run_seed=self.run_seed,
            match_id=match_id,
            rules=self.rules,
            seed=seed,
            seats=seats,
            bots={name: refs[name] for name in seats},
            connect_timeout_s=self.connect_timeout_s,
            sandbox=self.sandbox,
            version=arena_version(),
        )


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """What one match left, sent back to the coordinator."""

    match_id: str
    #: The engine's result (a normal or a forfeit result).
    result: Result
    #: Every fault charged, in order.
    faults: tuple[FaultInfo, ...]
    #: The record file's bytes (a gzipped JSON-lines record, arena/records/format.py).
    record: bytes
    #: Each seat's log for this match, at most :data:`SEAT_LOG_CAP` bytes each.
    logs: tuple[bytes, ...]
    #: The worker that played it (its Dask name).
    worker: str
    #: Seconds the match took on the worker.
    seconds: float


class SlotsLike(Protocol):
    """A limit on matches in flight (``trio.Semaphore`` has this shape)."""

    async def acquire(self) -> None: ...

    def release(self) -> None: ...


class Cluster(Protocol):
    """Where matches run when not here: :class:`arena.cluster.coordinator.DaskCluster`."""

    #: What the cluster calls itself in messages (its scheduler's address).
    address: str

    def slots(self) -> SlotsLike:
        """How many matches may be in flight: the workers' free slots. Its ``acquire`` raises
        :class:`ClusterLost` once the scheduler is gone (a lost cluster's slots never free)."""
        ...

    def alive(self) -> bool:
        """Whether the connection to the scheduler still stands."""
        ...

    def close(self) -> None:
        """Let go of the cluster (what it holds for this run)."""
        ...

    def offer(self, name: str, snapshot: Any) -> BotRef:
        """Offer a snapshot (:class:`arena.snapshots.tree.Snapshot`) to the workers; its
        reference. Blocking."""
        ...

    async def play(self, match: ClusterMatch) -> ClusterResult:
        """Play ``match`` on a worker; raises :class:`~arena.errors.ArenaError` (one line)
        when it could not be played."""
        ...


class ClusterLost(ArenaError):
    """The cluster itself is gone (its scheduler unreachable): the run stops, and resumes when
    the same command runs again."""
