"""Match records: hash-chained JSON Lines, and what reads them (docs/records.md).

Modules: ``format`` (writing and reading a record), ``replay`` (replaying it through the engine
and verifying it), ``view`` (``arena replay show``), ``html`` (the self-contained viewer page,
from ``templates/``), ``ask/`` (a bot asked recorded decisions again, its seat played from the
record through the server's hub). May use: ``engine``, ``arena.policy``, ``arena.layout``,
``arena.errors``; ``ask`` also ``arena.protocol``, ``arena.bots``, ``arena.boxed``,
``arena.server`` and ``arena.seeds``.
"""
