"""A competition's state in one SQLite file, ``DIR/competition.sqlite`` (WAL journal).

It holds the authors (their API tokens as SHA-256 only), their bots and every submitted version
(immutable once stored; only its status moves, along :data:`TRANSITIONS`), the ladder's and the
final's *units* (one duplicate deal at one table of versions, played in every rotation of its
places: one match per rotation) with their matches, and the control values (ladder state, pace,
the secret seed).

Kill -9 safe, as a tournament's results file: a unit and all its matches are inserted in one
transaction, and a match's result is committed together with its ``done`` status and only while
it is still ``pending`` (:meth:`CompetitionStore.commit_match`), so a match replayed after a crash
is never counted twice; a unit is ``done`` in the transaction that stores its last match.

The schema is the ordered list :data:`MIGRATIONS`, append-only: the file's version (``meta``
``schema``) is the number applied, each later one is applied in its own transaction on open, and
a file newer than this code is refused. A damaged file (not a database, a garbage page, a table
missing, a stored value of the wrong type), another host on the same directory, or a directory
made for another game or rules (:meth:`CompetitionConfig.identity`) is refused in one line
(:class:`CompetitionStoreError`) and left as it was.

Threads: callers (HTTP handlers, the ladder) run these synchronous calls in worker threads; the
store uses its one connection from one thread at a time (:class:`arena.sqlite.SQLiteStore`, the
base of every store of the arena).

The modules, by table group: ``schema`` (migrations, values, errors), ``rows`` (rows read back),
``versions`` (authors, bots, versions), ``matches`` (units, matches), ``ratings`` (the rating
history, matchmaking's counts), ``retention`` (the pruned files), ``seasons`` (seasons, results,
webhook deliveries), ``events`` (events, their rounds and units), ``admin`` (suspensions,
reruns, reopening, the audit), ``competition`` (opening, control values).
"""

from arena.host.store.admin import (
    REOPENED_REASON,
    SUSPENDED_REASON,
    AuditEntry,
    Standing,
    Suspension,
)
from arena.host.store.competition import CompetitionStore
from arena.host.store.events import EventUnit, NewEventUnit, StoredEvent, event_match_id
from arena.host.store.schema import (
    AUTHOR_TOKEN_PREFIX,
    BUSY_TIMEOUT_S,
    DB_NAME,
    LADDER_STATES,
    LADDER_TRANSITIONS,
    LIVE_TOKEN_PREFIX,
    LOCK_NAME,
    MIGRATIONS,
    PHASES,
    TRANSITIONS,
    UNIT_STATES,
    VERSION_KINDS,
    VERSION_STATUSES,
    Activity,
    Announced,
    Author,
    Bot,
    CompetitionStoreError,
    Conflict,
    DatabaseLocked,
    Delivery,
    Forbidden,
    LadderState,
    MatchState,
    NotFound,
    Phase,
    RatingPoint,
    Season,
    SeasonState,
    StoredMatch,
    Unit,
    UnitState,
    Version,
    VersionKind,
    VersionStatus,
)

__all__ = [
    "AUTHOR_TOKEN_PREFIX",
    "BUSY_TIMEOUT_S",
    "DB_NAME",
    "LADDER_STATES",
    "LADDER_TRANSITIONS",
    "LIVE_TOKEN_PREFIX",
    "LOCK_NAME",
    "MIGRATIONS",
    "PHASES",
    "REOPENED_REASON",
    "SUSPENDED_REASON",
    "TRANSITIONS",
    "UNIT_STATES",
    "VERSION_KINDS",
    "VERSION_STATUSES",
    "Activity",
    "Announced",
    "AuditEntry",
    "Author",
    "Bot",
    "CompetitionStore",
    "CompetitionStoreError",
    "Conflict",
    "DatabaseLocked",
    "Delivery",
    "EventUnit",
    "Forbidden",
    "LadderState",
    "MatchState",
    "NewEventUnit",
    "NotFound",
    "Phase",
    "RatingPoint",
    "Season",
    "SeasonState",
    "Standing",
    "StoredEvent",
    "StoredMatch",
    "Suspension",
    "Unit",
    "UnitState",
    "Version",
    "VersionKind",
    "VersionStatus",
    "event_match_id",
]

from arena.host.store.challenges import Challenge
from arena.host.store.matches import MATCH_FILTERS, UnitPlan

__all__ += ["MATCH_FILTERS", "Challenge", "UnitPlan"]
