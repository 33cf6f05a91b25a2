"""``arena health --server ADDR``: is an arena server answering? (the image's HEALTHCHECK)

One unary gRPC call, Spectator.ListMatches, with a short deadline; one line out, exit 0 when the
server answered and 1 when it did not.
"""

from __future__ import annotations

import argparse

import grpc

from arena._pb import arena_pb2 as pb
from arena._pb import arena_pb2_grpc as pb_grpc
from arena.arguments import TIMEOUT

#: Seconds the server has to answer.
DEFAULT_TIMEOUT_S = 2.0


def check(address: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[bool, str]:
    """Ask the server at ``address`` (``host:port`` or ``unix:PATH``) for its matches; whether it
    answered, and a one-line description."""
    try:
        with grpc.insecure_channel(address) as channel:
            reply = pb_grpc.SpectatorStub(channel).ListMatches(
                pb.ListMatchesRequest(), timeout=timeout_s
            )
    except grpc.RpcError as err:
        code = err.code() if isinstance(err, grpc.Call) else None
        why = err.details() if isinstance(err, grpc.Call) else str(err)
        name = code.name if code is not None else "error"
        return False, f"unhealthy: {address}: {name}: {why or 'no answer'}"
    except ValueError as err:  # a malformed address
        return False, f"unhealthy: {address}: {err}"
    return True, f"healthy: {address} answers ({len(reply.matches)} matches)"


def health_command(args: argparse.Namespace) -> int:
    """The ``arena health`` command."""
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
        help="seconds (default 2)",
    )
    hp.set_defaults(handler=health_command)
