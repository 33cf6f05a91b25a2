"""The cluster's parts without a cluster: bundles, the worker's snapshot cache, its refusals, the
coordinator's limit on matches in flight."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import trio

from arena.bots.sandbox import default_limits
from arena.cluster.bundles import BundleError, SnapshotCache, bundle_bot, named_files, pack_snapshot
from arena.cluster.coordinator import _Capacity
from arena.cluster.service import MatchService, TaskRefused
from arena.cluster.task import BotRef, ClusterLost, ClusterMatch
from arena.rules import MatchRules
from arena.snapshots.tree import SnapshotError, verify_snapshot
from tests.arena.run_arena import arena_error


@pytest.fixture
def author(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bot author's directory, the current one: a bot in two files."""
    (tmp_path / "mybot").mkdir()
    (tmp_path / "mybot" / "main.py").write_text("import helper\n")
    (tmp_path / "mybot" / "helper.py").write_text("X = 1\n")
    (tmp_path / "mybot" / "__pycache__").mkdir()
    (tmp_path / "mybot" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\0")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_bundle_holds_the_command_and_the_files_it_names(author: Path) -> None:
    assert named_files("python mybot/main.py --fast /usr/bin/env") == ["mybot/main.py"]
    snap = bundle_bot("b", "python mybot/main.py", ["mybot"], author / "snaps")
    assert snap.manifest.command == "python mybot/main.py"
    assert (snap.root / "mybot" / "helper.py").read_text() == "X = 1\n"
    assert not (snap.root / "mybot" / "__pycache__").exists()
    # Content-addressed: the same files give the same address, anywhere.
    again = bundle_bot("b", "python mybot/main.py", ["mybot"], author / "other")
    assert again.sha256 == snap.sha256
    (author / "mybot" / "helper.py").write_text("X = 2\n")
    assert bundle_bot("b", "python mybot/main.py", ["mybot"], author / "o2").sha256 != snap.sha256


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "nosuch"])
def test_a_bundle_refuses_files_outside_or_missing(author: Path, path: str) -> None:
    with pytest.raises(BundleError, match='bot "b": its files cannot go to the cluster'):
        bundle_bot("b", "python mybot/main.py", [path], author / "snaps")


def test_a_packed_snapshot_unpacks_on_a_worker_to_the_same_address(author: Path) -> None:
    snap = bundle_bot("b", "python3 mybot/main.py", ["mybot"], author / "snaps")
    data = pack_snapshot(snap)
    cache = SnapshotCache(author / "worker")
    fetched: list[str] = []

    def fetch(key: str) -> bytes:
        fetched.append(key)
        return data

    ref = BotRef(snap.sha256, "k")
    program = cache.program(ref, fetch)
    assert program.command == "python3 mybot/main.py"
    assert Path(program.workdir) == author / "worker" / snap.sha256
    assert verify_snapshot(Path(program.workdir))
    cache.program(ref, fetch)
    assert fetched == ["k"]  # fetched on first use only
    # A new worker process finds the copy on disk changed: thrown away, fetched again.
    changed = author / "worker" / snap.sha256 / "mybot" / "helper.py"
    changed.chmod(0o644)
    changed.write_text("X = 3\n")
    fresh = SnapshotCache(author / "worker")
    fresh.program(ref, fetch)
    assert fetched == ["k", "k"]
    assert changed.read_text() == "X = 1\n"


def test_a_worker_refuses_files_that_do_not_hash_to_the_address(author: Path) -> None:
    snap = bundle_bot("b", "python3 mybot/main.py", ["mybot"], author / "snaps")
    other = bundle_bot("c", "python3 mybot/helper.py", ["mybot"], author / "snaps")
    cache = SnapshotCache(author / "worker")
    with pytest.raises(SnapshotError, match="does not match its address"):
        cache.program(BotRef(snap.sha256, "k"), lambda _key: pack_snapshot(other))
    assert not (author / "worker" / snap.sha256).exists()
    assert not (author / "worker" / other.sha256).exists()
    with pytest.raises(SnapshotError, match="from the cluster is refused"):
        cache.program(BotRef(snap.sha256, "k"), lambda _key: b"not an archive")


def test_a_snapshot_whose_command_cannot_start_here_is_refused(author: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b'command = "nosuch-runtime main.py"\n'
        info = tarfile.TarInfo("cardarena.toml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    cache = SnapshotCache(author / "worker")
    with pytest.raises(SnapshotError, match="refused"):
        cache.program(BotRef("0" * 64, "k"), lambda _key: buf.getvalue())


def _task(**changes: object) -> ClusterMatch:
    fields: dict[str, object] = {
        "run": "r",
        "run_seed": 1,
        "match_id": "m",
        "rules": MatchRules.of("whist"),
        "seed": 1,
        "seats": ("a", "a", "a", "a"),
        "bots": {"a": BotRef("0" * 64, "k")},
    }
    fields.update(changes)
    return ClusterMatch(**fields)  # type: ignore[arg-type]


def test_a_worker_refuses_a_task_it_cannot_play_as_asked(tmp_path: Path) -> None:
    service = MatchService(tmp_path, sandbox=False, name=lambda: "w9")
    with pytest.raises(
        TaskRefused, match=r"worker w9 runs arena .*, the coordinator 0\.0\.0-other"
    ):
        service.play(_task(version="0.0.0-other"), {})
    with pytest.raises(TaskRefused, match="worker w9 runs bots unsandboxed"):
        service.play(_task(sandbox=default_limits()), {})
    with pytest.raises(TaskRefused, match="did not bring snapshot k"):
        service.play(_task(), {})


def test_matches_in_flight_never_exceed_the_workers_slots() -> None:
    slots = {"now": 2}
    peak = {"in": 0, "max": 0}

    async def main() -> None:
        capacity = _Capacity(lambda: slots["now"], lambda: True, "tcp://x:1")

        async def match() -> None:
            await capacity.acquire()
            peak["in"] += 1
            peak["max"] = max(peak["max"], peak["in"])
            await trio.sleep(0.01)
            peak["in"] -= 1
            capacity.release()

        async with trio.open_nursery() as n:
            for _ in range(6):
                n.start_soon(match)
        assert peak["max"] == 2
        slots["now"] = 3  # a worker joined
        peak["max"] = 0
        async with trio.open_nursery() as n:
            for _ in range(9):
                n.start_soon(match)
        assert peak["max"] == 3

    trio.run(main)


def test_a_tournament_and_the_host_import_no_dask() -> None:
    code = (
        "import sys, arena.tournament.runner, arena.host.service, arena.cli.main; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.stdout.strip() == "[]"


def test_a_lost_cluster_gives_no_slot() -> None:
    async def main() -> None:
        capacity = _Capacity(lambda: 4, lambda: False, "tcp://sched:8786")
        with pytest.raises(ClusterLost, match="lost the Dask scheduler at tcp://sched:8786"):
            await capacity.acquire()

    trio.run(main)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--slots", "0"], "--slots must be at least 1; got 0"),
        (["--tls-cert", "c.pem"], "TLS needs all three of --tls-ca-file, --tls-cert and --tls-key"),
        (
            ["--tls-ca-file", "a", "--tls-cert", "b", "--tls-key", "c"],
            "TLS file 'a' not found",
        ),
    ],
)
def test_arena_worker_refuses_bad_flags_in_one_line(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    line = arena_error(
        "worker",
        "--scheduler",
        "tcp://127.0.0.1:1",
        "--no-sandbox",
        "--dir",
        "w",
        *args,
        cwd=tmp_path,
    )
    assert line == f"arena: error: {expected}", line
