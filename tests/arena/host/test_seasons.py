"""Seasons over a real store, by an injected clock: roll-over at a season's end (once, however
often it is checked, from however many hosts' restarts), reset and carry leaderboards, a host
down over several seasons, the admin ending a season, and the results each end announces."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from arena.host.announce import Announcer
from arena.host.config import CompetitionConfig, CompetitionConfigError, check_competition
from arena.host.seasons import Seasons, parse_time, season_fit
from arena.host.store import CompetitionStore
from engine import Result

#: North/South (the first version) win; and East/West.
NS = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N+S")
EW = Result((0, 1, 0, 1), (2, 1, 2, 1), summary="E+W")


def config(seasons: dict[str, object] | None, **more: object) -> CompetitionConfig:
    raw: dict[str, object] = {
        "game": "whist",
        "options": {"points_to_win": 1, "games_per_rubber": 1},
        "ladder": {"provisional_matches": 1, "provisional_interval": 100000},
        **more,
    }
    if seasons is not None:
        raw["seasons"] = seasons
    return check_competition(raw, "test", "cup")


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "cup"


def two_versions(store: CompetitionStore) -> tuple[int, int]:
    """Versions a@1 and b@1, validated."""
    author, _ = store.add_author("alice")
    ids = []
    for name in ("a", "b"):
        v = store.add_version(author.id, name, "archive", "0" * 64, {"command": "x"})
        store.set_status(v.id, "validating")
        store.set_status(v.id, "validated")
        ids.append(v.id)
    return ids[0], ids[1]


def play(store: CompetitionStore, a: int, b: int, result: Result, n: int, seed: int = 0) -> None:
    """``n`` one-match units of ``a`` (North/South) against ``b``, ending in ``result``."""
    for _ in range(n):
        unit = store.next_unit_id()
        match = [(f"u{unit}-r0", 0, (a, b, a, b))]
        store.create_unit("ladder", seed + unit, (a, b), match, unit_id=unit)
        store.commit_match(f"u{unit}-r0", result, [], None)


@pytest.fixture
def opened(directory: Path) -> Iterator[tuple[CompetitionStore, Clock]]:
    cfg = config({"length_days": 1, "ratings": "reset"})
    with CompetitionStore(directory, cfg) as store:
        yield store, Clock(parse_time(store.current_season().starts))


def test_a_season_rolls_over_at_its_end_once_with_its_standings_frozen(
    opened: tuple[CompetitionStore, Clock],
) -> None:
    store, clock = opened
    cfg = config({"length_days": 1, "ratings": "reset"})
    keeper = Seasons(store, cfg, Announcer(store, cfg), clock)
    keeper.plan()
    first = store.current_season()
    assert (first.number, first.name, first.state) == (1, "Season 1", "current")
    assert parse_time(first.ends or "") - parse_time(first.starts) == timedelta(days=1)
    a, b = two_versions(store)
    play(store, a, b, NS, 3)
    clock.now += timedelta(hours=23)
    assert keeper.check() == []
    clock.now += timedelta(hours=1, seconds=1)
    (ended,) = keeper.check()
    assert keeper.check() == []  # checked again (or by a restarted host): never twice
    assert (ended.number, ended.state, ended.matches, ended.winners) == (1, "archived", 3, ["a@1"])
    assert ended.standings is not None and [r["ref"] for r in ended.standings] == ["a@1", "b@1"]
    assert ended.ends == first.ends  # ended at its planned end, not when it was noticed
    second = store.current_season()
    assert (second.number, second.name, second.starts) == (2, "Season 2", first.ends)
    # Units now belong to season 2; "reset": its leaderboard fits its own matches only.
    play(store, a, b, EW, 2)
    assert {u.id for u in store.units()} and season_fit(store, cfg, 2).matches == 2
    assert season_fit(store, cfg, 2).ratings[0].bot == "b@1"
    # Each season its own rating history (a reset season's starts again from its first fit).
    store.record_ratings("ladder", season_fit(store, cfg, 1), 1)
    assert store.record_ratings("ladder", season_fit(store, cfg, 2))
    assert [p.matches for p in store.rating_history("ladder", season=2)] == [2]
    assert [p.matches for p in store.rating_history("ladder", season=1)] == [3]
    # An end asked for once the planned end has passed is the planned roll-over, not an early one.
    clock.now += timedelta(days=2)
    late = keeper.end_now("ignored")
    assert (late.number, late.ends) == (2, second.ends)
    assert store.current_season().name == "Season 3"
    # The archived standings stay as they were frozen.
    assert store.season(1).standings == ended.standings
    result = store.results()[-1]
    assert (result.kind, result.subject, result.winners) == ("season", "Season 1", ["a@1"])


def test_carry_fits_every_match_to_date(directory: Path) -> None:
    cfg = config({"length_days": 1, "ratings": "carry"})
    with CompetitionStore(directory, cfg) as store:
        clock = Clock(parse_time(store.current_season().starts))
        keeper = Seasons(store, cfg, Announcer(store, cfg), clock)
        a, b = two_versions(store)
        play(store, a, b, NS, 3)
        clock.now += timedelta(days=1, seconds=1)
        keeper.check()
        play(store, a, b, EW, 2)
        assert season_fit(store, cfg, 2).matches == 5
        assert store.season_matches(2) == 2


def test_a_host_down_over_several_seasons_rolls_over_once_into_the_period_of_now(
    directory: Path,
) -> None:
    cfg = config({"length_days": 1})
    with CompetitionStore(directory, cfg) as store:
        start = parse_time(store.current_season().starts)
        clock = Clock(start + timedelta(days=3, hours=12))
        keeper = Seasons(store, cfg, Announcer(store, cfg), clock)
        assert [s.number for s in keeper.check()] == [1]
    # Reopened (a restarted host): nothing rolls over again.
    with CompetitionStore(directory, cfg) as store:
        keeper = Seasons(store, cfg, Announcer(store, cfg), clock)
        assert keeper.check() == []
        current = store.current_season()
        assert current.number == 2
        assert parse_time(current.starts) == start + timedelta(days=3)
        assert [s.state for s in store.seasons()] == ["archived", "current"]


def test_the_admin_ends_a_season_and_a_schedule_names_the_next(directory: Path) -> None:
    cfg = config(
        {
            "schedule": [
                {"name": "Spring", "start": "2026-03-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"},
                {"name": "Summer", "start": "2026-06-01T00:00:00Z", "end": "2026-09-01T00:00:00Z"},
            ]
        }
    )
    with CompetitionStore(directory, cfg) as store:
        clock = Clock(datetime.fromisoformat("2026-04-01T00:00:00+00:00"))
        keeper = Seasons(store, cfg, Announcer(store, cfg), clock)
        keeper.plan()
        assert store.current_season().name == "Spring"
        ended = keeper.end_now()
        assert ended.ends == "2026-04-01T00:00:00.000Z" and ended.winners == []
        assert (store.current_season().name, store.current_season().ends) == (
            "Summer",
            "2026-09-01T00:00:00.000Z",
        )
        ended = keeper.end_now("Autumn")  # after the schedule: named by the admin, no end
        assert ended.name == "Summer"
        assert (store.current_season().name, store.current_season().ends) == ("Autumn", None)
        assert [r.subject for r in store.results()] == ["Season 2 (Summer)", "Season 1 (Spring)"]


def test_without_seasons_nothing_rolls_over(directory: Path) -> None:
    cfg = config(None)
    with CompetitionStore(directory, cfg) as store:
        clock = Clock(datetime.fromisoformat("2100-01-01T00:00:00+00:00"))
        assert Seasons(store, cfg, Announcer(store, cfg), clock).check() == []
        (only,) = store.seasons()
        assert (only.number, only.name, only.ends, only.title) == (1, "", None, "Season 1")


@pytest.mark.parametrize(
    ("seasons", "problem"),
    [
        ({}, "give either length_days or [[seasons.schedule]]"),
        ({"length_days": 0}, "seasons.length_days: must be at least"),
        ({"length_days": 1, "ratings": "keep"}, "seasons.ratings"),
        (
            {"schedule": [{"name": "x", "start": "2026-01-02T00:00:00", "end": "2027"}]},
            "seasons.schedule[0].start: must be a UTC time",
        ),
        (
            {
                "schedule": [
                    {"name": "x", "start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:00Z"},
                    {"name": "y", "start": "2026-01-15T00:00:00Z", "end": "2026-03-01T00:00:00Z"},
                ]
            },
            "seasons.schedule[1]: starts before 'x' ends",
        ),
    ],
)
def test_a_wrong_seasons_section_is_one_line(seasons: dict[str, object], problem: str) -> None:
    with pytest.raises(CompetitionConfigError) as err:
        config(seasons if seasons else {"ratings": "reset"})
    assert problem in str(err.value) and "\n" not in str(err.value)


KILLED_MID_ROLL = """
import os, signal, sys
from datetime import timedelta
from pathlib import Path
from arena.host.announce import Announcer
from arena.host.seasons import Seasons, parse_time
from arena.host.store import CompetitionStore
from tests.arena.host.test_seasons import config

cfg = config({"length_days": 1})
store = CompetitionStore(Path(sys.argv[1]), cfg)
start = parse_time(store.current_season().starts)
# Killed inside the roll-over's transaction: the season archived and the next inserted, the
# result not yet stored, nothing committed.
store._add_result = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
Seasons(store, cfg, Announcer(store, cfg), lambda: start + timedelta(days=1, seconds=1)).check()
"""


def test_kill_9_inside_the_roll_over_loses_nothing_and_doubles_nothing(directory: Path) -> None:
    cfg = config({"length_days": 1})
    with CompetitionStore(directory, cfg) as store:
        a, b = two_versions(store)
        play(store, a, b, NS, 2)
    root = Path(__file__).resolve().parents[3]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_ROLL, str(directory)], cwd=root, capture_output=True
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    with CompetitionStore(directory, cfg) as store:
        assert [(s.number, s.state) for s in store.seasons()] == [(1, "current")]
        assert store.results() == []
        start = parse_time(store.current_season().starts)
        keeper = Seasons(store, cfg, Announcer(store, cfg), lambda: start + timedelta(days=1))
        (ended,) = keeper.check()  # the restarted host rolls over, once
        assert keeper.check() == []
        assert (ended.matches, ended.winners) == (2, ["a@1"])
        assert [(s.number, s.state) for s in store.seasons()] == [(1, "archived"), (2, "current")]
        assert [r.subject for r in store.results()] == ["Season 1"]
