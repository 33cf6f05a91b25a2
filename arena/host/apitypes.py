"""The competition API's bodies: what the server (:mod:`arena.host.api`) answers and takes, and
what its client (:mod:`arena.host.client`, ``arena remote``) reads back, one set for both.

Pydantic models only, no FastAPI: the client loads them without the server. Their names and
fields are the OpenAPI schema's (``/openapi.json``), so a change here is a change on the wire.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

#: The header of ``GET /matches`` saying how many matches its filters select, for paging.
TOTAL_HEADER = "X-Total-Count"
#: A phase of the competition, as the API's ``phase`` parameters take it.
Phase = Literal["ladder", "final"]
#: What the host may set the ladder to (``POST /admin/ladder``).
LadderState = Literal["running", "paused", "closed"]


# --- answers ------------------------------------------------------------------------------------


class AuthorOut(BaseModel):
    id: int
    name: str
    created: str


class NewToken(BaseModel):
    author: AuthorOut
    #: Shown this once: only its hash is stored.
    token: str


class RotatedToken(BaseModel):
    token: str


class VersionOut(BaseModel):
    id: int
    bot: str
    number: int
    ref: str
    kind: str
    sha256: str | None
    runtime: str
    status: str
    #: Why it failed or was retired (its author only).
    reason: str | None = None
    created: str
    updated: str


class LiveVersion(BaseModel):
    version: VersionOut
    #: The token the live bot connects with (``ARENA_TOKEN``), shown this once.
    token: str


class BotOut(BaseModel):
    name: str
    author: str
    versions: list[VersionOut]


class Me(BaseModel):
    author: AuthorOut
    bots: list[BotOut]


class LeaderRow(BaseModel):
    rank: int
    ref: str
    bot: str
    author: str
    elo: float
    plus_minus: float
    matches: int
    score: float
    #: Retired by its author: listed only when asked for (``all``), never ranked otherwise.
    retired: bool = False
    #: Too few rated matches or too wide an interval (the rule: :attr:`Status.provisional_rule`):
    #: listed after every established version.
    provisional: bool = False


class ParRow(BaseModel):
    #: The version, as ``BOT@N``.
    ref: str
    #: Its mean score per ladder match minus the reference's in the same seat on the same deal,
    #: in the game's score units (docs/ratings.md, "Par: luck-adjusted scores").
    par: float
    #: Half-width of the 95 % interval; ``None`` from a single deal.
    plus_minus: float | None
    matches: int
    deals: int


class ParBoard(BaseModel):
    #: The reference strategy (``[ladder] par``); ``""``: the competition shows no par.
    reference: str
    #: Each version's par, best first; empty until the first computation ends.
    rows: list[ParRow]


class CrossCell(BaseModel):
    #: The versions, as ``BOT@N``: the row's record against the column's.
    row: str
    column: str
    matches: int
    wins: int
    losses: int
    draws: int


class Superiority(BaseModel):
    row: str
    column: str
    #: P(the row's version is stronger than the column's), from the rating fit.
    p: float


class CrossTable(BaseModel):
    #: The rated versions, best first.
    versions: list[str]
    cells: list[CrossCell]
    superiority: list[Superiority]


class HistoryRating(BaseModel):
    ref: str
    elo: float
    plus_minus: float


class HistoryPoint(BaseModel):
    at: str
    matches: int
    ratings: list[HistoryRating]


class MatchOut(BaseModel):
    match_id: str
    unit: int
    phase: str
    rotation: int
    #: The version of each seat, as ``BOT@N``.
    seats: list[str]
    state: str
    summary: str | None = None
    reason: str | None = None
    ranks: list[int] | None = None
    faults: list[dict[str, Any]] = Field(default_factory=list)
    finished: str | None = None
    #: Whether its record may be downloaded (every rotation of its deal is played).
    record_available: bool = False
    #: A human match: a person held a seat (a challenge, phase ``challenge``; never rated on the
    #: ladder unless ``[challenges] rated``).
    human: bool = False


class HeadToHead(BaseModel):
    #: The opponent version, ``BOT@N``.
    opponent: str
    matches: int
    #: Matches in which this version ranked above, below, or level with the opponent.
    wins: int
    losses: int
    draws: int


class UploadLimits(BaseModel):
    """What one submission may be (the competition's ``[submissions]``)."""

    max_upload_mib: int
    max_files: int
    max_unpacked_mib: int
    allow_images: bool


class Status(BaseModel):
    name: str
    game: str
    players: int
    server_version: str
    state: str
    units_per_minute: float
    versions: dict[str, int]
    matches_played: int
    #: The gRPC port live bots connect to (on this host's name).
    grpc_port: int
    #: The gRPC address live bots connect to, ``host:port`` (``arena host --public-grpc``,
    #: else where it listens, else this request's host name with ``grpc_port``).
    grpc_address: str | None = None
    #: Whether the API and the gRPC arena speak TLS (a live bot then needs ARENA_CA_CERT for a
    #: self-signed host).
    tls: bool = False
    #: The protocol version the arena speaks (Hello.protocol_version).
    protocol_version: int = 1
    #: What a submission may be; ``None`` from a host older than this field.
    upload_limits: UploadLimits | None = None
    #: The leaderboard's provisional rule, in one sentence.
    provisional_rule: str = ""
    #: ``not started``, ``playing`` or ``finished`` (every unit of the final played);
    #: ``interrupted``: the admin reopened the ladder while it played (docs/hosting.md, Admin).
    final: str = "not started"
    #: Once the final is finished: the version ranked first in it (several: tied).
    final_winners: list[str] = Field(default_factory=list)
    #: The current season (``None`` from a host older than seasons).
    season: SeasonOut | None = None
    #: The latest results announced (a season's, the final's, an event's end), newest first.
    results: list[ResultOut] = Field(default_factory=list)
    #: Each configured or started event: ``{name, state, winner}`` (``/events`` has the rest).
    events: list[dict[str, str | None]] = Field(default_factory=list)
    #: The seats of a challenge's table (``POST /challenges``); 0: the host takes none.
    challenge_seats: int = 0


class SeasonOut(BaseModel):
    number: int
    #: ``""``: unnamed.
    name: str
    #: ``Season 2 (Spring)``.
    title: str
    starts: str
    #: Its planned end while current (``None``: none planned); when it ended once archived.
    ends: str | None
    #: ``current`` or ``archived``.
    state: str
    #: Once archived: its finished ladder matches, and its winners (``BOT@N``).
    matches: int | None = None
    winners: list[str] = Field(default_factory=list)


class SeasonDetail(BaseModel):
    season: SeasonOut
    #: Archived: the standings frozen at its end; current: the ladder's leaderboard now.
    standings: list[LeaderRow]
    #: The ladder's leaderboard after each refit during the season.
    history: list[HistoryPoint]


class SeasonEnd(BaseModel):
    ended: SeasonOut
    current: SeasonOut


class ResultOut(BaseModel):
    #: ``season``, ``final`` or ``event``.
    kind: str
    #: What ended: ``Season 2 (Spring)``, ``the final``.
    subject: str
    winners: list[str]
    at: str


# --- requests -----------------------------------------------------------------------------------


class Registration(BaseModel):
    name: str = Field(min_length=1, max_length=32)
    invite_code: str = Field(min_length=1, max_length=200)


class NewAuthor(BaseModel):
    name: str = Field(min_length=1, max_length=32)


class Control(BaseModel):
    state: LadderState | None = None
    units_per_minute: float | None = Field(default=None, ge=0, le=100_000)


class NewSeason(BaseModel):
    #: The next season's name (else the config's, or none).
    name: str | None = Field(default=None, min_length=1, max_length=64)


# --- events (arena/host/events) -----------------------------------------------------------------


class EventOut(BaseModel):
    name: str
    #: ``knockout``, ``swiss`` or ``heats``.
    format: str
    #: ``scheduled`` (configured, not started), ``running`` or ``finished``.
    state: str
    #: When it begins (UTC, ISO 8601); ``None``: when the host starts it.
    start: str | None = None
    #: The entrants by seed (``BOT@N``), the best first, once started.
    entrants: list[str] = Field(default_factory=list)
    #: Its rules as started (or as configured).
    config: dict[str, Any] = Field(default_factory=dict)
    started: str | None = None
    finished: str | None = None
    winner: str | None = None
    #: How it ended, in words.
    reason: str = ""


class EventDeal(BaseModel):
    deal: int
    unit: int
    #: ``pending``, ``done`` or ``failed``.
    state: str
    match_ids: list[str]
    #: Each side's match points in the deal (in the tie's order).
    points: list[float]
    #: Each side's game score in the deal.
    scores: list[float]


class EventTie(BaseModel):
    #: The sides (``BOT@N``), in seed order of the round; ``None``: a bye's empty side.
    sides: list[str | None]
    seeds: list[int | None]
    deals: list[EventDeal]
    #: Each side's totals over the tie.
    points: list[float]
    scores: list[float]
    #: Who went through (knockout), won the pairing (Swiss) or the heat's order (heats); empty
    #: while it is played.
    result: list[str] = Field(default_factory=list)


class EventRound(BaseModel):
    round: int
    name: str
    ties: list[EventTie]


class EventStanding(BaseModel):
    rank: int
    ref: str
    seed: int
    points: float
    match_points: float
    #: Swiss: the sum of the opponents' points; knockout and heats: the last round reached.
    tiebreak: float
    opponents: list[str] = Field(default_factory=list)


class EventDetail(EventOut):
    rounds: list[EventRound] = Field(default_factory=list)
    #: Swiss: the standings after the rounds played.
    standings: list[EventStanding] = Field(default_factory=list)


# --- the admin's (``/admin/…``) -----------------------------------------------------------------


class Quota(BaseModel):
    """An author's use of the ``[limits]`` quotas (a limit of 0: none)."""

    versions_today: int
    versions_per_day: int
    live_bots: int
    live_bots_per_author: int
    stored_bytes: int
    stored_bytes_limit: int


class AdminAuthor(BaseModel):
    id: int
    name: str
    created: str
    #: When the host suspended them (``None``: in good standing), and why.
    suspended: str | None = None
    suspended_reason: str = ""
    #: Every version of theirs, with why it failed or was retired.
    versions: list[VersionOut]
    quota: Quota


class Suspended(BaseModel):
    author: AdminAuthor
    #: The versions the suspension retired.
    retired: list[str]
    #: Their live bots disconnected now.
    disconnected: int


class UnitOut(BaseModel):
    id: int
    phase: str
    #: The version at each place (``BOT@N``).
    table: list[str]
    state: str
    reason: str
    created: str
    finished: str | None = None
    #: A failed unit played again: the unit that plays it.
    rerun_as: int | None = None


class Queued(BaseModel):
    version: VersionOut
    #: Seconds since it was submitted.
    age_s: float


class AdminQueue(BaseModel):
    #: Versions waiting for or in their validation, oldest first.
    validation: list[Queued]
    #: Failed units (of the ladder and the final), with why, newest first.
    failed_units: list[UnitOut]


class AuditOut(BaseModel):
    id: int
    at: str
    actor: str
    action: str
    target: str
    detail: dict[str, Any]


class Why(BaseModel):
    """Why the admin suspends an author or retires a version (kept in the audit)."""

    reason: str = Field(default="", max_length=500)


class LiveMatch(BaseModel):
    """A match being played: who plays it, never what happens in it."""

    match_id: str
    unit: int
    phase: str
    rotation: int
    #: The version of each seat, as ``BOT@N`` (a person's, ``person:AUTHOR``).
    seats: list[str]
    #: ``true``: a challenge, a person holds a seat (``phase`` "challenge"); absent otherwise
    #: (the list of the ladder's matches says no more than it did).
    human: bool | None = None


class Live(BaseModel):
    """The matches in progress on this host (``/live``)."""

    matches: list[LiveMatch]
    #: The ladder plays on a cluster's workers, whose matches this host does not see as they go.
    on_workers: bool = False


class LiveStatus(BaseModel):
    """Whether one match is shown live now (``/live/{id}``; docs/hosting.md, "Live matches"):
    ``live`` (its feed is ``/live/{id}/feed``), ``waiting`` (another seating of its deal is
    still to play or in play; a challenge: starting), ``over``, or ``elsewhere`` (not played by
    this host's arena now); the page's sentence about it."""

    match_id: str
    showing: Literal["live", "waiting", "over", "elsewhere"]
    why: str
    #: The other seatings of its deal still to play or in play (``waiting``).
    waiting_for: list[str] = Field(default_factory=list)


class AnalysisOut(BaseModel):
    """An author's analysis of their seats in a match (``/matches/{id}/analysis``): its state
    (``none`` not asked, ``queued``, ``running``, ``done``, ``failed``), the seats, when it was
    asked (epoch seconds), a failure's
    one-line reason, and once done the analysis (``arena replay analyze --json``'s object, of
    those seats only; docs/analysis.md)."""

    match_id: str
    state: str
    seats: list[int]
    requested_at: float | None = None
    reason: str | None = None
    analysis: dict[str, Any] | None = None


class ChallengeOut(MatchOut):
    """A challenge (``/challenges``): a signed-in author's match against the ladder's versions,
    played in the browser; the author's seat is ``person:AUTHOR`` in ``seats``. ``state``:
    ``playing``, ``done``, ``failed``. ``play_url``: the author's page while it is played, to
    them only."""

    author: str
    person_seat: int
    rated: bool
    created: str
    play_url: str | None = None


class ChallengeIn(BaseModel):
    """A new challenge: the bot (``BOT``, its newest version on the ladder, or ``BOT@N``) for
    every other seat, or one a seat in seat order; and the author's seat."""

    opponents: list[str] = Field(min_length=1, max_length=16)
    seat: int = Field(default=0, ge=0, le=100)
