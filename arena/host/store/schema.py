"""The competition database's schema (its migrations), its values and its errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

import arena.sqlite
from arena.errors import ArenaError

#: The database's file name inside the competition directory.
DB_NAME: Final = "competition.sqlite"
#: The lock file a running host holds beside it.
LOCK_NAME: Final = DB_NAME + ".lock"
#: One write waits this long inside SQLite for a lock another process holds (an ``sqlite3`` shell,
#: a backup) before :class:`DatabaseLocked`; the caller may retry.
BUSY_TIMEOUT_S: Final = arena.sqlite.BUSY_TIMEOUT_S

#: ``event``: a unit of an event (a knockout, a Swiss, heats) held beside the ladder, rated by
#: neither the ladder nor the final.
Phase = Literal["ladder", "final", "event"]
VersionKind = Literal["archive", "image", "live"]
VersionStatus = Literal["pending", "validating", "validated", "failed", "retired"]
UnitState = Literal["pending", "done", "failed"]
#: ``void``: a match its failed unit left unplayed (stored as pending; read as void).
MatchState = Literal["pending", "done", "void"]
LadderState = Literal["running", "paused", "closed"]

PHASES: Final = get_args(Phase)
VERSION_KINDS: Final = get_args(VersionKind)
VERSION_STATUSES: Final = get_args(VersionStatus)
UNIT_STATES: Final = get_args(UnitState)
LADDER_STATES: Final = get_args(LadderState)

#: The status a version may move to from each status. A retired version never comes back, and a
#: verdict (validated, failed) is never revised: results stored under a version keep one meaning.
#: ``pending → retired`` lets an author withdraw a version still waiting for its validation.
TRANSITIONS: Final[Mapping[str, frozenset[str]]] = {
    "pending": frozenset({"validating", "retired"}),
    "validating": frozenset({"validated", "failed"}),
    "validated": frozenset({"retired"}),
    "failed": frozenset({"retired"}),
    "retired": frozenset(),
}
#: The ladder's states: paused and running alternate; closed is for good (the final follows), but
#: for the admin's deliberate ``reopen`` (:meth:`CompetitionStore.reopen_ladder`: closed →
#: running, the final's pending units failed), never through these transitions.
LADDER_TRANSITIONS: Final[Mapping[str, frozenset[str]]] = {
    "running": frozenset({"paused", "closed"}),
    "paused": frozenset({"running", "closed"}),
    "closed": frozenset(),
}

_SHA256 = re.compile(r"[0-9a-f]{64}")
#: Token prefixes: an author's API token and a live bot's connection token are told apart at a
#: glance (and never start with ``-``, which would read as an option on a command line).
AUTHOR_TOKEN_PREFIX: Final = "cau_"
LIVE_TOKEN_PREFIX: Final = "cal_"

# Schema 1. Released migrations are never edited: a change is a new entry in MIGRATIONS.
_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE authors (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,   -- SHA-256 of the API token, hex
    created    TEXT NOT NULL
);
CREATE TABLE bots (
    id        INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors (id),
    name      TEXT NOT NULL UNIQUE,    -- competition-wide
    created   TEXT NOT NULL
);
CREATE TABLE versions (
    id              INTEGER PRIMARY KEY,
    bot_id          INTEGER NOT NULL REFERENCES bots (id),
    number          INTEGER NOT NULL CHECK (number >= 1),
    kind            TEXT NOT NULL CHECK (kind IN ('archive', 'image', 'live')),
    sha256          TEXT CHECK ((kind = 'live') = (sha256 IS NULL)),
    manifest        TEXT NOT NULL,     -- JSON object: {command, runtime} of the snapshot
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'validating', 'validated', 'failed', 'retired')),
    reason          TEXT NOT NULL DEFAULT '',
    log_path        TEXT,              -- relative to the competition directory
    live_token_hash TEXT UNIQUE CHECK ((kind = 'live') = (live_token_hash IS NOT NULL)),
    created         TEXT NOT NULL,
    updated         TEXT NOT NULL,
    UNIQUE (bot_id, number)
);
CREATE INDEX versions_by_status ON versions (status);
-- What a version is never changes: results stored under it always mean the same code.
CREATE TRIGGER versions_immutable
BEFORE UPDATE OF id, bot_id, number, kind, sha256, manifest, live_token_hash, created ON versions
BEGIN
    SELECT RAISE(ABORT, 'a version is immutable');
END;
CREATE TRIGGER versions_kept BEFORE DELETE ON versions
BEGIN
    SELECT RAISE(ABORT, 'a version is never deleted');
END;
-- The second line behind CompetitionStore.set_status (TRANSITIONS).
CREATE TRIGGER versions_status BEFORE UPDATE OF status ON versions
WHEN OLD.status <> NEW.status AND (OLD.status, NEW.status) NOT IN (VALUES
    ('pending', 'validating'), ('pending', 'retired'), ('validating', 'validated'),
    ('validating', 'failed'), ('validated', 'retired'), ('failed', 'retired'))
BEGIN
    SELECT RAISE(ABORT, 'illegal status change');
END;
CREATE TABLE units (
    id             INTEGER PRIMARY KEY,
    phase          TEXT NOT NULL CHECK (phase IN ('ladder', 'final')),
    seed           INTEGER NOT NULL,  -- the deal, secret: derived one-way from the secret seed
    table_versions TEXT NOT NULL,     -- JSON list: the version of each place
    state          TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    reason         TEXT NOT NULL DEFAULT '',
    created        TEXT NOT NULL,
    finished       TEXT
);
CREATE INDEX units_by_state ON units (state);
-- The table again, one row per place: foreign keys to the versions, and "units of a version".
CREATE TABLE unit_versions (
    unit_id    INTEGER NOT NULL REFERENCES units (id),
    place      INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES versions (id),
    PRIMARY KEY (unit_id, place)
);
CREATE INDEX unit_versions_by_version ON unit_versions (version_id);
CREATE TRIGGER units_final BEFORE UPDATE ON units WHEN OLD.state <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'a finished unit is never changed');
END;
CREATE TABLE matches (
    id          INTEGER PRIMARY KEY,
    unit_id     INTEGER NOT NULL REFERENCES units (id),
    rotation    INTEGER NOT NULL CHECK (rotation >= 0),
    match_id    TEXT NOT NULL UNIQUE,
    seats       TEXT NOT NULL,        -- JSON list: the version of each seat
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
    result      TEXT,                 -- JSON: Result.to_dict()
    faults      TEXT,                 -- JSON list of {seat, kind, detail}
    record_path TEXT,                 -- relative to the competition directory
    finished    TEXT,
    UNIQUE (unit_id, rotation),
    CHECK ((state = 'done') = (result IS NOT NULL))
);
CREATE INDEX matches_by_state ON matches (state);
CREATE TRIGGER matches_final BEFORE UPDATE ON matches WHEN OLD.state = 'done'
BEGIN
    SELECT RAISE(ABORT, 'a finished match is never changed');
END;
"""

# Schema 2: the leaderboard over time, one row per refit that counted new matches (the web
# pages' rating history; a fit is not cheap enough to redo for every past moment on request).
_V2 = """
CREATE TABLE rating_history (
    id      INTEGER PRIMARY KEY,
    phase   TEXT NOT NULL CHECK (phase IN ('ladder', 'final')),
    at      TEXT NOT NULL,
    matches INTEGER NOT NULL CHECK (matches >= 0),
    ratings TEXT NOT NULL              -- JSON list of [ref, elo, plus_minus]
);
CREATE INDEX rating_history_by_phase ON rating_history (phase, id);
"""

# Schema 3: units of events beside the ladder (phase ``event``). SQLite cannot change a CHECK in
# place, so the table is rebuilt (its documented procedure: the runner turns foreign keys off
# around a migration and checks them before it commits); its ids, and so every reference to
# them, are kept.
_V3 = """
CREATE TABLE units_v3 (
    id             INTEGER PRIMARY KEY,
    phase          TEXT NOT NULL CHECK (phase IN ('ladder', 'final', 'event')),
    seed           INTEGER NOT NULL,
    table_versions TEXT NOT NULL,
    state          TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    reason         TEXT NOT NULL DEFAULT '',
    created        TEXT NOT NULL,
    finished       TEXT
);
INSERT INTO units_v3 (id, phase, seed, table_versions, state, reason, created, finished)
    SELECT id, phase, seed, table_versions, state, reason, created, finished FROM units;
DROP TABLE units;
ALTER TABLE units_v3 RENAME TO units;
CREATE INDEX units_by_state ON units (state);
CREATE TRIGGER units_final BEFORE UPDATE ON units WHEN OLD.state <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'a finished unit is never changed');
END;
"""

# Schema 4: the files the host's retention removed (arena/host/retention.py), so that what asks
# for one hears it was pruned rather than lost; the match rows stay as they were.
_V4 = """
CREATE TABLE pruned (
    path  TEXT PRIMARY KEY,            -- relative to the competition directory
    bytes INTEGER NOT NULL CHECK (bytes >= 0),
    at    TEXT NOT NULL
);
"""

# Schema 5: seasons (the ladder cut in seasons, each archived with its frozen standings at its
# end), the results announced (a season's, the final's, an event's end) and the webhook
# deliveries of each, kept until sent (at least once, across restarts). Units and refits get the
# season current when they are stored (a trigger, so that no writer can forget it); the rows
# older than this schema belong to season 1, which every competition starts in.
_V5 = """
CREATE TABLE seasons (
    number    INTEGER PRIMARY KEY CHECK (number >= 1),
    name      TEXT NOT NULL DEFAULT '',
    starts    TEXT NOT NULL,
    ends      TEXT,                -- planned while current (NULL: none), actual once archived
    state     TEXT NOT NULL DEFAULT 'current' CHECK (state IN ('current', 'archived')),
    matches   INTEGER,             -- the season's finished ladder matches, at its end
    standings TEXT,                -- JSON list of leaderboard rows, frozen at its end
    winners   TEXT,                -- JSON list of BOT@N
    CHECK ((state = 'archived') = (standings IS NOT NULL))
);
CREATE UNIQUE INDEX seasons_one_current ON seasons (state) WHERE state = 'current';
CREATE TRIGGER seasons_archived BEFORE UPDATE ON seasons WHEN OLD.state = 'archived'
BEGIN
    SELECT RAISE(ABORT, 'an archived season is never changed');
END;
INSERT INTO seasons (number, starts) VALUES (1, COALESCE(
    (SELECT value FROM meta WHERE key = 'created'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')));
ALTER TABLE units ADD COLUMN season INTEGER NOT NULL DEFAULT 1;
ALTER TABLE rating_history ADD COLUMN season INTEGER NOT NULL DEFAULT 1;
CREATE INDEX units_by_season ON units (season, phase);
CREATE TRIGGER units_season AFTER INSERT ON units
WHEN EXISTS (SELECT 1 FROM seasons WHERE state = 'current')
BEGIN
    UPDATE units SET season = (SELECT number FROM seasons WHERE state = 'current')
    WHERE id = NEW.id;
END;
CREATE TABLE results (
    id      INTEGER PRIMARY KEY,
    kind    TEXT NOT NULL,         -- season, final, event
    subject TEXT NOT NULL,         -- what ended, in words: "season 2 (Spring)", "the final"
    winners TEXT NOT NULL,         -- JSON list of BOT@N
    detail  TEXT NOT NULL,         -- JSON object
    at      TEXT NOT NULL,
    UNIQUE (kind, subject)
);
CREATE TABLE deliveries (
    id         INTEGER PRIMARY KEY,
    result_id  INTEGER NOT NULL REFERENCES results (id),
    url        TEXT NOT NULL,
    body       TEXT NOT NULL,      -- the exact bytes POSTed (and signed), every attempt alike
    state      TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    TEXT NOT NULL,
    last_error TEXT NOT NULL DEFAULT '',
    sent       TEXT
);
CREATE INDEX deliveries_by_state ON deliveries (state, next_at);
"""

# Schema 6 (events): an event as it was started (its rules and entrants kept), each round's
# pairing as made, and which round, tie and deal each of its units is. UNIQUE (event, round,
# tie, deal): a deal of a tie is created once, however often a killed host derives it again.
_V6 = """
CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    name     TEXT NOT NULL UNIQUE,
    format   TEXT NOT NULL CHECK (format IN ('knockout', 'swiss', 'heats')),
    state    TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished')),
    config   TEXT NOT NULL,             -- JSON: the event's config when it started
    seed     INTEGER NOT NULL,          -- its deals derive from it (secret)
    entrants TEXT NOT NULL,             -- JSON list of version ids, by seed (best first)
    created  TEXT NOT NULL,
    finished TEXT,
    winner   INTEGER REFERENCES versions (id),
    reason   TEXT NOT NULL DEFAULT ''   -- how it ended, in words
);
CREATE TRIGGER events_final BEFORE UPDATE ON events WHEN OLD.state = 'finished'
BEGIN
    SELECT RAISE(ABORT, 'a finished event is never changed');
END;
CREATE TABLE event_rounds (
    event_id INTEGER NOT NULL REFERENCES events (id),
    round    INTEGER NOT NULL CHECK (round >= 0),
    ties     TEXT NOT NULL,             -- JSON list: each tie's seeds (null: a bye's empty side)
    created  TEXT NOT NULL,
    PRIMARY KEY (event_id, round)
);
CREATE TABLE event_units (
    unit_id  INTEGER PRIMARY KEY REFERENCES units (id),
    event_id INTEGER NOT NULL REFERENCES events (id),
    round    INTEGER NOT NULL,
    tie      INTEGER NOT NULL,
    deal     INTEGER NOT NULL,
    UNIQUE (event_id, round, tie, deal)
);
ALTER TABLE units ADD COLUMN event_id INTEGER REFERENCES events (id);
CREATE INDEX units_by_event ON units (event_id);
"""

# Schema 7 (admin): an author may be suspended (their token revoked, their versions retired;
# a version of theirs still in its validation is retired at its verdict, by the trigger), a
# failed unit may be played again as a new unit (``reruns`` pairs them), and every admin action
# is kept.
_V7 = """
ALTER TABLE authors ADD COLUMN suspended TEXT;  -- when (UTC); NULL: in good standing
ALTER TABLE authors ADD COLUMN suspended_reason TEXT NOT NULL DEFAULT '';
-- A failed unit played again (never changed itself) and the unit that plays it: one each.
CREATE TABLE reruns (
    unit_id  INTEGER PRIMARY KEY REFERENCES units (id),
    rerun_id INTEGER NOT NULL UNIQUE REFERENCES units (id)
);
CREATE TABLE audit (
    id     INTEGER PRIMARY KEY,
    at     TEXT NOT NULL,
    actor  TEXT NOT NULL DEFAULT 'admin',
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'   -- JSON object
);
CREATE TRIGGER audit_kept BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'an audit row is never changed');
END;
CREATE TRIGGER audit_not_deleted BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'an audit row is never deleted');
END;
CREATE TRIGGER versions_of_suspended AFTER UPDATE OF status ON versions
WHEN NEW.status IN ('validated', 'failed') AND (SELECT a.suspended FROM authors a
    JOIN bots b ON b.author_id = a.id WHERE b.id = NEW.bot_id) IS NOT NULL
BEGIN
    UPDATE versions SET status = 'retired', reason = 'suspended by the host' WHERE id = NEW.id;
END;
"""

# Schema 8 (challenges, issue 45): a signed-in author's match against the ladder's versions,
# played by the author in the browser (arena/host/challenges.py). Not a unit: a person's seat is
# no version, and no challenge enters the ladder's ratings unless ``rated`` says so.
_V8 = """
CREATE TABLE challenges (
    id          INTEGER PRIMARY KEY,
    match_id    TEXT NOT NULL UNIQUE,
    author_id   INTEGER NOT NULL REFERENCES authors (id),
    person_seat INTEGER NOT NULL CHECK (person_seat >= 0),
    seats       TEXT NOT NULL,        -- JSON list: the version of each seat, null: the person's
    seed        INTEGER NOT NULL,
    rated       INTEGER NOT NULL DEFAULT 0 CHECK (rated IN (0, 1)),
    state       TEXT NOT NULL DEFAULT 'playing' CHECK (state IN ('playing', 'done', 'failed')),
    reason      TEXT NOT NULL DEFAULT '',
    result      TEXT,                 -- JSON: Result.to_dict()
    faults      TEXT,                 -- JSON list of {seat, kind, detail}
    record_path TEXT,
    created     TEXT NOT NULL,
    finished    TEXT,
    CHECK ((state = 'done') = (result IS NOT NULL))
);
CREATE INDEX challenges_by_author ON challenges (author_id, created);
ALTER TABLE challenges ADD COLUMN season INTEGER NOT NULL DEFAULT 1;
CREATE TRIGGER challenges_season AFTER INSERT ON challenges
WHEN EXISTS (SELECT 1 FROM seasons WHERE state = 'current')
BEGIN
    UPDATE challenges SET season = (SELECT number FROM seasons WHERE state = 'current')
    WHERE id = NEW.id;
END;
CREATE TRIGGER challenges_final BEFORE UPDATE ON challenges WHEN OLD.state <> 'playing'
BEGIN
    SELECT RAISE(ABORT, 'a finished challenge is never changed');
END;
"""

#: The schema, as the migrations that build it in order; the file's schema version is how many
#: it has applied. Append only: a released migration is never edited or removed.
MIGRATIONS: Final[tuple[str, ...]] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8)


class CompetitionStoreError(ArenaError):
    """The competition's database cannot be used, or refuses a change; one line saying why."""


class NotFound(CompetitionStoreError):
    """No author, version, unit or match by that id."""


class Conflict(CompetitionStoreError):
    """The change contradicts what is stored (a taken name, an illegal transition)."""


class Forbidden(CompetitionStoreError):
    """The caller may not do this (another author's bot, a wrong invite code)."""


class DatabaseLocked(CompetitionStoreError):
    """Another process held the write lock past :data:`BUSY_TIMEOUT_S`; nothing was written
    (retrying may succeed)."""


@dataclass(frozen=True, slots=True)
class Author:
    """A registered author (the token is never part of it)."""

    id: int
    name: str
    created: str


@dataclass(frozen=True, slots=True)
class Bot:
    """A bot: a name, competition-wide, owned by one author."""

    id: int
    author_id: int
    name: str
    created: str


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """The leaderboard after one refit."""

    #: When (UTC, ISO 8601).
    at: str
    #: Rated matches the fit counted.
    matches: int
    #: ``(ref, elo, plus_minus)`` of each rated version, best first.
    ratings: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True, slots=True)
class Version:
    """One submitted version of a bot."""

    id: int
    bot_id: int
    #: The bot's name.
    bot: str
    author_id: int
    #: 1, 2, … per bot.
    number: int
    kind: VersionKind
    #: The snapshot's content address; ``None`` for a live bot.
    sha256: str | None
    #: ``{command, runtime}`` from the archive's manifest, and since ``[limits]`` the ``bytes``
    #: the upload holds unpacked (what ``limits.stored_mib_per_author`` counts).
    manifest: dict[str, Any]
    status: VersionStatus
    #: Why it failed or was retired.
    reason: str
    #: Its validation log, relative to the competition directory.
    log_path: str | None
    created: str
    updated: str

    @property
    def ref(self) -> str:
        """``BOT@NUMBER``: its name on leaderboards and in :meth:`CompetitionStore.rating_entries`
        (bot names have no ``@``)."""
        return f"{self.bot}@{self.number}"


@dataclass(frozen=True, slots=True)
class Unit:
    """One duplicate deal at one table, played in every rotation."""

    #: Also its serial: ids grow in creation order and are never reused.
    id: int
    phase: Phase
    seed: int
    #: The version of each place, in place order.
    table: tuple[int, ...]
    state: UnitState
    reason: str
    created: str
    finished: str | None


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """One rotation of a unit, as stored."""

    match_id: str
    unit_id: int
    phase: Phase
    #: The unit's seed (the same deal in every rotation).
    seed: int
    rotation: int
    #: The version of each engine seat.
    seats: tuple[int, ...]
    state: MatchState
    #: ``Result.to_dict()`` once done.
    result: dict[str, Any] | None
    faults: list[dict[str, Any]]
    record_path: str | None
    finished: str | None


@dataclass(frozen=True, slots=True)
class Activity:
    """A version's share of one phase, for matchmaking (``arena.host.matchmaking.Candidate``)."""

    #: Units it was chosen for (any state).
    units: int
    #: The id of the last unit it was chosen for; ``None`` if never.
    last_unit: int | None
    #: Its units still pending.
    running: int
    #: Its finished matches.
    matches: int


SeasonState = Literal["current", "archived"]


@dataclass(frozen=True, slots=True)
class Season:
    """One season of the ladder: current (one at a time) or archived with frozen standings."""

    number: int
    #: ``""``: unnamed (a competition without ``[seasons]``).
    name: str
    starts: str
    #: Planned while current (``None``: no end planned); when it ended once archived.
    ends: str | None
    state: SeasonState
    #: Once archived: its finished ladder matches, its leaderboard rows (as the API's
    #: ``LeaderRow``), its winners (``BOT@N``, several when tied).
    matches: int | None
    standings: list[dict[str, Any]] | None
    winners: list[str]

    @property
    def title(self) -> str:
        """``Season 2 (Spring)``, or ``Season 1`` when unnamed."""
        plain = f"Season {self.number}"
        return plain + (f" ({self.name})" if self.name and self.name != plain else "")


@dataclass(frozen=True, slots=True)
class Announced:
    """A result announced: what ended, when, who won."""

    id: int
    #: ``season``, ``final``, ``event``.
    kind: str
    subject: str
    winners: list[str]
    detail: dict[str, Any]
    at: str


@dataclass(frozen=True, slots=True)
class Delivery:
    """One webhook POST of a result, kept until it is sent."""

    id: int
    result_id: int
    url: str
    body: str
    state: str
    attempts: int
    next_at: str
    last_error: str
