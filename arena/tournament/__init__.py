"""Tournaments: a TOML config, a deterministic schedule, matches over the arena server, results
in SQLite (resumable after any interruption), a cross-table and Elo ratings.

Modules: ``config`` (the TOML config), ``schedule`` (pairings, seat rotations, duplicate deals),
``store`` (SQLite), ``runner`` (the trio loop), ``play`` (the match job over the server),
``progress`` (feedback), ``crosstable`` and ``report`` (standings), ``demo`` (``arena demo``),
``commands`` (the CLI subcommands).
"""
