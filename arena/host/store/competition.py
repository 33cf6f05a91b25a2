"""The competition database as one store: opening (a lock against a second host, the checks of
the file, the migrations, a new competition's values) and the control values (ladder state,
pace, the secret seed). Its tables' queries are in the classes it extends."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from arena.host.config import CompetitionConfig, check_units_per_minute
from arena.host.store.admin import AdminTables
from arena.host.store.challenges import ChallengeTables
from arena.host.store.events import EventTables
from arena.host.store.retention import RetentionTables
from arena.host.store.schema import (
    DB_NAME,
    LADDER_STATES,
    LADDER_TRANSITIONS,
    LOCK_NAME,
    MIGRATIONS,
    CompetitionStoreError,
    Conflict,
    LadderState,
)
from arena.host.store.seasons import SeasonTables
from arena.layout import LOGS_DIR, RECORDS_DIR, SNAPSHOTS_DIR, make_output_dir
from arena.sqlite import Connection, Opened, earlier_output, file_size, now, serialized, take_lock


class CompetitionStore(RetentionTables, SeasonTables, EventTables, AdminTables, ChallengeTables):
    """The database of one competition directory, locked against a second host while open."""

    def __init__(
        self,
        directory: Path,
        config: CompetitionConfig,
        *,
        migrations: Sequence[str] = MIGRATIONS,
    ) -> None:
        """Open (creating if new) ``directory``'s database for ``config``, migrating it to
        ``migrations`` (tests pass an extended list; the host never does)."""
        super().__init__(directory / DB_NAME)
        #: The competition directory.
        self.directory = directory
        self._places = config.places
        self._n_seats = sum(len(group) for group in config.places)
        make_output_dir(directory, CompetitionStoreError)
        busy = f"{directory}: another `arena host` is running on it"
        self._lock_fd = take_lock(directory / LOCK_NAME, busy, CompetitionStoreError)
        try:
            self._create_file()
            latest = len(migrations)
            self._open(migrations, before_writing=lambda found: self._usable(config, found, latest))
            try:
                if self._stored_identity() is None:
                    self._initialize(config)
                # Read once now, so a hand-edited control value is one line at open, not later.
                self.ladder_state()
                self.units_per_minute()
                self.secret_seed()
            except BaseException:
                self._db.close()
                raise
        except BaseException:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise

    # --- opening ------------------------------------------------------------------------------

    def _create_file(self) -> None:
        """A new database draws a new secret seed and forgets every author: never beside the
        snapshots, records or logs of a competition whose database was lost. Owner only from its
        first byte: it holds token hashes and the secret seed."""
        size = file_size(self.path, CompetitionStoreError)
        if not size:
            subdirs = (SNAPSHOTS_DIR, RECORDS_DIR, LOGS_DIR)
            found = earlier_output(self.directory, subdirs, CompetitionStoreError)
            if found:
                state = "no" if size is None else "an empty"
                raise CompetitionStoreError(
                    f"{self.directory}: holds {' and '.join(found)} of an earlier competition but "
                    f"{state} {DB_NAME}: restore it (from a backup), or use a new directory"
                )
        if size is None:
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except OSError as err:
                raise CompetitionStoreError(
                    f"{self.path}: cannot create the database ({err.strerror})"
                ) from None

    def _usable(self, config: CompetitionConfig, opened: Opened, latest: int) -> None:
        """The file as found is this config's, and (when at this code's schema) its control
        values read: a refused file is left as it was, its WAL unreplayed."""
        self._same(config, opened)
        if opened.version == latest and self._stored_identity() is not None:
            self.ladder_state()
            self.units_per_minute()
            self.secret_seed()

    def _same(self, config: CompetitionConfig, opened: Opened) -> None:
        """Refuse a directory made for another game or rules (before anything is written)."""
        stored = self._stored_identity() if opened.version else None
        if stored is None:
            return
        holds = f"{self.directory} holds a competition"
        self._refuse_other_config(stored, config.identity(), holds, "use another directory")

    def _stored_identity(self) -> dict[str, Any] | None:
        with self._reading("the stored config"):
            row = self._db.execute("SELECT value FROM meta WHERE key='identity'").fetchone()
            if row is None:
                return None
            identity = json.loads(row[0])
            if not isinstance(identity, dict):
                raise ValueError("it must be a JSON object")
            return identity

    def _initialize(self, config: CompetitionConfig) -> None:
        """The values a new competition starts with. Idempotent (``INSERT OR IGNORE``): a host
        killed between the migrations and this completes it on its next start."""
        values = {
            "identity": json.dumps(config.identity(), sort_keys=True),
            "name": config.name,
            "created": now(),
            # Every deal derives from it; 63 bits nobody can guess (docs/tournaments.md, "Seeds
            # are secret"). Never sent to a bot.
            "secret_seed": str(secrets.randbits(63)),
            "ladder_state": "running",
            "units_per_minute": repr(config.ladder.units_per_minute),
        }
        with self._transaction() as db:
            db.executemany("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", values.items())

    def _meta(self, key: str) -> str:
        value = self._meta_value(key)
        if value is None:
            with self._reading(f"meta {key!r}"):
                raise KeyError(f"no {key} stored")
        return value

    def _set_meta(self, db: Connection, key: str, value: str) -> None:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- control ------------------------------------------------------------------------------

    @serialized
    def ladder_state(self) -> LadderState:
        state = self._meta("ladder_state")
        if state not in LADDER_STATES:
            raise CompetitionStoreError(
                f"{self.path}: meta 'ladder_state' is damaged (got {state!r}); was the file "
                "changed outside the arena?"
            )
        return cast(LadderState, state)

    @serialized
    def set_ladder_state(self, state: LadderState) -> bool:
        """Pause, resume or close the ladder; ``False`` when it already is in ``state``. Closing
        is for good here (:class:`Conflict` after it; only :meth:`reopen_ladder`, the admin's
        deliberate step, opens it again) and stamps :meth:`closed_at`."""
        if state not in LADDER_STATES:
            raise CompetitionStoreError(
                f"ladder state must be one of {', '.join(LADDER_STATES)}; got {state!r}"
            )
        with self._transaction() as db:
            current = self.ladder_state()
            if current == state:
                return False
            if state not in LADDER_TRANSITIONS[current]:
                raise Conflict(f"the ladder is {current}; it cannot become {state}")
            self._set_meta(db, "ladder_state", state)
            if state == "closed":
                self._set_meta(db, "closed_at", now())
            return True

    @serialized
    def closed_at(self) -> str | None:
        """When the ladder was closed (UTC, ISO 8601), ``None`` while it is open."""
        return self._meta_value("closed_at")

    @serialized
    def units_per_minute(self) -> float:
        """The ladder's pace: units started per minute at most, 0 for no limit."""
        with self._reading("meta 'units_per_minute'"):
            return check_units_per_minute(float(self._meta("units_per_minute")))

    @serialized
    def set_units_per_minute(self, value: float) -> None:
        try:
            pace = check_units_per_minute(value)
        except ValueError as err:
            raise CompetitionStoreError(f"units_per_minute: {err}") from None
        with self._transaction() as db:
            self._set_meta(db, "units_per_minute", repr(pace))

    @serialized
    def secret_seed(self) -> int:
        """The competition's secret seed: every unit's deal derives from it one-way
        (``arena.host.matchmaking.unit_seed``). Never shown to a bot or an author."""
        with self._reading("meta 'secret_seed'"):
            seed = int(self._meta("secret_seed"))
            if not 0 <= seed < 2**63:
                raise ValueError(f"not a 63-bit seed: {seed}")
            return seed
