"""Playing one match of a competition: who sits where, what is launched, what is kept.

A seat is an :class:`Entrant`: a version started from its snapshot (sandboxed, its output in the
seat's log) or its image (in a container), a reference bot (validation's opponent), or a live
bot that connects by itself with its token. Records and seat logs go to the competition
directory (``records/``, ``logs/``). A :class:`Player` plays a match: :class:`MatchPlayer` here,
or :class:`arena.host.remote.ClusterPlayer` on a Dask cluster's workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement
from arena.errors import ArenaError
from arena.host.config import CompetitionConfig
from arena.host.images import image_program
from arena.host.store import Version
from arena.layout import IMAGES_DIR, LOGS_DIR, SNAPSHOTS_DIR, seat_log_name
from arena.match import BotLaunch, run_with_bots, save_record
from arena.rules import PlayedMatch
from arena.server import ArenaServer, MatchSpec, SeatSpec, new_token
from arena.snapshots.tree import open_snapshot

#: Seconds a match waits for its bots to connect (snapshots start in a fresh sandbox each).
CONNECT_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class Entrant:
    """Who plays a seat."""

    #: Its name in records and tables: a version's ``BOT@N``, or a reference bot's name.
    name: str
    #: How to start it; ``None`` for a live bot, which connects with :attr:`token` itself.
    program: BotProgram | None = None
    #: A live bot's connection token (the seat's token), else ``None`` (a fresh one is made).
    token: str | None = field(default=None, repr=False)
    #: The SHA-256 of the stored snapshot it starts from (a version submitted as an archive),
    #: so a cluster's workers can fetch it; ``None`` for any other entrant.
    snapshot: str | None = None


def version_program(directory: Path, version: Version) -> BotProgram:
    """How a stored version starts, checked against its content address first (a changed file
    never runs): its snapshot's command, or its image (loaded into the engine if need be).
    Blocking. Raises :class:`~arena.snapshots.tree.SnapshotError` or another
    :class:`ArenaError` in one line; a live version has no program."""
    if version.sha256 is None:
        raise ArenaError(f"{version.ref} is a live bot: it starts itself")
    if version.kind == "image":
        return image_program(directory / IMAGES_DIR, version.sha256)
    return open_snapshot(directory / SNAPSHOTS_DIR, version.sha256).program


class Player(Protocol):
    """What plays a competition's matches."""

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        """Play one match and write its record (its seats' logs in ``logs``, ``None`` for a seat
        not launched here); :class:`ArenaError` when the arena (not a bot) failed, so the caller
        may leave the match pending and play it again."""
        ...


class MatchPlayer:
    """Plays matches on the host's server, with its confinement, into its directory."""

    def __init__(
        self,
        server: ArenaServer,
        config: CompetitionConfig,
        directory: Path,
        confinement: Confinement | None,
    ) -> None:
        self._server = server
        self._config = config
        self._directory = directory
        self._confinement = confinement

    async def play(self, match_id: str, seed: int, entrants: Sequence[Entrant]) -> PlayedMatch:
        """Play one match and write its record; :class:`ArenaError` when the arena (not a bot)
        failed, so the caller may leave the match pending and play it again."""
        seats = [SeatSpec(e.token or new_token(), e.name) for e in entrants]
        spec = MatchSpec.of(self._config.rules, match_id, seats, seed, CONNECT_TIMEOUT_S)
        logs: list[str | None] = []
        launches: list[BotLaunch | None] = []
        for seat, entrant in enumerate(entrants):
            if entrant.program is None:
                logs.append(None)
                launches.append(None)
                continue
            log = Path(LOGS_DIR) / seat_log_name(match_id, seat)
            logs.append(str(log))
            launches.append(BotLaunch(entrant.program, self._directory / log))
        self._server.register(spec)
        outcome = await run_with_bots(
            self._server, spec, launches, self._server.address, self._confinement
        )
        record = await save_record(outcome, self._directory)
        return PlayedMatch(outcome.result, outcome.faults, record, tuple(logs))
