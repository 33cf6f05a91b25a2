"""Card Arena's Python SDK (the ``cardarena-sdk`` distribution): a bot is one class with one
method, and :func:`run_bot` plays it against an arena server over gRPC::

    from cardarena import Bot, run_bot

Modules: ``bot`` (the strategy interface, :class:`Turn`, :class:`RandomBot`), ``client`` (the
gRPC stream: Hello, decisions, reconnection), ``messages`` (the protocol's messages as plain
values), ``codec`` and ``observations`` (a bot's side of the wire), ``rpc`` (the services' stubs),
``log`` (JSON lines on stderr), ``_pb`` (generated from proto/cardarena/v1/arena.proto). Depends
on grpcio and protobuf only: no rules engine, server or tournament.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cardarena.bot import Bot, RandomBot, Turn
from cardarena.messages import Action, Result

if TYPE_CHECKING:
    from cardarena.client import BotError, BotRejected, BotRun, run_bot

#: The gRPC client's names, imported on first use: a bot played in process (engine.local) never
#: loads grpc.
_CLIENT_NAMES = frozenset({"BotError", "BotRejected", "BotRun", "run_bot"})


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        return getattr(importlib.import_module("cardarena.client"), name)
    raise AttributeError(f"module 'cardarena' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "Action",
    "Bot",
    "BotError",
    "BotRejected",
    "BotRun",
    "RandomBot",
    "Result",
    "Turn",
    "__version__",
    "run_bot",
]
