"""The arena server's core: connections, tokens, and the matches they play.

The :class:`Hub` lives on the server's asyncio loop thread with the gRPC handlers
(arena/server/service.py), which call it directly for every event of a bot stream (opened, a
message, closed); its matches are referee tasks on the same loop. Trio code reaches it only
through :class:`arena.server.api.ArenaServer`. The stream callbacks must never raise (nothing a
bot does may end the server): :meth:`Hub.dispatch` wraps them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import structlog
from cardarena import messages
from cardarena.messages import Answer, ErrorInfo, Garbage, Hello, Ping, Pong, Rejected, Welcome

from arena.errors import ArenaError
from arena.policy import ERROR_CODE, FaultKind
from arena.protocol import codec
from arena.server.board import Board
from arena.server.connections import Connection, MatchHandle, RequestBook, SeatSlot
from arena.server.flood import FLOOD_BURST, FLOOD_DISCONNECT, FLOOD_RATE, FLOOD_STRIKE_INTERVAL_S
from arena.server.limits import peer_address
from arena.server.referee import LiveMatch
from arena.server.scripted import Script, ScriptedSeat
from arena.server.spec import MatchOutcome, MatchSpec
from arena.version import arena_version

log = structlog.get_logger("arena.server")

#: Seconds a new stream has to send its Hello.
HELLO_TIMEOUT_S = 10.0
#: Streams that may wait to say Hello at once before the server closes those that have waited
#: :data:`HELLO_GRACE_S`: a bot says Hello as it opens its stream, so only a stream opened to hold
#: the server's capacity (a denial of service against the other bots) waits that long.
MAX_GREETING = 32
#: Seconds a stream may wait for its Hello while more than :data:`MAX_GREETING` do. Many bots
#: starting at once (a tournament's first matches, the scale bench) stay well inside it.
HELLO_GRACE_S = 1.0
#: Streams waiting for their Hello past which the oldest is closed however young: a bound on
#: what a client opening streams faster than the grace expires can hold.
MAX_GREETING_HARD = 1024
#: Seconds a Hello waits for its token's owner (:attr:`Hub.token_owner`: a registry or a
#: competition store, which another thread may hold locked) before the bot is told to try again.
OWNER_TIMEOUT_S = 10.0
#: Threads that look tokens up; further Hellos wait their turn (within their own timeout).
OWNER_THREADS = 4
#: Messages a stream may send while its token is looked up; they are handled, in order, once it
#: is welcomed. More than this before the Welcome is not a bot's protocol.
MAX_EARLY_MESSAGES = 64
#: Why a bot whose token could not be checked is turned away (the host's trouble, not the bot's).
CANNOT_CHECK = "the arena cannot check tokens right now; try again later"


class TokenRefused(ArenaError):
    """Raised by a :attr:`Hub.token_owner` that knows the token but turns its bot away (a
    competition's quota): the bot is rejected with this message as it is."""


class AuthGate(Protocol):
    """Guards token look-ups against guessing (a competition's failed-auth lock-out): what
    :attr:`Hub.token_owner` cannot place counts against the stream's network address."""

    def locked(self, address: str) -> str | None:
        """Why ``address`` may not try a token now, or ``None``."""

    def failed(self, address: str) -> None:
        """Count a token from ``address`` that no bot owns."""


#: Lobby guests (welcomed bots whose token no match or registry knows) admitted at once, unless
#: the server is given another number. Bots with known tokens are always let in.
MAX_GUESTS = 256
#: Lobby guests from one network address at once, so one machine cannot take every guest seat.
#: Unix-socket guests are local processes, held by :data:`MAX_GUESTS` alone.
MAX_GUESTS_PER_ADDRESS = 16


def new_token() -> str:
    """A fresh secret token for a bot (URL-safe, 128 bits), never starting with ``-``: given
    on a command line (``arena bot --token …``), such a token would read as an option."""
    while (token := secrets.token_urlsafe(16)).startswith("-"):
        pass
    return token


#: Called with the connection when a bot with no match to play is welcomed (the lobby).
IdleHook = Callable[[Connection], None]


class Hub:
    """Routes bot streams to the matches they play, and runs those matches (loop thread only).

    Many matches may run at once, each a task on the loop; they share nothing but this router.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        max_guests: int = MAX_GUESTS,
        max_guests_per_address: int = MAX_GUESTS_PER_ADDRESS,
    ) -> None:
        self._loop = loop
        self._max_guests = max_guests
        self._max_per_address = max_guests_per_address
        #: Set once the server is shutting down: new streams are refused.
        self.closing = False
        #: ``host:port`` of the TCP listener once listening.
        self.address = ""
        #: ``unix:PATH`` of the Unix-socket listener, if any.
        self.unix_address: str | None = None
        #: What spectators see.
        self.board = Board()
        self._requests = RequestBook()
        self._matches: dict[str, LiveMatch] = {}
        self._token_slots: dict[str, list[SeatSlot]] = {}
        self._tokens: set[str] = set()
        self._by_token: dict[str, Connection] = {}
        self._conns: set[Connection] = set()
        #: Streams still to say Hello, oldest first (a dict as an ordered set).
        self._greeting: dict[Connection, None] = {}
        #: Welcomed lobby guests.
        self._guests: set[Connection] = set()
        #: When set, Hellos with unknown (or no) tokens are welcomed and handed to this hook.
        self.idle_hook: IdleHook | None = None
        #: The game the lobby (:attr:`idle_hook`) seats guests in: a guest whose Hello lists
        #: other games only is rejected.
        self.lobby_game: str | None = None
        #: When set, the server authenticates every Hello: a token this maps to a registered
        #: bot's ``(name, version)`` (arena/registry.py) is known even with no match, and
        #: the bot plays under that identity whatever its Hello says; any other token not given
        #: to a match is rejected, lobby or not (``arena serve --registered-only``).
        self.token_owner: Callable[[str], tuple[str, str] | None] | None = None
        #: Checked before and told after each :attr:`token_owner` look-up (off the network, a
        #: Unix socket's peer, it is not asked).
        self.auth_gate: AuthGate | None = None
        # The owner is asked off the loop: a store's lock or a slow disk must never stall the
        # matches this loop referees. A stream being looked up keeps what it sends meanwhile.
        self._owner_pool: ThreadPoolExecutor | None = None
        self._checking: dict[Connection, list[messages.BotMessage]] = {}
        self._lookups: set[asyncio.Task[None]] = set()
        self._version = arena_version()

    # --- what trio code calls (through arena.server.api.ArenaServer) ----------------------------

    def add_token(self, token: str) -> None:
        """Accept ``token`` even while it has no match (a bot that waits for its matches)."""
        self._tokens.add(token)

    def register(self, spec: MatchSpec) -> LiveMatch:
        """Make a match's tokens known (before its bots connect); raises ``ConfigError`` for a bad
        game configuration and :class:`ArenaError` for a duplicate match id."""
        if spec.match_id in self._matches:
            raise ArenaError(f"match {spec.match_id!r} is already registered")
        match = LiveMatch(spec, self._requests, self.board)
        self._matches[spec.match_id] = match
        for slot in match.slots:
            self._token_slots.setdefault(slot.token, []).append(slot)
        by_conn: dict[int, tuple[Connection, list[SeatSlot]]] = {}
        for slot in match.slots:
            conn = self._by_token.get(slot.token)
            if conn is not None:
                by_conn.setdefault(id(conn), (conn, []))[1].append(slot)
        for conn, slots in by_conn.values():
            match.attach(conn, slots)
        return match

    def add_script(self, script: Script) -> ScriptedSeat:
        """Make a scripted seat's token known: its bot, once welcomed, is taken through the
        script (arena/server/scripted.py), and its stream ends with it."""
        seat = ScriptedSeat(script, self._requests, self._script_ended)
        for slot in seat.slots:
            self._token_slots.setdefault(slot.token, []).append(slot)
        return seat

    def _script_ended(self, seat: ScriptedSeat) -> None:
        self._unregister(seat)
        for slot in seat.slots:
            self.release(slot.token)

    async def run_match(self, spec: MatchSpec) -> MatchOutcome:
        """Play the match of ``spec`` (registering it if needed) and return its outcome."""
        match = self._matches.get(spec.match_id)
        if match is None:
            match = self.register(spec)
        elif match.spec != spec:
            raise ArenaError(f"match {spec.match_id!r} is registered with another spec")
        try:
            return await match.play()
        finally:
            self._unregister(match)

    async def wait_ready(self, match_id: str) -> None:
        """Until every seat of a registered match has its bot connected (or known crashed)."""
        match = self._matches.get(match_id)
        if match is None:
            raise ArenaError(f"no match {match_id!r} is registered")
        await match.ready.wait()

    def seat_crashed(self, match_id: str, seat: int, detail: str) -> None:
        """Tell the referee that the bot process of ``seat`` is gone (it will not wait for it)."""
        match = self._matches.get(match_id)
        if match is not None and not match.finished:
            match.crash(seat, detail)

    def connected(self, token: str) -> bool:
        """Whether a welcomed stream with ``token`` is open."""
        conn = self._by_token.get(token)
        return conn is not None and not conn.closed

    def matches(self) -> list[str]:
        """Ids of the registered (running or waiting) matches."""
        return list(self._matches)

    def disconnect(self, token: str, reason: str = "disconnected by the server") -> bool:
        """End the stream of ``token``'s bot (its seats wait for it to reconnect); ``False`` when
        it is not connected."""
        conn = self._by_token.get(token)
        if conn is None:
            return False
        self._warn(conn, "protocol", reason)
        self._drop(conn)
        return True

    def release(self, token: str) -> bool:
        """End the stream of ``token``'s bot cleanly (status OK, after everything queued, the
        MatchEnd included) when it has nothing left to play here: no seat in a registered match,
        not a token that waits for matches (:meth:`add_token`), not a lobby's guest. Bots exit
        on their own when their stream ends; whether it was ended."""
        conn = self._by_token.get(token)
        if conn is None or conn.slots or token in self._token_slots or token in self._tokens:
            return False
        if self.idle_hook is not None:
            return False
        self._drop(conn)
        return True

    def dismiss(self, token: str) -> bool:
        """Forget ``token`` as one that waits for matches (:meth:`add_token`) and :meth:`release`
        it: a long-lived bot whose run is over ends its stream cleanly and exits on its own."""
        self._tokens.discard(token)
        return self.release(token)

    def close_all(self) -> None:
        """End every bot stream (the server is shutting down)."""
        self.closing = True
        for conn in list(self._conns):
            self._drop(conn)
        if self._owner_pool is not None:
            # A look-up stuck on a lock is abandoned, not waited for: its stream is gone.
            self._owner_pool.shutdown(wait=False, cancel_futures=True)
            self._owner_pool = None

    def withdraw(self, match_id: str) -> None:
        """Forget a registered match that will not be played (the arena could not start its
        bots): its tokens and seats are released as at a match's end."""
        match = self._matches.get(match_id)
        if match is not None:
            self._unregister(match)

    def _unregister(self, match: LiveMatch | ScriptedSeat) -> None:
        if self._matches.get(match.match_id) is match:
            del self._matches[match.match_id]
        idle = []
        for slot in match.slots:
            slots = self._token_slots.get(slot.token)
            if slots is not None:
                if slot in slots:
                    slots.remove(slot)
                if not slots:
                    del self._token_slots[slot.token]
            conn = slot.conn
            if conn is not None and slot in conn.slots:
                conn.slots.remove(slot)
            if conn is not None and not conn.slots and not conn.closed and conn not in idle:
                idle.append(conn)
        if self.idle_hook is not None:
            for conn in idle:
                self.idle_hook(conn)

    # --- callbacks from the gRPC handlers --------------------------------------------------------

    def dispatch(self, fn: Callable[..., None], *args: Any) -> None:
        """Run a callback, logging instead of raising: nothing a bot does may end the server."""
        try:
            fn(*args)
        except Exception:
            log.exception("internal error handling a bot message")

    def on_open(self, conn: Connection) -> None:
        """A bot stream began."""
        self._conns.add(conn)
        self._greeting[conn] = None
        conn.opened_at = self._loop.time()
        log.debug("bot connected", session=conn.session_id, peer=conn.peer)
        self._loop.call_later(HELLO_TIMEOUT_S, self.dispatch, self._expect_hello, conn)
        if len(self._greeting) > MAX_GREETING:
            self._shed_greeting(conn.opened_at)

    def _shed_greeting(self, now: float) -> None:
        """Close streams that have waited too long for their Hello while too many wait, oldest
        first (the dict keeps them in the order they opened)."""
        why = f"more than {MAX_GREETING} streams are waiting to say Hello"
        while len(self._greeting) > MAX_GREETING:
            oldest = next(iter(self._greeting))
            if len(self._greeting) <= MAX_GREETING_HARD and now - oldest.opened_at < HELLO_GRACE_S:
                return
            self._reject(oldest, why)

    def _expect_hello(self, conn: Connection) -> None:
        """A stream that never says Hello would hold its handler forever: end it (one whose
        token is being looked up said it: :data:`OWNER_TIMEOUT_S` bounds that wait)."""
        if conn.hello is None and conn in self._conns and conn not in self._checking:
            self._reject(conn, f"no Hello within {HELLO_TIMEOUT_S:g} s")

    def on_close(self, conn: Connection) -> None:
        """A bot stream ended (either side, or the network)."""
        if conn not in self._conns:
            return
        self._conns.discard(conn)
        self._greeting.pop(conn, None)
        self._checking.pop(conn, None)
        self._guests.discard(conn)
        conn.close()  # also ends the handler if the bot ended the stream
        if conn.token is not None and self._by_token.get(conn.token) is conn:
            del self._by_token[conn.token]
        for match in {slot.match for slot in conn.slots}:
            match.detach(conn)
        conn.slots = []
        log.info("bot disconnected", session=conn.session_id, token_known=conn.token is not None)

    def on_message(self, conn: Connection, msg: messages.BotMessage) -> None:
        """A message from a bot."""
        if conn not in self._conns:
            return
        if isinstance(msg, Answer):
            pending = conn.open.get(msg.request_id)
            if pending is not None:
                pending.resolve(msg)
                return
        now = self._loop.time()
        if not conn.bucket.take(now):
            self._flood(conn, now)
            return
        early = self._checking.get(conn)
        if early is not None:
            if len(early) >= MAX_EARLY_MESSAGES:
                self._reject(conn, f"more than {MAX_EARLY_MESSAGES} messages before the Welcome")
            else:
                early.append(msg)
            return
        if conn.hello is None:
            if isinstance(msg, Hello):
                self._hello(conn, msg)
            else:
                self._reject(conn, "the first message must be Hello")
            return
        if isinstance(msg, Ping):
            conn.send(codec.plain_to_proto(Pong(msg.nonce)))
        elif isinstance(msg, Answer):
            self._stray_answer(conn, msg)
        elif isinstance(msg, Hello):
            self._warn(conn, "protocol", "Hello was already accepted on this stream; ignored")
        elif isinstance(msg, Garbage):
            self._charge(conn, FaultKind.GARBAGE, msg.why)

    # --- connection handling -----------------------------------------------------------------

    def _hello(self, conn: Connection, hello: Hello) -> None:
        # Names end up in tables, logs and records: printable and short.
        hello = dataclasses.replace(
            hello,
            bot_name=_printable(hello.bot_name, 64) or "bot",
            bot_version=_printable(hello.bot_version, 32),
        )
        self._greeting.pop(conn, None)
        if hello.protocol_version not in (0, messages.PROTOCOL_VERSION):
            v = hello.protocol_version
            self._reject(conn, f"protocol version {v} is not supported (this server speaks 1)")
            return
        if hello.token and self.token_owner is not None:
            self._checking[conn] = []
            task = self._loop.create_task(self._look_up(conn, hello, self.token_owner))
            self._lookups.add(task)
            task.add_done_callback(self._lookups.discard)
            return
        self._admit(conn, hello, None)

    async def _look_up(
        self, conn: Connection, hello: Hello, owner_of: Callable[[str], tuple[str, str] | None]
    ) -> None:
        """Ask ``owner_of`` about the Hello's token in a thread, then admit or turn the stream
        away; what it sent meanwhile is handled after, in order."""
        if self._owner_pool is None:
            self._owner_pool = ThreadPoolExecutor(OWNER_THREADS, thread_name_prefix="token-owner")
        address = peer_address(conn.peer) or ""
        # A token the hub issued (a match's seat) is no guess: never locked out, never counted.
        issued = hello.token in self._tokens or hello.token in self._token_slots
        gate = self.auth_gate if address and not issued else None
        try:
            if gate is not None and (locked := gate.locked(address)):
                raise TokenRefused(locked)
            future = self._loop.run_in_executor(self._owner_pool, owner_of, hello.token)
            owner = await asyncio.wait_for(future, OWNER_TIMEOUT_S)
        except TokenRefused as err:
            owner, failed, refused = None, False, str(err)
        except Exception as err:  # a store locked past the wait, gone or corrupt
            log.warning("cannot check a token", session=conn.session_id, error=repr(err))
            owner, failed, refused = None, True, ""
        else:
            failed, refused = False, ""
            if owner is None and gate is not None:
                gate.failed(address)
        early = self._checking.pop(conn, None)
        if early is None or conn not in self._conns:
            return  # the stream ended while its token was looked up
        if failed or refused:
            self.dispatch(self._reject, conn, refused or CANNOT_CHECK)
            return
        self.dispatch(self._admit, conn, hello, owner)
        for msg in early:
            self.dispatch(self.on_message, conn, msg)

    def _guests_from(self, conn: Connection) -> int:
        """How many welcomed guests share ``conn``'s network address (0 off the network)."""
        address = peer_address(conn.peer)
        if address is None:
            return 0
        return sum(1 for guest in self._guests if peer_address(guest.peer) == address)

    def _admit(self, conn: Connection, hello: Hello, owner: tuple[str, str] | None) -> None:
        """Welcome a Hello (or turn it away) once its token's owner, if any, is known."""
        token = hello.token
        known = bool(token) and (token in self._tokens or token in self._token_slots)
        if owner is not None:
            # The token, not the Hello, says who this is: standings and records must not
            # credit a name a bot merely claims.
            known = True
            name, version = owner
            hello = dataclasses.replace(hello, bot_name=f"{name}@{version}", bot_version=version)
        if not known:
            if self.idle_hook is None or self.token_owner is not None:
                self._reject(conn, "unknown token" if token else "a token is required")
                return
            if len(self._guests) >= self._max_guests:
                self._reject(conn, f"the server is full ({self._max_guests} bots); try later")
                return
            if self._guests_from(conn) >= self._max_per_address:
                cap = self._max_per_address
                self._reject(conn, f"{cap} bots from your address are playing already; try later")
                return
            # A guest's own token is a name it chose, which anyone may send: its seats are
            # keyed by a secret the server issues (Welcome.resume_token), which alone resumes
            # them after a broken stream.
            token = new_token()
            self._guests.add(conn)
        if hello.games:
            # A bot that says which games it plays is not seated in another: told why, it can
            # say so, instead of playing a game it does not know (a match then faults it).
            other = sorted(
                {s.match.spec.game for s in self._token_slots.get(token, ())} - set(hello.games)
            )
            plays = ", ".join(hello.games)
            if other:
                self._reject(conn, f"this bot plays {plays}; its match here is {other[0]}")
                return
            game = self.lobby_game
            lobby = self.idle_hook is not None and token not in self._token_slots
            if lobby and game is not None and game not in hello.games:
                # It could never be seated: told so now rather than welcomed and dropped.
                self._reject(conn, f"this bot plays {plays}; this server plays {game} only")
                return
        conn.hello = hello
        conn.token = token
        old = self._by_token.get(token)
        self._by_token[token] = conn
        conn.send(codec.plain_to_proto(Welcome(self._version, conn.session_id, resume_token=token)))
        log.info(
            "bot welcomed", session=conn.session_id, bot=hello.bot_name, version=hello.bot_version
        )
        if hello.protocol_version == 0:
            self._warn(
                conn,
                "protocol",
                f"Hello.protocol_version is 0 (unset), read as {messages.PROTOCOL_VERSION}: "
                f"set it to {messages.PROTOCOL_VERSION}",
            )
        by_match: dict[MatchHandle, list[SeatSlot]] = {}
        for slot in self._token_slots.get(token, ()):
            if not slot.match.finished:
                by_match.setdefault(slot.match, []).append(slot)
        for match, slots in by_match.items():
            match.attach(conn, slots)
        if old is not None and old is not conn:
            # A reconnection: the new stream has taken over the seats; end the stale one.
            self._warn(old, "protocol", "superseded by a new connection with the same token")
            self._drop(old)
        if not by_match and self.idle_hook is not None:
            self.idle_hook(conn)

    def _reject(self, conn: Connection, reason: str) -> None:
        log.info("bot rejected", session=conn.session_id, peer=conn.peer, reason=reason)
        conn.send(codec.plain_to_proto(Rejected(reason)))
        self._drop(conn)

    def _drop(self, conn: Connection) -> None:
        conn.close()
        self.on_close(conn)

    def _warn(self, conn: Connection, code: str, message: str, request_id: int = 0) -> None:
        conn.send(codec.plain_to_proto(ErrorInfo(code, message, request_id=request_id)))

    def _stray_answer(self, conn: Connection, answer: Answer) -> None:
        rid = answer.request_id
        for pending in conn.open.values():
            pending.stray = rid
        other = self._requests.open.get(rid)
        if other is not None:
            detail = (
                f"request {rid} is for seat {other.seat} of match {other.match.match_id}, "
                "which this connection does not play"
            )
            self._charge(conn, FaultKind.WRONG_SEAT, detail, rid)
        elif rid in conn.closed_ids:
            self._warn(
                conn,
                FaultKind.UNKNOWN_REQUEST,
                f"request {rid} is already settled (answered, timed out or played by the "
                "referee); answer ignored",
                rid,
            )
        else:
            self._charge(
                conn, FaultKind.UNKNOWN_REQUEST, f"no request {rid} was sent to this bot", rid
            )

    def _charge(self, conn: Connection, kind: FaultKind, detail: str, request_id: int = 0) -> None:
        """Charge a connection-level fault to the seat it concerns: the seat of its oldest open
        request, else its first seat in a match; a bot with no seat only gets the Error."""
        target: tuple[MatchHandle, int] | None = None
        if conn.open:
            pending = next(iter(conn.open.values()))  # oldest first: ids are random
            target = (pending.match, pending.seat)
        else:
            for slot in conn.slots:
                if not slot.match.finished:
                    target = (slot.match, slot.seat)
                    break
        if target is None:
            self._warn(conn, ERROR_CODE[kind], detail, request_id)
            return
        target[0].charge(target[1], kind, detail, request_id, to=conn)

    def _flood(self, conn: Connection, now: float) -> None:
        conn.flood_dropped += 1
        if conn.flood_dropped >= FLOOD_DISCONNECT:
            log.warning("bot disconnected for flooding", session=conn.session_id)
            self._warn(conn, "flood", f"{FLOOD_DISCONNECT} messages dropped; disconnected")
            self._drop(conn)
        elif now - conn.last_flood_strike >= FLOOD_STRIKE_INTERVAL_S:
            conn.last_flood_strike = now
            detail = (
                f"more than {FLOOD_BURST} unsolicited messages at once "
                f"({FLOOD_RATE:g}/s allowed); extra messages are dropped"
            )
            self._charge(conn, FaultKind.FLOOD, detail)


def _printable(text: str, limit: int) -> str:
    return "".join(c for c in text if c.isprintable())[:limit].strip()
