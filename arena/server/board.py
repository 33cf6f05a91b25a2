"""What spectators see: the matches (running and finished), their public events, standings.

Everything here runs on the server's asyncio loop thread; a watcher is an :class:`Outbox` that
its spectator handler drains, so a slow spectator never slows a match down.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from cardarena import rpc
from cardarena.messages import FaultInfo, MatchStatus, MatchSummary, PlayerInfo, Standing

from arena.protocol import codec
from arena.server.outbox import Outbox, Outgoing
from engine import Result

#: Finished matches kept for ListMatches.
KEEP_FINISHED = 1000
#: Finished matches whose public events are kept for WatchMatch.
KEEP_FINISHED_EVENTS = 50


@dataclass(eq=False, slots=True)
class BoardEntry:
    """One match on the board."""

    #: The match.
    match_id: str
    #: Game id.
    game: str
    #: The seats.
    players: tuple[PlayerInfo, ...]
    #: Running or finished.
    status: MatchStatus = MatchStatus.RUNNING
    #: The result once finished.
    result: Result | None = None
    #: Public events so far (as sent to spectators).
    events: list[Outgoing] = field(default_factory=list)
    #: The MatchEnd message once finished.
    end: rpc.ServerMessage | None = None
    #: Spectator queues; ``None`` ends a spectator's stream.
    watchers: list[Outbox[Outgoing]] = field(default_factory=list)


@dataclass(slots=True)
class _Totals:
    matches: int = 0
    wins: int = 0
    score_sum: float = 0.0
    faults: int = 0


class Board:
    """The server's public view of its matches."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, BoardEntry] = OrderedDict()
        self._totals: dict[tuple[str, str], _Totals] = {}

    def start(self, match_id: str, game: str, players: tuple[PlayerInfo, ...]) -> BoardEntry:
        """A match begins."""
        entry = BoardEntry(match_id, game, players)
        self._entries[match_id] = entry
        return entry

    def event(self, entry: BoardEntry, msg: Outgoing) -> None:
        """A public event happened."""
        entry.events.append(msg)
        for q in entry.watchers:
            q.put(msg)

    def finish(
        self,
        entry: BoardEntry,
        result: Result,
        end: rpc.ServerMessage,
        players: tuple[PlayerInfo, ...],
        sides: Sequence[Sequence[int]] | None,
        faults: Sequence[FaultInfo],
    ) -> None:
        """A match ended: tell the watchers, count the standings, prune old entries."""
        entry.status, entry.result, entry.end = MatchStatus.FINISHED, result, end
        entry.players = players
        for q in entry.watchers:
            q.put(end)
            q.put(None)
        entry.watchers.clear()
        if result.reason != "error":
            for p in players:
                totals = self._totals.setdefault((p.bot_name, entry.game), _Totals())
                totals.matches += 1
                totals.wins += result.ranks[p.seat] == 1
                totals.score_sum += match_score(result.ranks, p.seat, sides)
                totals.faults += sum(1 for f in faults if f.seat == p.seat)
        finished = [e for e in self._entries.values() if e.status is MatchStatus.FINISHED]
        for old in finished[:-KEEP_FINISHED_EVENTS]:
            old.events = []
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._entries[old.match_id]

    def watch(self, match_id: str, q: Outbox[Outgoing]) -> bool:
        """Start a spectator: replay the public events so far; ``False`` for an unknown match."""
        entry = self._entries.get(match_id)
        if entry is None:
            return False
        for msg in entry.events:
            q.put(msg)
        if entry.end is not None:
            q.put(entry.end)
            q.put(None)
        else:
            entry.watchers.append(q)
        return True

    def unwatch(self, match_id: str, q: Outbox[Outgoing]) -> None:
        """A spectator left."""
        entry = self._entries.get(match_id)
        if entry is not None and q in entry.watchers:
            entry.watchers.remove(q)

    def summaries(self, running_only: bool) -> list[MatchSummary]:
        """The matches, oldest first."""
        return [
            MatchSummary(
                e.match_id,
                e.game,
                e.players,
                e.status,
                None if e.result is None else codec.engine_result_to_plain(e.result),
            )
            for e in self._entries.values()
            if not running_only or e.status is MatchStatus.RUNNING
        ]

    def standings(self, game: str) -> list[Standing]:
        """Per bot and game, best mean score first."""
        rows = [
            Standing(bot, g, t.matches, t.wins, t.score_sum / t.matches, t.faults)
            for (bot, g), t in self._totals.items()
            if t.matches and (not game or g == game)
        ]
        rows.sort(key=lambda r: (-r.mean_score, -r.wins, r.bot_name, r.game))
        return rows


def match_score(ranks: Sequence[int], seat: int, sides: Sequence[Sequence[int]] | None) -> float:
    """Share of the opponents (partners excluded) ``seat`` ranked above; ties count half."""
    partners: Sequence[int] = (seat,)
    if sides is not None:
        partners = next((side for side in sides if seat in side), (seat,))
    opponents = [o for o in range(len(ranks)) if o not in partners]
    if not opponents:
        return 0.5
    mine = ranks[seat]
    beaten = sum(1.0 if mine < ranks[o] else 0.5 if mine == ranks[o] else 0.0 for o in opponents)
    return beaten / len(opponents)
