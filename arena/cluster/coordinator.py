"""The coordinator's side of a cluster: a Dask client that plays matches on ``arena worker``\\ s.

:class:`DaskCluster` offers each bot's snapshot once (a task holding its packed bytes, which the
scheduler can compute again if the worker keeping them dies), submits one task per match asking
for one worker slot, and waits for it on a thread while the trio loop goes on. It never has more
matches in flight than the workers have slots (:meth:`DaskCluster.slots`), so matches wait here,
in schedule order, not in the scheduler's queue.

What the cluster does wrong becomes one line: a worker killed mid-match is Dask's to handle (it
runs the task again elsewhere); a match whose workers keep dying (``KilledWorker``) or that a
worker refuses is reported failed with the reason and left pending; the scheduler lost stops the
run (:class:`ClusterLost`), and the same command resumes it.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable
from typing import Any

import distributed
import trio
from distributed.client import FutureCancelledError
from distributed.security import Security

from arena.cluster.bundles import pack_snapshot
from arena.cluster.service import run_match_task
from arena.cluster.task import RESOURCE, BotRef, ClusterLost, ClusterMatch, ClusterResult
from arena.cluster.worker import quiet_dask
from arena.errors import ArenaError
from arena.snapshots.tree import Snapshot

#: Seconds to reach the scheduler before giving up.
CONNECT_TIMEOUT_S = 10.0
#: Seconds a snapshot's offer may take to be held on the cluster (it needs one worker).
OFFER_TIMEOUT_S = 60.0
#: Seconds between two looks at the workers' slots while every slot is taken.
CAPACITY_POLL_S = 0.5


def _offered(data: bytes) -> bytes:
    return data


class _Capacity:
    """The run's limit on matches in flight: the slots of the workers connected now. The
    scheduler is asked only while every known slot is taken (a worker may have joined), not
    for every match."""

    def __init__(self, count: Callable[[], int], alive: Callable[[], bool], address: str) -> None:
        self._count = count
        self._alive = alive
        self._address = address
        self._in_flight = 0
        self._total = 0
        self._freed = trio.Event()

    async def acquire(self) -> None:
        while True:
            if not self._alive():  # a local look: no call to the scheduler
                raise ClusterLost(f"lost the Dask scheduler at {self._address}")
            if self._in_flight >= self._total:
                self._total = await trio.to_thread.run_sync(self._count)
            if self._in_flight < self._total:
                self._in_flight += 1
                return
            with trio.move_on_after(CAPACITY_POLL_S):
                await self._freed.wait()
            self._freed = trio.Event()
            self._total = 0  # look again: workers may have left

    def release(self) -> None:
        self._in_flight -= 1
        self._freed.set()


class DaskCluster:
    """Matches on the Dask cluster whose scheduler is at ``address``."""

    def __init__(self, address: str, security: Security | None = None) -> None:
        quiet_dask()
        self.address = address
        security = security or Security()
        if address.startswith("tls://") and not security.get_connection_args("client").get(
            "ssl_context"
        ):
            raise ClusterLost(
                f"{address} speaks TLS: give the coordinator Dask's TLS settings (CA file, "
                "client certificate and key: docs/cluster.md)"
            )
        try:
            self._client = distributed.Client(
                address, timeout=CONNECT_TIMEOUT_S, security=security, set_as_default=False
            )
        except (OSError, TimeoutError, ValueError, TypeError) as err:
            raise ClusterLost(f"cannot reach the Dask scheduler at {address}: {err}") from None
        self._offers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        # Closing a client whose scheduler is gone may raise: nothing is lost.
        with contextlib.suppress(Exception):
            self._client.close(timeout=2)

    def __enter__(self) -> DaskCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def workers(self) -> dict[str, int]:
        """Each connected arena worker's slots, by name."""
        try:
            info = self._client.scheduler_info(n_workers=-1)
        except (OSError, TimeoutError) as err:
            raise ClusterLost(f"lost the Dask scheduler at {self.address}: {err}") from None
        found: dict[str, int] = {}
        for w in info.get("workers", {}).values():
            slots = int(w.get("resources", {}).get(RESOURCE, 0))
            if slots:
                found[str(w.get("name"))] = slots
        return found

    def slots(self) -> _Capacity:
        return _Capacity(self._slot_count, self.alive, self.address)

    def _slot_count(self) -> int:
        if not self.alive():
            raise ClusterLost(f"lost the Dask scheduler at {self.address}")
        return sum(self.workers().values())

    def alive(self) -> bool:
        """Connected, and still holding this run's offers: a client that lost its scheduler,
        even one that reconnected since, has lost them (its futures are cancelled)."""
        if self._client.status != "running":
            return False
        return all(offer.status == "finished" for offer in self._offers.values())

    def offer(self, name: str, snapshot: Snapshot) -> BotRef:
        """Offer ``snapshot`` (bot ``name``'s) to the workers; its reference."""
        key = f"cardarena-snapshot-{snapshot.sha256}"
        with self._lock:
            if key not in self._offers:
                data = pack_snapshot(snapshot)
                offer = self._client.submit(_offered, data, key=key, pure=False)
                # Held before any match asks for it (so no match waits on it for a thread).
                try:
                    offer.result(timeout=OFFER_TIMEOUT_S)
                except (OSError, TimeoutError) as err:
                    raise ClusterLost(
                        f"the Dask cluster at {self.address} did not take bot {name}'s snapshot "
                        f"({err}): are its workers up?"
                    ) from None
                self._offers[key] = offer
        return BotRef(sha256=snapshot.sha256, key=key)

    async def play(self, match: ClusterMatch) -> ClusterResult:
        if not self.alive():
            raise ClusterLost(f"lost the Dask scheduler at {self.address}")
        key = f"cardarena-match-{match.match_id}-{secrets.token_hex(4)}"
        # The snapshots go as the task's dependencies: Dask brings them to the worker.
        offered = {ref.key: self._offers[ref.key] for ref in match.bots.values()}
        future = self._client.submit(
            run_match_task, match, offered, key=key, resources={RESOURCE: 1}, pure=False
        )
        try:
            result = await trio.to_thread.run_sync(_wait, future, abandon_on_cancel=True)
        except trio.Cancelled:
            future.cancel()
            raise
        except FutureCancelledError as err:
            if not self.alive() or "scheduler" in str(err):
                raise ClusterLost(f"lost the Dask scheduler at {self.address}") from None
            raise ArenaError(f"its task was cancelled on the cluster ({err})") from None
        except distributed.KilledWorker as err:
            raise ArenaError(f"its workers died while playing it, too often ({err})") from None
        except (OSError, TimeoutError) as err:
            raise ClusterLost(f"lost the Dask scheduler at {self.address}: {err}") from None
        except ArenaError:
            raise
        except Exception as err:  # a worker's bug: reported, the match left pending
            raise ArenaError(f"its worker failed: {type(err).__name__}: {err}") from None
        if not isinstance(result, ClusterResult):
            raise ArenaError(f"its worker sent back {type(result).__name__}, not a result")
        return result


def _wait(future: Any) -> Any:
    return future.result()
