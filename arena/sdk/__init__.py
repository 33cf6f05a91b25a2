"""What a Python bot author imports: a :class:`Bot` is one class with one method, and
:func:`run_bot` plays it against an arena server over gRPC::

    from arena.sdk import Bot, run_bot

Modules: ``bot`` (the strategy interface, and :class:`RandomBot`), ``client`` (the gRPC stream:
Hello, decisions, reconnection). May use: ``arena.protocol``, ``arena.errors``,
``arena.logging``, ``engine``; never the server, the CLI or ``reference_bots``.
"""

from arena.sdk.bot import Bot, RandomBot
from arena.sdk.client import BotRejected, BotRun, run_bot

__all__ = ["Bot", "BotRejected", "BotRun", "RandomBot", "run_bot"]
