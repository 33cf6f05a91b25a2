"""``arena worker``: a Dask worker that plays matches.

It checks that the bot sandbox works here (one line if not, unless ``--no-sandbox``), starts the
match service (arena/cluster/service.py), and joins the scheduler as a Dask worker offering one
:data:`~arena.cluster.task.RESOURCE` per slot, with as many threads: a match task holds a thread
while it plays. When the scheduler goes away the worker says so in one line and joins again
when it is back (a Dask worker alone would exit); the match service and its cache live on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import distributed
from distributed.security import Security

from arena.bots.sandbox import check_available
from arena.cluster.service import MatchService, install
from arena.cluster.task import RESOURCE
from arena.errors import ArenaError

#: Seconds between two attempts to reach a scheduler that is not (yet, or any more) there.
RETRY_S = 1.0


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """What ``arena worker`` was asked for."""

    scheduler: str
    #: Matches at once (default: the machine's cores).
    slots: int
    #: The worker's directory: its snapshot cache and its bots' logs.
    directory: Path
    #: Its Dask name (default: Dask's).
    name: str | None = None
    sandbox: bool = True
    tls_ca_file: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None


def security(ca_file: str | None, cert: str | None, key: str | None, worker: bool) -> Security:
    """Dask's TLS settings: the given files, else Dask's own configuration
    (``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``)."""
    if not (ca_file or cert or key):
        return Security()
    if not (ca_file and cert and key):
        raise ArenaError("TLS needs all three of --tls-ca-file, --tls-cert and --tls-key")
    for path in (ca_file, cert, key):
        if not os.path.isfile(path):
            raise ArenaError(f"TLS file {path!r} not found")
    if worker:
        return Security(
            tls_ca_file=ca_file, tls_worker_cert=cert, tls_worker_key=key, require_encryption=True
        )
    return Security(
        tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True
    )


def quiet_dask(level: int = logging.CRITICAL) -> None:
    """Dask's own loggers at ``level`` only: its reconnection tracebacks are not news, and what
    matters reaches the user as the arena's own one line."""
    prefixes = ("distributed", "tornado", "asyncio")
    names = [n for n in logging.root.manager.loggerDict if n.startswith(prefixes)]
    for name in {*prefixes, *names}:
        logging.getLogger(name).setLevel(level)


def _worker_name() -> str:
    try:
        return str(distributed.get_worker().name)
    except ValueError:
        return ""


def run_worker(options: WorkerOptions, say: Callable[[str], None]) -> int:
    """Serve matches until Ctrl-C or SIGTERM (exit 0); ``say`` prints one line."""
    if options.slots < 1:
        raise ArenaError(f"--slots must be at least 1; got {options.slots}")
    if options.sandbox:
        check_available()  # SandboxUnavailable: one line naming the way out
    sec = security(options.tls_ca_file, options.tls_cert, options.tls_key, worker=True)
    quiet_dask()
    service = MatchService(options.directory, options.sandbox, _worker_name)
    service.start()
    install(service)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        asyncio.run(_serve(options, sec, say))
    except KeyboardInterrupt:
        say("arena worker: stopped")
    finally:
        install(None)
        service.stop()
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


async def _serve(options: WorkerOptions, sec: Security, say: Callable[[str], None]) -> None:
    joined = False
    while True:
        worker = distributed.Worker(
            options.scheduler,
            nthreads=options.slots,
            resources={RESOURCE: options.slots},
            name=options.name,
            security=sec,
            local_directory=str(options.directory / "dask"),
            dashboard=False,
            # Retried here, forever: the scheduler may be restarted under a running worker.
            death_timeout=None,
        )
        try:
            await worker
        except (OSError, TimeoutError) as err:
            if not joined:
                say(f"arena worker: cannot reach {options.scheduler} ({err}); retrying")
                joined = True  # said once
            await asyncio.sleep(RETRY_S)
            continue
        box = "sandboxed" if options.sandbox else "unsandboxed (--no-sandbox)"
        say(
            f"arena worker {worker.name}: ready for matches on {options.scheduler} "
            f"({options.slots} slots, bots {box})"
        )
        sys.stdout.flush()
        joined = True
        await worker.finished()
        say(f"arena worker {worker.name}: lost the scheduler at {options.scheduler}; rejoining")
        await asyncio.sleep(RETRY_S)
