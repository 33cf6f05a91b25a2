"""The boxed arena: where every runner's bots play, set up in one place.

A run (:func:`~arena.bots.reaper.bot_run`: its temporary directory and cgroups, removed with
whatever is left in them when the arena ends, however), the confinement of its bots
(:class:`~arena.bots.launch.Confinement`: boxed with limits, or plain processes for
``--no-sandbox``), and an arena server listening on a TCP address and on the run's Unix socket,
the only way a boxed or containerised bot (uid nobody) reaches it.

:func:`boxed_arena` is all of it at once (``arena match``, the host, a cluster worker,
``arena replay ask``); a tournament, which checks its bots and opens its store before its trio
loop starts, takes the run with :func:`open_box` and the server later with :meth:`Box.serve`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement, check_in_box
from arena.bots.reaper import BotRun, bot_run
from arena.bots.sandbox import SOCKET_NAME, Limits, prepare_socket
from arena.server import ArenaServer, open_arena_server
from arena.server.service import TlsPair

#: Bots to check in their box before anything starts, each labelled for the error
#: (:func:`~arena.bots.launch.check_in_box`).
Labelled = Sequence[tuple[str, BotProgram]]


@dataclass(frozen=True, slots=True)
class Box:
    """A run and the confinement of its bots."""

    run: BotRun
    confinement: Confinement

    @property
    def directory(self) -> Path:
        """The run's own temporary directory (only the arena may enter it)."""
        return self.run.directory

    @property
    def socket(self) -> Path:
        """The arena's Unix socket, which boxed bots reach it by."""
        return self.confinement.socket_dir / SOCKET_NAME

    def check(self, bots: Labelled) -> None:
        """Refuse, in one line, a boxed command naming what its box does not show (it would
        forfeit every match): :class:`~arena.bots.launch.NotInBox`."""
        check_in_box(list(bots), self.confinement)

    @asynccontextmanager
    async def serve(
        self, listen: str = "127.0.0.1:0", tls: TlsPair | None = None, spectators: bool = True
    ) -> AsyncIterator[ArenaServer]:
        """An arena server on ``listen`` and the run's socket, which uid nobody may use;
        ``spectators``: whether it shows its matches as they are played."""
        async with open_arena_server(
            listen, unix=self.socket, tls=tls, spectators=spectators
        ) as server:
            prepare_socket(self.socket)  # boxed and containerised bots run as uid nobody
            yield server


@contextlib.contextmanager
def open_box(limits: Limits | None, hide: Sequence[Path] = ()) -> Iterator[Box]:
    """A run whose bots are boxed with ``limits`` (``None``: plain processes) and see none of
    ``hide``. Nothing started in it outlives the block, nor the arena."""
    with bot_run() as run:
        yield Box(run, Confinement.of_run(run, limits, hide=tuple(hide)))


@dataclass(frozen=True, slots=True)
class BoxedArena:
    """A run, its bots' confinement and its arena server."""

    box: Box
    server: ArenaServer

    def address(self, via_unix: bool = False) -> str:
        """Where a bot reaches the server: its TCP address, or its Unix socket's
        (``via_unix``; a boxed bot is given the socket's whatever this says)."""
        unix = self.server.unix_address
        return unix if via_unix and unix else self.server.address


@asynccontextmanager
async def boxed_arena(
    limits: Limits | None,
    hide: Sequence[Path] = (),
    *,
    check: Labelled = (),
    listen: str = "127.0.0.1:0",
    tls: TlsPair | None = None,
    spectators: bool = True,
) -> AsyncIterator[BoxedArena]:
    """A run (:func:`open_box`), its bots in ``check`` checked in their box before anything
    else is made (in a worker thread: it may start boxes), and an arena server on ``listen``
    and the run's socket (:meth:`Box.serve`; ``spectators`` as there)."""
    with open_box(limits, hide) as box:
        if check:
            await trio.to_thread.run_sync(box.check, check)
        async with box.serve(listen, tls, spectators) as server:
            yield BoxedArena(box, server)
