"""Is an arena server answering? One unary gRPC call, Spectator.ListMatches, with a short
deadline (``arena health``, the image's HEALTHCHECK).
"""

from __future__ import annotations

import grpc
from cardarena import rpc


def check(address: str, timeout_s: float) -> tuple[bool, str]:
    """Ask the server at ``address`` (``host:port`` or ``unix:PATH``) for its matches; whether it
    answered, and a one-line description."""
    try:
        with grpc.insecure_channel(address) as channel:
            reply = rpc.SpectatorStub(channel).ListMatches(
                rpc.ListMatchesRequest(), timeout=timeout_s
            )
    except grpc.RpcError as err:
        code = err.code() if isinstance(err, grpc.Call) else None
        why = err.details() if isinstance(err, grpc.Call) else str(err)
        name = code.name if code is not None else "error"
        return False, f"unhealthy: {address}: {name}: {why or 'no answer'}"
    except ValueError as err:  # a malformed address
        return False, f"unhealthy: {address}: {err}"
    return True, f"healthy: {address} answers ({len(reply.matches)} matches)"
