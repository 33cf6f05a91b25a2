"""The arena server: bots connect over gRPC and play matches; trio code drives it.

The Python API (used by ``arena match``, tournaments and tests)::

    async with open_arena_server(listen="127.0.0.1:0", unix=sock) as server:
        server.register(spec)          # the seats' tokens become known
        ...                            # start the bots with server.address and their tokens
        outcome = await server.run_match(spec)

Modules: ``spec`` (MatchSpec, MatchOutcome), ``api`` (ArenaServer: what trio code calls),
``hub`` (connections, tokens, routing), ``referee`` (one match), ``connections`` (a bot's stream,
its seats and its open requests), ``outbox`` (what a stream handler reads from), ``flood`` (the
rate limiter), ``board`` (spectators), ``service`` (the gRPC glue and the loop thread everything
above ``api`` runs on), ``lobby`` (pairs up whoever connects), ``health`` (is a server answering),
``scripted`` (a seat played from a script, for ``arena replay ask``).
The referee imports ``connections``, never the reverse: what a connection needs of its match is
the ``MatchHandle`` protocol. May use: ``engine``, ``arena.protocol``, ``arena.policy``,
``arena.rules``, ``arena.records``, ``arena.seeds``, ``arena.layout``, ``arena.logging``,
``arena.version``, ``arena.errors``.
"""

from __future__ import annotations

from arena.server.api import ArenaServer, open_arena_server
from arena.server.hub import TokenRefused, new_token
from arena.server.spec import Branch, DecisionTiming, MatchOutcome, MatchSpec, SeatSpec

__all__ = [
    "ArenaServer",
    "Branch",
    "DecisionTiming",
    "MatchOutcome",
    "MatchSpec",
    "SeatSpec",
    "TokenRefused",
    "new_token",
    "open_arena_server",
]
