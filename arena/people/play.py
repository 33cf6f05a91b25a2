"""``arena play``: a match where people hold some seats, on loopback.

The match is :func:`arena.match.play_commands`'s, on the same real gRPC arena: the bots' seats
are launched as ``arena match`` launches them, and the people's seats are attended by a
:class:`~arena.people.bridge.PeopleBridge` that connects with each seat's token as a bot would.
Each person gets a URL with a secret of its own on a loopback port; the record is a normal one.
"""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio
from cardarena.messages import TimeControl

from arena.bots.sandbox import Limits
from arena.errors import UsageError
from arena.match import DEFAULT_OUT, CommandMatch, play_commands
from arena.people.bridge import LINGER_S, PeopleBridge, hold_seat
from arena.people.clock import PEOPLE_TIME
from arena.people.desk import Desk
from arena.people.spectate import SPECTATOR, spectate
from arena.policy import FaultPolicy
from arena.server import Branch, MatchSpec
from engine import OptionValue, get_game

log = structlog.get_logger("arena.people")


@dataclass(frozen=True, slots=True)
class Seating:
    """Who plays where: ``commands[seat]`` is a bot command, or ``None`` for a person."""

    commands: tuple[str | None, ...]
    #: Players at the table.
    players: int

    @property
    def people(self) -> tuple[int, ...]:
        return tuple(s for s, c in enumerate(self.commands) if c is None)


def seat_people(
    game_id: str,
    people: Sequence[int],
    bots: Sequence[str],
    players: int | None,
    options: Mapping[str, OptionValue],
) -> Seating:
    """The table: each person at the seat they asked for, the bots in the other seats in seat
    order. Raises :class:`UsageError` (one line) for a seat that is not at the table, a seat
    asked for twice, or a number of bots that does not fill the others."""
    game = get_game(game_id)
    config = game.configure(players, options)
    seats = game.num_seats(config)
    for seat in people:
        if not 0 <= seat < seats:
            raise UsageError(
                f"--human {seat}: {game_id} with {config.players} players has seats 0 to "
                f"{seats - 1}"
            )
    if len(set(people)) != len(people):
        raise UsageError("--human: each seat once")
    if not people:
        raise UsageError("give at least one --human SEAT (a match of bots alone: arena match)")
    wanted = seats - len(people)
    if len(bots) != wanted:
        raise UsageError(
            f"{game_id} with {config.players} players has {seats} seats: with "
            f"{len(people)} --human, give {wanted} --bot; got {len(bots)}"
        )
    queue = iter(bots)
    commands = tuple(None if s in people else next(queue) for s in range(seats))
    return Seating(commands, config.players)


def loopback_listener() -> socket.socket:
    """A listening TCP socket on 127.0.0.1 on a free port: the pages' server."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


def page_url(listener: socket.socket, desk: Desk) -> str:
    host, port = listener.getsockname()[:2]
    return f"http://{host}:{port}/play/{desk.secret}/"


async def play_people(
    game_id: str,
    seating: Seating,
    *,
    announce: Callable[[Mapping[int, str]], None],
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    seed: int | None = None,
    out_dir: Path = DEFAULT_OUT,
    time_control: TimeControl = PEOPLE_TIME,
    fault_policy: FaultPolicy = FaultPolicy.LENIENT,
    connect_timeout_s: float = 20.0,
    sandbox: Limits | None = None,
    branch: Branch | None = None,
    match_id: str | None = None,
) -> CommandMatch:
    """Play one match with people in ``seating.people``: ``announce`` is given each person's
    page URL by seat once the pages are up (and the watch link's, at seat ``SPECTATOR``);
    returns when the match is over and its record written (and the pages told)."""
    listener = loopback_listener()

    @asynccontextmanager
    async def attend(spec: MatchSpec, address: str) -> AsyncIterator[None]:
        desks = [Desk(s, secrets.token_urlsafe(18), seating.players) for s in seating.people]
        tokens = [spec.seats[d.seat].token for d in desks]
        # A watch link for people without a seat: the same page, fed by the spectator service.
        watcher = Desk(SPECTATOR, secrets.token_urlsafe(18), seating.players, options=spec.options)

        async def hold(desk: Desk, address: str, token: str) -> None:
            await (spectate if desk is watcher else hold_seat)(desk, address, token)

        bridge = PeopleBridge([*desks, watcher], [*tokens, spec.match_id], listener, hold=hold)
        thread = threading.Thread(target=bridge.run, args=(address,), name="people", daemon=True)
        thread.start()
        try:
            announce({d.seat: page_url(listener, d) for d in (*desks, watcher)})
            yield
            # The match is over: the bridge ends once each page has been told.
            with trio.move_on_after(LINGER_S + 5.0):
                await trio.to_thread.run_sync(thread.join, abandon_on_cancel=True)
        finally:
            bridge.stop()
            await trio.to_thread.run_sync(thread.join)
        if bridge.error is not None:
            # The match itself is whole (the referee played the seat's fault rules): its record
            # is still written; the bridge's trouble is said, for a bug report.
            log.error("the people's bridge failed", error=repr(bridge.error))

    try:
        played = await play_commands(
            game_id,
            seating.commands,
            players=players,
            options=options,
            seed=seed,
            out_dir=out_dir,
            time_control=time_control,
            fault_policy=fault_policy,
            connect_timeout_s=connect_timeout_s,
            sandbox=sandbox,
            attend=attend,
            branch=branch,
            match_id=match_id,
        )
    finally:
        listener.close()
    assert isinstance(played, CommandMatch)
    return played
