"""Retention (``[retention]``, arena/host/retention.py): records and seat logs removed by age and
by size on disk, oldest first, the published results' records kept unless the host says so, a
dry run that removes nothing, the API's 410 for what was pruned, ``arena host prune`` as a real
process, and a real host pruning on its own. Real SQLite, real files, real HTTP."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from arena.host.config import CompetitionConfigError, RetentionConfig, check_competition
from arena.host.retention import prune
from arena.host.store import CompetitionStore, Phase, Version
from arena.host.validation import validated_by, validation_log, validation_match_id
from arena.layout import match_of_file, record_name, seat_log_name
from tests.arena.host.processes import GOOD_BOT, Host, arena_host, competition_config
from tests.arena.host.serving import hosting
from tests.arena.host.test_host_store import SHA, WIN_A, two_versions
from tests.waiting import wait_until

DAY = 86400.0
#: Bytes written in each test file: whole 4 KiB blocks, so its size on disk is near it.
SIZE = 16 * 4096


def _file(directory: Path, path: str, age_days: float) -> None:
    full = directory / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(os.urandom(SIZE))  # incompressible: the size on disk is what was written
    when = time.time() - age_days * DAY
    os.utime(full, (when, when))


def _unit(
    store: CompetitionStore, versions: tuple[int, int], phase: Phase, age_days: float, done: int = 2
) -> list[str]:
    """A unit of the two versions, its ``done`` first matches finished, each of its matches'
    record and four seat logs written ``age_days`` ago (a match not finished: as if being
    written); its match ids."""
    a, b = versions
    unit = store.next_unit_id()
    ids = [f"{phase[0]}{unit}-r0", f"{phase[0]}{unit}-r1"]
    store.create_unit(
        phase, unit, (a, b), [(ids[0], 0, (a, b, a, b)), (ids[1], 1, (b, a, b, a))], unit_id=unit
    )
    for n, match_id in enumerate(ids):
        record = f"records/{record_name(match_id)}"
        _file(store.directory, record, age_days)
        for seat in range(4):
            _file(store.directory, f"logs/{seat_log_name(match_id, seat)}", age_days)
        if n < done:
            store.commit_match(match_id, WIN_A, [], record)
    return ids


def _config(**retention: object) -> RetentionConfig:
    raw = {"game": "whist", "retention": retention}
    return check_competition(raw, "test", "cup").retention


def _there(directory: Path, match_id: str) -> tuple[bool, list[bool]]:
    """Whether the match's record is there, and each of its seat logs."""
    record = (directory / "records" / record_name(match_id)).is_file()
    return record, [(directory / "logs" / seat_log_name(match_id, s)).is_file() for s in range(4)]


@pytest.fixture
def store(tmp_path: Path) -> CompetitionStore:
    config = check_competition({"game": "whist"}, "test", "cup")
    opened = CompetitionStore(tmp_path / "competition", config)
    return opened


def _pair(store: CompetitionStore) -> tuple[int, int]:
    a, b = two_versions(store)
    return a.id, b.id


# --- the config ----------------------------------------------------------------------------------


def test_the_retention_section_is_checked_key_by_key() -> None:
    assert _config() == RetentionConfig() and not RetentionConfig().enabled
    got = _config(records_days=30, logs_mib=512, published=True, interval_s=60)
    assert (got.records_days, got.logs_mib, got.published, got.interval_s) == (30, 512, True, 60)
    assert got.enabled and (got.records_mib, got.logs_days) == (0, 0)
    for raw, words in [
        ({"record_days": 3}, "retention.record_days: unknown key (known: records_days,"),
        ({"records_days": -1}, "retention.records_days: must be at least 0; got -1"),
        ({"logs_mib": 1.5}, "retention.logs_mib: must be an integer; got 1.5"),
        ({"published": "yes"}, "retention.published:"),
        ({"interval_s": 0}, "retention.interval_s: must be at least 1; got 0"),
        ({"records_days": 10**6}, "retention.records_days: must be at most 36500"),
    ]:
        with pytest.raises(CompetitionConfigError) as err:
            _config(**raw)
        assert str(err.value).startswith(f"test: {words}") and "\n" not in str(err.value)
    with pytest.raises(CompetitionConfigError, match=r"^test: retention: must be a table"):
        check_competition({"game": "whist", "retention": 3}, "test", "cup")


def test_file_names_map_back_to_their_match_or_validation() -> None:
    assert match_of_file(record_name("u12-r1")) == "u12-r1"
    assert match_of_file(seat_log_name("f3-r0", 2)) == "f3-r0"
    assert match_of_file("validation-3.log") is None
    assert match_of_file(".u1-r0.jsonl.gz.x1y2.tmp") is None
    assert match_of_file("x.seatA.log") is None
    assert validated_by(validation_log(7).split("/")[-1]) == 7
    assert validated_by(validation_match_id(7, 2)) == 7
    for other in ("u7-r0", "validate-7", "validate-x-1", "validation-.log", "validate-7-1-2"):
        assert validated_by(other) is None, other


# --- a pass over a real store and real files --------------------------------------------------


def test_the_age_limit_removes_what_is_over_and_old_and_keeps_the_rows(
    store: CompetitionStore,
) -> None:
    with store:
        pair = _pair(store)
        old = _unit(store, pair, "ladder", 10)
        young = _unit(store, pair, "ladder", 1)
        final = _unit(store, pair, "final", 10)
        half = _unit(store, pair, "ladder", 10, done=1)  # its second match still being played
        _file(store.directory, "records/notes.txt", 10)  # not the host's: left alone
        before = {m: store.match(m) for m in old + young + final + half}
        entries = store.rating_entries("ladder")

        report = prune(store, _config(records_days=5, logs_days=5))

        for match_id in old + half[:1]:
            assert _there(store.directory, match_id) == (False, [False] * 4), match_id
        for match_id in young + half[1:]:
            assert _there(store.directory, match_id) == (True, [True] * 4), match_id
        # The final's records are published results; its seat logs are not.
        for match_id in final:
            assert _there(store.directory, match_id) == (True, [False] * 4), match_id
        assert (store.directory / "records" / "notes.txt").is_file()
        assert report.kept_published == 2 and len(report.removed) == 3 * 5 + 2 * 4
        assert {r.why for r in report.removed} == {"age"}
        assert report.bytes == sum(r.bytes for r in report.removed) >= SIZE * len(report.removed)
        # Only the files went: every match, its result and the ratings are as they were.
        assert {m: store.match(m) for m in before} == before
        assert store.rating_entries("ladder") == entries
        for r in report.removed:
            assert store.pruned_at(r.path) is not None
        assert store.pruned_at(f"records/{record_name(young[0])}") is None
        # Nothing more to do.
        assert prune(store, _config(records_days=5, logs_days=5)).removed == ()


def test_published_true_lets_the_final_s_records_go(store: CompetitionStore) -> None:
    with store:
        final = _unit(store, _pair(store), "final", 10)
        assert prune(store, _config(records_days=5)).kept_published == 2
        assert all(_there(store.directory, m)[0] for m in final)
        report = prune(store, _config(records_days=5, published=True))
        assert sorted(r.path for r in report.removed) == [f"records/{m}.jsonl.gz" for m in final]
        assert not any(_there(store.directory, m)[0] for m in final)


def test_the_size_limit_removes_the_oldest_until_the_directory_fits(
    store: CompetitionStore,
) -> None:
    with store:
        pair = _pair(store)
        # 24 matches' records, 64 KiB each (1.5 MiB), each unit a day younger than the last.
        ids = [m for age in range(12, 0, -1) for m in _unit(store, pair, "ladder", age)]
        records = store.directory / "records"

        def on_disk() -> int:
            return sum(p.stat().st_blocks * 512 for p in records.iterdir())

        total = on_disk()
        assert total > 1024 * 1024
        report = prune(store, _config(records_mib=1))
        gone = [r.path for r in report.removed]
        assert {r.why for r in report.removed} == {"size"}
        # The oldest, and no more than needed: one fewer would leave it above the limit.
        assert gone == [f"records/{record_name(m)}" for m in ids[: len(gone)]]
        assert on_disk() <= 1024 * 1024 < on_disk() + report.removed[-1].bytes
        assert on_disk() == total - report.bytes and report.over == ()
        # Seat logs have no limit here.
        assert all(_there(store.directory, m)[1] == [True] * 4 for m in ids)


def test_an_event_s_records_are_published_results_too(store: CompetitionStore) -> None:
    with store:
        event = _unit(store, _pair(store), "event", 10)
        assert prune(store, _config(records_days=5)).kept_published == 2
        assert all(_there(store.directory, m)[0] for m in event)
        prune(store, _config(records_days=5, published=True))
        assert not any(_there(store.directory, m)[0] for m in event)


def test_a_limit_that_only_published_records_could_meet_is_said(store: CompetitionStore) -> None:
    with store:
        pair = _pair(store)
        for age in range(12, 0, -1):
            _unit(store, pair, "final", age)
        report = prune(store, _config(records_mib=1))
        assert report.removed == () and report.over == ("records",)
        assert report.kept_published > 0


def test_a_dry_run_removes_nothing_and_notes_nothing(store: CompetitionStore) -> None:
    with store:
        old = _unit(store, _pair(store), "ladder", 10)
        config = _config(records_days=5, logs_mib=1, logs_days=5)
        dry = prune(store, config, dry_run=True)
        assert dry.dry_run and len(dry.removed) == 10
        assert all(_there(store.directory, m) == (True, [True] * 4) for m in old)
        assert all(store.pruned_at(r.path) is None for r in dry.removed)
        assert prune(store, config).removed == dry.removed


def test_validation_files_go_once_the_validation_is_over(store: CompetitionStore) -> None:
    with store:
        author, _ = store.add_author("carol")
        done = store.add_version(author.id, "done", "archive", SHA, {"command": "x"})
        waiting = store.add_version(author.id, "waiting", "archive", SHA, {"command": "x"})
        store.set_status(waiting.id, "validating")
        store.set_status(done.id, "validating")
        store.set_status(done.id, "failed", "crashed", validation_log(done.id))
        for v in (done, waiting):
            match_id = validation_match_id(v.id, 1)
            for path in (
                validation_log(v.id),
                f"records/{record_name(match_id)}",
                f"logs/{seat_log_name(match_id, 0)}",
            ):
                _file(store.directory, path, 10)
        report = prune(store, _config(records_days=5, logs_days=5))
        assert sorted(r.path for r in report.removed) == sorted(
            [
                validation_log(done.id),
                f"records/{record_name(validation_match_id(done.id, 1))}",
                f"logs/{seat_log_name(validation_match_id(done.id, 1), 0)}",
            ]
        )
        assert (store.directory / validation_log(waiting.id)).is_file()


# --- the API ----------------------------------------------------------------------------------


def test_the_api_answers_a_pruned_file_410_and_the_match_as_before(tmp_path: Path) -> None:
    with hosting(tmp_path) as host:
        store = host.store
        author, token = store.add_author("alice")
        mine = store.add_version(author.id, "alpha", "archive", SHA, {"command": "x"})
        store.set_status(mine.id, "validating")
        mine = store.set_status(mine.id, "validated", log_path=validation_log(mine.id))
        other = _other(store)
        old = _unit(store, (mine.id, other.id), "ladder", 10)
        young = _unit(store, (mine.id, other.id), "ladder", 1)
        _file(store.directory, validation_log(mine.id), 10)
        _file(store.directory, f"records/{record_name(validation_match_id(mine.id, 1))}", 10)
        prune(store, _config(records_days=5, logs_days=5))

        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=host.url + "/api/v1", headers=auth) as api:
            pruned = [
                f"/matches/{old[0]}/record",
                f"/matches/{old[0]}/viewer",
                f"/matches/{old[0]}/logs/0",
                f"/versions/{mine.id}/log",
                f"/versions/{mine.id}/validation/{validation_match_id(mine.id, 1)}/record",
            ]
            for url in pruned:
                gone = api.get(url)
                assert gone.status_code == 410, (url, gone.text)
                detail = gone.json()["detail"]
                assert "was pruned by the host's retention (20" in detail, detail
            # The match itself, its result and its place in the list are as they were.
            match = api.get(f"/matches/{old[0]}")
            assert match.status_code == 200 and match.json()["summary"] == "A"
            assert old[0] in [m["match_id"] for m in api.get("/matches").json()]
            assert api.get(f"/versions/{mine.id}/validation").json() == []
            # What is kept is served; what never was is still 404.
            assert api.get(f"/matches/{young[0]}/record").status_code == 200
            assert api.get(f"/matches/{young[0]}/logs/0").status_code == 200
            assert api.get("/matches/u999-r0/record").status_code == 404


def _other(store: CompetitionStore) -> Version:
    author, _ = store.add_author("bob")
    v = store.add_version(author.id, "beta", "archive", SHA, {"command": "x"})
    store.set_status(v.id, "validating")
    return store.set_status(v.id, "validated")


# --- arena host prune, as a real process -------------------------------------------------------


def test_arena_host_prune_dry_then_for_real_and_its_refusals(tmp_path: Path) -> None:
    path = tmp_path / "cup.toml"
    path.write_text('game = "whist"\n[retention]\nrecords_days = 5\n')
    directory = tmp_path / "cup"
    missing = arena_host("prune", path)
    assert missing.returncode == 2 and "no competition.sqlite here" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    config = check_competition({"game": "whist"}, "test", "cup")
    with CompetitionStore(directory, config) as store:
        old = _unit(store, _pair(store), "ladder", 10)
        # While a host holds the directory: one line, nothing removed.
        held = arena_host("prune", path)
        assert held.returncode == 2 and "its host is running" in held.stderr, held.stderr
        assert len(held.stderr.strip().splitlines()) == 1
    records = [f"records/{record_name(m)}" for m in old]

    dry = arena_host("prune", path, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert all(r in dry.stdout for r in records) and "would remove 2 files" in dry.stdout
    assert all(_there(directory, m)[0] for m in old)
    done = arena_host("prune", path, "--dir", directory, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert sorted(r["path"] for r in out["removed"]) == records and not out["dry_run"]
    assert not any(_there(directory, m)[0] for m in old)
    # A config without limits keeps everything, and says so.
    (tmp_path / "keep.toml").write_text('game = "whist"\n')
    kept = arena_host("prune", tmp_path / "keep.toml", "--dir", directory)
    assert kept.returncode == 0 and "removed 0 files" in kept.stdout
    assert "sets no [retention] limit: everything is kept" in kept.stderr


# --- a real host, pruning on its own -----------------------------------------------------------


@pytest.mark.slow
def test_a_running_host_prunes_on_its_own(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config(extra="[retention]\nrecords_days = 1\ninterval_s = 1\n"))
    host = Host(config, tmp_path / "cup", None)
    with host.running(), host.client() as api:
        for name in ("alice", "bob"):
            host.submit_as_new_author(name, GOOD_BOT)

        def published() -> str | None:
            found = [m for m in api.get("/api/v1/matches").json() if m["record_available"]]
            return found[0]["match_id"] if found else None

        match_id = wait_until(published, 240, what="a ladder match with its record")
        record = host.directory / "records" / record_name(match_id)
        assert api.get(f"/api/v1/matches/{match_id}/record").status_code == 200
        # Its record written two days ago, as far as the host can tell.
        when = time.time() - 2 * DAY
        os.utime(record, (when, when))
        wait_until(lambda: not record.exists(), 60, what="the host to prune the record")
        gone = api.get(f"/api/v1/matches/{match_id}/record")
        assert gone.status_code == 410 and "pruned by the host's retention" in gone.text
        assert api.get(f"/api/v1/matches/{match_id}").status_code == 200
        assert api.get("/healthz").json()["parts"]["retention"] == "running"
