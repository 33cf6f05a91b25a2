"""The competition's seasons (one current, the others archived with their frozen standings), the
results announced (a season's, the final's, an event's end) and their webhook deliveries.

A roll-over is one transaction: the current season archived with its standings, the next one
current, and the season's result (with its delivery) stored; a host killed around it finds
either the old season current or the new one, never neither nor both
(``seasons_one_current``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from arena.host.store.ratings import RatingTables
from arena.host.store.rows import read_match
from arena.host.store.schema import (
    Announced,
    CompetitionStoreError,
    Delivery,
    NotFound,
    Phase,
    Season,
    StoredMatch,
)
from arena.sqlite import Connection, Row, serialized

#: What a season's end freezes, computed inside the roll-over's transaction from what it
#: reads: ``(leaderboard rows, winners)``.
Freeze = Callable[[int], tuple[list[dict[str, Any]], list[str]]]


def _season(row: Row) -> Season:
    standings = None if row["standings"] is None else json.loads(row["standings"])
    if standings is not None and not isinstance(standings, list):
        raise ValueError("its standings are not a JSON list")
    return Season(
        number=int(row["number"]),
        name=str(row["name"]),
        starts=str(row["starts"]),
        ends=None if row["ends"] is None else str(row["ends"]),
        state="archived" if row["state"] == "archived" else "current",
        matches=None if row["matches"] is None else int(row["matches"]),
        standings=standings,
        winners=[str(w) for w in json.loads(row["winners"] or "[]")],
    )


def _announced(row: Row) -> Announced:
    return Announced(
        id=int(row["id"]),
        kind=str(row["kind"]),
        subject=str(row["subject"]),
        winners=[str(w) for w in json.loads(row["winners"])],
        detail=dict(json.loads(row["detail"])),
        at=str(row["at"]),
    )


class SeasonTables(RatingTables):
    """The seasons, results and deliveries tables of :class:`CompetitionStore`."""

    # --- seasons ------------------------------------------------------------------------------

    @serialized
    def seasons(self) -> list[Season]:
        """Every season, oldest first (the last one is current)."""
        sql = "SELECT * FROM seasons ORDER BY number"
        return self._rows("the seasons table", sql, (), lambda r: f"season {r['number']}", _season)

    @serialized
    def season(self, number: int) -> Season:
        sql = "SELECT * FROM seasons WHERE number=?"
        found = self._rows("the seasons table", sql, (number,), lambda r: "a season", _season)
        if not found:
            raise NotFound(f"no season {number}")
        return found[0]

    @serialized
    def current_season(self) -> Season:
        sql = "SELECT * FROM seasons WHERE state='current'"
        found = self._rows("the seasons table", sql, (), lambda r: "the current season", _season)
        if not found:
            raise CompetitionStoreError(f"{self.path}: no current season; was the file edited?")
        return found[0]

    @serialized
    def plan_season(self, number: int, name: str, ends: str | None) -> bool:
        """Give the current season ``number`` a name and planned end (the config's), once: only
        while it has no end planned. Whether it changed."""
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE seasons SET name=?, ends=? "
                "WHERE number=? AND state='current' AND ends IS NULL",
                (name, ends, number),
            )
            return cur.rowcount == 1

    @serialized
    def season_matches(self, number: int) -> int:
        """The season's finished ladder matches."""
        with self._reading("the matches table"):
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM matches m JOIN units u ON u.id = m.unit_id "
                "WHERE u.season=? AND u.phase='ladder' AND m.state='done'",
                (number,),
            ).fetchone()
        return int(n)

    @serialized
    def roll_season(
        self,
        number: int,
        at: str,
        freeze: Freeze,
        following: tuple[str, str, str | None],
        webhook_url: str | None = None,
    ) -> Season | None:
        """End season ``number`` at ``at`` and start the next (``following``: its name, start,
        planned end), in one transaction with its result announced; the season archived, or
        ``None`` when ``number`` is no longer current (already rolled over: never twice)."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT * FROM seasons WHERE number=? AND state='current'", (number,)
            ).fetchone()
            if row is None:
                return None
            matches = self.season_matches(number)
            standings, winners = freeze(number)
            db.execute(
                "UPDATE seasons SET state='archived', ends=?, matches=?, standings=?, winners=? "
                "WHERE number=?",
                (at, matches, json.dumps(standings), json.dumps(winners), number),
            )
            name, starts, ends = following
            db.execute(
                "INSERT INTO seasons (number, name, starts, ends) VALUES (?, ?, ?, ?)",
                (number + 1, name, starts, ends),
            )
            ended = self.season(number)
            detail = {
                "season": number,
                "name": ended.name,
                "starts": ended.starts,
                "ends": at,
                "matches": matches,
                "standings": standings[:10],
                "next": {"season": number + 1, "name": name, "starts": starts, "ends": ends},
            }
            self._add_result(db, "season", ended.title, winners, detail, at, webhook_url)
            return ended

    # --- results and deliveries ---------------------------------------------------------------

    @serialized
    def add_result(
        self,
        kind: str,
        subject: str,
        winners: Sequence[str],
        detail: dict[str, Any],
        at: str,
        webhook_url: str | None = None,
    ) -> Announced | None:
        """Keep a result (and its webhook delivery) once; ``None`` when ``(kind, subject)`` was
        announced before (a host restarted after announcing it)."""
        with self._transaction() as db:
            return self._add_result(db, kind, subject, winners, detail, at, webhook_url)

    def _add_result(
        self,
        db: Connection,
        kind: str,
        subject: str,
        winners: Sequence[str],
        detail: dict[str, Any],
        at: str,
        webhook_url: str | None,
    ) -> Announced | None:
        cur = db.execute(
            "INSERT OR IGNORE INTO results (kind, subject, winners, detail, at) "
            "VALUES (?, ?, ?, ?, ?)",
            (kind, subject, json.dumps(list(winners)), json.dumps(detail, allow_nan=False), at),
        )
        if cur.rowcount != 1:
            return None
        result = Announced(int(cur.lastrowid or 0), kind, subject, list(winners), detail, at)
        if webhook_url is not None:
            body = {
                "event": f"{kind}.finished",
                "id": result.id,
                "kind": kind,
                "subject": subject,
                "winners": list(winners),
                "at": at,
                "detail": detail,
            }
            db.execute(
                "INSERT INTO deliveries (result_id, url, body, next_at) VALUES (?, ?, ?, ?)",
                (result.id, webhook_url, json.dumps(body, sort_keys=True), at),
            )
        return result

    @serialized
    def results(self, limit: int = 10) -> list[Announced]:
        """The latest results announced, newest first."""
        sql = "SELECT * FROM results ORDER BY id DESC LIMIT ?"
        return self._rows("the results table", sql, (limit,), lambda r: "a result", _announced)

    @serialized
    def due_deliveries(self, at: str) -> list[Delivery]:
        """The pending deliveries whose next attempt is due at ``at``, oldest first."""
        sql = "SELECT * FROM deliveries WHERE state='pending' AND next_at<=? ORDER BY id"
        return self._rows(
            "the deliveries table", sql, (at,), lambda r: f"delivery {r['id']}", _delivery
        )

    @serialized
    def next_delivery_at(self) -> str | None:
        """When the next pending delivery is due; ``None`` when none is pending."""
        with self._reading("the deliveries table"):
            (at,) = self._db.execute(
                "SELECT MIN(next_at) FROM deliveries WHERE state='pending'"
            ).fetchone()
        return None if at is None else str(at)

    @serialized
    def deliveries(self) -> list[Delivery]:
        sql = "SELECT * FROM deliveries ORDER BY id"
        return self._rows("the deliveries table", sql, (), lambda r: "a delivery", _delivery)

    @serialized
    def delivery_attempted(
        self, delivery_id: int, at: str, error: str, retry_at: str | None
    ) -> None:
        """One attempt's outcome: sent (``error`` empty), retried at ``retry_at``, or given up
        (``retry_at`` ``None``)."""
        state = "sent" if not error else "pending" if retry_at is not None else "failed"
        with self._transaction() as db:
            db.execute(
                "UPDATE deliveries SET state=?, attempts=attempts+1, last_error=?, "
                "next_at=COALESCE(?, next_at), sent=? WHERE id=? AND state='pending'",
                (state, error, retry_at, at if not error else None, delivery_id),
            )

    # --- exports ------------------------------------------------------------------------------

    @serialized
    def export_matches(
        self,
        phase: Phase | None = None,
        season: int | None = None,
        version_id: int | None = None,
        batch: int = 500,
    ) -> Iterator[tuple[StoredMatch, int, bool]]:
        """Every finished match (of ``phase``, ``season``, ``version_id``), oldest first, with
        its season and whether its record is public (its unit over), in batches: a long
        export never holds the store for long."""
        after = (0, -1)
        while True:
            with self._mutex:
                rows = self._export_batch(phase, season, version_id, after, batch)
            yield from rows
            if len(rows) < batch:
                return
            last = rows[-1][0]
            after = (last.unit_id, last.rotation)

    def _export_batch(
        self,
        phase: Phase | None,
        season: int | None,
        version_id: int | None,
        after: tuple[int, int],
        batch: int,
    ) -> list[tuple[StoredMatch, int, bool]]:
        clauses = ["m.state='done'", "(m.unit_id, m.rotation) > (?, ?)"]
        args: list[object] = [*after]
        for clause, value in (
            ("u.phase=?", phase),
            ("u.season=?", season),
            ("m.unit_id IN (SELECT unit_id FROM unit_versions WHERE version_id=?)", version_id),
        ):
            if value is not None:
                clauses.append(clause)
                args.append(value)
        where = " AND ".join(clauses)
        sql = (
            f"SELECT u.season AS season, u.state AS unit_state, "
            f"{self._MATCH_SQL.removeprefix('SELECT ')} WHERE {where} "
            "ORDER BY m.unit_id, m.rotation LIMIT ?"
        )
        return self._rows(
            "the matches table",
            sql,
            [*args, batch],
            lambda r: f"match {r['match_id']!r}",
            lambda r: (read_match(r), int(r["season"]), r["unit_state"] != "pending"),
        )


def _delivery(row: Row) -> Delivery:
    return Delivery(
        id=int(row["id"]),
        result_id=int(row["result_id"]),
        url=str(row["url"]),
        body=str(row["body"]),
        state=str(row["state"]),
        attempts=int(row["attempts"]),
        next_at=str(row["next_at"]),
        last_error=str(row["last_error"]),
    )
