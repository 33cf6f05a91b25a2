"""The leaderboard's rows as the API shows them: which versions, in which order, with which rank.

The fit (arena/ratings.py) rates every version that played. What a competitor reads is ranked
again among the rows shown: retired versions are left out unless asked for (and then marked);
a version with too few rated matches or too wide an interval is *provisional* and listed after
every established one; ranks are standard competition ranking (1, 1, 3) among what is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.host.apitypes import LeaderRow
from arena.host.store import Version
from arena.ratings import Rating


@dataclass(frozen=True, slots=True)
class ProvisionalRule:
    """Provisional while fewer than ``matches`` rated matches or an interval wider than
    ± ``interval`` Elo (the competition's ``[ladder]`` keys)."""

    matches: int
    interval: float

    def applies(self, r: Rating) -> bool:
        return r.matches < self.matches or r.plus_minus > self.interval

    def sentence(self) -> str:
        """The rule in one sentence, as the page shows it."""
        return (
            f"Provisional: fewer than {self.matches} rated matches or an interval wider than"
            f" ±{self.interval:g} Elo; listed after every established version, never above one."
        )


def leader_rows(
    ratings: Sequence[Rating],
    versions: Sequence[Version],
    authors: Mapping[int, str],
    rule: ProvisionalRule,
    *,
    latest: bool = False,
    retired: bool = False,
) -> list[LeaderRow]:
    """The rows of ``ratings`` (the fit's order, best first) to show, ranked among themselves.

    ``latest``: each bot's newest validated version only; ``retired``: retired versions too
    (marked), otherwise they are left out. Established versions first, then provisional ones,
    each part in the fit's order; a rank is 1 + the rows above it with a higher Elo.
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
    # Stable: within each part the fit's order (its groups one after another) stands.
    shown.sort(key=lambda row: rule.applies(row[0]))
    rows: list[LeaderRow] = []
    for pos, (r, v, is_retired) in enumerate(shown):
        prev = rows[-1] if rows else None
        provisional = rule.applies(r)
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
