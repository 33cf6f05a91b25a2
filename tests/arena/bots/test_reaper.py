"""Nothing the arena starts outlives it (arena/bots/reaper.py).

The main test kills ``arena tournament`` with SIGKILL a few milliseconds after a bot's bwrap
appears, again and again at varied delays (the kill lands at different points of a box's start,
where bwrap's own ``--die-with-parent`` does not hold yet), and each time waits for every process
of the run to go, for every cgroup they were in to be removed, and for the run's temporary
directory to be removed. The run's processes are found by a mark in their environment: an
``ARENA_*`` variable, which the sandbox passes on to its bots.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.bots.reaper import CGROUP_ROOT, GROUP_PREFIX, bot_run, hierarchies, reap
from tests.waiting import wait_until

ARENA = str(Path(sys.executable).parent / "arena")
#: The environment variable that marks every process of one run.
MARK = "ARENA_REAPER_TEST"
#: Kills, and the delay after a bwrap appears before each (cycled).
KILLS = 16
DELAYS_MS = (0, 1, 2, 3, 4, 6, 8, 10, 12, 15)
#: The bots of `arena match`.
BOTS = ("--bot", "arena bot random", "--bot", "arena bot rules")


def _config(then: str = "") -> str:
    """Two bots, two matches at once (bwraps start all through the run); ``then`` follows each
    bot's command (``; exec sleep 600``: a bot that stays on once its server is gone)."""
    bots = "".join(
        f'[[bots]]\nname = "{name}"\ncommand = "arena bot {name}{then}"\n'
        for name in ("random", "rules")
    )
    return (
        'game = "tennis"\nseed = 5\nmatches_per_pairing = 4\nduplicate = false\n'
        f"concurrency = 2\n[options]\nsets_to_win = 1\n{bots}"
    )


def _marked(mark: str) -> list[tuple[int, str]]:
    """The live processes (zombies are gone, their parent's to reap) carrying ``mark``: pid and
    command line."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if needle not in Path(entry.path, "environ").read_bytes().split(b"\0"):
                continue
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if state != "Z":
            found.append((int(entry.name), cmdline.strip()))
    return found


def _cgroups_of(pid: int) -> set[Path]:
    """The arena's cgroups that process ``pid`` is in."""
    groups: set[Path] = set()
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if GROUP_PREFIX not in path:
            continue
        base = CGROUP_ROOT if not controllers else CGROUP_ROOT / controllers.split(",")[0]
        groups.add(base / path.lstrip("/"))
    return groups


def _box_starting(mark: str, bots_only: bool) -> bool:
    """Whether a bwrap of a box (the bot's, or, unless ``bots_only``, a command check's) runs."""
    return any(
        "bwrap" in cmd.split(" ", 1)[0]
        and "--die-with-parent" in cmd
        and (not bots_only or "arena bot" in cmd)
        for _, cmd in _marked(mark)
    )


def _leftovers(mark: str, arena_pid: int, tmp: Path, groups: set[Path]) -> list[str]:
    """What of the run is still there."""
    named = [p for root in hierarchies() for p in root.glob(f"{GROUP_PREFIX}*-{arena_pid}-*")]
    return (
        [f"process {pid}: {cmd[:120]}" for pid, cmd in _marked(mark)]
        + [f"cgroup {g}" for g in sorted(groups | set(named)) if g.exists()]
        + [f"directory {d}" for d in sorted(tmp.glob("arena-*"))]
    )


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR of the test's own, short enough for the socket's path (at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="reap-", dir="/tmp"))
    yield path
    for leftover in path.glob("arena-*"):  # only when the test failed
        subprocess.run(["rm", "-rf", str(leftover)], check=False)
    path.rmdir()


def _bot_starting(mark: str) -> bool:
    """Whether an unboxed bot (``--no-sandbox``) of the run runs."""
    return any("arena bot" in cmd for _, cmd in _marked(mark))


def _kill_during_a_launch(
    kill: int, where: Path, tmp: Path, sandboxed: bool = True
) -> tuple[str, int, set[Path]]:
    """Start ``arena tournament`` in ``where``, SIGKILL it a few ms after a bwrap (or, not
    ``sandboxed``, a bot) appears; the run's mark, the arena's pid and the cgroups its processes
    were in at the kill."""
    mark = secrets.token_hex(6)
    flags = [] if sandboxed else ["--no-sandbox"]
    proc = subprocess.Popen(
        [ARENA, "tournament", "t.toml", "--out", f"out{kill}", "--quiet", *flags],
        cwd=where,
        env={**os.environ, "TMPDIR": str(tmp), MARK: mark},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # Every other kill waits for a bot's own box; the others may land on the box that checks
        # the bots' commands first.
        wait_until(
            lambda: _box_starting(mark, kill % 2 == 1) if sandboxed else _bot_starting(mark),
            60,
            interval=0.001,
            what=f"kill {kill}: a bwrap of the run",
        )
        # Not a wait: how long after the bwrap appeared the kill lands is what the test varies.
        time.sleep(DELAYS_MS[kill % len(DELAYS_MS)] / 1000)
        groups = {g for pid, _ in _marked(mark) for g in _cgroups_of(pid)}
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        assert proc.stderr is not None
        errors = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    assert "Traceback" not in errors, errors
    return mark, proc.pid, groups


def _assert_all_gone(kill: int, mark: str, pid: int, tmp: Path, groups: set[Path]) -> None:
    """Wait, for a bounded time, until nothing of the killed run is left."""
    try:
        wait_until(
            lambda: not _leftovers(mark, pid, tmp, groups),
            15,
            what="the run's processes, cgroups and directory to go",
        )
    except AssertionError:
        left = "; ".join(_leftovers(mark, pid, tmp, groups))
        for stray, _ in _marked(mark):  # what the test started and the arena did not stop
            with contextlib.suppress(OSError):
                os.kill(stray, signal.SIGKILL)
        delay = DELAYS_MS[kill % len(DELAYS_MS)]
        pytest.fail(f"kill {kill} ({delay} ms into a launch) left: {left}")


@pytest.mark.slow
def test_killing_the_arena_during_bot_launches_leaves_nothing(
    tmp_path: Path, short_tmp: Path
) -> None:
    (tmp_path / "t.toml").write_text(_config())
    for kill in range(KILLS):
        mark, pid, groups = _kill_during_a_launch(kill, tmp_path, short_tmp)
        _assert_all_gone(kill, mark, pid, short_tmp, groups)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="unboxed bots are found by cgroup, root's only")
def test_killing_the_arena_leaves_no_unboxed_bot(tmp_path: Path, short_tmp: Path) -> None:
    """With --no-sandbox too: the bots' processes are in the run's cgroup, and go with it, even
    a bot that stays on once its server is gone."""
    (tmp_path / "t.toml").write_text(_config("; exec sleep 600"))
    for kill in range(4):
        mark, pid, groups = _kill_during_a_launch(kill, tmp_path, short_tmp, sandboxed=False)
        _assert_all_gone(kill, mark, pid, short_tmp, groups)


@pytest.mark.slow
def test_a_finished_run_leaves_nothing(tmp_path: Path, short_tmp: Path) -> None:
    """At a normal end too the arena waits for its reaper: no directory, no cgroup is left."""
    mark = secrets.token_hex(6)
    proc = subprocess.Popen(
        [ARENA, "match", "tennis", "--option", "sets_to_win=1", "--out", "out", *BOTS],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(short_tmp), MARK: mark},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0, errors
    assert _leftovers(mark, proc.pid, short_tmp, set()) == []


def _pid_namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


@pytest.mark.skipif(os.geteuid() != 0 or not hierarchies(), reason="only root may make cgroups")
def test_the_next_run_sweeps_what_a_dead_run_left() -> None:
    """Should a run's reaper die with its arena, the next run kills what is left in the dead
    run's cgroup (named for an arena pid that no longer runs) and removes it."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    name = f"{GROUP_PREFIX}{_pid_namespace()}-{gone.pid}-{secrets.token_hex(4)}"
    runs = [root / name for root in hierarchies()]
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        for run in runs:
            (run / "bot").mkdir(parents=True)
        (runs[0] / "bot" / "cgroup.procs").write_text(str(sleeper.pid))
        with bot_run():
            pass
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        assert not any(run.exists() for run in runs)
    finally:
        sleeper.kill()
        sleeper.wait()
        reap(runs, 1.0)


def _unified_mount() -> Path | None:
    """A cgroup v2 hierarchy this test may write: the root, or a hybrid machine's ``unified``."""
    for path in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (path / "cgroup.controllers").exists() and os.access(path, os.W_OK):
            return path
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may make cgroups")
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_reap_kills_a_group_tree_and_removes_it(version: str) -> None:
    """Processes anywhere below a run's cgroup are killed, and the cgroups removed, on v1 (one
    process at a time) and v2 (cgroup.kill) alike."""
    root = _unified_mount() if version == "v2" else CGROUP_ROOT / "pids"
    if root is None or not (root / "cgroup.procs").exists():
        pytest.skip(f"no cgroup {version} hierarchy here")
    run = root / f"{GROUP_PREFIX}test-{secrets.token_hex(4)}"
    (run / "bot" / "inner").mkdir(parents=True)
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        (run / "bot" / "cgroup.procs").write_text(str(sleepers[0].pid))
        (run / "bot" / "inner" / "cgroup.procs").write_text(str(sleepers[1].pid))
        assert reap([run], 5.0) == []
        assert [s.wait(timeout=10) for s in sleepers] == [-signal.SIGKILL] * 2
        assert not run.exists()
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
        reap([run], 1.0)
