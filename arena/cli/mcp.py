"""``arena mcp --server ADDR --token T``: one seat held for an agent that speaks MCP, over stdio
(an agent framework starts it as a subprocess) or streamable HTTP (docs/llm.md, "An MCP seat")."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

from arena.errors import UsageError
from arena.logging import add_log_level_option


def mcp_command(args: argparse.Namespace) -> int:
    """The ``arena mcp`` command: serve the seat's tools until its match is over and told."""
    from cardarena.resolve import RESOLVE_ENV, ResolveError, grpc_target, parse_resolve

    if not args.server:
        raise UsageError("--server: give the arena server's HOST:PORT")
    if not args.token:
        raise UsageError("--token: give the seat's token")
    if args.matches < 0:
        raise UsageError("--matches must be 0 (no limit) or more")
    ca_path = args.ca_cert if args.ca_cert is not None else os.environ.get("ARENA_CA_CERT", "")
    try:
        ca = Path(ca_path).read_bytes() if ca_path else None
        resolve = os.environ.get(RESOLVE_ENV, "")
        grpc_target(args.server, parse_resolve(resolve))  # checked here, used by the seat
    except OSError as err:
        raise UsageError(f"cannot read the CA certificate {ca_path!r}: {err.strerror}") from None
    except ResolveError as err:
        raise UsageError(str(err)) from None
    # Bound before anything starts: a bad address is the user's one line, not a server's crash.
    listener = bind_listener(args.listen) if args.transport == "http" else None
    # The MCP SDK takes a second to import: only once the arguments are known to be good.
    import anyio
    from cardarena.log import configure as configure_sdk

    from arena.agents.mcp_server import LINGER_S, SeatTools, serve_http, serve_stdio
    from arena.agents.seat import AGENT, AgentSeat
    from arena.logging import configure

    configure(args.log_level)  # stderr: over stdio, stdout is the MCP channel
    configure_sdk()
    name = args.name or AGENT
    seat = AgentSeat(
        args.server, args.token, name=name, matches=args.matches, ca=ca, resolve=resolve
    )
    tools = SeatTools(seat, list_legal=args.list_legal)
    linger = LINGER_S if args.linger is None else args.linger
    if listener is None:
        anyio.run(serve_stdio, seat, tools, linger)
        return 0
    host, port = listener.getsockname()[:2]
    print(f"arena: MCP seat at http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    with listener:
        anyio.run(serve_http, seat, tools, listener, linger)
    return 0


def bind_listener(listen: str) -> socket.socket:
    """A listening socket on ``HOST:PORT``; a :class:`UsageError` (one line) when it cannot be."""
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {listen!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        listener = socket.socket(family, kind, proto)
    except OSError as err:
        raise UsageError(f"--listen {listen!r}: {err.strerror or err}") from None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(64)
    except OSError as err:
        listener.close()
        raise UsageError(f"--listen {listen!r}: {err.strerror or err}") from None
    return listener


def add_mcp_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``arena mcp``."""
    mp = sub.add_parser(
        "mcp",
        help="hold one seat for an agent that speaks MCP (tools: wait_for_turn, get_state, "
        "play, rules)",
        description="An MCP server holding one seat's connection to an arena server, with the "
        "seat's token, as a bot holds it. Over stdio by default (start it from the agent "
        "framework), or streamable HTTP at http://HOST:PORT/mcp.",
    )
    mp.add_argument("--server", required=True, metavar="ADDR", help="the arena: host:port")
    mp.add_argument("--token", required=True, metavar="T", help="the seat's token")
    mp.add_argument(
        "--ca-cert",
        default=None,
        metavar="PEM",
        help="trust this certificate authority: TLS to a competition host (default: "
        "$ARENA_CA_CERT; neither: plaintext)",
    )
    mp.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: the agent framework starts this command) or http (streamable "
        "HTTP at http://HOST:PORT/mcp)",
    )
    mp.add_argument(
        "--listen",
        default="127.0.0.1:8765",
        metavar="HOST:PORT",
        help="where --transport http listens (default 127.0.0.1:8765, loopback)",
    )
    mp.add_argument(
        "--list-legal",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="list the legal actions in get_state (default True; --no-list-legal: the agent "
        "names its action from the view)",
    )
    mp.add_argument("--name", default=None, help="the bot name the record shows (mcp-agent)")
    mp.add_argument(
        "--matches", type=int, default=1, help="matches to play, 0 for no limit (default 1)"
    )
    mp.add_argument(
        "--linger",
        type=float,
        default=None,
        metavar="S",
        help="seconds the tools stay up after the last match, to read its result (default 30)",
    )
    add_log_level_option(mp, "warning", "seat")
    mp.set_defaults(handler=mcp_command)
