"""The host's admin: suspending and reinstating authors, units played again, the ladder reopened,
and the audit table that keeps every admin action (never changed nor deleted: its triggers)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from arena.host.store.ratings import RatingTables
from arena.host.store.rows import new_token, read_unit, read_version
from arena.host.store.schema import (
    AUTHOR_TOKEN_PREFIX,
    Author,
    Conflict,
    NotFound,
    Phase,
    Unit,
    Version,
)
from arena.registry import hash_token
from arena.sqlite import Connection, now, serialized

#: Why a suspended author's versions were retired.
SUSPENDED_REASON = "suspended by the host"
#: Why the final's pending units failed when the ladder was reopened.
REOPENED_REASON = "reopened by the host"
#: The phases whose failed units the admin may play again (an event replays its own).
RERUN_PHASES: tuple[Phase, ...] = ("ladder", "final")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One admin action, as kept."""

    id: int
    #: When (UTC, ISO 8601).
    at: str
    actor: str
    #: ``add-author``, ``ladder``, ``suspend``, ``reinstate``, ``retire``, ``rerun``, ``reopen``.
    action: str
    #: What it was done to: an author's name, a version's ref, a unit (``unit 12``), ``ladder``.
    target: str
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Standing:
    """An author's standing: suspended (since when, why) or not."""

    suspended: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Suspension:
    """What suspending an author did."""

    author: Author
    #: The versions it retired (refs).
    retired: tuple[str, ...]
    #: The ids of the author's live versions (their bots are to be disconnected).
    live: tuple[int, ...]


class AdminTables(RatingTables):
    """The admin's queries of :class:`~arena.host.store.CompetitionStore`."""

    # --- the audit ------------------------------------------------------------------------------

    def _audit(self, db: Connection, action: str, target: str, detail: Mapping[str, Any]) -> None:
        db.execute(
            "INSERT INTO audit (at, action, target, detail) VALUES (?, ?, ?, ?)",
            (now(), action, target, json.dumps(dict(detail), sort_keys=True, allow_nan=False)),
        )

    @serialized
    def record_audit(self, action: str, target: str, detail: Mapping[str, Any]) -> None:
        """Keep an admin action done by another part of the store (adding an author, steering
        the ladder)."""
        with self._transaction() as db:
            self._audit(db, action, target, detail)

    @serialized
    def audit_log(self, limit: int = 200) -> list[AuditEntry]:
        """The latest ``limit`` admin actions, newest first."""
        sql = "SELECT * FROM audit ORDER BY id DESC LIMIT ?"

        def entry(r: Any) -> AuditEntry:
            detail = json.loads(r["detail"])
            if not isinstance(detail, dict):
                raise ValueError("its detail is not a JSON object")
            return AuditEntry(
                int(r["id"]), str(r["at"]), str(r["actor"]), str(r["action"]), str(r["target"]),
                detail,
            )  # fmt: skip

        return self._rows("the audit table", sql, (limit,), lambda r: f"audit {r['id']}", entry)

    # --- authors --------------------------------------------------------------------------------

    @serialized
    def standings_of_authors(self) -> dict[int, Standing]:
        """Each author's standing, by id."""
        with self._reading("the authors table"):
            rows = self._db.execute("SELECT id, suspended, suspended_reason FROM authors")
            return {
                int(r[0]): Standing(None if r[1] is None else str(r[1]), str(r[2])) for r in rows
            }

    @serialized
    def author_suspended(self, author_id: int) -> bool:
        with self._reading("the authors table"):
            row = self._db.execute(
                "SELECT suspended FROM authors WHERE id=?", (author_id,)
            ).fetchone()
        return row is not None and row[0] is not None

    def _author_named(self, db: Connection, name: str) -> tuple[Author, bool]:
        row = db.execute(
            "SELECT id, name, created, suspended FROM authors WHERE name=?", (name,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no author {name!r}")
        author = Author(int(row["id"]), str(row["name"]), str(row["created"]))
        return author, row["suspended"] is not None

    @serialized
    def suspend_author(self, name: str, reason: str = "") -> Suspension:
        """Suspend ``name``: their API token stops working (its hash is replaced by one of a
        token nobody holds), every version of theirs that may be retired is, and one still in its
        validation is retired at its verdict (the schema's trigger). Their live versions' tokens
        die with the versions; the caller disconnects the bots."""
        why = SUSPENDED_REASON + (f": {reason}" if reason else "")
        with self._transaction() as db:
            author, suspended = self._author_named(db, name)
            if suspended:
                raise Conflict(f"author {name!r} is suspended already")
            db.execute(
                "UPDATE authors SET suspended=?, suspended_reason=?, token_hash=? WHERE id=?",
                (now(), reason, hash_token(new_token(AUTHOR_TOKEN_PREFIX)), author.id),
            )
            rows = db.execute(
                self._VERSION_SQL + " WHERE b.author_id=? ORDER BY v.id", (author.id,)
            ).fetchall()
            versions = [read_version(r) for r in rows]
            retire = [v for v in versions if v.status in ("pending", "validated", "failed")]
            at = now()
            db.executemany(
                "UPDATE versions SET status='retired', reason=?, updated=? WHERE id=?",
                [(why, at, v.id) for v in retire],
            )
            refs = tuple(v.ref for v in retire)
            self._audit(db, "suspend", name, {"reason": reason, "retired": list(refs)})
        live = tuple(v.id for v in versions if v.kind == "live")
        return Suspension(author, refs, live)

    @serialized
    def reinstate_author(self, name: str) -> tuple[Author, str]:
        """Lift ``name``'s suspension; their new API token (shown once: the old one stays
        dead). Retired versions stay retired: a version never comes back."""
        token = new_token(AUTHOR_TOKEN_PREFIX)
        with self._transaction() as db:
            author, suspended = self._author_named(db, name)
            if not suspended:
                raise Conflict(f"author {name!r} is not suspended")
            db.execute(
                "UPDATE authors SET suspended=NULL, suspended_reason='', token_hash=? WHERE id=?",
                (hash_token(token), author.id),
            )
            self._audit(db, "reinstate", name, {})
        return author, token

    # --- versions -------------------------------------------------------------------------------

    @serialized
    def retire_version(self, version_id: int, reason: str) -> Version:
        """Retire anyone's version (the admin's), kept in the audit with the same change."""
        with self._snapshot():
            before = self.version(version_id)
        version = self.set_status(version_id, "retired", reason)
        self.record_audit("retire", version.ref, {"version": version_id, "reason": reason,
                                                  "was": before.status})  # fmt: skip
        return version

    # --- units ----------------------------------------------------------------------------------

    @serialized
    def reruns(self) -> dict[int, int]:
        """Each failed unit played again: its id → the id of the unit that plays it again."""
        with self._reading("the units table"):
            rows = self._db.execute("SELECT unit_id, rerun_id FROM reruns")
            return {int(r[0]): int(r[1]) for r in rows}

    @serialized
    def rerun_unit(self, unit_id: int, match_id: Callable[[Phase, int, int], str]) -> Unit:
        """A failed unit played again: a new unit of the same phase, table and seed (the same
        deal), with new match ids (``match_id(phase, unit, rotation)``). A failed unit itself
        never changes. Refused (:class:`Conflict`) unless it failed, was not rerun yet, its
        phase is now played (the ladder's while it is open, the final's once it is closed) and
        every version of its table is still validated."""
        unit = self.unit(unit_id)
        state = self._meta_value("ladder_state")
        again = self.reruns().get(unit_id)
        problem = ""
        if unit.state != "failed":
            problem = f"it is {unit.state}; only a failed unit is played again"
        elif again is not None:
            problem = f"it was played again already, as unit {again}"
        elif unit.phase not in RERUN_PHASES:
            problem = f"it is a unit of an {unit.phase}; its event plays it again"
        elif (unit.phase == "ladder") == (state == "closed"):
            problem = f"it is the {unit.phase}'s and the ladder is {state}"
        else:
            versions = [self.version(v) for v in dict.fromkeys(unit.table)]
            out = [f"{v.ref} is {v.status}" for v in versions if v.status != "validated"]
            if out:
                problem = f"{', '.join(out)}; only validated versions play"
        if problem:
            raise Conflict(f"unit {unit_id} cannot be played again: {problem}")
        # A rerun stored by a host killed before it named its unit (two transactions: the
        # unit, then the name): found by its deal and table, later than the failed unit.
        with self._reading("the units table"):
            found = self._db.execute(
                "SELECT id FROM units WHERE id > ? AND id NOT IN (SELECT rerun_id FROM reruns) "
                "AND phase=? AND seed=? AND table_versions=? ORDER BY id LIMIT 1",
                (unit_id, unit.phase, unit.seed, json.dumps(list(unit.table))),
            ).fetchone()
        if found is not None:
            return self._name_rerun(unit, int(found[0]))
        new_id = self.next_unit_id()
        matches = [
            (match_id(unit.phase, new_id, m.rotation), m.rotation, m.seats)
            for m in self.unit_matches(unit_id)
        ]
        self.create_unit(unit.phase, unit.seed, unit.table, matches, unit_id=new_id)
        return self._name_rerun(unit, new_id)

    def _name_rerun(self, unit: Unit, new_id: int) -> Unit:
        with self._transaction() as db:
            db.execute("INSERT INTO reruns (unit_id, rerun_id) VALUES (?, ?)", (unit.id, new_id))
            detail = {"unit": unit.id, "as": new_id, "reason": unit.reason}
            self._audit(db, "rerun", f"unit {unit.id}", detail)
        return self.unit(new_id)

    @serialized
    def final_interrupted(self) -> bool:
        """Whether a unit of the final failed when the ladder was reopened and is not played
        again yet: such a final is not finished, whatever else of it is."""
        with self._reading("the units table"):
            row = self._db.execute(
                "SELECT 1 FROM units u WHERE u.phase='final' AND u.state='failed' AND u.reason=? "
                "AND u.id NOT IN (SELECT unit_id FROM reruns) LIMIT 1",
                (REOPENED_REASON,),
            ).fetchone()
        return row is not None

    @serialized
    def reopen_ladder(self) -> list[int]:
        """Closed → running, the admin's deliberate step: the final's pending units fail
        (:data:`REOPENED_REASON`; a finished final's results stay under phase ``final``) and
        submissions open again. The ids of the units it failed."""
        with self._transaction() as db:
            state = self._meta_value("ladder_state")
            if state != "closed":
                raise Conflict(f"the ladder is {state}; only a closed ladder is reopened")
            db.execute("UPDATE meta SET value='running' WHERE key='ladder_state'")
            db.execute("DELETE FROM meta WHERE key='closed_at'")
            rows = db.execute(
                "SELECT * FROM units WHERE phase='final' AND state='pending' ORDER BY id"
            ).fetchall()
            failed = [read_unit(r).id for r in rows]
            db.executemany(
                "UPDATE units SET state='failed', reason=?, finished=? WHERE id=?",
                [(REOPENED_REASON, now(), u) for u in failed],
            )
            self._audit(db, "reopen", "ladder", {"final_units_failed": failed})
        return failed
