"""The arena server as trio code uses it: :func:`open_arena_server` and :class:`ArenaServer`.

The server itself (the gRPC handlers, the :class:`~arena.server.hub.Hub` and every match's
referee) runs on one asyncio loop thread, so that a decision's request and answer never cross a
thread: the cross-thread hand-off this replaced, twice per decision, woke the other thread each
time (docs/performance.md has what it cost). Commands, tournaments and tests are trio programs;
this facade carries their calls to the loop: quick calls run there while the trio thread waits
for them (microseconds), and a match runs there as a task whose end wakes trio once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import structlog
import trio
from cardarena.messages import MatchSummary, Standing

from arena.errors import ArenaError, one_error
from arena.logging import configure_once
from arena.protocol import wireformat
from arena.server.connections import Connection
from arena.server.hub import MAX_GUESTS_PER_ADDRESS, AuthGate, Hub
from arena.server.outbox import Outbox, Outgoing
from arena.server.referee import LiveMatch
from arena.server.scripted import Script, ScriptedSeat
from arena.server.service import TlsPair, start_grpc_server
from arena.server.spec import MatchOutcome, MatchSpec
from arena.server.stdio import StdioLink

log = structlog.get_logger("arena.server")
T = TypeVar("T")

#: Longest a quick call may wait for the loop thread (it answers in microseconds when healthy).
CALL_TIMEOUT_S = 30.0
#: Longest a cancelled match may take to wind down on the loop.
CANCEL_GRACE_S = 5.0


class ArenaServer:
    """Referees matches for bots connected over gRPC.

    Use :func:`open_arena_server` to get one that listens; then :meth:`register` a match (so its
    bots' tokens are known), start the bots, and ``await`` :meth:`run_match`. Many matches may run
    at once (start each ``run_match`` in a nursery). Methods are called from the trio thread.
    """

    def __init__(
        self, hub: Hub, loop: asyncio.AbstractEventLoop, token: trio.lowlevel.TrioToken
    ) -> None:
        self._hub = hub
        self._loop = loop
        self._token = token
        self._idle_hook: Callable[[Connection], None] | None = None
        self._token_owner: Callable[[str], tuple[str, str] | None] | None = None
        #: ``host:port`` of the TCP listener once listening.
        self.address = ""
        #: ``unix:PATH`` of the Unix-socket listener, if any.
        self.unix_address: str | None = None

    # --- carrying calls to the loop ----------------------------------------------------------

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` run on the loop thread; its result or exception."""
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn(*args))
            except BaseException as err:
                fut.set_exception(err)

        try:
            self._loop.call_soon_threadsafe(run)
        except RuntimeError:  # the loop is closed
            raise ArenaError("the arena server has stopped") from None
        return fut.result(CALL_TIMEOUT_S)

    async def _run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` as a task on the loop and wait for it on trio; cancelling the trio
        caller cancels the task and waits for it to wind down."""
        done = trio.Event()
        box: list[asyncio.Task[T]] = []
        token = self._token

        def finished(_task: asyncio.Task[T]) -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(done.set)

        def start() -> None:
            task = self._loop.create_task(make())
            box.append(task)
            task.add_done_callback(finished)

        try:
            self._loop.call_soon_threadsafe(start)
        except RuntimeError:
            raise ArenaError("the arena server has stopped") from None
        try:
            await done.wait()
        finally:
            if not done.is_set():
                # Runs after start() (the loop keeps call order), so the task exists.
                with contextlib.suppress(RuntimeError):  # a closed loop: nothing left to stop
                    self._loop.call_soon_threadsafe(lambda: box[0].cancel())
                    with trio.CancelScope(shield=True), trio.move_on_after(CANCEL_GRACE_S):
                        await done.wait()
        return box[0].result()

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)`` soon on trio, from the loop thread, logging instead of raising."""

        def run() -> None:
            try:
                fn(*args)
            except Exception:
                log.exception("internal error in a server callback")

        with contextlib.suppress(trio.RunFinishedError):
            self._token.run_sync_soon(run)

    # --- the API -------------------------------------------------------------------------------

    async def attach_stdio(self, read_fd: int, write_fd: int, label: str) -> None:
        """Serve a stdio bot (``protocol = "stdio"``) whose stdout is ``read_fd`` and stdin
        ``write_fd`` (both owned by the server from here on) as a bot stream: it says Hello with
        its token as a gRPC bot would (arena/server/stdio.py)."""
        hub = self._hub

        async def attach() -> None:
            await StdioLink(hub, label).open(read_fd, write_fd)

        await self._run(attach)

    def add_token(self, token: str) -> None:
        """Accept ``token`` even while it has no match (a bot that waits for its matches)."""
        self._call(self._hub.add_token, token)

    def register(self, spec: MatchSpec) -> LiveMatch:
        """Make a match's tokens known (before its bots connect); raises ``ConfigError`` for a bad
        game configuration and :class:`ArenaError` for a duplicate match id. The match returned
        belongs to the loop thread: read it, never change it."""
        return self._call(self._hub.register, spec)

    def add_script(self, script: Script) -> ScriptedSeat:
        """Take the bot holding ``script.token`` through ``script`` once it connects
        (arena/server/scripted.py). The seat returned belongs to the loop thread: read only its
        thread-safe ``results``."""
        return self._call(self._hub.add_script, script)

    async def wait_ready(self, match_id: str) -> None:
        """Until every seat of the registered match ``match_id`` has its bot connected (or known
        crashed)."""
        await self._run(lambda: self._hub.wait_ready(match_id))

    async def run_match(self, spec: MatchSpec) -> MatchOutcome:
        """Play the match of ``spec`` (registering it if needed) and return its outcome."""
        return await self._run(lambda: self._hub.run_match(spec))

    def withdraw(self, match_id: str) -> None:
        """Forget a registered match that will not be played (:meth:`Hub.withdraw`)."""
        self._call(self._hub.withdraw, match_id)

    def seat_crashed(self, match_id: str, seat: int, detail: str) -> None:
        """Tell the referee that the bot process of ``seat`` is gone (it will not wait for it)."""
        self._call(self._hub.seat_crashed, match_id, seat, detail)

    def connected(self, token: str) -> bool:
        """Whether a bot with ``token`` has a welcomed stream open now."""
        return self._call(self._hub.connected, token)

    def matches(self) -> list[str]:
        """Ids of the registered (running or waiting) matches."""
        return self._call(self._hub.matches)

    def disconnect(self, token: str, reason: str = "disconnected by the server") -> bool:
        """End the stream of ``token``'s bot (its seats wait for it to reconnect); ``False`` when
        it is not connected."""
        return self._call(self._hub.disconnect, token, reason)

    def release(self, token: str) -> bool:
        """After its match: end the stream of ``token``'s bot cleanly if it has nothing left to
        play here (see :meth:`Hub.release`), so the bot exits on its own."""
        return self._call(self._hub.release, token)

    def dismiss(self, token: str) -> bool:
        """The run of ``token``'s long-lived bot is over (see :meth:`Hub.dismiss`): its stream
        ends cleanly once it has nothing left to play, so it exits on its own."""
        return self._call(self._hub.dismiss, token)

    def close_all(self) -> None:
        """End every bot stream (the server is shutting down)."""
        self._call(self._hub.close_all)

    def summaries(self, running_only: bool = False) -> list[MatchSummary]:
        """The matches on the spectators' board, oldest first."""
        return self._call(self._hub.board.summaries, running_only)

    def tap(
        self, match_id: str, deliver: Callable[[Outgoing | None], None]
    ) -> Callable[[], None] | None:
        """Follow ``match_id``'s public events as a spectator is sent them (those so far, then
        each as it happens, its MatchEnd, then ``None``), whether or not this server shows
        spectators: for a host that decides what it shows (a competition's live pages, after
        its duplicate-deal rule). ``deliver`` runs on the loop thread and must only hand the
        message on; returns what stops it, or ``None`` for a match not on the board."""
        board = self._hub.board
        box: Outbox[Outgoing] = Outbox()

        def drain() -> None:
            while box.items:
                deliver(box.items.popleft())

        box.listener = drain
        if not self._call(board.watch, match_id, box):
            return None

        def stop() -> None:
            with contextlib.suppress(RuntimeError, ArenaError):  # the server has stopped
                self._call(board.unwatch, match_id, box)

        return stop

    def standings(self, game: str = "") -> list[Standing]:
        """Per-bot totals on the spectators' board."""
        return self._call(self._hub.board.standings, game)

    @property
    def idle_hook(self) -> Callable[[Connection], None] | None:
        """Called on trio with each welcomed connection that has no match to play (the lobby);
        while set, Hellos with unknown (or no) tokens are welcomed too."""
        return self._idle_hook

    @idle_hook.setter
    def idle_hook(self, hook: Callable[[Connection], None] | None) -> None:
        self._idle_hook = hook
        relay = None if hook is None else (lambda conn: self._post(hook, conn))
        self._call(setattr, self._hub, "idle_hook", relay)

    def open_lobby(self, game: str, hook: Callable[[Connection], None]) -> None:
        """Welcome guests into a lobby of ``game``: :attr:`idle_hook` is ``hook``, and a Hello
        whose ``games`` leave out ``game`` is rejected (it could never be seated)."""
        self._call(setattr, self._hub, "lobby_game", game)
        self.idle_hook = hook

    @property
    def token_owner(self) -> Callable[[str], tuple[str, str] | None] | None:
        """When set, every Hello is authenticated by it (``arena serve --registered-only``): it
        maps a token to its registered bot's ``(name, version)``, under which the bot then
        plays, or to ``None`` (rejected). Called on the loop thread; must be quick."""
        return self._token_owner

    @token_owner.setter
    def token_owner(self, owner: Callable[[str], tuple[str, str] | None] | None) -> None:
        self._token_owner = owner
        self._call(setattr, self._hub, "token_owner", owner)

    def guard_tokens(self, gate: AuthGate) -> None:
        """Check ``gate`` before each :attr:`token_owner` look-up and count there the tokens
        nobody owns, by the stream's network address (a competition's failed-auth lock-out)."""
        self._call(setattr, self._hub, "auth_gate", gate)


def run_trio(main: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(main)`` for commands: a Ctrl-C that trio delivers inside an exception group
    (from a nursery) comes out as a plain ``KeyboardInterrupt``, a single arena or engine error
    as itself, both of which the CLI reports in one line."""
    try:
        return trio.run(main)
    except BaseExceptionGroup as group:
        raise one_error(group) from None


#: Seconds the streams that :meth:`ArenaServer.close_all` ended get to deliver their final status
#: before the server closes the connections; it stops as soon as they have, so this bounds only a
#: loaded machine (a connection cut earlier leaves the bot a "broken pipe" instead of its OK).
SHUTDOWN_GRACE_S = 5.0


@asynccontextmanager
async def open_arena_server(
    listen: str = "127.0.0.1:0",
    unix: str | os.PathLike[str] | None = None,
    *,
    max_connections: int = 256,
    tls: TlsPair | None = None,
    max_guests_per_address: int = MAX_GUESTS_PER_ADDRESS,
    spectators: bool = True,
) -> AsyncIterator[ArenaServer]:
    """Listen on ``listen`` (``host:port``; port 0 picks a free one) and optionally on the Unix
    socket ``unix``, and yield the :class:`ArenaServer`. Must be entered on a trio thread.
    ``max_connections``: lobby guests admitted at once (bots with known tokens always are),
    ``max_guests_per_address`` of them from one network address;
    ``tls``: a certificate chain and key (PEM) for the TCP listener (the Unix socket, for the
    arena's own sandboxed bots, stays plaintext); ``spectators``: whether the spectator service
    shows the matches (off where duplicate deals are played: ``SpectatorService``).

    Raises :class:`ArenaError` when an address cannot be bound.
    """
    configure_once()
    unix_path = Path(unix) if unix is not None else None
    host, hub = start_grpc_server(
        listen, unix_path, max_connections, tls, max_guests_per_address, spectators
    )
    server = ArenaServer(hub, host.loop, trio.lowlevel.current_trio_token())
    server.address, server.unix_address = hub.address, hub.unix_address
    # A build without a C compiler runs slower: say which encoder writes the requests.
    log.info(
        "listening",
        address=server.address,
        unix=server.unix_address,
        encoder=wireformat.encoder_name(),
    )
    try:
        yield server
    finally:
        with trio.CancelScope(shield=True):
            with contextlib.suppress(ArenaError, concurrent.futures.TimeoutError):
                server.close_all()
            await trio.to_thread.run_sync(host.stop, SHUTDOWN_GRACE_S)
            if unix_path is not None:
                unix_path.unlink(missing_ok=True)
            log.info("stopped", address=server.address)
