"""A competition on a real Dask cluster: an ``arena host`` process whose config names the
scheduler of a ``running_cluster`` (a ``dask scheduler`` and two ``arena worker`` processes), with
versions submitted over its API. Their ladder matches are played by the workers (each fetched the
versions' snapshots), and the host stores their results and writes their records and seat logs
where a local match's go."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.cluster.harness import Cluster, running_cluster
from tests.waiting import wait_until

#: A real Dask scheduler and workers: `make test-cluster` runs these, not `make test`.
pytestmark = [pytest.mark.slow, pytest.mark.cluster]

CONFIG = competition_config(extra='[workers]\ndask = "{address}"\n')

OCTET = {"Content-Type": "application/octet-stream"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with running_cluster(tmp_path / "cluster") as c:
        yield c


@pytest.fixture
def host(tmp_path: Path, cluster: Cluster) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG.format(address=cluster.address))
    h = Host(config, tmp_path / "cup", None)
    h.start()
    try:
        yield h
    finally:
        h.stop()


def done_matches(directory: Path) -> list[tuple[str, dict[str, Any], str]]:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT match_id, result, record_path FROM matches WHERE state = 'done'"
        ).fetchall()
    finally:
        con.close()
    return [(str(m), json.loads(r), str(p)) for m, r, p in rows]


def test_ladder_matches_are_played_on_the_workers(host: Host, cluster: Cluster) -> None:
    alice, bob = host.add_author("alice"), host.add_author("bob")
    with host.client(alice) as a, host.client(bob) as b:
        va = a.put("/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET)
        vb = b.put(
            "/api/v1/bots/beta/versions", content=bot_archive(GOOD_BOT + b"# beta\n"), headers=OCTET
        )
        assert va.status_code == vb.status_code == 201, (va.text, vb.text)
        shas = {va.json()["sha256"], vb.json()["sha256"]}

        def rated() -> set[str]:
            rows = a.get("/api/v1/leaderboard").json()
            return {r["ref"] for r in rows if r["matches"] > 0}

        wait_until(lambda: rated() >= {"alpha@1", "beta@1"}, 240, what="both versions to be rated")
    # The workers played them: each version's snapshot reached a worker's cache, verified.
    cached = {
        p.name
        for name in ("w1", "w2")
        if (cluster.directory / name / "snapshots").is_dir()
        for p in (cluster.directory / name / "snapshots").iterdir()
    }
    assert shas <= cached, (shas, cached)
    # The host stored the results, and wrote each record and seat log where a local match's go.
    done = [m for m in done_matches(host.directory) if m[0].startswith("u")]
    assert done
    for match_id, result, record in done:
        assert record == f"records/{match_id}.jsonl.gz"
        assert (host.directory / record).is_file(), match_id
        assert result["reason"] != "error", result
        assert (host.directory / "logs" / f"{match_id}.seat0.log").is_file(), match_id
    out = host.terminate()
    assert "Traceback" not in out, out


def test_a_lost_scheduler_pauses_the_cluster_matches_and_the_host_plays_on(
    host: Host, cluster: Cluster
) -> None:
    alice, bob = host.add_author("alice"), host.add_author("bob")
    with host.client(alice) as a, host.client(bob) as b:
        a.put("/api/v1/bots/alpha/versions", content=bot_archive(GOOD_BOT), headers=OCTET)
        b.put(
            "/api/v1/bots/beta/versions", content=bot_archive(GOOD_BOT + b"# beta\n"), headers=OCTET
        )
        wait_until(lambda: done_matches(host.directory), 240, what="a first ladder match")
        assert cluster.scheduler is not None
        cluster.kill(cluster.scheduler)
        before = len(done_matches(host.directory))
        # The host keeps serving while the scheduler is gone.
        assert a.get("/api/v1/leaderboard").status_code == 200
        cluster.start_scheduler()  # same port: the workers and the host join it again
        wait_until(
            lambda: len(done_matches(host.directory)) > before + 2,
            240,
            what="the ladder to play on once the scheduler is back",
        )
        units = a.get("/api/v1/matches", params={"limit": 1000}).json()
        assert units
    con = sqlite3.connect(f"file:{host.directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        failed = con.execute("SELECT COUNT(*) FROM units WHERE state = 'failed'").fetchone()[0]
    finally:
        con.close()
    assert failed == 0  # a lost scheduler is not a failed attempt
    out = host.terminate()
    assert "cluster lost: its matches wait for it" in out, out
    assert "Traceback" not in out, out
