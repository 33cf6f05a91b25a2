"""Seeds, as the arena uses them: defined in :mod:`engine.seeds` (the engine's distribution), so
that in-process play (:mod:`engine.local`) seeds a match and its bots as the arena does."""

from engine.seeds import derive_seed, fresh_seed, seat_seed

__all__ = ["derive_seed", "fresh_seed", "seat_seed"]
