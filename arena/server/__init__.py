"""The arena server: bots connect over gRPC and play matches; trio code drives it.

The Python API (used by ``arena match``, tournaments and tests)::

    async with open_arena_server(listen="127.0.0.1:0", unix=sock) as server:
        server.register(spec)          # the seats' tokens become known
        ...                            # start the bots with server.address and their tokens
        outcome = await server.run_match(spec)

Modules: ``spec`` (MatchSpec, MatchOutcome), ``api`` (ArenaServer: what trio code calls),
``hub`` (connections, tokens, routing), ``referee`` (one match), ``connections``, ``faults``,
``board`` (spectators), ``service`` (the gRPC glue and the loop thread everything above ``api``
runs on), ``lobby`` (``arena serve``: pairs up whoever connects).
"""

from __future__ import annotations

from arena.seeds import seat_seed
from arena.serde import FaultInfo, PlayerInfo, TimeControl
from arena.server.api import ArenaServer, open_arena_server
from arena.server.hub import new_token
from arena.server.spec import (
    FAULT_POLICIES,
    DecisionTiming,
    FaultPolicy,
    MatchOutcome,
    MatchSpec,
    SeatSpec,
)

__all__ = [
    "FAULT_POLICIES",
    "ArenaServer",
    "DecisionTiming",
    "FaultInfo",
    "FaultPolicy",
    "MatchOutcome",
    "MatchSpec",
    "PlayerInfo",
    "SeatSpec",
    "TimeControl",
    "new_token",
    "open_arena_server",
    "seat_seed",
]
