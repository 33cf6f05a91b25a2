"""Seeds: every chance event of a match comes from one, so a seed is as secret as the cards.
Shared by the arena (arena.seeds) and in-process play (engine.local).

The engines are public and deterministic: whoever knows a match's seed can deal its hands. So a
match or tournament given no seed draws one nobody can guess (:func:`fresh_seed`), and the seeds
derived from it (deals, bots) are one-way (:func:`derive_seed`): knowing one tells nothing of the
seed it came from or of its siblings. A seed a host chooses is the host's to keep secret.
"""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["derive_seed", "fresh_seed", "seat_seed"]


def fresh_seed() -> int:
    """A seed nobody can guess, for a match or tournament given none (63 bits: SQLite, int64)."""
    return secrets.randbits(63)


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from ``parts`` (stable across runs and platforms; fits SQLite INTEGER).

    One-way: a seed derived from a secret one (a deal's, from the tournament's) tells nothing of
    it or of its siblings.
    """
    text = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def seat_seed(match_seed: int, seat: int) -> int:
    """The seed a seat's bot gets (``ARENA_SEED``, MatchStart.bot_seed): stable everywhere."""
    digest = hashlib.sha256(f"card-arena:{match_seed}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # 63 bits: fits every language's int64
