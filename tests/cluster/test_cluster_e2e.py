"""Tournaments on a real Dask cluster: a ``dask scheduler`` process and two ``arena worker``
processes on loopback, the coordinator an ``arena tournament --dask`` process.

Each test checks the cluster's run against the same tournament played locally: the same results
table, every match stored once, its record and its seat logs where a local run puts them.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import tarfile
from pathlib import Path

import pytest
from distributed import Client

from arena.cluster.bundles import bundle_bot
from arena.snapshots.tree import Snapshot
from tests.cluster.harness import (
    ARENA,
    Cluster,
    certificates,
    ratings_json,
    run_arena,
    running_cluster,
)
from tests.waiting import wait_until

#: A real Dask scheduler and workers: `make test-cluster` runs these, not `make test`.
pytestmark = [pytest.mark.slow, pytest.mark.cluster]

TALKER = """\
import sys
from cardarena import RandomBot, run_bot
print("talker up", file=sys.stderr, flush=True)
run_bot(RandomBot())
"""

CONFIG = """\
name = "cl"
game = "whist"
matches_per_pairing = {matches}
duplicate = true
seed = 5
concurrency = 2
output = "{out}"
[options]
points_to_win = 5
games_per_rubber = 1
[[bots]]
name = "talker"
command = "python bots/talker.py"
[[bots]]
name = "rules"
"""


def project(root: Path, out: str, matches: int = 12) -> Path:
    """A bot author's directory: a bot of its own (a file the workers must receive) and a
    config naming it."""
    (root / "bots").mkdir(parents=True, exist_ok=True)
    (root / "bots" / "talker.py").write_text(TALKER)
    config = root / f"{out}.toml"
    config.write_text(CONFIG.format(matches=matches, out=out))
    return config


def done_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return int(
                con.execute("SELECT COUNT(*) FROM matches WHERE status='done'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


def stored(db: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT match_id, status, record_path FROM matches").fetchall()
    return [(str(a), str(b), c) for a, b, c in rows]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The tournament's results table, played here without a cluster."""
    root = tmp_path_factory.mktemp("local")
    config = project(root, "local")
    done = run_arena("tournament", str(config), "--quiet", cwd=root)
    assert done.returncode == 0, done.stderr
    return ratings_json(root / "local", root)


def check_complete(root: Path, out: str, local: dict[str, object]) -> None:
    rows = stored(root / out / "results.sqlite")
    assert len(rows) == 12
    assert all(status == "done" for _, status, _ in rows), rows
    for match_id, _, record in rows:
        assert record is not None and (root / out / record).is_file(), match_id
    assert ratings_json(root / out, root) == local


def test_a_tournament_on_the_cluster_equals_the_local_run(
    tmp_path: Path, local: dict[str, object]
) -> None:
    with running_cluster(tmp_path / "cluster") as cluster:
        config = project(tmp_path, "remote")
        done = run_arena(
            "tournament", str(config), "--dask", cluster.address, "--quiet", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        check_complete(tmp_path, "remote", local)
        if cluster.net is not None:  # as separate hosts: a network namespace each
            spaces = {os.readlink(f"/proc/{p.pid}/ns/net") for p in cluster.workers.values()}
            assert len(spaces) == 2 and os.readlink("/proc/self/ns/net") not in spaces
        # Both workers played, each from its own verified copy of the bot's files.
        for name in ("w1", "w2"):
            cache = tmp_path / "cluster" / name / "snapshots"
            assert any((p / "bots" / "talker.py").is_file() for p in cache.iterdir()), name
        # The talker's words reached the coordinator: its seat's log of its first match there.
        logs = list((tmp_path / "remote" / "logs").glob("*.log"))
        assert any("talker up" in p.read_text() for p in logs)
        # Run again: nothing left to play, the same table.
        again = run_arena(
            "tournament", str(config), "--dask", cluster.address, "--json", cwd=tmp_path
        )
        assert again.returncode == 0, again.stderr
        assert ratings_json(tmp_path / "remote", tmp_path) == local


def started_run(tmp_path: Path, cluster: Cluster) -> tuple[Path, subprocess.Popen[str], Path]:
    """The tournament running on ``cluster``, two of its matches stored: its config, its
    process, its store."""
    config = project(tmp_path, "remote")
    run = subprocess.Popen(
        [ARENA, "tournament", str(config), "--dask", cluster.address, "--quiet"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    db = tmp_path / "remote" / "results.sqlite"
    wait_until(lambda: done_count(db) >= 2, 120, what="two matches stored")
    return config, run, db


def test_a_worker_killed_mid_tournament_loses_and_doubles_nothing(
    tmp_path: Path, local: dict[str, object]
) -> None:
    with running_cluster(tmp_path / "cluster") as cluster:
        _, run, db = started_run(tmp_path, cluster)
        cluster.kill_mid_match("w1")
        assert done_count(db) < 12, "the tournament ended before the kill"
        _, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        check_complete(tmp_path, "remote", local)


def test_a_match_whose_workers_keep_dying_fails_with_the_reason(
    tmp_path: Path, local: dict[str, object]
) -> None:
    # Dask retries a match whose worker died `allowed-failures` times: none, here.
    never = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    with running_cluster(tmp_path / "cluster", scheduler_env=never) as cluster:
        _, run, db = started_run(tmp_path, cluster)
        cluster.kill_mid_match("w1")
        _, err = run.communicate(timeout=600)
        assert run.returncode == 2, err
        assert "Traceback" not in err, err
        line = err.strip().splitlines()[-1]
        assert "could not be played" in line and "its workers died while playing it" in line
        assert "run the same command again to retry" in line
        assert done_count(db) < 12
        # Not retried forever, not lost: the same command plays it.
        cluster.start_worker("w1")
        cluster.wait_for_workers(["w1", "w2"])
        config = tmp_path / "remote.toml"
        again = run_arena("tournament", str(config), "--dask", cluster.address, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        check_complete(tmp_path, "remote", local)


def test_the_scheduler_lost_stops_the_run_in_one_line_and_rerunning_resumes(
    tmp_path: Path, local: dict[str, object]
) -> None:
    with running_cluster(tmp_path / "cluster") as cluster:
        config, run, db = started_run(tmp_path, cluster)
        assert cluster.scheduler is not None
        cluster.kill(cluster.scheduler)
        _, err = run.communicate(timeout=120)
        assert run.returncode == 2, err
        assert "Traceback" not in err, err
        lines = err.strip().splitlines()
        assert lines[-1].startswith("arena: error: lost the Dask scheduler"), err
        assert 2 <= done_count(db) < 12
        # The scheduler back on its address: the workers rejoin by themselves.
        cluster.start_scheduler()
        cluster.wait_for_workers(["w1", "w2"])
        for name in ("w1", "w2"):
            assert "lost the scheduler" in cluster.worker_log(name)
        again = run_arena(
            "tournament", str(config), "--dask", cluster.address, "--quiet", cwd=tmp_path
        )
        assert again.returncode == 0, again.stderr
        check_complete(tmp_path, "remote", local)


def talker_snapshot(root: Path) -> Snapshot:
    """The talker's snapshot, made as the coordinator makes it: its address is the one the
    workers are asked for."""
    return bundle_bot("talker", "python bots/talker.py", ["bots/talker.py"], root / "s", root)


def test_a_changed_snapshot_is_never_run(tmp_path: Path, local: dict[str, object]) -> None:
    config = project(tmp_path, "first")
    snap = talker_snapshot(tmp_path)
    with running_cluster(tmp_path / "cluster") as cluster:
        done = run_arena(
            "tournament", str(config), "--dask", cluster.address, "--quiet", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        # On w1's disk, the cached copy is changed while it is stopped.
        cluster.workers["w1"].send_signal(signal.SIGTERM)
        cluster.workers["w1"].wait(timeout=30)
        cached = tmp_path / "cluster" / "w1" / "snapshots" / snap.sha256 / "bots" / "talker.py"
        assert cached.is_file()
        cached.chmod(0o644)
        cached.write_text(TALKER.replace("RandomBot()", "RandomBot()  # changed"))
        cluster.start_worker("w1")
        cluster.wait_for_workers(["w1", "w2"])
        second = project(tmp_path, "second")
        done = run_arena(
            "tournament", str(second), "--dask", cluster.address, "--quiet", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert ratings_json(tmp_path / "second", tmp_path) == local
        # The changed copy was thrown away and the bot fetched again, verified.
        assert "cached snapshot changed" in cluster.worker_log("w1")
        assert "changed" not in cached.read_text()


def rogue_archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("cardarena.toml", b'command = "arena bot random"\n'),):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_worker_refuses_a_snapshot_that_does_not_match_its_address(tmp_path: Path) -> None:
    config = project(tmp_path, "remote", matches=2)
    snap = talker_snapshot(tmp_path)
    with running_cluster(tmp_path / "cluster") as cluster:
        # Another client of the scheduler offers other files under the talker's key first.
        with Client(cluster.address, timeout=10, set_as_default=False) as rogue:
            # (bytes: a function the scheduler and workers can import, as the test's cannot.)
            held = rogue.submit(
                bytes, rogue_archive(), key=f"cardarena-snapshot-{snap.sha256}", pure=False
            )
            held.result(timeout=60)
            done = run_arena(
                "tournament", str(config), "--dask", cluster.address, "--quiet", cwd=tmp_path
            )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert "could not be played" in line and "does not match its address" in line, line
        rows = stored(tmp_path / "remote" / "results.sqlite")
        assert all(status == "pending" for _, status, _ in rows), rows
        for name in ("w1", "w2"):
            assert not (tmp_path / "cluster" / name / "snapshots" / snap.sha256).exists()


def test_arena_worker_without_a_sandbox_says_so_in_one_line(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    done = subprocess.run(
        [ARENA, "worker", "--scheduler", cluster.address, "--dir", str(tmp_path / "w")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": str(tmp_path / "empty")},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "bwrap is not installed" in line and "--no-sandbox" in line, line


def test_dask_with_no_scheduler_there_is_one_line(tmp_path: Path) -> None:
    config = project(tmp_path, "remote", matches=2)
    cluster = Cluster(tmp_path)  # nothing started: its port is closed
    done = run_arena("tournament", str(config), "--dask", cluster.address, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"arena: error: cannot reach the Dask scheduler at {cluster.address}")
    )


def test_an_sprt_on_the_cluster_decides_as_it_does_here(tmp_path: Path) -> None:
    whist = ["--game", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1"]
    args = [*whist, "--candidate", "rules", "--baseline", "random", "--elo1", "50", "--seed", "3"]
    here = run_arena("sprt", *args, "--out", "here", "--json", "--quiet", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    with running_cluster(tmp_path / "cluster") as cluster:
        there = run_arena(
            "sprt",
            *args,
            "--out",
            "there",
            "--json",
            "--quiet",
            "--dask",
            cluster.address,
            cwd=tmp_path,
        )
    assert there.returncode == 0, there.stderr
    local, remote = json.loads(here.stdout), json.loads(there.stdout)
    assert local["verdict"] == remote["verdict"] == "H1"
    assert remote["llr"] >= remote["bounds"][1]
    assert done_count(tmp_path / "there" / "results.sqlite") >= 2 * remote["units"]


def test_a_cluster_on_tls_plays_the_same(tmp_path: Path, local: dict[str, object]) -> None:
    tls = certificates(tmp_path / "certs")
    with running_cluster(tmp_path / "cluster", tls=tls) as cluster:
        assert cluster.address.startswith("tls://")
        config = project(tmp_path, "remote")
        done = run_arena(
            "tournament",
            str(config),
            "--dask",
            cluster.address,
            "--quiet",
            cwd=tmp_path,
            env=cluster.client_env(),
        )
        assert done.returncode == 0, done.stderr
        check_complete(tmp_path, "remote", local)
        # Without the certificates the coordinator is not let in.
        plain = run_arena("tournament", str(config), "--dask", cluster.address, cwd=tmp_path)
        assert plain.returncode == 2, plain.stderr
        assert "Traceback" not in plain.stderr
        assert "speaks TLS: give the coordinator Dask's TLS settings" in plain.stderr


STDIO_CONFIG = """\
name = "st"
game = "whist"
matches_per_pairing = 2
duplicate = true
seed = 9
output = "{out}"
[options]
points_to_win = 3
games_per_rubber = 1
[[bots]]
name = "piper"
command = "python3 bots/random_bot.py"
protocol = "stdio"
[[bots]]
name = "rules"
"""


def test_a_stdio_bot_plays_on_the_cluster_as_it_does_here(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    bot = Path(__file__).parents[2] / "reference_bots" / "stdio" / "random_bot.py"
    (tmp_path / "bots" / "random_bot.py").write_bytes(bot.read_bytes())
    for out in ("here", "there"):
        (tmp_path / f"{out}.toml").write_text(STDIO_CONFIG.format(out=out))
    done = run_arena("tournament", "here.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with running_cluster(tmp_path / "cluster") as cluster:
        done = run_arena(
            "tournament", "there.toml", "--dask", cluster.address, "--quiet", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        # The workers got the bot's file and its protocol, and played it over its pipes.
        manifests = [
            (p / "cardarena.toml").read_text()
            for name in ("w1", "w2")
            for p in (tmp_path / "cluster" / name / "snapshots").iterdir()
            if (p / "bots" / "random_bot.py").is_file()
        ]
        assert manifests and all('protocol = "stdio"' in m for m in manifests)
    rows = stored(tmp_path / "there" / "results.sqlite")
    assert rows and all(status == "done" for _, status, _ in rows), rows
    assert ratings_json(tmp_path / "there", tmp_path) == ratings_json(tmp_path / "here", tmp_path)
