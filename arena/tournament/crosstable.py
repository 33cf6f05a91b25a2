"""Head-to-head results between bots, from the stored matches.

A match is seen as its *entries*: one per place (a side, or a seat in a game without sides) with
the bots that filled it and its rank. Between two entries of different rank the better one scores
1 and the other 0; a tie scores ½ each. The cross-table sums this per ordered pair of bots, so a
cell reads "row scored X against column in N meetings".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.tournament.schedule import places
from engine import Game, MatchConfig


@dataclass(frozen=True, slots=True)
class Side:
    """One entry of a match: the bots of a place (each once) and its rank (1 = best)."""

    #: The distinct bots that filled the place, in seat order.
    bots: tuple[str, ...]
    #: The place's rank in the match result.
    rank: int


def match_sides(
    game: Game, config: MatchConfig, seats: Sequence[str], result: dict[str, Any]
) -> list[Side]:
    """The entries of a finished match: one per place, ranked by ``result["ranks"]``."""
    ranks = result["ranks"]
    return [
        Side(tuple(dict.fromkeys(seats[s] for s in group)), int(ranks[group[0]]))
        for group in places(game, config)
    ]


@dataclass(slots=True)
class CrossTable:
    """Pairwise scores: ``score[a][b]`` is what ``a`` scored against ``b`` in ``meetings``."""

    #: Bots in display order.
    bots: list[str]
    #: Points scored by row against column (1 a win, ½ a tie).
    score: dict[str, dict[str, float]] = field(default_factory=dict)
    #: Times row and column met (in different places of the same match).
    meetings: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, sides: Iterable[Side]) -> None:
        """Count one match."""
        listed = list(sides)
        for i, first in enumerate(listed):
            for second in listed[i + 1 :]:
                points = (
                    1.0 if first.rank < second.rank else 0.0 if first.rank > second.rank else 0.5
                )
                for a in first.bots:
                    for b in second.bots:
                        if a != b:
                            self._count(a, b, points)
                            self._count(b, a, 1.0 - points)

    def _count(self, a: str, b: str, points: float) -> None:
        if a not in self.bots:
            self.bots.append(a)
        self.score.setdefault(a, {}).setdefault(b, 0.0)
        self.meetings.setdefault(a, {}).setdefault(b, 0)
        self.score[a][b] += points
        self.meetings[a][b] += 1

    def cell(self, a: str, b: str) -> str:
        """``"3.5/6"``, or ``"-"`` on the diagonal and ``""`` for bots that never met."""
        if a == b:
            return "-"
        n = self.meetings.get(a, {}).get(b, 0)
        if n == 0:
            return ""
        return f"{_num(self.score[a][b])}/{n}"

    def total(self, a: str) -> tuple[float, int]:
        """Points and meetings of ``a`` against everyone."""
        return sum(self.score.get(a, {}).values()), sum(self.meetings.get(a, {}).values())

    def rows(self) -> list[list[str]]:
        """Header row then one row per bot: name, cells, total."""
        head = ["", *self.bots, "total"]
        body = []
        for a in self.bots:
            points, n = self.total(a)
            body.append([a, *(self.cell(a, b) for b in self.bots), f"{_num(points)}/{n}"])
        return [head, *body]

    def render(self) -> str:
        """Plain-text table with aligned columns."""
        rows = self.rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = []
        for r in rows:
            cells = [r[0].ljust(widths[0])] + [
                c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
            ]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{row: {column: {"score": x, "meetings": n}}}``."""
        return {
            a: {
                b: {"score": self.score[a][b], "meetings": self.meetings[a][b]}
                for b in self.bots
                if b in self.score.get(a, {})
            }
            for a in self.bots
        }


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"
