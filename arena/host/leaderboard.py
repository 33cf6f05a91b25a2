"""The leaderboard's rows as the API shows them: which versions, in which order, with which rank;
and the final as a state (playing, finished) with its winner.

The fit (arena/ratings.py) rates every version that played. What a competitor reads is ranked
again among the rows shown: retired versions are left out unless asked for (and then marked);
a version with too few rated matches or too wide an interval is *provisional* and listed after
every established one; ranks are standard competition ranking (1, 1, 3) among what is shown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from arena.host.apitypes import LeaderRow
from arena.host.config import LadderConfig
from arena.host.store import Unit, Version
from arena.ratings import Rating, RatingTable


@dataclass(frozen=True, slots=True)
class ProvisionalRule:
    """Provisional while fewer than ``matches`` rated matches or an interval wider than
    ± ``interval`` Elo (the competition's ``[ladder]`` keys)."""

    matches: int
    interval: float

    @classmethod
    def of(cls, ladder: LadderConfig) -> ProvisionalRule:
        """The competition's rule (its ``[ladder]`` keys)."""
        return cls(ladder.provisional_matches, ladder.provisional_interval)

    def provisional(self, ratings: Sequence[Rating]) -> set[str]:
        """The provisional bots among ``ratings``.

        A wide interval alone does not make provisional a version with enough matches whose
        whole interval lies above every established version's: an unbeaten record is bounded
        by the prior only, so its interval stays wide however often it wins.
        """
        few = {r.bot for r in ratings if r.matches < self.matches}
        wide = {r.bot for r in ratings if r.bot not in few and r.plus_minus > self.interval}
        settled = [r for r in ratings if r.bot not in few and r.bot not in wide]
        top = max((r.elo + r.plus_minus for r in settled), default=math.inf)
        return few | {r.bot for r in ratings if r.bot in wide and r.elo - r.plus_minus <= top}

    def sentence(self) -> str:
        """The rule in one sentence, as the page shows it."""
        return (
            f"Provisional: fewer than {self.matches} rated matches, or an interval wider than"
            f" ±{self.interval:g} Elo not wholly above every established version's; listed"
            " after every established version, never ranked above one."
        )


def leader_rows(
    ratings: Sequence[Rating],
    versions: Sequence[Version],
    authors: Mapping[int, str],
    rule: ProvisionalRule | None,
    *,
    latest: bool = False,
    retired: bool = False,
) -> list[LeaderRow]:
    """The rows of ``ratings`` (the fit's order, best first) to show, ranked among themselves.

    ``latest``: each bot's newest validated version only; ``retired``: retired versions too
    (marked), otherwise they are left out. Established versions first, then provisional ones,
    each part in the fit's order; a rank is 1 + the rows above it with a higher Elo. ``rule``
    ``None``: nothing is provisional (the final, where every finalist plays the same matches).
    """

    by_ref = {v.ref: v for v in versions}
    newest: dict[int, int] = {}
    for each in versions:
        if each.status == "validated":
            newest[each.bot_id] = max(newest.get(each.bot_id, 0), each.number)
    shown: list[tuple[Rating, Version | None, bool]] = []
    for r in ratings:
        v = by_ref.get(r.bot)
        if latest and (v is None or newest.get(v.bot_id) != v.number):
            continue
        is_retired = v is not None and v.status == "retired"
        if is_retired and not retired:
            continue
        shown.append((r, v, is_retired))
    marked = set() if rule is None else rule.provisional([r for r, _, _ in shown])
    # Stable: within each part the fit's order (its groups one after another) stands.
    shown.sort(key=lambda row: row[0].bot in marked)
    rows: list[LeaderRow] = []
    for pos, (r, v, is_retired) in enumerate(shown):
        prev = rows[-1] if rows else None
        provisional = r.bot in marked
        tied = (
            prev is not None
            and prev.provisional == provisional
            and prev.elo == round(r.elo, 1)
            and shown[pos - 1][0].rank == r.rank
        )
        rows.append(
            LeaderRow(
                rank=prev.rank if tied and prev is not None else pos + 1,
                ref=r.bot,
                bot=v.bot if v else r.bot,
                author=authors.get(v.author_id, "") if v else "",
                elo=round(r.elo, 1),
                plus_minus=round(r.plus_minus, 1),
                matches=r.matches,
                score=round(r.score, 4),
                retired=is_retired,
                provisional=provisional,
            )
        )
    return rows


#: The final as a state: ``not started`` (the ladder is open, or closed with no final to play),
#: ``playing``, ``finished`` (every unit of it done or given up).
FinalState = Literal["not started", "playing", "finished"]


def final_state(units: Sequence[Unit]) -> FinalState:
    """The state of the final from its units (:meth:`CompetitionStore.units` of ``final``)."""
    if not units:
        return "not started"
    return "playing" if any(u.state == "pending" for u in units) else "finished"


def final_winners(state: FinalState, table: RatingTable) -> list[str]:
    """The versions ranked first in the final's fit once it is finished (more than one: tied);
    none before."""
    if state != "finished":
        return []
    winners = list(itertools.takewhile(lambda r: r.rank == 1, table.ratings))
    return [r.bot for r in winners if r.matches > 0]
