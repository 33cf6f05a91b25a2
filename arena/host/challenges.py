"""Challenges: a signed-in author plays the ladder's versions at a table in the browser
(``[challenges]``, docs/hosting.md).

A challenge is one match on the host's own arena, the same server the ladder's matches are
refereed by: the versions' seats launched as :class:`~arena.host.play.MatchPlayer` launches them
(sandboxed, their logs in ``logs/``), and the author's seat attended by a
:class:`~arena.people.bridge.PeopleBridge` (arena/people), which holds it over gRPC with the
seat's token exactly as ``arena play`` does. The bridge serves the seat's page on a loopback port
of its own; the host's HTTP server passes ``/play/SECRET/…`` through to it (arena/host/api/
challenges.py), so the page is reached through the host's address, TLS and limits alike.

A challenge is stored in the ``challenges`` table, not as a unit: it is a human match, listed
and labelled as such, and never in the ladder's ratings unless ``[challenges] rated``. Its
record is a normal record. A host that stops ends its challenges as failed (a person's match
cannot be picked up again by another process).
"""

from __future__ import annotations

import dataclasses
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import structlog
import trio
from cardarena.messages import TimeControl

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement
from arena.errors import ArenaError
from arena.host.config import CompetitionConfig
from arena.host.play import CONNECT_TIMEOUT_S, version_program
from arena.host.store import CompetitionStore, Version
from arena.host.store.matches import PERSON_REF
from arena.host.throttle import DAY_S, Refusal, next_version_in, whole_seconds
from arena.layout import LOGS_DIR, seat_log_name
from arena.match import BotLaunch, run_with_bots, save_record
from arena.people.bridge import LINGER_S, PeopleBridge
from arena.people.desk import Desk
from arena.people.play import loopback_listener
from arena.server import ArenaServer, MatchSpec, SeatSpec, new_token

log = structlog.get_logger("arena.host")

#: How a person's seat is named in the record, on the pages and in a rated fit: ``person:AUTHOR``.
PERSON_PREFIX = PERSON_REF
#: How every challenge's match id starts (no ladder's, event's or validation's does).
CHALLENGE_PREFIX = "challenge-"
#: When an author plays as many challenges as they may at once: try again after this long.
OPEN_RETRY_S = 30


class ChallengeRefused(ArenaError):
    """A challenge the host will not start: its HTTP status, and for a limit the seconds until
    one may be tried again."""

    def __init__(self, status: int, detail: str, retry_after: int = 0) -> None:
        super().__init__(detail)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Started:
    """A challenge as it starts: its match, and the author's page."""

    match_id: str
    seat: int
    #: The secret of the author's page, ``/play/SECRET/``.
    secret: str


@dataclass(slots=True)
class _Table:
    """A challenge being played: its desk and where its bridge serves the page."""

    match_id: str
    desk: Desk
    listener: socket.socket


def person_name(author: str) -> str:
    return PERSON_PREFIX + author


class Challenges:
    """The host's challenges: started by the API, played in the host's nursery."""

    def __init__(
        self,
        store: CompetitionStore,
        config: CompetitionConfig,
        server: ArenaServer,
        directory: Path,
        confinement: Confinement | None,
        refit: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        #: The ladder's refit, after a rated challenge (``[challenges] rated``).
        self._refit = refit
        self._store = store
        self._config = config
        self._settings = config.challenges
        self._server = server
        self._directory = directory
        self._confinement = confinement
        self._lock = threading.Lock()
        self._tables: dict[str, _Table] = {}
        self._nursery: trio.Nursery | None = None
        self._trio_token: trio.lowlevel.TrioToken | None = None
        self.clock = time.time

    # --- the API's side (its worker threads) --------------------------------------------------

    def start(self, author_id: int, author: str, opponents: Sequence[str], seat: int) -> Started:
        """Start a challenge of ``author`` at ``seat`` against ``opponents`` (one ``BOT`` or
        ``BOT@N`` for every other seat, or one each); :class:`ChallengeRefused` in one line."""
        nursery, token = self._nursery, self._trio_token
        if not self._settings.enabled or nursery is None or token is None:
            raise ChallengeRefused(404, "this host takes no challenges ([challenges] enabled)")
        n_seats = sum(len(group) for group in self._config.places)
        if not 0 <= seat < n_seats:
            raise ChallengeRefused(422, f"seat: this game has seats 0 to {n_seats - 1}; got {seat}")
        versions = self._opponents(opponents, n_seats - 1)
        programs: list[BotProgram | None] = [self._program(v) for v in versions]
        seats: list[Version | None] = list(versions)
        seats.insert(seat, None)
        match_id = f"{CHALLENGE_PREFIX}{secrets.token_hex(6)}"
        with self._lock:
            self._check_limits(author_id)
            self._store.add_challenge(
                match_id,
                author_id,
                [None if v is None else v.id for v in seats],
                secrets.randbits(63),
                self._settings.rated,
            )
        desk = Desk(seat, secrets.token_urlsafe(18), self._config.rules.config.players)
        self._tables[desk.secret] = _Table(match_id, desk, loopback_listener())
        names = [person_name(author) if v is None else v.ref for v in seats]
        programs.insert(seat, None)
        token.run_sync_soon(nursery.start_soon, self._play, match_id, desk, names, programs)
        return Started(match_id, seat, desk.secret)

    def page_port(self, secret: str) -> int | None:
        """The loopback port serving the page with ``secret``; ``None``: no such page."""
        for key, table in list(self._tables.items()):
            if secrets.compare_digest(key.encode(), secret.encode()):
                return int(table.listener.getsockname()[1])
        return None

    def secret_of(self, match_id: str) -> str | None:
        """The page secret of a challenge still being played (its author's to know)."""
        for secret, table in list(self._tables.items()):
            if table.match_id == match_id:
                return secret
        return None

    def _opponents(self, names: Sequence[str], others: int) -> list[Version]:
        if len(names) not in (1, others):
            raise ChallengeRefused(
                422, f"opponents: one bot for every other seat, or {others} (one a seat)"
            )
        found = [self._opponent(name) for name in names]
        return found * others if len(found) == 1 else found

    def _opponent(self, name: str) -> Version:
        """The ladder's version ``name`` (``BOT``: its newest on the ladder) may be challenged."""
        bot, _, number = name.partition("@")
        on_ladder = [v for v in self._store.versions(status="validated") if v.bot == bot]
        if not on_ladder:
            raise ChallengeRefused(404, f"{bot!r} has no version on the ladder")
        newest = max(on_ladder, key=lambda v: v.number)
        chosen = newest
        if number:
            picked = [v for v in on_ladder if str(v.number) == number]
            if not picked:
                raise ChallengeRefused(404, f"{name!r} is not on the ladder")
            chosen = picked[0]
            if self._settings.opponents == "newest" and chosen != newest:
                raise ChallengeRefused(
                    409,
                    f"{name!r}: only each bot's newest version may be challenged "
                    f"({newest.ref}; challenges.opponents)",
                )
        if chosen.sha256 is None:
            raise ChallengeRefused(409, f"{chosen.ref} is a live bot: it cannot be challenged")
        return chosen

    def _program(self, version: Version) -> BotProgram:
        try:
            return version_program(self._directory, version)
        except ArenaError as err:
            raise ChallengeRefused(409, f"{version.ref} cannot be started: {err}") from None

    def _check_limits(self, author_id: int) -> None:
        now = self.clock()
        created, playing = self._store.author_challenges(author_id, _stamp(now - DAY_S))
        most = self._settings.max_open_per_author
        if playing >= most:
            raise ChallengeRefused(
                429,
                f"limit: {most} challenge(s) at once (challenges.max_open_per_author): finish "
                "the one you are playing first",
                OPEN_RETRY_S,
            )
        per_day = self._settings.per_author_per_day
        wait = next_version_in([_epoch(c) for c in created], now, per_day)
        if wait > 0:
            refusal = Refusal(
                f"limit: {per_day} challenges in any 24 hours (challenges.per_author_per_day): "
                f"try again in {whole_seconds(wait)} s",
                whole_seconds(wait),
            )
            raise ChallengeRefused(429, refusal.detail, refusal.retry_after)

    # --- the host's side (trio) ---------------------------------------------------------------

    async def run(self) -> None:
        """The host's part: end what a stopped host left playing, then play what is started."""
        await trio.to_thread.run_sync(self._store.fail_challenges, "the host stopped")
        async with trio.open_nursery() as nursery:
            self._trio_token = trio.lowlevel.current_trio_token()
            self._nursery = nursery
            try:
                await trio.sleep_forever()
            finally:
                self._nursery = None

    async def _play(
        self,
        match_id: str,
        desk: Desk,
        names: Sequence[str],
        programs: Sequence[BotProgram | None],
    ) -> None:
        table = self._tables[desk.secret]
        try:
            await self._referee(match_id, desk, table.listener, names, programs)
        except ArenaError as err:
            log.warning("challenge failed", match=match_id, error=str(err))
            await trio.to_thread.run_sync(self._store.fail_challenges, str(err), match_id)
        except Exception as err:  # a bug here ends this challenge, not the others
            log.exception("challenge failed", match=match_id)
            why = f"the host failed: {type(err).__name__}"
            await trio.to_thread.run_sync(self._store.fail_challenges, why, match_id)
        finally:
            with trio.CancelScope(shield=True):
                # Ended any other way (the host stopping): not left playing.
                await trio.to_thread.run_sync(
                    self._store.fail_challenges, "the host stopped", match_id
                )
            del self._tables[desk.secret]
            table.listener.close()

    async def _referee(
        self,
        match_id: str,
        desk: Desk,
        listener: socket.socket,
        names: Sequence[str],
        programs: Sequence[BotProgram | None],
    ) -> None:
        stored = await trio.to_thread.run_sync(self._store.challenge, match_id)
        s = self._settings
        rules = dataclasses.replace(
            self._config.rules, time_control=TimeControl(move_ms=s.move_ms, bank_ms=s.bank_ms)
        )
        seats = [SeatSpec(new_token(), name) for name in names]
        spec = MatchSpec.of(rules, match_id, seats, stored.seed, CONNECT_TIMEOUT_S)
        launches = [
            None
            if p is None
            else BotLaunch(p, self._directory / LOGS_DIR / seat_log_name(match_id, seat))
            for seat, p in enumerate(programs)
        ]
        self._server.register(spec)
        # The bridge's own connection: over the Unix socket (plaintext, local) when there is
        # one, so a host serving TLS needs no client certificate for it.
        address = self._server.unix_address or self._server.address
        bridge = PeopleBridge([desk], [spec.seats[desk.seat].token], listener)
        thread = threading.Thread(target=bridge.run, args=(address,), name="challenge", daemon=True)
        thread.start()
        try:
            outcome = await run_with_bots(
                self._server, spec, launches, self._server.address, self._confinement
            )
            record = await save_record(outcome, self._directory)
            await trio.to_thread.run_sync(
                self._store.finish_challenge, match_id, outcome.result, outcome.faults, record
            )
            log.info("challenge played", match=match_id, result=outcome.result.summary)
            if stored.rated and self._refit is not None:
                await self._refit()
            with trio.move_on_after(LINGER_S + 5.0):
                await trio.to_thread.run_sync(thread.join, abandon_on_cancel=True)
        finally:
            bridge.stop()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(thread.join)


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _stamp(epoch: float) -> str:
    """``epoch`` as the store writes its times (:func:`arena.sqlite.now`)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
