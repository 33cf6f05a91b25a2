"""Tournaments: a TOML config, a deterministic schedule, matches over the arena server, results
in SQLite (resumable after any interruption), a cross-table and Elo ratings.

Modules: ``config`` (the TOML config), ``schedule`` (pairings, seat rotations, duplicate deals),
``store`` (SQLite), ``job`` (one match over the server: a plan in, a result and a record out),
``runner`` (the trio loop: ``run_tournament``), ``progress`` (feedback), ``crosstable`` and
``report`` (standings), ``demo`` (``arena demo``). The command-line handlers are in
``arena.cli.tournament``. May use: ``arena.match``, ``arena.server``, ``arena.bots``,
``arena.records``, ``arena.ratings``, ``arena.registry``, ``arena.policy``, ``arena.layout``,
``arena.seeds``, ``cardarena.messages``, ``arena.errors``, ``engine``.
"""
