"""The competition store on real SQLite files: tokens stored hashed, versions immutable along
their transitions, units committed once, migrations, and every refusal one line."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cardarena.messages import FaultInfo

from arena.host.config import CompetitionConfig, load_competition
from arena.host.store import (
    DB_NAME,
    LOCK_NAME,
    MIGRATIONS,
    TRANSITIONS,
    VERSION_STATUSES,
    CompetitionStore,
    CompetitionStoreError,
    Conflict,
    Forbidden,
    NotFound,
    Version,
    VersionStatus,
)
from arena.ratings import Entry, fit_ratings
from arena.registry import hash_token
from arena.sqlite import try_lock
from engine import Result

SHA = "ab" * 32
MANIFEST = {"command": "python bot.py", "runtime": "python3.11"}
WIN_A = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="A")
WIN_B = Result((0, 1, 0, 1), (2, 1, 2, 1), summary="B")
TIMEOUT_0 = FaultInfo(0, "timeout", "")
TIMEOUT_1 = FaultInfo(1, "timeout", "")


def config(
    tmp_path: Path, text: str = 'game = "whist"\n[options]\npoints_to_win = 5\n'
) -> CompetitionConfig:
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return load_competition(path)


@pytest.fixture
def cfg(tmp_path: Path) -> CompetitionConfig:
    return config(tmp_path)


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "competition"


@pytest.fixture
def store(directory: Path, cfg: CompetitionConfig) -> Iterator[CompetitionStore]:
    with CompetitionStore(directory, cfg) as s:
        yield s


def one_line(err: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(err.value)
    assert message and "\n" not in message
    return message


def validated(store: CompetitionStore, author_id: int, bot: str) -> Version:
    v = store.add_version(author_id, bot, "archive", SHA, MANIFEST)
    store.set_status(v.id, "validating")
    return store.set_status(v.id, "validated", log_path=f"logs/{bot}.log")


def whist_unit(store: CompetitionStore, a: int, b: int, tag: str = "u") -> int:
    """A ladder unit of ``a`` against ``b``: two rotations (the partnerships swap)."""
    unit_id = store.next_unit_id()
    return store.create_unit(
        "ladder",
        1000 + unit_id,
        (a, b),
        [(f"{tag}{unit_id}-r0", 0, (a, b, a, b)), (f"{tag}{unit_id}-r1", 1, (b, a, b, a))],
        unit_id=unit_id,
    )


def two_versions(store: CompetitionStore) -> tuple[Version, Version]:
    alice, _ = store.add_author("alice")
    bob, _ = store.add_author("bob")
    return validated(store, alice.id, "alpha"), validated(store, bob.id, "beta")


def raw_sql(db: Path, sql: str, args: tuple[object, ...] = ()) -> None:
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.execute(sql, args)


# --- creating, and the control values --------------------------------------------------------


def test_a_new_store_starts_running_with_a_secret_seed(
    store: CompetitionStore, directory: Path
) -> None:
    db = directory / DB_NAME
    assert stat.S_IMODE(db.stat().st_mode) == 0o600  # token hashes and the secret seed
    assert store.meta("schema") == str(len(MIGRATIONS))
    assert store.meta("name") == "cup"
    assert store.ladder_state() == "running"
    assert store.units_per_minute() == 0.0
    assert store.closed_at() is None
    assert 0 <= store.secret_seed() < 2**63
    journal = sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


def test_the_secret_seed_is_kept_and_differs_per_competition(
    tmp_path: Path, cfg: CompetitionConfig
) -> None:
    with CompetitionStore(tmp_path / "a", cfg) as a:
        seed = a.secret_seed()
    with CompetitionStore(tmp_path / "a", cfg) as a, CompetitionStore(tmp_path / "b", cfg) as b:
        assert a.secret_seed() == seed
        assert b.secret_seed() != seed


def test_ladder_state_pace_and_closing(
    store: CompetitionStore, directory: Path, cfg: CompetitionConfig
) -> None:
    assert store.set_ladder_state("paused") is True
    assert store.set_ladder_state("paused") is False
    assert store.set_ladder_state("running") is True
    store.set_units_per_minute(4.5)
    with pytest.raises(CompetitionStoreError) as err:
        store.set_units_per_minute(-1)
    assert one_line(err).startswith("units_per_minute: must be between 0")
    assert store.set_ladder_state("closed") is True
    assert store.closed_at() is not None
    with pytest.raises(Conflict) as err:
        store.set_ladder_state("running")
    assert one_line(err) == "the ladder is closed; it cannot become running"
    store.close()
    with CompetitionStore(directory, cfg) as again:
        assert again.ladder_state() == "closed"
        assert again.units_per_minute() == 4.5  # the live value, not the config's


# --- authors and tokens ------------------------------------------------------------------------


def test_tokens_are_shown_once_and_stored_hashed(store: CompetitionStore, directory: Path) -> None:
    author, token = store.add_author("alice")
    v, live = store.add_live_version(author.id, "alpha")
    assert store.author_for_token(token) == author
    assert store.version_for_live_token(live) == v
    assert store.author_for_token(live) is None  # one kind of token is not the other
    assert store.version_for_live_token(token) is None
    assert store.author_for_token("") is None
    files = [p for p in directory.iterdir() if p.name.startswith(DB_NAME)]
    blob = b"".join(p.read_bytes() for p in files)
    assert hash_token(token).encode() in blob
    for secret in (token, live):
        assert secret.encode() not in blob
    store.close()
    blob = b"".join(p.read_bytes() for p in directory.iterdir() if p.is_file())
    assert token.encode() not in blob and live.encode() not in blob


def test_rotating_a_token_invalidates_the_old_one(store: CompetitionStore) -> None:
    author, old = store.add_author("alice")
    new = store.rotate_token(author.id)
    assert new != old
    assert store.author_for_token(old) is None
    assert store.author_for_token(new) == author
    with pytest.raises(NotFound):
        store.rotate_token(999)


def test_author_names_are_unique_and_plain(store: CompetitionStore) -> None:
    store.add_author("alice")
    with pytest.raises(Conflict) as err:
        store.add_author("alice")
    assert one_line(err) == "author 'alice' already exists"
    with pytest.raises(CompetitionStoreError) as bad:
        store.add_author("../x")
    assert "author name must be 1-32 letters" in one_line(bad)
    assert [a.name for a in store.authors()] == ["alice"]


def test_registering_needs_the_invite_code(store: CompetitionStore) -> None:
    with pytest.raises(Forbidden) as err:
        store.register_with_invite("carol", "anything", None)
    assert "no invite code" in one_line(err)
    with pytest.raises(Forbidden, match="wrong invite code"):
        store.register_with_invite("carol", "guess-guess", "the-real-code")
    author, token = store.register_with_invite("carol", "the-real-code", "the-real-code")
    assert store.author_for_token(token) == author


def test_many_threads_share_one_store(store: CompetitionStore) -> None:
    errors: list[BaseException] = []

    def register(i: int) -> None:
        try:
            author, token = store.add_author(f"author{i}")
            assert store.author_for_token(token) == author
            store.add_version(author.id, f"bot{i}", "archive", SHA, MANIFEST)
        except BaseException as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=register, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.authors()) == 16
    assert len(store.versions()) == 16


# --- bots and versions -----------------------------------------------------------------------


def test_versions_are_numbered_per_bot(store: CompetitionStore) -> None:
    alice, _ = store.add_author("alice")
    v1 = store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
    v2 = store.add_version(alice.id, "alpha", "image", "cd" * 32, {"command": "x"})
    other = store.add_version(alice.id, "gamma", "archive", SHA, MANIFEST)
    assert (v1.number, v2.number, other.number) == (1, 2, 1)
    assert (v1.ref, v2.ref) == ("alpha@1", "alpha@2")
    assert (v1.status, v1.sha256, v1.manifest) == ("pending", SHA, MANIFEST)
    assert [b.name for b in store.bots(alice.id)] == ["alpha", "gamma"]
    assert [v.id for v in store.versions(author_id=alice.id)] == [v1.id, v2.id, other.id]
    live, _ = store.add_live_version(alice.id, "alpha")
    assert (live.number, live.kind, live.sha256) == (3, "live", None)


def test_a_bot_name_belongs_to_its_author(store: CompetitionStore) -> None:
    alice, _ = store.add_author("alice")
    bob, _ = store.add_author("bob")
    store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
    with pytest.raises(Forbidden) as err:
        store.add_version(bob.id, "alpha", "archive", SHA, MANIFEST)
    assert one_line(err) == "bot name 'alpha' belongs to another author"
    with pytest.raises(Forbidden):
        store.add_live_version(bob.id, "alpha")
    with pytest.raises(Conflict, match="reference bot"):
        store.add_version(bob.id, "random", "archive", SHA, MANIFEST)
    with pytest.raises(NotFound):
        store.add_version(999, "delta", "archive", SHA, MANIFEST)
    assert store.versions(author_id=bob.id) == []


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"sha256": "xyz"}, "sha256 must be 64 lowercase hex digits"),
        ({"sha256": SHA.upper()}, "sha256 must be 64 lowercase hex digits"),
        ({"kind": "live"}, "version kind must be archive or image"),
        ({"manifest": {"command": object()}}, "manifest must be a JSON object"),
        ({"bot_name": "a b"}, "bot name must be 1-32 letters"),
    ],
)
def test_a_malformed_version_is_refused(
    store: CompetitionStore, kwargs: dict[str, object], words: str
) -> None:
    alice, _ = store.add_author("alice")
    args: dict[str, object] = {
        "author_id": alice.id,
        "bot_name": "alpha",
        "kind": "archive",
        "sha256": SHA,
        "manifest": MANIFEST,
        **kwargs,
    }
    with pytest.raises(CompetitionStoreError) as err:
        store.add_version(**args)  # type: ignore[arg-type]
    assert words in one_line(err)
    assert store.versions() == []


def reach(store: CompetitionStore, version_id: int, status: VersionStatus) -> None:
    """Drive a fresh version to ``status`` along legal transitions."""
    path: dict[str, list[VersionStatus]] = {
        "pending": [],
        "validating": ["validating"],
        "validated": ["validating", "validated"],
        "failed": ["validating", "failed"],
        "retired": ["retired"],
    }
    for step in path[status]:
        store.set_status(version_id, step, reason=f"to {step}")


@pytest.mark.parametrize(
    ("start", "target"), list(itertools.product(VERSION_STATUSES, VERSION_STATUSES))
)
def test_status_transitions(
    store: CompetitionStore, start: VersionStatus, target: VersionStatus
) -> None:
    alice, _ = store.add_author("alice")
    v = store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
    reach(store, v.id, start)
    if target in TRANSITIONS[start]:
        after = store.set_status(v.id, target, reason="why", log_path="logs/v.log")
        assert (after.status, after.reason, after.log_path) == (target, "why", "logs/v.log")
        assert (after.sha256, after.manifest, after.number) == (v.sha256, v.manifest, v.number)
        return
    with pytest.raises(Conflict) as err:
        store.set_status(v.id, target)
    assert one_line(err).startswith(f"version alpha@1 is {start}; it cannot become {target}")
    assert store.version(v.id).status == start


def test_the_database_itself_keeps_versions_immutable(
    store: CompetitionStore, directory: Path
) -> None:
    """The triggers are a second line behind the API, against any other writer."""
    alice, _ = store.add_author("alice")
    v = store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
    db = directory / DB_NAME
    for sql, words in [
        ("UPDATE versions SET sha256 = ?", "a version is immutable"),
        ("UPDATE versions SET manifest = ?", "a version is immutable"),
        ("DELETE FROM versions WHERE ? IS NOT NULL", "a version is never deleted"),
        ("UPDATE versions SET status = 'validated' WHERE ? IS NOT NULL", "illegal status"),
    ]:
        with pytest.raises(sqlite3.IntegrityError, match=words):
            raw_sql(db, sql, ("cd" * 32 if "sha256" in sql else "{}",)[: sql.count("?")])
    # The trigger's list is TRANSITIONS: every pair, straight through SQL.
    for start, target in itertools.product(VERSION_STATUSES, VERSION_STATUSES):
        w = store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
        reach(store, w.id, start)
        update = "UPDATE versions SET status = ? WHERE id = ?"
        if start == target or target in TRANSITIONS[start]:
            raw_sql(db, update, (target, w.id))
        else:
            with pytest.raises(sqlite3.IntegrityError, match="illegal status change"):
                raw_sql(db, update, (target, w.id))
    assert store.version(v.id).sha256 == SHA


# --- units and matches -----------------------------------------------------------------------


def test_a_match_is_committed_once_and_the_unit_ends_with_its_last(
    store: CompetitionStore,
) -> None:
    a, b = two_versions(store)
    unit_id = whist_unit(store, a.id, b.id)
    unit = store.unit(unit_id)
    assert (unit.state, unit.table, unit.phase, unit.seed) == (
        "pending",
        (a.id, b.id),
        "ladder",
        1001,
    )
    assert [m.match_id for m in store.pending_matches()] == ["u1-r0", "u1-r1"]
    assert store.commit_match("u1-r0", WIN_A, [], "records/u1-r0.jsonl.gz") is True
    assert store.commit_match("u1-r0", WIN_B, [TIMEOUT_0], None) is False
    first = store.unit_matches(unit_id)[0]
    assert (first.result, first.faults, first.record_path) == (
        WIN_A.to_dict(),
        [],
        "records/u1-r0.jsonl.gz",
    )
    assert store.unit(unit_id).state == "pending"
    assert store.commit_match("u1-r1", WIN_B, [TIMEOUT_1], None) is True
    assert store.unit(unit_id).state == "done"
    assert store.unit(unit_id).finished is not None
    assert store.pending_matches() == []
    assert store.units(state="done") == [store.unit(unit_id)]
    with pytest.raises(NotFound):
        store.commit_match("nope", WIN_A, [], None)


def test_a_restart_plays_exactly_what_was_not_committed(
    directory: Path, cfg: CompetitionConfig
) -> None:
    with CompetitionStore(directory, cfg) as store:
        a, b = two_versions(store)
        whist_unit(store, a.id, b.id)
        whist_unit(store, b.id, a.id)
        store.commit_match("u1-r1", WIN_A, [], None)
        store.commit_match("u2-r0", WIN_A, [], None)
    # No close() at all is the same to SQLite (kill -9); reopening is what matters here.
    with CompetitionStore(directory, cfg) as store:
        assert [m.match_id for m in store.pending_matches()] == ["u1-r0", "u2-r1"]
        assert store.commit_match("u1-r1", WIN_B, [], None) is False
        assert store.unit_matches(1)[1].result == WIN_A.to_dict()


def test_a_bad_result_changes_nothing(store: CompetitionStore) -> None:
    a, b = two_versions(store)
    whist_unit(store, a.id, b.id)
    for result, faults in [
        (Result((1, 0), (1, 2)), []),
        (Result((1, 0, 1, 0), (1, 2, 1, True)), []),
        (Result((1, 0, 1, 0), (1, 2, 0, 2)), []),
        (WIN_A, [FaultInfo(4, "timeout", "")]),
    ]:
        with pytest.raises(CompetitionStoreError) as err:
            store.commit_match("u1-r0", result, faults, None)
        assert one_line(err).startswith("match 'u1-r0': ")
    assert len(store.pending_matches()) == 2


@pytest.mark.parametrize(
    ("table", "matches", "words"),
    [
        ((1,), [("m0", 0, (1, 2, 1, 2))], "a table is one version per place: 2; got 1"),
        ((1, 2), [], "a unit needs at least one match"),
        ((1, 1), [("m0", 0, (1, 1, 1, 1))], "a table needs at least 2 distinct versions"),
        ((1, 2), [("m0", 0, (1, 2, 2, 1))], "the seats [0, 2] of a place need one version"),
        ((1, 2), [("m0", 0, (1, 3, 1, 3))], "hold versions not at the table"),
        ((1, 2), [("m0", 0, (1, 2, 1))], "4 seats; got 3"),
        ((1, 2), [("m0", 0, (1, 2, 1, 2)), ("m0", 1, (2, 1, 2, 1))], "must be distinct"),
        ((1, 2), [("m0", 0, (1, 2, 1, 2)), ("m1", 0, (2, 1, 2, 1))], "must be distinct"),
    ],
)
def test_a_malformed_unit_is_refused(
    store: CompetitionStore,
    table: tuple[int, ...],
    matches: list[tuple[str, int, tuple[int, ...]]],
    words: str,
) -> None:
    two_versions(store)
    with pytest.raises(CompetitionStoreError) as err:
        store.create_unit("ladder", 7, table, matches)
    assert words in one_line(err)
    assert store.units() == []


def test_only_validated_versions_play_and_ids_stay_unique(store: CompetitionStore) -> None:
    a, b = two_versions(store)
    alice = store.authors()[0]
    pending = store.add_version(alice.id, "alpha", "archive", SHA, MANIFEST)
    with pytest.raises(Conflict) as err:
        whist_unit(store, a.id, pending.id)
    assert one_line(err) == "version alpha@2 is pending; only validated versions play"
    with pytest.raises(NotFound):
        whist_unit(store, a.id, 999)
    whist_unit(store, a.id, b.id, tag="x")
    with pytest.raises(Conflict, match="match 'x1-r0' already exists"):
        store.create_unit("ladder", 1, (a.id, b.id), [("x1-r0", 0, (a.id, b.id, a.id, b.id))])
    with pytest.raises(Conflict, match="unit 1 already exists"):
        store.create_unit("final", 1, (a.id, b.id), [("f", 0, (a.id, b.id, a.id, b.id))], unit_id=1)
    assert len(store.units()) == 1


def test_a_failed_unit_is_neither_played_nor_rated(store: CompetitionStore) -> None:
    a, b = two_versions(store)
    unit_id = whist_unit(store, a.id, b.id)
    store.commit_match("u1-r0", WIN_A, [], None)
    assert store.fail_unit(unit_id, "beta@1 retired") is True
    assert store.fail_unit(unit_id, "again") is False
    assert (store.unit(unit_id).state, store.unit(unit_id).reason) == ("failed", "beta@1 retired")
    assert store.pending_matches() == []
    assert store.commit_match("u1-r1", WIN_A, [], None) is False
    assert store.rating_entries("ladder") == []
    assert len(store.finished_matches()) == 1


def test_rating_entries_feed_fit_ratings(store: CompetitionStore) -> None:
    a, b = two_versions(store)
    alice = store.authors()[0]
    c = validated(store, alice.id, "gamma")
    for _ in range(3):
        u = whist_unit(store, a.id, b.id)
        store.commit_match(f"u{u}-r0", WIN_A, [], None)  # alpha's partnership wins
        store.commit_match(f"u{u}-r1", WIN_B, [], None)  # alpha, now E+W, wins again
    u = whist_unit(store, a.id, c.id)
    store.commit_match(f"u{u}-r0", WIN_A, [], None)  # half a unit: not rated yet
    entries = store.rating_entries("ladder")
    assert len(entries) == 6
    assert entries[0] == [Entry(("alpha@1",), 1), Entry(("beta@1",), 2)]
    assert entries[1] == [Entry(("beta@1",), 2), Entry(("alpha@1",), 1)]
    # The unit of each match, read with the entries: the cluster of the robust intervals.
    assert store.rated_matches("ladder") == (entries, [1, 1, 2, 2, 3, 3])
    table = fit_ratings(entries, clusters=[1, 1, 2, 2, 3, 3])
    assert [r.bot for r in table.ratings] == ["alpha@1", "beta@1"]
    assert table.matches == 6
    assert store.rating_entries("final") == []
    assert store.rated_matches("final") == ([], [])
    assert store.match_counts() == {a.id: 7, b.id: 6, c.id: 1}
    assert store.match_counts("final") == {a.id: 0, b.id: 0, c.id: 0}
    assert len(store.finished_matches(version_id=c.id)) == 1
    activity = store.activity("ladder")
    assert (activity[a.id].units, activity[a.id].last_unit, activity[a.id].running) == (4, 4, 1)
    assert (activity[b.id].units, activity[b.id].running, activity[b.id].matches) == (3, 0, 6)
    assert b.id in activity and c.id in activity


def test_rating_entries_of_a_three_place_game(tmp_path: Path) -> None:
    cfg3 = config(tmp_path, 'game = "tennis_whist"\nplayers = 3\n')
    with CompetitionStore(tmp_path / "c3", cfg3) as store:
        author, _ = store.add_author("alice")
        x, y, z = (validated(store, author.id, n) for n in ("x", "y", "z"))
        ids = (x.id, y.id, z.id)
        matches = [(f"m{r}", r, ids[r:] + ids[:r]) for r in range(3)]
        store.create_unit("final", 5, ids, matches)
        for r in range(3):
            # x first every time, whatever its seat.
            seat_of_x = (3 - r) % 3
            ranks = [2, 3, 3]
            ranks[seat_of_x] = 1
            store.commit_match(f"m{r}", Result((0,) * 3, tuple(ranks)), [], None)
        entries = store.rating_entries("final")
        assert all(len(match) == 3 for match in entries)
        assert fit_ratings(entries).ratings[0].bot == "x@1"


# --- migrations --------------------------------------------------------------------------------

V2 = """
CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
ALTER TABLE authors ADD COLUMN email TEXT;
CREATE TRIGGER notes_kept BEFORE DELETE ON notes BEGIN SELECT RAISE(ABORT, 'kept'); END;
"""


N = len(MIGRATIONS)


def test_the_current_schema_migrates_to_a_next_keeping_its_data(
    directory: Path, cfg: CompetitionConfig
) -> None:
    with CompetitionStore(directory, cfg) as old:
        author, token = old.add_author("alice")
        seed = old.secret_seed()
        assert old.meta("schema") == str(N)
    with CompetitionStore(directory, cfg, migrations=[*MIGRATIONS, V2]) as new:
        assert new.meta("schema") == str(N + 1)
        assert new.author_for_token(token) == author
        assert new.secret_seed() == seed
    con = sqlite3.connect(directory / DB_NAME)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    columns = {r[1] for r in con.execute("PRAGMA table_info(authors)")}
    con.close()
    assert "notes" in tables and "email" in columns
    # Reopened by the same code: nothing more to apply.
    with CompetitionStore(directory, cfg, migrations=[*MIGRATIONS, V2]) as again:
        assert again.meta("schema") == str(N + 1)


def test_a_schema_1_database_gets_the_rating_history(
    directory: Path, cfg: CompetitionConfig
) -> None:
    with CompetitionStore(directory, cfg, migrations=MIGRATIONS[:1]) as v1:
        _, token = v1.add_author("alice")
        assert v1.meta("schema") == "1"
    with CompetitionStore(directory, cfg) as store:
        assert store.meta("schema") == str(N)
        assert store.author_for_token(token) is not None
        assert store.rating_history("ladder") == []


def test_a_schema_2_database_takes_event_units_keeping_its_units_and_their_rules(
    directory: Path, cfg: CompetitionConfig
) -> None:
    with CompetitionStore(directory, cfg, migrations=MIGRATIONS[:2]) as v2:
        a, b = two_versions(v2)
        done, pending = whist_unit(v2, a.id, b.id), whist_unit(v2, a.id, b.id)
        assert v2.fail_unit(done, "beta@1 retired")
    with CompetitionStore(directory, cfg) as store:
        assert store.meta("schema") == str(N)
        assert [(u.id, u.state) for u in store.units()] == [(done, "failed"), (pending, "pending")]
        assert [m.match_id for m in store.unit_matches(pending)] == [
            f"u{pending}-r0",
            f"u{pending}-r1",
        ]
        unit_id = store.next_unit_id()
        store.create_unit("event", 9, (a.id, b.id), [(f"e{unit_id}", 0, (a.id, b.id, a.id, b.id))])
        assert store.unit(unit_id).phase == "event"
        assert store.units(phase="ladder") == store.units()[:2]
        assert store.fail_unit(done, "again") is False
    con = sqlite3.connect(directory / DB_NAME, isolation_level=None)
    with pytest.raises(sqlite3.IntegrityError, match="a finished unit is never changed"):
        con.execute("UPDATE units SET reason='x' WHERE id=?", (done,))
    con.execute("PRAGMA foreign_keys=ON")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        con.execute("INSERT INTO unit_versions VALUES (999, 0, 1)")
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.close()


def test_a_fresh_database_gets_every_migration(directory: Path, cfg: CompetitionConfig) -> None:
    with CompetitionStore(directory, cfg, migrations=[*MIGRATIONS, V2]) as store:
        assert store.meta("schema") == str(N + 1)


def test_a_failing_migration_is_rolled_back_whole(directory: Path, cfg: CompetitionConfig) -> None:
    CompetitionStore(directory, cfg).close()
    broken = "CREATE TABLE half (x INTEGER); INSERT INTO nosuch VALUES (1);"
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg, migrations=[*MIGRATIONS, broken])
    assert f"cannot migrate to schema {N + 1} (no such table: nosuch)" in one_line(err)
    with CompetitionStore(directory, cfg) as store:  # still a good file, lock released
        assert store.meta("schema") == str(N)
    con = sqlite3.connect(directory / DB_NAME)
    assert con.execute("SELECT 1 FROM sqlite_master WHERE name='half'").fetchone() is None
    con.close()


def test_a_newer_database_is_refused(directory: Path, cfg: CompetitionConfig) -> None:
    CompetitionStore(directory, cfg, migrations=[*MIGRATIONS, V2]).close()
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    assert one_line(err).endswith(
        f"competition schema {N + 1} is newer than this arena's ({N}); run a newer arena"
    )


def test_the_rating_history_keeps_refits_that_counted_more_and_thins_on_reading(
    directory: Path, cfg: CompetitionConfig
) -> None:
    from arena.ratings import Rating, RatingTable

    def table(matches: int, elo: float) -> RatingTable:
        rows = (
            Rating("a@1", elo, 30.0, matches, 0.6, 1),
            Rating("b@1", 3000 - elo, 30.0, matches, 0.4, 2),
        )
        return RatingTable(rows, {}, matches)

    with CompetitionStore(directory, cfg) as store:
        assert not store.record_ratings("ladder", RatingTable((), {}, 0))  # nothing rated yet
        assert store.record_ratings("ladder", table(2, 1510))
        assert not store.record_ratings("ladder", table(2, 1520))  # no new match: not kept
        for n in range(3, 40):
            assert store.record_ratings("ladder", table(n, 1500 + n))
        history = store.rating_history("ladder")
        assert [p.matches for p in history] == [2, *range(3, 40)]
        assert history[0].ratings == (("a@1", 1510.0, 30.0), ("b@1", 1490.0, 30.0))
        thin = store.rating_history("ladder", points=10)
        assert len(thin) == 10 and thin[0].matches == 2 and thin[-1].matches == 39
        assert [p.matches for p in thin] == sorted(p.matches for p in thin)
        assert store.rating_history("final") == []


# --- refusals: damage, a second host, another config -------------------------------------------


def garbage_last_page(db: Path) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(size - 4096)
        f.write(b"\xde\xad\xbe\xef" * 1024)


DAMAGES = {
    "garbage-last-page": (garbage_last_page, "is damaged"),
    "meta-dropped": (
        lambda db: raw_sql(db, "DROP TABLE meta"),
        "the meta table is damaged (no such table: meta)",
    ),
    "matches-dropped": (
        lambda db: raw_sql(db, "DROP TABLE matches"),
        "the matches table is damaged (no such table: matches)",
    ),
    "identity-not-json": (
        lambda db: raw_sql(db, "UPDATE meta SET value = '{' WHERE key = 'identity'"),
        "the stored config is damaged",
    ),
    "schema-a-word": (
        lambda db: raw_sql(db, "UPDATE meta SET value = 'one' WHERE key = 'schema'"),
        "the schema version is damaged",
    ),
    "ladder-state-unknown": (
        lambda db: raw_sql(db, "UPDATE meta SET value = 'sleeping' WHERE key = 'ladder_state'"),
        "meta 'ladder_state' is damaged",
    ),
    "seed-gone": (
        lambda db: raw_sql(db, "DELETE FROM meta WHERE key = 'secret_seed'"),
        "meta 'secret_seed' is damaged",
    ),
    "not-a-database": (
        lambda db: db.write_bytes(b"this is not a database\n" * 400),
        "not a usable competition database (file is not a database)",
    ),
}


def filled(directory: Path, cfg: CompetitionConfig) -> Path:
    """A closed competition database of several pages (30 units); its path."""
    with CompetitionStore(directory, cfg) as store:
        a, b = two_versions(store)
        for _ in range(30):
            whist_unit(store, a.id, b.id)
    return directory / DB_NAME


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_file_is_refused_in_one_line_and_left_alone(
    directory: Path, cfg: CompetitionConfig, damage: str
) -> None:
    db = filled(directory, cfg)
    harm, words = DAMAGES[damage]
    harm(db)
    before = db.read_bytes()
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    message = one_line(err)
    assert words in message, message
    assert db.read_bytes() == before
    fd = try_lock(directory / LOCK_NAME)  # the failed open released the directory's lock
    assert fd is not None
    os.close(fd)


def killed_writer(db: Path, sql: str) -> None:
    """``sql`` committed by a process killed before its close: it lives in the WAL alone (the
    last close would have checkpointed it into the file and deleted the WAL)."""
    code = (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1])\n"
        "with con:\n"
        "    con.execute(sys.argv[2])\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db), sql], check=True, timeout=60)


WAL_DAMAGES = {
    "ladder-state-unknown": ("UPDATE meta SET value = 'sleeping' WHERE key = 'ladder_state'", None),
    "identity-not-json": ("UPDATE meta SET value = '{' WHERE key = 'identity'", None),
    "garbage-last-page": ("UPDATE meta SET value = '2' WHERE key = 'units_per_minute'", "file"),
}


@pytest.mark.parametrize("damage", list(WAL_DAMAGES))
def test_a_damaged_file_with_a_wal_is_refused_with_its_wal_unreplayed(
    directory: Path, cfg: CompetitionConfig, damage: str
) -> None:
    db = filled(directory, cfg)
    sql, harm_the_file = WAL_DAMAGES[damage]
    killed_writer(db, sql)
    if harm_the_file:
        garbage_last_page(db)
    files = [db, db.with_name(f"{DB_NAME}-wal"), db.with_name(f"{DB_NAME}-shm")]
    before = [f.read_bytes() for f in files]
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    assert "is damaged" in one_line(err)
    assert [f.read_bytes() for f in files] == before  # no checkpoint, no WAL replayed or deleted
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith(".check")) == []


def test_a_whole_file_with_a_wal_opens_with_what_the_wal_holds(
    directory: Path, cfg: CompetitionConfig
) -> None:
    CompetitionStore(directory, cfg).close()
    killed_writer(
        directory / DB_NAME, "UPDATE meta SET value = '7.0' WHERE key = 'units_per_minute'"
    )
    with CompetitionStore(directory, cfg) as store:
        assert store.units_per_minute() == 7.0


def test_another_sqlite_file_is_not_a_competition(directory: Path, cfg: CompetitionConfig) -> None:
    directory.mkdir()
    raw_sql(directory / DB_NAME, "CREATE TABLE photos (id INTEGER)")
    before = (directory / DB_NAME).read_bytes()
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    assert one_line(err).endswith("not a competition database (its tables: photos)")
    assert (directory / DB_NAME).read_bytes() == before  # not even switched to WAL


def test_a_second_host_on_the_directory_is_refused(
    store: CompetitionStore, directory: Path, cfg: CompetitionConfig
) -> None:
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    assert one_line(err) == f"{directory}: another `arena host` is running on it"
    store.close()
    CompetitionStore(directory, cfg).close()


def test_a_directory_of_another_config_is_refused(directory: Path, tmp_path: Path) -> None:
    CompetitionStore(directory, config(tmp_path)).close()
    other = config(tmp_path, 'game = "whist"\n[options]\npoints_to_win = 6\n')
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, other)
    assert one_line(err) == (
        f"{directory} holds a competition with a different config (differs in: options); "
        "use another directory"
    )
    game = config(tmp_path, 'game = "tennis_whist"\nplayers = 3\nfault_policy = "strict"\n')
    with pytest.raises(CompetitionStoreError, match=r"differs in: fault_policy, game, "):
        CompetitionStore(directory, game)
    # What is not identity may change between runs.
    renamed = config(
        tmp_path,
        'name = "x"\ngame = "whist"\n[options]\npoints_to_win = 5\n[ladder]\nconcurrency = 4\n',
    )
    CompetitionStore(directory, renamed).close()


def test_a_lost_database_beside_earlier_output_is_refused(
    directory: Path, cfg: CompetitionConfig
) -> None:
    (directory / "records").mkdir(parents=True)
    (directory / "records" / "u1-r0.jsonl.gz").write_bytes(b"x")
    with pytest.raises(CompetitionStoreError) as err:
        CompetitionStore(directory, cfg)
    assert "holds 1 file in records/ of an earlier competition but no competition.sqlite" in (
        one_line(err)
    )
    assert not (directory / DB_NAME).exists()
