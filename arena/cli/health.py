"""``arena health --server ADDR``: one line out, exit 0 when the server answered and 1 when it
did not."""

from __future__ import annotations

import argparse

from arena.cli.arguments import TIMEOUT

#: Seconds the server has to answer.
DEFAULT_TIMEOUT_S = 2.0


def health_command(args: argparse.Namespace) -> int:
    """The ``arena health`` command."""
    from arena.server.health import check  # the server package loads only for this command

    ok, line = check(args.server, args.timeout)
    print(line)
    return 0 if ok else 1


def add_health_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``arena health``."""
    hp = sub.add_parser(
        "health",
        help="check that an arena server answers (exit 0) or not (exit 1)",
        description="One Spectator.ListMatches call with a short deadline; prints one line.",
    )
    hp.add_argument(
        "--server", default="127.0.0.1:50051", metavar="ADDR", help="host:port or unix:PATH"
    )
    hp.add_argument(
        "--timeout",
        type=TIMEOUT,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help="seconds to wait for an answer (default %(default)g)",
    )
    hp.set_defaults(handler=health_command)
