"""``arena serve``: a standing server with a lobby that seats whoever connects.

Any bot may connect (its token, or a fresh one, is just its identity). Bots waiting for a match
are seated first come, first served; as soon as enough are waiting, a match of the lobby's game
starts, and when it ends its bots wait again. Spectators may list and watch the matches and read
the standings meanwhile.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

from arena.layout import record_name
from arena.records.format import RecordError, write_record
from arena.rules import MatchRules
from arena.seeds import derive_seed, fresh_seed
from arena.server.api import ArenaServer
from arena.server.connections import Connection
from arena.server.spec import MatchSpec, SeatSpec

log = structlog.get_logger("arena.lobby")


@dataclass(slots=True)
class LobbyConfig:
    """What the lobby plays."""

    #: The rules of every match.
    rules: MatchRules
    #: Seed the matches' seeds derive from (``None``: one nobody can guess, drawn at start).
    seed: int | None = None
    #: Directory for match records (``None``: none written).
    out: Path | None = None


class Lobby:
    """Seats idle connections into matches."""

    def __init__(self, server: ArenaServer, config: LobbyConfig) -> None:
        self._seats = config.rules.game.num_seats(config.rules.config)
        self._server = server
        self._config = config
        self._waiting: list[Connection] = []
        self._changed = trio.Event()
        self._numbers = itertools.count()
        self._seed = fresh_seed() if config.seed is None else config.seed
        # Match ids name this server run, not the seed: a bot sees its match id.
        self._run = secrets.token_hex(4)
        self._game = config.rules.game_id
        server.open_lobby(self._game, self.add)

    def add(self, conn: Connection) -> None:
        """A connection with nothing to play joins the queue."""
        hello = conn.hello
        if hello is not None and hello.games and self._game not in hello.games:
            # It could never be seated: waiting, it would only hold a place of the server's.
            if conn.token is not None:
                self._server.disconnect(conn.token, f"this server plays {self._game} only")
            return
        if hello is not None and hello.max_matches and conn.seated >= hello.max_matches:
            return  # it has played what it came for and is about to leave
        if conn not in self._waiting and not conn.closed:
            self._waiting.append(conn)
            self._changed.set()

    async def run(self) -> None:
        """Start matches forever."""
        async with trio.open_nursery() as nursery:
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                self._waiting = [c for c in self._waiting if not c.closed]
                while len(self._waiting) >= self._seats:
                    table, self._waiting = (
                        self._waiting[: self._seats],
                        self._waiting[self._seats :],
                    )
                    for conn in table:
                        conn.seated += 1
                    nursery.start_soon(self._play, table)

    async def _play(self, table: list[Connection]) -> None:
        cfg = self._config
        number = next(self._numbers)
        spec = MatchSpec.of(
            cfg.rules,
            f"{self._game}-{self._run}-{number + 1}",
            [SeatSpec(c.token or "") for c in table],
            derive_seed(self._seed, "lobby", number),
            connect_timeout_s=0.0,
        )
        outcome = await self._server.run_match(spec)
        log.info("lobby match over", match_id=spec.match_id, summary=outcome.result.summary)
        if cfg.out is not None:
            path = cfg.out / record_name(spec.match_id)
            try:
                write_record(path, outcome.header, outcome.entries, outcome.result_dict())
            except RecordError as err:
                # A full or vanished disk costs this record, not the server and its matches.
                log.error("record lost", error=str(err))
