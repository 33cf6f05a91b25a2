"""A competition's config (``arena host COMPETITION.toml DIR``): a TOML file, checked key by key.

Every mistake is a :class:`CompetitionConfigError` whose one-line message names the file, the
key and the problem (``cup.toml: ladder.concurrency: must be an integer; got 'two'``), in the
tournament config's words: the rules of its matches (game, players, options, time control, fault
policy) are checked by :func:`arena.rules.check_rules`, as a tournament's are, and its name and
concurrency by :mod:`arena.tournament.config`'s checks.

Only :meth:`CompetitionConfig.identity` (game, its version, players, options, fault policy, time
control) is fixed for the competition's life: the store refuses a directory created with another
(:mod:`arena.host.store`). Everything else may change between runs of the host, ``[workers]``
included: where a match is played does not change its result.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Any, Literal

from arena.checks import Checker, read_toml
from arena.errors import ArenaError
from arena.host.analyses import AnalysisSettings
from arena.host.events.config import EventConfig, check_events
from arena.par import REFERENCES
from arena.rules import MatchRules, check_rules
from arena.tournament.config import (
    builtin_bots,
    check_concurrency,
    check_name,
    node_bot_status,
)
from arena.tournament.schedule import (
    MAX_MATCHES,
    Format,
    places,
    rotations_per_table,
    table_count,
)

#: Every top-level key, and the keys of each section.
KNOWN_KEYS = (
    "name",
    "game",
    "players",
    "options",
    "time_control",
    "fault_policy",
    "ladder",
    "validation",
    "submissions",
    "authors",
    "final",
    "workers",
    "http",
    "limits",
    "retention",
    "seasons",
    "announce",
    "events",
    "analysis",
    "challenges",
)
SECTION_KEYS: Mapping[str, tuple[str, ...]] = {
    "time_control": ("move_ms", "bank_ms"),
    "ladder": (
        "concurrency",
        "units_per_minute",
        "provisional_matches",
        "provisional_interval",
        "live_grace_s",
        "par",
    ),
    "validation": ("opponent", "matches"),
    "submissions": ("max_upload_mib", "max_files", "max_unpacked_mib", "allow_images"),
    "authors": ("invite_code",),
    "final": ("top", "matches_per_pairing"),
    "workers": ("dask",),
    "http": (
        "header_timeout_s",
        "keep_alive_s",
        "body_timeout_s",
        "min_body_rate",
        "max_connections_per_address",
        "max_connections",
        "trusted_proxies",
    ),
    "limits": (
        "address_requests_per_minute",
        "address_burst",
        "token_requests_per_minute",
        "token_burst",
        "auth_failures",
        "auth_window_s",
        "auth_lockout_s",
        "versions_per_day",
        "live_bots_per_author",
        "stored_mib_per_author",
    ),
    "retention": (
        "records_days",
        "records_mib",
        "logs_days",
        "logs_mib",
        "published",
        "interval_s",
    ),
    "seasons": ("length_days", "schedule", "ratings"),
    "announce": ("webhook_url", "secret_file", "secret_env"),
    "analysis": ("enabled", "per_author_per_day", "worlds", "timeout_s"),
    "challenges": (
        "enabled",
        "rated",
        "per_author_per_day",
        "max_open_per_author",
        "opponents",
        "move_ms",
        "bank_ms",
    ),
}

#: The fastest pace a host may set. 0 means "as fast as the machine plays"; a finite figure above
#: this is a typo (60000 for 6), and no machine starts a unit every millisecond anyway.
MAX_UNITS_PER_MINUTE = 1000.0
#: Validation matches per version at most: each is played before the version enters the ladder.
MAX_VALIDATION_MATCHES = 100
#: Caps on the submission limits: a typo (32000 for 32) would let one upload fill the disk.
MAX_UPLOAD_MIB = 4096
MAX_UNPACKED_MIB = 65536
MAX_FILES = 1_000_000
#: Invite codes are secrets checked over HTTP: a short one could be guessed by trying.
MIN_INVITE_CODE = 8
#: The leaderboard's provisional rule: fewer rated matches than this, or an interval wider than
#: ± this many Elo (docs/hosting.md).
DEFAULT_PROVISIONAL_MATCHES = 10
DEFAULT_PROVISIONAL_INTERVAL = 150
#: Seconds a unit waits for a live bot that is not connected (after a restart of the host, its
#: bot reconnecting) before it is given up; at most an hour, so a typo cannot hold units for days.
DEFAULT_LIVE_GRACE_S = 60
MAX_LIVE_GRACE_S = 3600
#: The final's default matches per pairing: the smallest multiple of the rotations from this.
DEFAULT_FINAL_MATCHES = 12
#: The longest any ``[http]`` timeout may be: beyond an hour it is a typo, and no longer a limit.
MAX_HTTP_TIMEOUT_S = 3600.0
#: The largest value of any ``[limits]`` key: a bigger one is a typo (a limit off is 0).
MAX_LIMIT = 10**9
#: ``[retention]``'s largest ages and sizes: beyond a century or 10 TiB it is a typo (0 keeps
#: for ever), and its slowest pace between two passes, a day.
MAX_RETENTION_DAYS = 36500
MAX_RETENTION_MIB = 10 * 1024 * 1024
MAX_RETENTION_INTERVAL_S = 86400
#: A Dask scheduler's address: ``tcp://HOST:PORT`` or ``tls://HOST:PORT`` (IPv6 in brackets).
_SCHEDULER = re.compile(r"(tcp|tls)://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}")


class CompetitionConfigError(ArenaError):
    """The competition config is wrong; the message names the key."""


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """The continuous ladder."""

    #: Matches played at once (1 to :data:`MAX_CONCURRENCY`).
    concurrency: int = 2
    #: Units started per minute at most; 0: as fast as the machine plays. Only the starting
    #: value: the host may change it live (the store keeps the current one).
    units_per_minute: float = 0.0
    #: A version is provisional (listed apart, below every established one) while it has
    #: fewer rated matches than this ...
    provisional_matches: int = DEFAULT_PROVISIONAL_MATCHES
    #: ... or its 95 % interval is wider than ± this many Elo.
    provisional_interval: int = DEFAULT_PROVISIONAL_INTERVAL
    #: Seconds a unit waits for a live bot that is not connected before it is given up.
    live_grace_s: int = DEFAULT_LIVE_GRACE_S
    #: The reference each version's par is measured against (one of
    #: :data:`arena.par.REFERENCES`), shown beside the ladder's ratings; ``""``: no par.
    par: str = ""


@dataclass(frozen=True, slots=True)
class ValidationConfig:
    """The matches a new version plays before it enters the ladder."""

    #: The reference bot it plays against (``random``, ``rules`` or ``node``).
    opponent: str = "random"
    #: How to start the opponent (the built-in bot's command).
    opponent_command: str = "arena bot random"
    #: Validation matches per version.
    matches: int = 1


@dataclass(frozen=True, slots=True)
class SubmissionLimits:
    """What an upload may be."""

    max_upload_mib: int = 32
    max_files: int = 2000
    max_unpacked_mib: int = 256
    #: Docker image tarballs are accepted too (``arena host`` then needs a Docker engine).
    allow_images: bool = False

    @property
    def max_upload_bytes(self) -> int:
        return self.max_upload_mib * 1024 * 1024

    @property
    def max_unpacked_bytes(self) -> int:
        return self.max_unpacked_mib * 1024 * 1024


@dataclass(frozen=True, slots=True)
class AuthorsConfig:
    """Who may register."""

    #: Lets people register themselves with it; ``None``: only the host adds authors. Kept out of
    #: ``repr`` (it is a secret; configs end up in logs).
    invite_code: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class FinalConfig:
    """The round-robin played among the best versions after the ladder closes."""

    #: Versions in the final (the ladder's best).
    top: int = 4
    #: Matches each table of the final plays: deals × rotations.
    matches_per_pairing: int = DEFAULT_FINAL_MATCHES


@dataclass(frozen=True, slots=True)
class WorkersConfig:
    """Where the ladder's matches are played besides the host (arena/host/remote.py)."""

    #: The Dask scheduler whose ``arena worker``\ s play them; ``None``: all on the host.
    dask: str | None = None


@dataclass(frozen=True, slots=True)
class HttpConfig:
    """What a connection to the HTTP API may hold (arena/host/guard.py), so that strangers cannot
    starve the host of descriptors or of the server's attention."""

    #: Seconds a new connection has for its TLS handshake, and then for its first request's
    #: headers.
    header_timeout_s: float = 10.0
    #: Seconds a connection may stay open without a request under way after an answer.
    keep_alive_s: float = 5.0
    #: Seconds a request's body may go without a byte (its first included); then 408.
    body_timeout_s: float = 30.0
    #: Bytes per second a body must average once past ``body_timeout_s``; slower: 408.
    min_body_rate: int = 1024
    #: Connections open at once from one address (IPv6: one /64); more are closed at once.
    max_connections_per_address: int = 32
    #: Connections open at once in all; more are closed at once.
    max_connections: int = 512
    #: Reverse proxies in front of the host (addresses or networks): a request from one of them
    #: is the client its ``X-Forwarded-For`` names (arena/host/api/forwarded.py).
    trusted_proxies: tuple[IPv4Network | IPv6Network, ...] = ()


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """What one stranger may ask of the host (arena/host/throttle.py); 0 turns a limit off."""

    #: Requests one client address may make per minute, sustained, ...
    address_requests_per_minute: int = 1200
    #: ... and at once above that pace.
    address_burst: int = 200
    #: The same for one API token (an author's, or the admin's), wherever it comes from.
    token_requests_per_minute: int = 600
    token_burst: int = 100
    #: Failed token checks and wrong invite codes from one address within ``auth_window_s``
    #: that lock the address out of every authenticated call ...
    auth_failures: int = 10
    auth_window_s: int = 60
    #: ... for this long; each lock-out that follows another (within a day) doubles it, up to
    #: an hour.
    auth_lockout_s: int = 60
    #: New versions (uploads and live bots) per author in any 24 hours.
    versions_per_day: int = 20
    #: Live bots of one author connected at once.
    live_bots_per_author: int = 4
    #: Unpacked bytes (MiB) of an author's uploads kept by the host.
    stored_mib_per_author: int = 1024

    @property
    def stored_bytes_per_author(self) -> int:
        return self.stored_mib_per_author * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ChallengesConfig:
    """``[challenges]``: authors playing the ladder's versions in the browser (docs/hosting.md)."""

    enabled: bool = False
    #: Whether challenges count in the ladder's ratings (the person as a player of their own).
    rated: bool = False
    #: Challenges an author may start in any 24 hours, and play at once.
    per_author_per_day: int = 10
    max_open_per_author: int = 1
    #: Which versions may be challenged: each bot's ``newest`` on the ladder, or any version
    #: on the ladder (``ladder``).
    opponents: Literal["newest", "ladder"] = "newest"
    #: A person's time (the match's time control): a minute a move, ten minutes of bank.
    move_ms: int = 60_000
    bank_ms: int = 600_000


@dataclass(frozen=True, slots=True)
class RetentionConfig:
    """How long the host keeps match records and seat logs (arena/host/retention.py); 0 keeps
    them for ever. Oldest first: by age (days since the file was written), then down to a size
    on disk (MiB)."""

    records_days: int = 0
    records_mib: int = 0
    logs_days: int = 0
    logs_mib: int = 0
    #: The records of published results (``arena.host.store.retention.PUBLISHED``) go too.
    published: bool = False
    #: Seconds between two passes of a running host.
    interval_s: int = 3600

    @property
    def enabled(self) -> bool:
        """Whether any limit is set (a host without one runs no pass)."""
        return any((self.records_days, self.records_mib, self.logs_days, self.logs_mib))


@dataclass(frozen=True, slots=True)
class CompetitionConfig:
    """A checked competition config."""

    #: Title (the file's stem unless set): a plain name, as a tournament's.
    name: str
    #: The game, its players and options, the time control and the fault policy.
    rules: MatchRules
    #: The seats of each place (``arena.tournament.schedule.places``); a table is one version per
    #: place.
    places: tuple[tuple[int, ...], ...]
    ladder: LadderConfig
    validation: ValidationConfig
    submissions: SubmissionLimits
    authors: AuthorsConfig
    final: FinalConfig
    workers: WorkersConfig = field(default_factory=WorkersConfig)
    http: HttpConfig = field(default_factory=HttpConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    seasons: SeasonsConfig = field(default_factory=lambda: SeasonsConfig())
    announce: AnnounceConfig = field(default_factory=lambda: AnnounceConfig())
    #: ``[[events]]``: knockouts, Swiss and heats held beside the ladder (arena/host/events/).
    events: tuple[EventConfig, ...] = ()
    #: ``[analysis]``: authors' analyses of their seats (docs/analysis.md).
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    #: ``[challenges]``: authors' matches against the ladder's versions in the browser.
    challenges: ChallengesConfig = field(default_factory=ChallengesConfig)

    def identity(self) -> dict[str, Any]:
        """What fixes the meaning of every stored result; a restart must match it exactly.

        The title, the ladder's pace, the validation, the limits, the invite code, the final and
        the workers are left out: they may change between runs without making old results mean
        anything else (a match on a worker is the same match as here).
        """
        return self.rules.identity()


def load_competition(path: Path) -> CompetitionConfig:
    """Read and check the competition config at ``path``."""
    raw = read_toml(path, CompetitionConfigError)
    return check_competition(raw, str(path), path.stem)


def check_competition(raw: Mapping[str, Any], where: str, default_name: str) -> CompetitionConfig:
    """Check a raw config table; ``where`` prefixes every error message."""
    c = Checker(where, raw, CompetitionConfigError)
    c.known_keys(KNOWN_KEYS)
    sections = {name: _section(c, name) for name in SECTION_KEYS}
    rules = check_rules(c, sections["time_control"])
    name = check_name(c, default_name)
    seat_groups = places(rules.game, rules.config)
    return CompetitionConfig(
        name=name,
        rules=rules,
        places=seat_groups,
        ladder=_ladder(sections["ladder"]),
        validation=_validation(sections["validation"]),
        submissions=_submissions(sections["submissions"]),
        authors=_authors(sections["authors"]),
        final=_final(sections["final"], len(seat_groups)),
        workers=_workers(sections["workers"]),
        http=_http(sections["http"]),
        limits=_limits(sections["limits"]),
        retention=_retention(sections["retention"]),
        seasons=_seasons(sections["seasons"]),
        announce=_announce(sections["announce"]),
        events=check_events(c, len(seat_groups)),
        analysis=_analysis(sections["analysis"]),
        challenges=_challenges(sections["challenges"]),
    )


def _challenges(c: Checker) -> ChallengesConfig:
    d = ChallengesConfig()
    opponents = c.choice("challenges.opponents", d.opponents, ("newest", "ladder"))
    return ChallengesConfig(
        enabled=c.bool_("challenges.enabled", d.enabled),
        rated=c.bool_("challenges.rated", d.rated),
        per_author_per_day=c.int_(
            "challenges.per_author_per_day", d.per_author_per_day, 1, maximum=MAX_LIMIT
        ),
        max_open_per_author=c.int_(
            "challenges.max_open_per_author", d.max_open_per_author, 1, maximum=100
        ),
        opponents="ladder" if opponents == "ladder" else "newest",
        move_ms=c.int_("challenges.move_ms", d.move_ms, 1000, maximum=86_400_000),
        bank_ms=c.int_("challenges.bank_ms", d.bank_ms, 0, maximum=86_400_000),
    )


def _analysis(c: Checker) -> AnalysisSettings:
    d = AnalysisSettings()
    return AnalysisSettings(
        enabled=c.bool_("analysis.enabled", d.enabled),
        per_author_per_day=c.int_(
            "analysis.per_author_per_day", d.per_author_per_day, 0, maximum=100_000
        ),
        worlds=c.int_("analysis.worlds", d.worlds, 1, maximum=10_000),
        timeout_s=c.int_("analysis.timeout_s", d.timeout_s, 1, maximum=7 * 86_400),
    )


def _section(c: Checker, name: str) -> Checker:
    """A checker over ``[name]`` whose keys read ``name.key``, so every error names the full key."""
    table = c.raw.get(name, {})
    if not isinstance(table, dict):
        raise c.fail(name, f"must be a table ([{name}])")
    known = SECTION_KEYS[name]
    for key in table:
        if key not in known:
            raise c.fail(f"{name}.{key}", f"unknown key (known: {', '.join(known)})")
    return c.within({f"{name}.{k}": v for k, v in table.items()})


def _ladder(c: Checker) -> LadderConfig:
    concurrency = check_concurrency(c, "ladder.concurrency")
    try:
        pace = check_units_per_minute(c.raw.get("ladder.units_per_minute", 0))
    except ValueError as err:
        raise c.fail("ladder.units_per_minute", str(err)) from None
    return LadderConfig(
        concurrency=concurrency,
        units_per_minute=pace,
        provisional_matches=c.int_("ladder.provisional_matches", DEFAULT_PROVISIONAL_MATCHES, 0),
        provisional_interval=c.int_("ladder.provisional_interval", DEFAULT_PROVISIONAL_INTERVAL, 1),
        live_grace_s=c.int_(
            "ladder.live_grace_s", DEFAULT_LIVE_GRACE_S, 0, maximum=MAX_LIVE_GRACE_S
        ),
        par=_par_reference(c),
    )


def _par_reference(c: Checker) -> str:
    """``ladder.par``: ``""`` (off) or a reference's name."""
    value = c.raw.get("ladder.par", "")
    if value != "" and value not in REFERENCES:
        known = ", ".join(REFERENCES)
        raise c.fail("ladder.par", f'must be "" (no par) or one of {known}; got {value!r}')
    assert isinstance(value, str)
    return value


def check_units_per_minute(value: object) -> float:
    """``value`` as a pace: a number from 0 (no limit) to :data:`MAX_UNITS_PER_MINUTE`;
    ``ValueError`` saying what is wrong otherwise (the config and the store word it)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number (0: as fast as the machine plays); got {value!r}")
    if not 0 <= value <= MAX_UNITS_PER_MINUTE:
        raise ValueError(f"must be between 0 and {MAX_UNITS_PER_MINUTE:g}; got {value}")
    return float(value)


def _validation(c: Checker) -> ValidationConfig:
    builtin = builtin_bots()
    opponent = c.choice("validation.opponent", "random", tuple(builtin))
    command = builtin[opponent]
    if command is None:
        raise c.fail(
            "validation.opponent", f"the built-in {opponent} bot cannot run: {node_bot_status()[1]}"
        )
    matches = c.int_("validation.matches", 1, 1, maximum=MAX_VALIDATION_MATCHES)
    return ValidationConfig(opponent=opponent, opponent_command=command, matches=matches)


def _submissions(c: Checker) -> SubmissionLimits:
    return SubmissionLimits(
        max_upload_mib=c.int_("submissions.max_upload_mib", 32, 1, maximum=MAX_UPLOAD_MIB),
        max_files=c.int_("submissions.max_files", 2000, 1, maximum=MAX_FILES),
        max_unpacked_mib=c.int_("submissions.max_unpacked_mib", 256, 1, maximum=MAX_UNPACKED_MIB),
        allow_images=c.bool_("submissions.allow_images", False),
    )


def _authors(c: Checker) -> AuthorsConfig:
    key = "authors.invite_code"
    if key not in c.raw:
        return AuthorsConfig()
    code = c.raw[key]
    # Not echoed back: the line may land in a log, and the value is a secret.
    if not isinstance(code, str) or len(code) < MIN_INVITE_CODE or code != code.strip():
        raise c.fail(
            key,
            f"must be a string of at least {MIN_INVITE_CODE} characters without surrounding "
            "spaces (leave it out to add authors only by hand)",
        )
    return AuthorsConfig(invite_code=code)


def _final(c: Checker, n_places: int) -> FinalConfig:
    top = c.int_("final.top", 4, 2)
    period = rotations_per_table(top, n_places)
    default = period * math.ceil(DEFAULT_FINAL_MATCHES / period)
    matches = c.int_("final.matches_per_pairing", default, 1)
    if matches % period:
        raise c.fail(
            "final.matches_per_pairing",
            f"must be a multiple of {period} (the seat rotations of a table of {top} versions "
            f"at {n_places} places); got {matches}",
        )
    size = table_count(top, n_places, Format.ROUND_ROBIN) * matches
    if size > MAX_MATCHES:
        raise c.fail(
            "final.top",
            f"the final would have {size:,} matches (at most {MAX_MATCHES:,})",
        )
    return FinalConfig(top=top, matches_per_pairing=matches)


def _http(c: Checker) -> HttpConfig:
    d = HttpConfig()
    return HttpConfig(
        header_timeout_s=_seconds(c, "http.header_timeout_s", d.header_timeout_s),
        keep_alive_s=_seconds(c, "http.keep_alive_s", d.keep_alive_s),
        body_timeout_s=_seconds(c, "http.body_timeout_s", d.body_timeout_s),
        min_body_rate=c.int_("http.min_body_rate", d.min_body_rate, 0),
        max_connections_per_address=c.int_(
            "http.max_connections_per_address", d.max_connections_per_address, 1
        ),
        max_connections=c.int_("http.max_connections", d.max_connections, 1),
        trusted_proxies=_networks(c, "http.trusted_proxies"),
    )


def _networks(c: Checker, key: str) -> tuple[IPv4Network | IPv6Network, ...]:
    """A list of addresses or networks (``"10.0.0.0/8"``, ``"::1"``)."""
    value = c.raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise c.fail(key, f"must be a list of addresses or networks; got {value!r}")
    try:
        return tuple(ip_network(v.strip(), strict=False) for v in value)
    except ValueError as err:
        raise c.fail(key, f"not an address or network: {err}") from None


def _seconds(c: Checker, key: str, default: float) -> float:
    """A timeout in seconds: a number above 0, at most :data:`MAX_HTTP_TIMEOUT_S`."""
    value = c.raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise c.fail(key, f"must be a number of seconds; got {value!r}")
    if not 0 < value <= MAX_HTTP_TIMEOUT_S:
        raise c.fail(key, f"must be above 0 and at most {MAX_HTTP_TIMEOUT_S:g}; got {value}")
    return float(value)


def _workers(c: Checker) -> WorkersConfig:
    key = "workers.dask"
    if key not in c.raw:
        return WorkersConfig()
    address = c.raw[key]
    if not isinstance(address, str) or not _SCHEDULER.fullmatch(address):
        raise c.fail(
            key,
            "must be a Dask scheduler's address, tcp://HOST:PORT or tls://HOST:PORT; "
            f"got {address!r}",
        )
    # Said here, before the host starts, rather than when its first match would go out.
    if importlib.util.find_spec("distributed") is None:
        raise c.fail(
            key,
            "needs Dask distributed, which this installation lacks: "
            "pip install 'card-arena[cluster]'",
        )
    return WorkersConfig(dask=address)


def _limits(c: Checker) -> LimitsConfig:
    defaults = LimitsConfig()
    values = {
        key: c.int_(f"limits.{key}", getattr(defaults, key), 0, maximum=MAX_LIMIT)
        for key in SECTION_KEYS["limits"]
    }
    # A window or lock-out of 0 would make failed-auth throttling a no-op in disguise: say so.
    if values["auth_failures"]:
        for key in ("auth_window_s", "auth_lockout_s"):
            if values[key] == 0:
                raise c.fail(
                    f"limits.{key}",
                    "must be at least 1 (to turn the lock-out off, set limits.auth_failures = 0)",
                )
    return LimitsConfig(**values)


def _retention(c: Checker) -> RetentionConfig:
    d = RetentionConfig()
    days, mib = MAX_RETENTION_DAYS, MAX_RETENTION_MIB
    return RetentionConfig(
        records_days=c.int_("retention.records_days", 0, 0, maximum=days),
        records_mib=c.int_("retention.records_mib", 0, 0, maximum=mib),
        logs_days=c.int_("retention.logs_days", 0, 0, maximum=days),
        logs_mib=c.int_("retention.logs_mib", 0, 0, maximum=mib),
        published=c.bool_("retention.published", False),
        interval_s=c.int_(
            "retention.interval_s", d.interval_s, 1, maximum=MAX_RETENTION_INTERVAL_S
        ),
    )


# --- seasons and announcements (docs/hosting.md, "Seasons and events") ------------------------

#: A season's standings carry over into the next one's fit, or the next starts afresh.
SeasonRatings = Literal["reset", "carry"]
#: The shortest season: a typo (0.0001 days) would archive one every few seconds for ever.
MIN_SEASON_S = 10.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


@dataclass(frozen=True, slots=True)
class ScheduledSeason:
    """One ``[[seasons.schedule]]`` entry: a named season between two UTC times."""

    name: str
    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True)
class SeasonsConfig:
    """``[seasons]``: how the ladder is cut into seasons; without it, one season for ever."""

    #: Whether ``[seasons]`` was given at all.
    enabled: bool = False
    #: Seasons of this many seconds, the first from the competition's start (``length_days``).
    length_s: float | None = None
    #: Or explicit seasons, in order, none overlapping another.
    schedule: tuple[ScheduledSeason, ...] = ()
    #: ``reset``: a season's leaderboard fits its own matches only; ``carry``: every match to
    #: date.
    ratings: SeasonRatings = "reset"


@dataclass(frozen=True, slots=True)
class AnnounceConfig:
    """``[announce]``: where the end of a season, final or event is POSTed (signed)."""

    webhook_url: str | None = None
    #: The HMAC secret: a file in ``DIR/private/`` ...
    secret_file: str | None = None
    #: ... or an environment variable of the host (never the secret itself in the config).
    secret_env: str | None = None


def _seasons(c: Checker) -> SeasonsConfig:
    if not any(k.startswith("seasons.") for k in c.raw) and "seasons" not in c.raw:
        return SeasonsConfig()
    ratings = c.choice("seasons.ratings", "reset", ("reset", "carry"))
    length, schedule = c.raw.get("seasons.length_days"), c.raw.get("seasons.schedule")
    if (length is None) == (schedule is None):
        raise c.fail("seasons", "give either length_days or [[seasons.schedule]] entries")
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, int | float):
            raise c.fail("seasons.length_days", f"must be a number of days; got {length!r}")
        if not math.isfinite(length) or length * 86400 < MIN_SEASON_S or length > 36600:
            raise c.fail(
                "seasons.length_days",
                f"must be at least {MIN_SEASON_S:g} s and at most 100 years; got {length}",
            )
        return SeasonsConfig(True, float(length) * 86400, (), ratings)  # type: ignore[arg-type]
    if not isinstance(schedule, list) or not schedule:
        raise c.fail("seasons.schedule", "must be [[seasons.schedule]] entries (name, start, end)")
    entries = [_scheduled(c, i, e) for i, e in enumerate(schedule)]
    for i, (a, b) in enumerate(itertools.pairwise(entries)):
        if b.start < a.end:
            raise c.fail(f"seasons.schedule[{i + 1}]", f"starts before {a.name!r} ends")
    if len({e.name for e in entries}) != len(entries):
        raise c.fail("seasons.schedule", "two seasons have the same name")
    return SeasonsConfig(True, None, tuple(entries), ratings)  # type: ignore[arg-type]


def _scheduled(c: Checker, i: int, entry: object) -> ScheduledSeason:
    where = f"seasons.schedule[{i}]"
    if not isinstance(entry, dict) or set(entry) != {"name", "start", "end"}:
        raise c.fail(where, "must have exactly the keys name, start and end")
    name = entry["name"]
    if not isinstance(name, str) or not name.strip() or len(name) > 64 or not name.isprintable():
        raise c.fail(
            f"{where}.name", f"must be a printable name of 1 to 64 characters; got {name!r}"
        )
    start, end = (_utc(c, f"{where}.{k}", entry[k]) for k in ("start", "end"))
    if end <= start:
        raise c.fail(f"{where}.end", "must be after its start")
    return ScheduledSeason(name.strip(), start, end)


def _utc(c: Checker, key: str, value: object) -> datetime:
    """A UTC time: a TOML date-time or an ISO 8601 string, with its zone (``Z``)."""
    when = value
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            when = None
    if not isinstance(when, datetime) or when.utcoffset() is None:
        raise c.fail(key, f"must be a UTC time such as 2027-03-01T00:00:00Z; got {value!r}")
    return when.astimezone(UTC)


def _announce(c: Checker) -> AnnounceConfig:
    url = c.raw.get("announce.webhook_url")
    file, env = c.raw.get("announce.secret_file"), c.raw.get("announce.secret_env")
    if url is None:
        if file is not None or env is not None:
            raise c.fail("announce.webhook_url", "is needed for a secret to sign with")
        return AnnounceConfig()
    if not isinstance(url, str) or not re.fullmatch(r"https?://[^\s/?#]+(/\S*)?", url):
        raise c.fail("announce.webhook_url", f"must be an http:// or https:// URL; got {url!r}")
    if (file is None) == (env is None):
        raise c.fail(
            "announce",
            "give the webhook's secret as secret_file (a file in the competition's private/ "
            "directory) or secret_env (an environment variable's name), one of them",
        )
    if file is not None and (not isinstance(file, str) or not _FILE_NAME.fullmatch(file)):
        raise c.fail("announce.secret_file", f"must be a file name in private/; got {file!r}")
    if env is not None and (not isinstance(env, str) or not _ENV_NAME.fullmatch(env)):
        raise c.fail("announce.secret_env", f"must be an environment variable's name; got {env!r}")
    return AnnounceConfig(url, file, env)
