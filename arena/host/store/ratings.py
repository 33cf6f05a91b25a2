"""The competition's ratings: what the fits read (matches done per version, each version's share
of a phase) and the leaderboard over time (``rating_history``)."""

from __future__ import annotations

import json

from arena.host.store.matches import MatchTables
from arena.host.store.schema import Activity, Phase, RatingPoint
from arena.ratings import RatingTable
from arena.sqlite import now, serialized


class RatingTables(MatchTables):
    """The rating history, and the counts matchmaking reads."""

    @serialized
    def record_ratings(self, phase: Phase, table: RatingTable, season: int | None = None) -> bool:
        """Keep ``table`` in the phase's rating history (of ``season``, by default the current
        one), unless it counts no more matches than the season's last one kept; whether it
        was kept."""
        rows = [[r.bot, round(r.elo, 1), round(r.plus_minus, 1)] for r in table.ratings]
        with self._transaction() as db:
            if season is None:
                (season,) = db.execute(
                    "SELECT COALESCE(MAX(number), 1) FROM seasons WHERE state='current'"
                ).fetchone()
            last = db.execute(
                "SELECT matches FROM rating_history WHERE phase=? AND season=? "
                "ORDER BY id DESC LIMIT 1",
                (phase, season),
            ).fetchone()
            if not rows or (last is not None and int(last[0]) >= table.matches):
                return False
            db.execute(
                "INSERT INTO rating_history (phase, at, matches, ratings, season) "
                "VALUES (?, ?, ?, ?, ?)",
                (phase, now(), table.matches, json.dumps(rows, allow_nan=False), season),
            )
            return True

    @serialized
    def rating_history(
        self, phase: Phase, points: int = 200, season: int | None = None
    ) -> list[RatingPoint]:
        """The phase's rating history (of ``season``; ``None``: every season's), oldest first,
        thinned to at most ``points`` fits (evenly spaced, the latest always kept)."""
        only = "" if season is None else " AND season=?"
        args = (phase,) if season is None else (phase, season)
        with self._snapshot(), self._reading("the rating history"):
            ids = [
                int(r[0])
                for r in self._db.execute(
                    f"SELECT id FROM rating_history WHERE phase=?{only} ORDER BY id", args
                )
            ]
            if len(ids) > points:
                step = len(ids) / points
                ids = sorted({ids[int(i * step)] for i in range(points - 1)} | {ids[-1]})
            out = []
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for r in self._db.execute(
                    f"SELECT at, matches, ratings FROM rating_history WHERE id IN ({marks}) "
                    "ORDER BY id",
                    chunk,
                ):
                    ratings = json.loads(r["ratings"])
                    out.append(
                        RatingPoint(
                            str(r["at"]),
                            int(r["matches"]),
                            tuple((str(a), float(b), float(c)) for a, b, c in ratings),
                        )
                    )
            return out

    @serialized
    def matches_done(self) -> int:
        """Done matches, each once (however many versions sat in it)."""
        with self._reading("the matches table"):
            row = self._db.execute("SELECT COUNT(*) FROM matches WHERE state='done'").fetchone()
        return int(row[0])

    @serialized
    def match_counts(self, phase: Phase | None = None) -> dict[int, int]:
        """Done matches per version (every version, 0 for those yet to play)."""
        where = "" if phase is None else " AND u.phase=?"
        args = () if phase is None else (phase,)
        with self._reading("the matches table"):
            counts = {int(r[0]): 0 for r in self._db.execute("SELECT id FROM versions")}
            rows = self._db.execute(
                "SELECT uv.version_id, COUNT(DISTINCT m.id) FROM matches m "
                "JOIN units u ON u.id = m.unit_id "
                "JOIN unit_versions uv ON uv.unit_id = m.unit_id "
                f"WHERE m.state='done'{where} GROUP BY uv.version_id",
                args,
            )
            for version_id, n in rows:
                counts[int(version_id)] = int(n)
        return counts

    @serialized
    def activity(self, phase: Phase = "ladder") -> dict[int, Activity]:
        """Per version with any unit of ``phase``: units chosen for, the last one, those still
        pending, matches done (what matchmaking's candidates need)."""
        with self._snapshot():
            with self._reading("the units table"):
                rows = self._db.execute(
                    "SELECT uv.version_id, COUNT(DISTINCT u.id), MAX(u.id), "
                    "COUNT(DISTINCT CASE WHEN u.state='pending' THEN u.id END) "
                    "FROM unit_versions uv JOIN units u ON u.id = uv.unit_id "
                    "WHERE u.phase=? GROUP BY uv.version_id",
                    (phase,),
                ).fetchall()
            done = self.match_counts(phase)
        return {
            int(v): Activity(int(n), int(last), int(running), done.get(int(v), 0))
            for v, n, last, running in rows
        }
