"""``arena worker``: a machine's share of a Dask cluster's matches."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from arena.errors import UsageError
from arena.layout import arena_home
from arena.logging import add_log_level_option


def _cmd_worker(args: argparse.Namespace) -> int:
    from arena.logging import configure

    configure(args.log_level)
    try:
        from arena.cluster.worker import WorkerOptions, run_worker
    except ImportError:
        raise UsageError(
            "arena worker needs Dask distributed, which this installation lacks: "
            "pip install 'card-arena[cluster]'"
        ) from None
    directory = Path(args.dir) if args.dir else arena_home() / "worker"
    options = WorkerOptions(
        scheduler=args.scheduler,
        slots=args.slots if args.slots is not None else (os.cpu_count() or 1),
        directory=directory.resolve(),
        name=args.name,
        sandbox=not args.no_sandbox,
        tls_ca_file=args.tls_ca_file,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )
    return run_worker(options, lambda line: print(line, flush=True))


def add_worker_parser(sub: Any) -> None:
    """Register ``worker`` on the top-level subparsers."""
    wp = sub.add_parser(
        "worker",
        help="play a Dask cluster's matches on this machine",
        description="Join the Dask scheduler at --scheduler as a worker that plays matches of "
        "`arena tournament --dask`, `arena sprt --dask` and competitions with [workers] dask: "
        "bots fetched from the coordinator as snapshots, checked against their SHA-256, "
        "sandboxed here, kept alive between a run's matches. Stops on Ctrl-C or SIGTERM.",
    )
    wp.add_argument("--scheduler", required=True, metavar="ADDR", help="tcp://HOST:PORT or tls://…")
    wp.add_argument(
        "--slots", type=int, default=None, help="matches at once (default: this machine's cores)"
    )
    wp.add_argument("--name", default=None, help="the worker's name (default: Dask's)")
    wp.add_argument(
        "--dir",
        default=None,
        help="its directory: snapshot cache and bot logs (default: the arena's home's worker/)",
    )
    wp.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run bots as plain processes (trusted bots only; runs that require the sandbox "
        "are refused)",
    )
    for flag, what in (
        ("--tls-ca-file", "CA certificate"),
        ("--tls-cert", "this worker's certificate"),
        ("--tls-key", "its private key"),
    ):
        wp.add_argument(
            flag,
            default=None,
            metavar="FILE",
            help=f"TLS to the scheduler: {what} (default: Dask's configuration)",
        )
    add_log_level_option(wp, "warning", "worker")
    wp.set_defaults(handler=_cmd_worker)
