"""The competition's people and code: authors (their API tokens as SHA-256 only), their bots
and every submitted version (immutable once stored; only its status moves, along
:data:`~arena.host.store.schema.TRANSITIONS`)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from arena.host.store.rows import check_name, new_token, read_version, where_clause
from arena.host.store.schema import (
    _SHA256,
    AUTHOR_TOKEN_PREFIX,
    LIVE_TOKEN_PREFIX,
    TRANSITIONS,
    VERSION_STATUSES,
    Author,
    Bot,
    CompetitionStoreError,
    Conflict,
    DatabaseLocked,
    Forbidden,
    NotFound,
    Version,
    VersionKind,
    VersionStatus,
)
from arena.registry import RESERVED, hash_token
from arena.sqlite import SQLiteStore, now, serialized


class VersionTables(SQLiteStore):
    """The authors, bots and versions tables of :class:`~arena.host.store.CompetitionStore`."""

    ERROR = CompetitionStoreError
    LOCKED = DatabaseLocked
    FILE = "competition database"
    SCHEMA = "competition"

    # --- authors ------------------------------------------------------------------------------

    @serialized
    def add_author(self, name: str) -> tuple[Author, str]:
        """A new author and their API token: shown this once, only its hash is stored."""
        check_name("author name", name)
        token = new_token(AUTHOR_TOKEN_PREFIX)
        created = now()
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM authors WHERE name=?", (name,)).fetchone():
                raise Conflict(f"author {name!r} already exists")
            cur = db.execute(
                "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                (name, hash_token(token), created),
            )
            assert cur.lastrowid is not None
            return Author(cur.lastrowid, name, created), token

    @serialized
    def register_with_invite(
        self, name: str, code: str, expected_code: str | None
    ) -> tuple[Author, str]:
        """:meth:`add_author` for someone holding the config's invite code (``expected_code``;
        ``None``: registration is closed)."""
        if not expected_code:
            raise Forbidden("this competition takes no registrations (it has no invite code)")
        # The code is a plain secret (not a hash): compare in constant time.
        if not hmac.compare_digest(code.encode(), expected_code.encode()):
            raise Forbidden("wrong invite code")
        return self.add_author(name)

    @serialized
    def author(self, author_id: int) -> Author:
        with self._reading("the authors table"):
            row = self._db.execute(
                "SELECT id, name, created FROM authors WHERE id=?", (author_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no author {author_id}")
            return Author(int(row["id"]), str(row["name"]), str(row["created"]))

    @serialized
    def authors(self) -> list[Author]:
        with self._reading("the authors table"):
            rows = self._db.execute("SELECT id, name, created FROM authors ORDER BY id")
            return [Author(int(r["id"]), str(r["name"]), str(r["created"])) for r in rows]

    @serialized
    def author_for_token(self, token: str) -> Author | None:
        """The author whose API token this is; ``None`` for any other string."""
        if not token.startswith(AUTHOR_TOKEN_PREFIX):
            return None
        with self._reading("the authors table"):
            row = self._db.execute(
                "SELECT id, name, created FROM authors WHERE token_hash=?", (hash_token(token),)
            ).fetchone()
            if row is None:
                return None
            return Author(int(row["id"]), str(row["name"]), str(row["created"]))

    @serialized
    def rotate_token(self, author_id: int) -> str:
        """A new API token for the author (shown once); the old one stops working."""
        token = new_token(AUTHOR_TOKEN_PREFIX)
        with self._transaction() as db:
            cur = db.execute(
                "UPDATE authors SET token_hash=? WHERE id=?", (hash_token(token), author_id)
            )
            if cur.rowcount != 1:
                raise NotFound(f"no author {author_id}")
        return token

    # --- bots and versions ----------------------------------------------------------------------

    @serialized
    def bots(self, author_id: int | None = None) -> list[Bot]:
        sql = "SELECT id, author_id, name, created FROM bots"
        args: tuple[int, ...] = ()
        if author_id is not None:
            sql, args = sql + " WHERE author_id=?", (author_id,)
        with self._reading("the bots table"):
            rows = self._db.execute(sql + " ORDER BY id", args)
            return [
                Bot(int(r["id"]), int(r["author_id"]), str(r["name"]), str(r["created"]))
                for r in rows
            ]

    @serialized
    def add_version(
        self,
        author_id: int,
        bot_name: str,
        kind: Literal["archive", "image"],
        sha256: str,
        manifest: Mapping[str, Any],
    ) -> Version:
        """The next version (1, 2, …) of ``bot_name``, created for the author on first use;
        ``pending`` until validated. For a live bot see :meth:`add_live_version`."""
        if kind not in ("archive", "image"):
            raise CompetitionStoreError(
                f"version kind must be archive or image (a live bot: add_live_version); got "
                f"{kind!r}"
            )
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise CompetitionStoreError(f"sha256 must be 64 lowercase hex digits; got {sha256!r}")
        return self._add_version(author_id, bot_name, kind, sha256, manifest, None)

    @serialized
    def add_live_version(
        self, author_id: int, bot_name: str, manifest: Mapping[str, Any] | None = None
    ) -> tuple[Version, str]:
        """A version played by a bot that connects itself, and the token it connects with (shown
        this once; only its hash is stored)."""
        token = new_token(LIVE_TOKEN_PREFIX)
        version = self._add_version(
            author_id, bot_name, "live", None, manifest or {}, hash_token(token)
        )
        return version, token

    def _add_version(
        self,
        author_id: int,
        bot_name: str,
        kind: VersionKind,
        sha256: str | None,
        manifest: Mapping[str, Any],
        live_token_hash: str | None,
    ) -> Version:
        check_name("bot name", bot_name)
        if bot_name in RESERVED:
            raise Conflict(f"bot name {bot_name!r} is a reference bot's; choose another")
        try:
            manifest_json = json.dumps(dict(manifest), sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise CompetitionStoreError(f"manifest must be a JSON object ({err})") from None
        at = now()
        with self._transaction() as db:
            author = db.execute("SELECT 1 FROM authors WHERE id=?", (author_id,)).fetchone()
            if author is None:
                raise NotFound(f"no author {author_id}")
            bot = db.execute("SELECT id, author_id FROM bots WHERE name=?", (bot_name,)).fetchone()
            if bot is None:
                bot_id = db.execute(
                    "INSERT INTO bots (author_id, name, created) VALUES (?, ?, ?)",
                    (author_id, bot_name, at),
                ).lastrowid
            elif int(bot["author_id"]) != author_id:
                raise Forbidden(f"bot name {bot_name!r} belongs to another author")
            else:
                bot_id = int(bot["id"])
            # Inside the write transaction (BEGIN IMMEDIATE): no other writer picks the same.
            (number,) = db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot_id=?", (bot_id,)
            ).fetchone()
            cur = db.execute(
                "INSERT INTO versions (bot_id, number, kind, sha256, manifest, live_token_hash, "
                "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (bot_id, number, kind, sha256, manifest_json, live_token_hash, at, at),
            )
            version_id = cur.lastrowid
        assert version_id is not None
        return self.version(version_id)

    _VERSION_SQL = (
        "SELECT v.id, v.bot_id, b.name AS bot, b.author_id, v.number, v.kind, v.sha256, "
        "v.manifest, v.status, v.reason, v.log_path, v.created, v.updated "
        "FROM versions v JOIN bots b ON b.id = v.bot_id"
    )

    @serialized
    def version(self, version_id: int) -> Version:
        with self._reading("the versions table"):
            row = self._db.execute(self._VERSION_SQL + " WHERE v.id=?", (version_id,)).fetchone()
            if row is None:
                raise NotFound(f"no version {version_id}")
            return read_version(row)

    @serialized
    def versions(
        self, status: VersionStatus | None = None, author_id: int | None = None
    ) -> list[Version]:
        """Every version (or those with ``status``, of ``author_id``), in submission order."""
        where, args = where_clause(("v.status", status), ("b.author_id", author_id))
        with self._reading("the versions table"):
            rows = self._db.execute(self._VERSION_SQL + where + " ORDER BY v.id", args)
            return [read_version(r) for r in rows]

    @serialized
    def author_usage(self, author_id: int, since: str) -> tuple[list[str], int]:
        """What the author's quotas count: when each of their versions created at or after
        ``since`` (a store timestamp) was created, oldest first, and the bytes their uploads
        hold (the ``bytes`` an upload's manifest records; a snapshot or image kept twice counts
        once)."""
        with self._reading("the versions table"):
            created = [
                str(r[0])
                for r in self._db.execute(
                    "SELECT v.created FROM versions v JOIN bots b ON b.id = v.bot_id "
                    "WHERE b.author_id=? AND v.created >= ? ORDER BY v.created",
                    (author_id, since),
                )
            ]
            (held,) = self._db.execute(
                "SELECT COALESCE(SUM(size), 0) FROM (SELECT MAX(CAST(COALESCE("
                "json_extract(v.manifest, '$.bytes'), 0) AS INTEGER)) AS size "
                "FROM versions v JOIN bots b ON b.id = v.bot_id "
                "WHERE b.author_id=? AND v.sha256 IS NOT NULL GROUP BY v.sha256)",
                (author_id,),
            ).fetchone()
        return created, int(held)

    @serialized
    def version_for_live_token(self, token: str) -> Version | None:
        """The live version this connection token belongs to (whatever its status: the caller
        decides whether a retired one may still connect); ``None`` for any other string."""
        if not token.startswith(LIVE_TOKEN_PREFIX):
            return None
        with self._reading("the versions table"):
            row = self._db.execute(
                self._VERSION_SQL + " WHERE v.live_token_hash=?", (hash_token(token),)
            ).fetchone()
            return None if row is None else read_version(row)

    @serialized
    def version_refs(self, version_ids: Sequence[int]) -> dict[int, str]:
        """``BOT@NUMBER`` of each of ``version_ids`` that exists, in one query."""
        ids = json.dumps(sorted(set(version_ids)))
        with self._reading("the versions table"):
            rows = self._db.execute(
                "SELECT v.id, b.name, v.number FROM versions v JOIN bots b ON b.id = v.bot_id "
                "WHERE v.id IN (SELECT value FROM json_each(?))",
                (ids,),
            ).fetchall()
        return {int(r[0]): f"{r[1]}@{r[2]}" for r in rows}

    @serialized
    def set_status(
        self,
        version_id: int,
        status: VersionStatus,
        reason: str = "",
        log_path: str | None = None,
    ) -> Version:
        """Move a version along :data:`TRANSITIONS` (with why, and its validation log when
        given); anything else is :class:`Conflict`."""
        if status not in TRANSITIONS:
            raise CompetitionStoreError(
                f"status must be one of {', '.join(VERSION_STATUSES)}; got {status!r}"
            )
        with self._transaction() as db:
            row = db.execute(self._VERSION_SQL + " WHERE v.id=?", (version_id,)).fetchone()
            if row is None:
                raise NotFound(f"no version {version_id}")
            current = str(row["status"])
            if status not in TRANSITIONS.get(current, frozenset()):
                allowed = sorted(TRANSITIONS.get(current, frozenset()))
                raise Conflict(
                    f"version {row['bot']}@{row['number']} is {current}; it cannot become "
                    f"{status} (allowed: {', '.join(allowed) or 'none, for good'})"
                )
            db.execute(
                "UPDATE versions SET status=?, reason=?, log_path=COALESCE(?, log_path), "
                "updated=? WHERE id=?",
                (status, reason, log_path, now(), version_id),
            )
        return self.version(version_id)
