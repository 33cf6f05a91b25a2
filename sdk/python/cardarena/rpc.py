"""The protocol's gRPC surface: the services' base classes and stubs, and the message classes
their methods carry. Generated code (``_pb``) is reached through here or :mod:`.codec` only, so
a regenerated ``_pb`` touches one package.
"""

from __future__ import annotations

from typing import Any

from cardarena._pb import arena_pb2 as _pb2
from cardarena._pb import arena_pb2_grpc as _pb2_grpc

#: A bot's message on Arena.Play, and the server's.
BotMessage = _pb2.BotMessage
ServerMessage = _pb2.ServerMessage
#: The spectator service's requests and replies.
ListMatchesRequest = _pb2.ListMatchesRequest
ListMatchesResponse = _pb2.ListMatchesResponse
WatchMatchRequest = _pb2.WatchMatchRequest
StandingsRequest = _pb2.StandingsRequest
StandingsResponse = _pb2.StandingsResponse

#: Base classes of the two services, and their client stubs.
ArenaServicer = _pb2_grpc.ArenaServicer
SpectatorServicer = _pb2_grpc.SpectatorServicer
ArenaStub = _pb2_grpc.ArenaStub
SpectatorStub = _pb2_grpc.SpectatorStub
add_arena_servicer = _pb2_grpc.add_ArenaServicer_to_server


def service_name(name: str) -> str:
    """The full gRPC name of service ``name`` (``Arena`` → ``cardarena.v1.Arena``)."""
    return str(_pb2.DESCRIPTOR.services_by_name[name].full_name)


#: The server's channel options, chosen deliberately (docs/protocol.md explains them to bot
#: authors):
SERVER_OPTIONS: list[tuple[str, Any]] = [
    # A bot only ever sends Hello, Action and Ping, each well under 1 KiB: a 64 KiB cap stops a
    # broken or hostile bot from making the server buffer megabytes per message.
    ("grpc.max_receive_message_length", 64 * 1024),
    # Observations are a few KiB; 4 MiB leaves room for any game without being unbounded.
    ("grpc.max_send_message_length", 4 * 1024 * 1024),
    # Ping idle bots every 20 s and drop them 10 s after a missed answer, so a bot whose machine
    # vanished (no FIN) is noticed as disconnected and its decisions fault at once, instead of
    # each waiting for its full deadline.
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # Bots may keep their own connection alive (the SDK pings every 30 s), but not more often
    # than every 10 s: faster pings are a flood at the HTTP/2 level.
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 3),
    # Never share a port with another process (the default lets two servers bind one port).
    ("grpc.so_reuseport", 0),
    # A connection must send its HTTP/2 preface and settings within 5 s or be closed (gRPC's
    # default is 120 s): a socket that never sends a byte holds a server descriptor only that
    # long. A bot sends both as it connects.
    ("grpc.server_handshake_timeout_ms", 5_000),
]
