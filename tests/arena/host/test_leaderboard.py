"""The leaderboard's rows: retired versions out (or marked), provisional ones apart, ranks among
what is shown (arena/host/leaderboard.py)."""

from __future__ import annotations

from arena.host.apitypes import LeaderRow
from arena.host.leaderboard import ProvisionalRule, final_state, final_winners, leader_rows
from arena.host.store import Unit, UnitState, Version
from arena.host.store.schema import VersionStatus
from arena.ratings import Entry, Rating, fit_ratings

RULE = ProvisionalRule(matches=10, interval=100.0)
AUTHORS = {1: "alice"}
BOT_IDS: dict[str, int] = {}


def version(vid: int, bot: str, number: int, status: VersionStatus = "validated") -> Version:
    return Version(
        id=vid,
        bot_id=BOT_IDS.setdefault(bot, len(BOT_IDS) + 1),
        bot=bot,
        author_id=1,
        number=number,
        kind="archive",
        sha256="0" * 64,
        manifest={},
        status=status,
        reason="",
        log_path=None,
        created="",
        updated="",
    )


def rating(bot: str, elo: float, rank: int, pm: float = 20.0, matches: int = 50) -> Rating:
    return Rating(bot=bot, elo=elo, plus_minus=pm, matches=matches, score=0.5, rank=rank)


def shown(rows: list[LeaderRow]) -> list[tuple[int, str, bool, bool]]:
    return [(r.rank, r.ref, r.provisional, r.retired) for r in rows]


def test_a_retired_version_is_left_out_unless_asked_for_and_then_marked() -> None:
    # The board: a retired version with 2 matches at 1973 ± 898 on top of the fit.
    ratings = [
        rating("old@1", 1973.0, 1, pm=898.0, matches=2),
        rating("a@1", 1600.0, 2),
        rating("b@1", 1500.0, 3),
    ]
    versions = [version(1, "old", 1, "retired"), version(2, "a", 1), version(3, "b", 1)]
    rows = leader_rows(ratings, versions, AUTHORS, RULE)
    assert shown(rows) == [(1, "a@1", False, False), (2, "b@1", False, False)]
    every = leader_rows(ratings, versions, AUTHORS, RULE, retired=True)
    # Marked, and provisional as well: never above an established version.
    assert shown(every) == [
        (1, "a@1", False, False),
        (2, "b@1", False, False),
        (3, "old@1", True, True),
    ]
    assert every[0].author == "alice"


def test_provisional_versions_are_listed_after_every_established_one() -> None:
    ratings = [
        rating("new@1", 1800.0, 1, pm=300.0, matches=30),  # too wide
        rating("few@1", 1700.0, 2, pm=50.0, matches=4),  # too few matches
        rating("a@1", 1600.0, 3),
        rating("b@1", 1400.0, 4),
    ]
    versions = [version(1, "new", 1), version(2, "few", 1), version(3, "a", 1), version(4, "b", 1)]
    assert shown(leader_rows(ratings, versions, AUTHORS, RULE)) == [
        (1, "a@1", False, False),
        (2, "b@1", False, False),
        (3, "new@1", True, False),
        (4, "few@1", True, False),
    ]
    assert "fewer than 10 rated matches" in RULE.sentence() and "±100 Elo" in RULE.sentence()


def test_an_unbeaten_version_with_enough_matches_is_not_provisional() -> None:
    # Its record is bounded by the prior only: a wide interval, but wholly above the others.
    ratings = [
        rating("unbeaten@1", 2346.0, 1, pm=627.0, matches=97),
        rating("a@1", 1300.0, 2, pm=90.0),
        rating("b@1", 1200.0, 3, pm=90.0),
        rating("lost@1", 500.0, 4, pm=600.0, matches=97),
    ]
    versions = [version(1, "unbeaten", 1), version(2, "a", 1), version(3, "b", 1)]
    versions.append(version(4, "lost", 1))
    assert shown(leader_rows(ratings, versions, AUTHORS, RULE)) == [
        (1, "unbeaten@1", False, False),
        (2, "a@1", False, False),
        (3, "b@1", False, False),
        (4, "lost@1", True, False),
    ]
    # The final: nothing is provisional, the fit's order stands.
    assert [r.provisional for r in leader_rows(ratings, versions, AUTHORS, None)] == [False] * 4


def test_ties_share_a_rank_and_latest_is_ranked_among_what_it_shows() -> None:
    ratings = [
        rating("a@2", 1600.0, 1),
        rating("a@1", 1550.0, 2),
        rating("b@1", 1500.0, 3),
        rating("c@1", 1500.0, 3),
        rating("d@1", 1400.0, 5),
    ]
    versions = [
        version(1, "a", 1),
        version(2, "a", 2),
        version(3, "b", 1),
        version(4, "c", 1),
        version(5, "d", 1),
    ]
    assert [r.rank for r in leader_rows(ratings, versions, AUTHORS, RULE)] == [1, 2, 3, 3, 5]
    latest = leader_rows(ratings, versions, AUTHORS, RULE, latest=True)
    assert [(r.rank, r.ref) for r in latest] == [(1, "a@2"), (2, "b@1"), (2, "c@1"), (4, "d@1")]


def test_the_final_is_a_state_and_names_its_winner_once_finished() -> None:
    def unit(uid: int, state: UnitState) -> Unit:
        return Unit(uid, "final", 0, (1, 2), state, "", "", None)

    table = fit_ratings([[Entry(("a@1",), 1), Entry(("b@1",), 2)]] * 3)
    assert final_state([]) == "not started"
    assert final_state([unit(1, "done"), unit(2, "pending")]) == "playing"
    assert final_winners("playing", table) == []
    assert final_state([unit(1, "done"), unit(2, "failed")]) == "finished"
    assert final_winners("finished", table) == ["a@1"]
    tied = fit_ratings([[Entry(("a@1",), 1), Entry(("b@1",), 1)]] * 3)
    assert final_winners("finished", tied) == ["a@1", "b@1"]
