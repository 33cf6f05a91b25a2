"""What the host's retention (arena/host/retention.py) reads and writes: which finished matches'
files it may remove, whose records are published results, and the ``pruned`` table of what it
removed, so that a request for a pruned file is answered "pruned", not "lost"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from arena.host.store.ratings import RatingTables
from arena.sqlite import now, serialized

#: Whether a match (``m``, its unit ``u``) is a published result, whose record retention keeps
#: unless ``[retention] published = true``: the one place that says so, in SQL: the final's
#: matches and the events'. A season's standings are frozen in the database, not in records.
PUBLISHED: Final = "u.phase IN ('final', 'event')"


@dataclass(frozen=True, slots=True)
class Settled:
    """What may leave files that retention removes: nothing still in play."""

    #: Each finished match's id, and whether it is a published result (:data:`PUBLISHED`).
    matches: dict[str, bool]
    #: The versions whose validation is over (their validation log, records and seat logs).
    validated: frozenset[int]


class RetentionTables(RatingTables):
    """The ``pruned`` table, and the matches and versions retention may touch."""

    @serialized
    def settled(self) -> Settled:
        """The finished matches and the versions past validation, read at one moment."""
        with self._snapshot(), self._reading("the finished matches"):
            matches = self._db.execute(
                f"SELECT m.match_id, {PUBLISHED} FROM matches m JOIN units u ON u.id = m.unit_id "
                "WHERE m.state = 'done'"
            ).fetchall()
            versions = self._db.execute(
                "SELECT id FROM versions WHERE status NOT IN ('pending', 'validating')"
            ).fetchall()
        return Settled(
            matches={str(m): bool(p) for m, p in matches},
            validated=frozenset(int(v) for (v,) in versions),
        )

    @serialized
    def mark_pruned(self, files: Sequence[tuple[str, int]]) -> None:
        """Note ``files`` (path relative to the competition directory, bytes on disk) as pruned,
        in one transaction, before they are removed (a crash between leaves a file noted and
        still there: the next pass removes it)."""
        at = now()
        with self._transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO pruned (path, bytes, at) VALUES (?, ?, ?)",
                [(path, size, at) for path, size in files],
            )

    @serialized
    def pruned_at(self, path: str) -> str | None:
        """When retention removed ``path`` (relative to the competition directory), if it did."""
        with self._reading("the pruned files"):
            row = self._db.execute("SELECT at FROM pruned WHERE path = ?", (path,)).fetchone()
        return None if row is None else str(row[0])
