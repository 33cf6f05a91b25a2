"""The results store and the standings built from it, without any server."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
from cardarena.messages import FaultInfo

from arena.tournament.crosstable import CrossTable, Side, match_sides
from arena.tournament.report import standings
from arena.tournament.schedule import MatchPlan, build_schedule
from arena.tournament.store import DB_NAME, Store, StoreError, open_existing
from engine import Result, get_game

GAME = get_game("whist")
CONFIG = GAME.configure(4, {"points_to_win": 5})
BOTS = ["a", "b", "c"]
IDENTITY = {"game": "whist", "seed": 1, "bots": BOTS, "players": 4, "options": dict(CONFIG.options)}


def plans(seed: int = 1) -> list[MatchPlan]:
    return build_schedule(GAME, CONFIG, BOTS, "round_robin", 2, True, seed)


def new_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / DB_NAME)
    store.initialize(IDENTITY, [(b, f"cmd {b}") for b in BOTS], plans())
    return store


def win_for(seats: tuple[str, ...], bot: str) -> Result:
    ranks = tuple(1 if s == bot else 2 for s in seats)
    return Result(tuple(1.0 if r == 1 else 0.0 for r in ranks), ranks)


def test_a_result_is_committed_once_with_its_status(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        first = store.matches()[0]
        store.mark_started(first.match_id)
        assert store.finish(first.match_id, win_for(first.seats, "a"), [], "r/x.gz", 1.0)
        # A second commit for the same match is refused: nothing is counted twice.
        assert not store.finish(first.match_id, win_for(first.seats, "b"), [], "r/y.gz", 1.0)
        done = store.matches("done")
        assert [m.match_id for m in done] == [first.match_id]
        assert done[0].result == win_for(first.seats, "a").to_dict() and done[0].attempts == 1
        assert store.counts() == (1, len(plans()))
        assert first.match_id not in store.pending_ids()


def test_reopening_with_the_same_config_keeps_results(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        m = store.matches()[0]
        store.finish(m.match_id, win_for(m.seats, "a"), [], None, 0.5)
    with new_store(tmp_path) as store:
        assert store.counts() == (1, len(plans()))
        assert store.pending_ids() == {p.match_id for p in plans()[1:]}


def test_a_different_config_names_what_differs(tmp_path: Path) -> None:
    new_store(tmp_path).close()
    with Store(tmp_path / DB_NAME) as store, pytest.raises(StoreError, match=r"differs in: seed"):
        store.initialize({**IDENTITY, "seed": 2}, [(b, f"cmd {b}") for b in BOTS], plans(2))


def test_a_second_runner_cannot_lock_the_same_directory(tmp_path: Path) -> None:
    with new_store(tmp_path) as first:
        first.lock()
        with Store(tmp_path / DB_NAME) as second, pytest.raises(StoreError, match="another"):
            second.lock()
    with Store(tmp_path / DB_NAME) as third:
        third.lock()  # released when the first closed


def test_the_file_is_in_wal_mode_and_a_foreign_schema_is_refused(tmp_path: Path) -> None:
    new_store(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        con.execute("UPDATE meta SET value='99' WHERE key='schema'")
    with pytest.raises(StoreError, match=r"results schema 99 is newer than this arena.s \(1\)"):
        Store(tmp_path / DB_NAME)
    with pytest.raises(StoreError, match="no results file"):
        open_existing(tmp_path / "elsewhere")


def test_partnership_sides_and_ties_in_the_crosstable() -> None:
    seats = ("a", "b", "a", "b")
    sides = match_sides(GAME, CONFIG, seats, {"ranks": [2, 1, 2, 1]})
    assert sides == [Side(("a",), 2), Side(("b",), 1)]
    table = CrossTable(["a", "b", "c"])
    table.add(sides)
    table.add([Side(("a",), 1), Side(("c",), 1)])  # a tie
    assert table.cell("b", "a") == "1/1" and table.cell("a", "b") == "0/1"
    assert table.cell("a", "c") == "0.5/1" and table.cell("b", "c") == ""
    assert table.total("a") == (0.5, 2)
    assert table.render().splitlines()[0].split() == ["a", "b", "c", "total"]


def test_standings_rate_partnerships_by_their_bot(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        for m in store.matches():
            best = "a" if "a" in m.seats else "b"
            faults = [FaultInfo(1, "timeout", "slow")]
            store.finish(m.match_id, win_for(m.seats, best), faults, None, 0.1)
        result = standings(store)
    assert [r.bot for r in result.ratings.ratings] == ["a", "b", "c"]
    assert result.done == result.total == len(plans())
    assert result.crosstable.cell("a", "b") == "2/2" and result.crosstable.cell("b", "c") == "2/2"
    assert sum(result.faults.values()) == len(plans())
    text = result.render("whist")
    assert text.startswith(f"whist: {len(plans())}/{len(plans())} matches")
    assert "Faults: " in text


def test_an_output_directory_that_cannot_be_created_is_one_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot create the output directory"):
        Store(blocker / "out" / DB_NAME)


#: The layout the results file had before the stores shared one base (schema 1), as that code
#: wrote it: its tables, ``meta`` ``schema`` '1', and timestamps to the second.
OLD_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY, position INTEGER NOT NULL, command TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE, table_no INTEGER NOT NULL,
    deal INTEGER NOT NULL, rotation INTEGER NOT NULL, seed INTEGER NOT NULL, seats TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0, result TEXT, faults TEXT, record_path TEXT,
    seconds REAL, finished_at TEXT);
"""


def test_a_results_file_written_by_the_earlier_code_opens_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / DB_NAME
    schedule = plans()
    first = schedule[0]
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.executescript(OLD_DDL)
        meta = {"schema": "1", "config": json.dumps(IDENTITY, sort_keys=True)}
        con.executemany("INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("created_at", "x")])
        con.executemany(
            "INSERT INTO bots VALUES (?, ?, ?)", [(b, i, f"cmd {b}") for i, b in enumerate(BOTS)]
        )
        con.executemany(
            "INSERT INTO matches (match_id, position, table_no, deal, rotation, seed, seats) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (p.match_id, p.index, p.table, p.deal, p.rotation, p.seed, json.dumps(p.seats))
                for p in schedule
            ],
        )
        con.execute(
            "UPDATE matches SET status='done', attempts=1, result=?, faults='[]', "
            "finished_at='2026-01-02T03:04:05Z' WHERE match_id=?",
            (json.dumps(win_for(first.seats, "a").to_dict()), first.match_id),
        )
    with new_store(tmp_path) as store:  # the same tournament: a resume
        assert store.meta("schema") == "1"
        assert store.bots() == [(b, f"cmd {b}") for b in BOTS]
        assert store.counts() == (1, len(schedule))
        assert store.matches("done")[0].result == win_for(first.seats, "a").to_dict()
        second = store.matches("pending")[0]
        assert store.finish(second.match_id, win_for(second.seats, "b"), [], None, 0.1)
    with open_existing(tmp_path) as store:
        assert store.counts() == (2, len(schedule))
