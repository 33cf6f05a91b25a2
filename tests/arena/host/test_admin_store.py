"""The admin's store (schema 4) on real SQLite files: a schema-3 database migrated with its data,
a suspension (token dead, versions retired, one still in its validation retired at its verdict
by the schema's trigger, its live bot refused at Hello), the audit table that no one changes,
reruns' rules, and a reopened ladder failing the final's pending units only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.host.config import load_competition
from arena.host.live import LiveBots
from arena.host.store import (
    DB_NAME,
    MIGRATIONS,
    REOPENED_REASON,
    CompetitionStore,
    Conflict,
    Version,
)
from arena.server import TokenRefused
from engine import Result
from tests.arena.host.serving import competition

SHA = "cd" * 32
WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")


def _validated(store: CompetitionStore, author: int, bot: str) -> Version:
    v = store.add_version(author, bot, "archive", SHA, {"runtime": "python3"})
    store.set_status(v.id, "validating")
    return store.set_status(v.id, "validated")


def _unit(store: CompetitionStore, phase: str, a: int, b: int) -> int:
    unit_id = store.next_unit_id()
    seats = (a, b, a, b)
    p = "u" if phase == "ladder" else "f"
    return store.create_unit(
        phase,  # type: ignore[arg-type]
        3,
        (a, b),
        [(f"{p}{unit_id}-r0", 0, seats), (f"{p}{unit_id}-r1", 1, seats[::-1])],
        unit_id=unit_id,
    )


def _match_id(phase: str, unit: int, rotation: int) -> str:
    return f"again{unit}-r{rotation}"


def test_a_schema_3_database_migrates_with_its_authors_in_good_standing(tmp_path: Path) -> None:
    directory = tmp_path / "cup"
    with CompetitionStore(directory, competition(), migrations=MIGRATIONS[:3]) as old:
        author, token = old.add_author("alice")
    with CompetitionStore(directory, competition()) as store:
        assert store.author_for_token(token) == author
        assert store.standings_of_authors()[author.id].suspended is None
        assert store.audit_log() == [] and store.reruns() == {}


def test_suspension_retires_every_version_even_one_in_its_validation(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "cup", competition()) as store:
        alice, token = store.add_author("alice")
        bob, _ = store.add_author("bob")
        done = _validated(store, alice.id, "one")
        store.add_version(alice.id, "two", "archive", SHA, {})  # pending
        checking = store.add_version(alice.id, "three", "archive", SHA, {})
        store.set_status(checking.id, "validating")
        failing = store.add_version(alice.id, "four", "archive", SHA, {})
        store.set_status(failing.id, "validating")
        live, live_token = store.add_live_version(alice.id, "five")
        other = _validated(store, bob.id, "bee")

        suspended = store.suspend_author("alice", "cheating")
        assert suspended.retired == ("one@1", "two@1", "five@1")
        assert suspended.live == (live.id,)
        assert store.author_for_token(token) is None
        assert store.version(done.id).reason == "suspended by the host: cheating"
        # Its verdicts come in later: retired at once, whichever way they went.
        assert store.set_status(checking.id, "validated").status == "retired"
        assert store.set_status(failing.id, "failed").status == "retired"
        assert store.version(other.id).status == "validated"  # bob is untouched
        # Her live bot's token is refused, saying why (a seated token would otherwise resume).
        bots = LiveBots(store, lambda token: False, lambda: None)
        with pytest.raises(TokenRefused, match="your author is suspended by the host"):
            bots.owner(live_token)
        with pytest.raises(Conflict, match="already"):
            store.suspend_author("alice")

        author, new = store.reinstate_author("alice")
        assert store.author_for_token(new) == author and store.author_for_token(token) is None
        assert {v.status for v in store.versions(author_id=alice.id)} == {"retired"}
        # A new version of hers after reinstatement is validated as anyone's.
        assert _validated(store, alice.id, "six").status == "validated"
        actions = [(e.action, e.target) for e in store.audit_log()]
        assert actions == [("reinstate", "alice"), ("suspend", "alice")]


def test_the_audit_table_is_never_changed_nor_deleted(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "cup", competition()) as store:
        store.record_audit("ladder", "ladder", {"state": "paused"})
    con = sqlite3.connect(tmp_path / "cup" / DB_NAME)
    try:
        for sql in ("UPDATE audit SET action='x'", "DELETE FROM audit"):
            with pytest.raises(sqlite3.IntegrityError, match="never"):
                con.execute(sql)
    finally:
        con.close()


def test_reruns_and_reopening(tmp_path: Path) -> None:
    with CompetitionStore(tmp_path / "cup", competition()) as store:
        alice, _ = store.add_author("alice")
        a, b, c = (_validated(store, alice.id, n).id for n in ("a", "b", "c"))
        failed = _unit(store, "ladder", a, b)
        store.fail_unit(failed, "a bot kept crashing")
        again = store.rerun_unit(failed, _match_id)
        assert (again.table, again.seed, again.state) == ((a, b), 3, "pending")
        assert [m.match_id for m in store.unit_matches(again.id)] == [
            f"again{again.id}-r0",
            f"again{again.id}-r1",
        ]
        assert store.unit(failed).state == "failed"  # never changed
        assert store.reruns() == {failed: again.id}
        with pytest.raises(Conflict, match="played again already"):
            store.rerun_unit(failed, _match_id)
        gone = _unit(store, "ladder", a, c)
        store.fail_unit(gone, "x")
        store.set_status(c, "retired", "by its author")
        with pytest.raises(Conflict, match="c@1 is retired; only validated versions play"):
            store.rerun_unit(gone, _match_id)

        # The final: played while closed; reopening fails its pending units only.
        store.set_ladder_state("closed")
        late = _unit(store, "ladder", a, b)
        store.fail_unit(late, "x")
        with pytest.raises(Conflict, match="it is the ladder's and the ladder is closed"):
            store.rerun_unit(late, _match_id)
        finished, pending = _unit(store, "final", a, b), _unit(store, "final", a, b)
        for m in store.unit_matches(finished):
            store.commit_match(m.match_id, WIN, [], None)
        assert store.reopen_ladder() == [pending]
        assert store.ladder_state() == "running" and store.closed_at() is None
        assert store.unit(finished).state == "done"
        assert (store.unit(pending).state, store.unit(pending).reason) == (
            "failed",
            REOPENED_REASON,
        )
        assert len(store.rating_entries("final")) == 2  # the finished final's results stay
        assert store.final_interrupted()
        with pytest.raises(Conflict, match="it is the final's and the ladder is running"):
            store.rerun_unit(pending, _match_id)
        with pytest.raises(Conflict, match="only a closed ladder is reopened"):
            store.reopen_ladder()
        store.set_ladder_state("closed")
        assert store.rerun_unit(pending, _match_id).phase == "final"
        assert not store.final_interrupted()  # played again: the final goes on
        actions = [e.action for e in store.audit_log()]
        assert actions == ["rerun", "reopen", "rerun"]


def test_an_author_added_with_the_host_stopped_is_in_the_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text('game = "whist"\n[options]\npoints_to_win = 1\n')
    directory = tmp_path / "cup"
    assert main(["host", "add-author", str(config), "alice", "--dir", str(directory)]) == 0
    assert "author alice: API token cau_" in capsys.readouterr().out
    with CompetitionStore(directory, load_competition(config)) as store:
        (entry,) = store.audit_log()
        assert (entry.action, entry.target, entry.detail) == ("add-author", "alice", {"id": 1})


def test_a_rerun_stored_by_a_host_killed_before_naming_it_is_found_not_made_twice(
    tmp_path: Path,
) -> None:
    with CompetitionStore(tmp_path / "cup", competition()) as store:
        alice, _ = store.add_author("alice")
        a, b = (_validated(store, alice.id, n).id for n in ("a", "b"))
        failed = _unit(store, "ladder", a, b)
        store.fail_unit(failed, "a bot kept crashing")
        # The rerun's unit stored, the host killed before the pair was: then played out.
        orphan = _unit(store, "ladder", a, b)
        for m in store.unit_matches(orphan):
            store.commit_match(m.match_id, WIN, [], None)
        found = store.rerun_unit(failed, _match_id)
        assert (found.id, found.state) == (orphan, "done")
        assert store.reruns() == {failed: orphan} and len(store.units()) == 2
