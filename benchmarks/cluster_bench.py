"""Section: the tournament on a Dask cluster (``arena tournament --dask``) beside the local run.

The same small whist tournament (the built-in ``random`` and ``rules`` bots, one game to 5
points, a fixed seed) is played three ways, each a fresh output directory: (a) locally,
``arena tournament -j 2``; (b) on a cluster of one ``arena worker --slots 2``; (c) on two
workers of ``--slots 1`` each. On a 2-core machine the two workers share the same two cores, so
(c) shows the cost of the second worker process, not a second machine's gain.

The rate is the wall time of the ``arena tournament`` command alone: the scheduler and the
workers are started first and waited for (``Client.wait_for_workers``). While the command runs
a thread samples ``/proc`` every :data:`SAMPLE_S` seconds: the records written so far and the
CPU of the coordinator, of the scheduler and of each worker with its bot processes; between a
quarter of the records and the last one those give each process's CPU per match in the steady
state (the coordinator's start-up — imports, snapshots, connecting — and its final standings
excluded; its whole CPU is reported too, from ``os.wait4``). The matches run in the workers,
so the coordinator's CPU per match is its scheduling, commit and record-writing cost. Then the
two writes it does per match (the store's two transactions; the record and the seat logs, each
synced) are timed here, on a copy of the last run's results file and with its records' bytes.

Every process started here is a process group of its own, killed on the way out however the
section ends (SIGTERM included). The bots are sandboxed (bubblewrap) unless ``bwrap`` is
missing, then ``--no-sandbox`` and the result says so.

``python -m benchmarks.cluster_bench [--matches N]`` runs it alone and prints its JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import CLOCK_TICK, ROOT, child_env, proc_table

BIN = Path(sys.executable).parent
ARENA = str(BIN / "arena")
DASK = str(BIN / "dask")
#: The tournament: two built-in bots at a whist table (two seats each), short rubbers.
GAME = "whist"
BOTS = ("random", "rules")
OPTIONS = {"points_to_win": 5, "games_per_rubber": 1}
SEED = 7
#: Seconds between two looks at /proc while a tournament runs.
SAMPLE_S = 0.1
#: Seconds the scheduler and the workers may take to come up; a tournament may take.
START_S = 90.0
RUN_S = 900.0
#: py-spy's samples per second in the coordinator's profile.
PROFILE_RATE = 200

_TICK = CLOCK_TICK


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_group(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM to ``proc``'s process group, SIGKILL after ``grace`` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    # The group may outlive its leader (a worker's bots): SIGKILL it whatever the leader did.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        proc.wait(timeout=5)


@contextlib.contextmanager
def _terminate_raises() -> Iterator[None]:
    """SIGTERM as SystemExit while the section runs (in the main thread), so the ``finally``
    clauses that stop its processes run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@dataclass
class LocalCluster:
    """A ``dask scheduler`` and ``arena worker``\\ s on loopback, each its own process group."""

    directory: Path
    workers: list[tuple[str, int]]
    sandbox: bool
    port: int = field(default_factory=_free_port)
    scheduler: subprocess.Popen[bytes] | None = None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with open(self.directory / f"{name}.log", "ab") as log:
            return subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=child_env(),
                cwd=ROOT,
            )

    def __enter__(self) -> LocalCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self.scheduler = self._spawn(
                "scheduler",
                [
                    DASK,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--no-dashboard",
                ],
            )
            for name, slots in self.workers:
                argv = [ARENA, "worker", "--scheduler", self.address, "--name", name]
                argv += ["--slots", str(slots), "--dir", str(self.directory / name)]
                self.procs[name] = self._spawn(
                    name, argv + ([] if self.sandbox else ["--no-sandbox"])
                )
            self._wait_for_workers()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_for_workers(self) -> None:
        from distributed import Client

        from arena.cluster.worker import quiet_dask

        quiet_dask()
        deadline = time.monotonic() + START_S
        while True:  # the scheduler may not listen yet
            try:
                client = Client(self.address, timeout=5, set_as_default=False)
                break
            except OSError:
                if time.monotonic() > deadline or self.scheduler.poll() is not None:  # type: ignore[union-attr]
                    raise RuntimeError(
                        f"no Dask scheduler at {self.address}: {self.log('scheduler')}"
                    ) from None
                time.sleep(0.2)
        with client:
            try:
                client.wait_for_workers(
                    len(self.workers), timeout=max(1.0, deadline - time.monotonic())
                )
            except TimeoutError:
                dead = [n for n, p in self.procs.items() if p.poll() is not None]
                why = "; ".join(f"{n}: {self.log(n)}" for n in dead) or "timed out"
                raise RuntimeError(f"the workers did not join: {why}") from None

    def log(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace")[-600:] if path.exists() else ""

    def pids(self) -> dict[str, int]:
        """The scheduler's and each worker's pid."""
        out = {"scheduler": self.scheduler.pid} if self.scheduler else {}
        return out | {name: p.pid for name, p in self.procs.items()}

    def close(self) -> None:
        for proc in self.procs.values():
            _kill_group(proc, grace=20)
        if self.scheduler is not None:
            _kill_group(self.scheduler, grace=5)


def _user_sys(pid: int) -> tuple[float, float] | None:
    """A process's user and kernel CPU seconds, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK


class Sampler:
    """Records written and CPU seconds by role while a tournament runs: the coordinator alone,
    and each of ``trees`` (a pid with its descendants, each one's latest CPU kept)."""

    def __init__(self, records: Path, coordinator: int, trees: dict[str, int]) -> None:
        self.records = records
        self.coordinator = coordinator
        self.trees = trees
        #: ``(monotonic time, records, coordinator alive, {role: cpu s})``.
        self.samples: list[tuple[float, int, bool, dict[str, float]]] = []
        self._seen: dict[str, dict[int, float]] = {role: {} for role in trees}
        self._own = 0.0
        self._split = (0.0, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cluster-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.sample()

    def sample(self) -> None:
        try:
            n = sum(1 for p in self.records.iterdir() if not p.name.startswith("."))
        except OSError:
            n = 0
        parents, cpu = proc_table()
        alive = self.coordinator in cpu
        if alive:
            self._own = cpu[self.coordinator]
            self._split = _user_sys(self.coordinator) or self._split
        roles = {"coordinator": self._own}
        roles["coordinator user"], roles["coordinator kernel"] = self._split
        for role, root in self.trees.items():
            seen = self._seen[role]
            for pid, used in cpu.items():
                p, hops = pid, 0
                while p not in (0, 1, root) and hops < 12:
                    p, hops = parents.get(p, 0), hops + 1
                if p == root:
                    seen[pid] = max(seen.get(pid, 0.0), used)
            roles[role] = sum(seen.values())
        self.samples.append((time.monotonic(), n, alive, roles))

    def steady(self, matches: int) -> dict[str, Any]:
        """CPU per match of each role from the sample that saw a quarter of the ``matches``
        recorded (the bot pools started, the first matches' warm-up behind) to the first that
        saw the last record, and the matches per minute over that window."""
        live = [s for s in self.samples if s[2] and s[1] >= max(1, matches // 4)]
        # The window ends at the last record: after it the coordinator computes the standings
        # (imports scipy, fits the ratings), a cost per run, not per match.
        last = next((s for s in live if s[1] == live[-1][1]), None) if live else None
        if last is None or last[1] - live[0][1] < 2:
            return {}
        (t0, n0, _, c0), (t1, n1, _, c1) = live[0], last
        done = n1 - n0
        return {
            "matches": done,
            "window_s": round(t1 - t0, 2),
            "matches_per_min": round(done / (t1 - t0) * 60, 1),
            "cpu_ms_per_match": {
                role: round((c1[role] - c0[role]) / done * 1000, 2) for role in c1
            },
        }


def _tournament_argv(out: Path, matches: int, dask: str | None, sandbox: bool) -> list[str]:
    argv = [ARENA, "tournament", "--game", GAME]
    for bot in BOTS:
        argv += ["--bot", bot]
    for k, v in OPTIONS.items():
        argv += ["--option", f"{k}={v}"]
    argv += ["--matches", str(matches), "--seed", str(SEED), "--out", str(out), "--quiet"]
    argv += ["--json", "-j", "2"]
    if dask is not None:
        argv += ["--dask", dask]
    return argv + ([] if sandbox else ["--no-sandbox"])


def tournament(
    label: str,
    out: Path,
    matches: int,
    sandbox: bool,
    cluster: LocalCluster | None = None,
    profile: Path | None = None,
) -> dict[str, Any]:
    """One ``arena tournament`` command, timed and sampled; with ``profile``, run under py-spy
    (``--gil``: the thread holding the GIL, what bounds one CPython process), its raw stacks
    written there: then the times are not the figures, py-spy being the process timed."""
    argv = _tournament_argv(out, matches, cluster.address if cluster else None, sandbox)
    if profile is not None:
        spy = [str(BIN / "py-spy"), "record", "--format", "raw", "--output", str(profile)]
        argv = [
            *spy,
            "--rate",
            str(PROFILE_RATE),
            "--function",
            "--nonblocking",
            "--gil",
            "--",
            *argv,
        ]
    trees = cluster.pids() if cluster else {}
    out.parent.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = out.with_suffix(".stdout"), out.with_suffix(".stderr")
    with open(stdout_path, "wb") as o, open(stderr_path, "wb") as e:
        w0 = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdout=o,
            stderr=e,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=child_env(),
            cwd=ROOT,
        )
    if cluster is None:  # locally, the bots are the coordinator's descendants
        trees = {"coordinator+bots": proc.pid}
    # A run that hangs is stopped (wait4 below then returns).
    watchdog = threading.Timer(RUN_S, lambda: _signal_group(proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        with Sampler(out / "records", proc.pid, trees) as sampler:
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - w0
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        watchdog.cancel()
        _kill_group(proc, grace=5)
    stdout, stderr = stdout_path.read_bytes(), stderr_path.read_bytes()
    if proc.returncode != 0:
        raise RuntimeError(f"{label}: arena tournament exited {proc.returncode}: {stderr[-800:]!r}")
    # The standings' one line (under py-spy, its own lines come around it).
    lines = [x for x in stdout.decode(errors="replace").splitlines() if x.startswith("{")]
    if not lines:
        raise RuntimeError(f"{label}: no standings printed: {stdout[-400:]!r} {stderr[-400:]!r}")
    standings = json.loads(lines[-1])
    done = int(standings["matches_done"])
    with contextlib.closing(sqlite3.connect(out / "results.sqlite")) as db:
        seconds = [r[0] for r in db.execute("SELECT seconds FROM matches WHERE status='done'")]
    total_cpu = usage.ru_utime + usage.ru_stime
    return {
        "label": label,
        "workers": [f"{n} --slots {k}" for n, k in cluster.workers] if cluster else [],
        "matches": done,
        "wall_s": round(wall, 2),
        "matches_per_min": round(done / wall * 60, 1),
        "match_wall_s_median": round(statistics.median(seconds), 3) if seconds else None,
        "faults": sum(standings.get("faults", {}).values()),
        "forfeits": sum(standings.get("forfeits", {}).values()),
        # The coordinator's whole CPU (with its start-up; locally with the waited-for bots).
        "coordinator_cpu_s_total": round(total_cpu, 2),
        "steady": sampler.steady(matches),
    }


class _Stored:
    """A stored result or fault as ``Store.finish`` takes it (it writes its ``to_dict()``)."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def to_dict(self) -> Any:
        return self.data


def store_costs(out: Path, repeats: int = 3) -> dict[str, Any]:
    """The coordinator's two writes per match, timed here on a copy of ``out``: the store's
    ``mark_started`` and ``finish`` transactions (SQLite, WAL, synchronous=NORMAL), then the
    record and its seat logs written and synced as arena/tournament/remote.py does."""
    from arena.layout import write_atomically
    from arena.records.format import RecordError, write_record_bytes
    from arena.tournament.store import Store

    with contextlib.closing(sqlite3.connect(out / "results.sqlite")) as db:
        rows = db.execute(
            "SELECT match_id, result, faults, record_path, seconds FROM matches WHERE status='done'"
        ).fetchall()
    records = {p.name: p.read_bytes() for p in (out / "records").iterdir()}
    logs = sorted((out / "logs").iterdir()) if (out / "logs").exists() else []
    logs_of = {
        m: [p.read_bytes() for p in logs if p.name.startswith(f"{m}.seat")] for m, *_ in rows
    }
    store_wall, store_cpu, write_wall, write_cpu = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="arena-bench-store-") as tmp:
        copy = Path(tmp) / "results.sqlite"
        for _ in range(repeats):
            shutil.copy(out / "results.sqlite", copy)
            with contextlib.closing(sqlite3.connect(copy)) as db:
                db.execute("UPDATE matches SET status='pending', result=NULL, finished_at=NULL")
                db.commit()
            with Store(copy) as store:
                w0, c0 = time.perf_counter(), time.thread_time()
                for match_id, result, faults, record_path, seconds in rows:
                    store.mark_started(match_id)
                    stored = [_Stored(f) for f in json.loads(faults)]
                    store.finish(
                        match_id, _Stored(json.loads(result)), stored, record_path, seconds
                    )
                store_wall.append((time.perf_counter() - w0) / len(rows))
                store_cpu.append((time.thread_time() - c0) / len(rows))
            target = Path(tmp) / "run"
            w0, c0 = time.perf_counter(), time.thread_time()
            for match_id, *_ in rows:
                name = f"{match_id}.jsonl.gz"
                write_record_bytes(target / "records" / name, records[name])
                for seat, data in enumerate(logs_of[match_id]):
                    write_atomically(
                        target / "logs" / f"{match_id}.seat{seat}.log", data, RecordError
                    )
            write_wall.append((time.perf_counter() - w0) / len(rows))
            write_cpu.append((time.thread_time() - c0) / len(rows))
            shutil.rmtree(target)
    return {
        "matches": len(rows),
        "repeats": repeats,
        "record_kb_median": round(statistics.median(len(b) for b in records.values()) / 1024, 1),
        "store_ms_per_match": {
            "wall": round(statistics.median(store_wall) * 1000, 3),
            "cpu": round(statistics.median(store_cpu) * 1000, 3),
        },
        "files_ms_per_match": {
            "wall": round(statistics.median(write_wall) * 1000, 3),
            "cpu": round(statistics.median(write_cpu) * 1000, 3),
        },
    }


def _category(frames: list[str]) -> str:
    """What part of the coordinator a sample is in: start-up (any import frame) or the
    innermost frame of a part named here."""
    if any("_find_and_load" in f or "<frozen importlib" in f for f in frames):
        return "start-up: imports"
    for frame in reversed(frames):
        where = frame.rsplit("(", 1)[-1]
        for prefix, name in (
            ("arena/tournament/store.py", "store: SQLite transactions"),
            ("sqlite3", "store: SQLite transactions"),
            ("arena/layout.py", "record and seat-log files"),
            ("arena/records/", "record and seat-log files"),
            ("arena/snapshots/", "start-up: snapshots"),
            ("arena/cluster/bundles.py", "start-up: snapshots"),
            ("arena/tournament/remote.py", "remote: tasks"),
            ("arena/cluster/", "cluster: submit, wait, slots"),
            ("distributed/protocol", "dask: serialization"),
            ("msgpack", "dask: serialization"),
            ("pickle", "dask: serialization"),
            ("distributed/", "dask client"),
            ("tornado/", "event loop (tornado/asyncio)"),
            ("asyncio/", "event loop (tornado/asyncio)"),
            ("trio/", "trio"),
            ("arena/tournament/", "runner"),
            ("arena/", "arena other"),
            ("threading", "threads"),
        ):
            if prefix in where:
                return name
    return "other"


def profile_summary(path: Path) -> dict[str, Any]:
    """Shares of the coordinator's samples by part; the start-up parts apart."""
    from collections import Counter

    parts: Counter[str] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if count.isdigit():  # a sample with no Python frame: native code holding the GIL
            parts[_category(stack.split(";")) if stack else "no Python frame"] += int(count)
    total = sum(parts.values())
    running = {k: v for k, v in parts.items() if not k.startswith("start-up")}
    run_total = sum(running.values())
    return {
        "samples": total,
        "rate": PROFILE_RATE,
        # Seconds some thread held the GIL, start-up included.
        "gil_s": round(total / PROFILE_RATE, 2),
        "gil_s_after_start_up": round(run_total / PROFILE_RATE, 2),
        "by_part": {k: round(v / total, 3) for k, v in parts.most_common()} if total else {},
        "by_part_after_start_up": {
            k: round(v / run_total, 3) for k, v in sorted(running.items(), key=lambda x: -x[1])
        }
        if run_total
        else {},
    }


def _model(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Slots one coordinator (and one scheduler) could keep busy at this match length, from the
    one-worker run: match wall time ÷ CPU per match (each is one single-threaded process)."""
    one = next((r for r in runs if r["label"] == "1 worker"), None)
    if not one or not one["steady"] or not one["match_wall_s_median"]:
        return {}
    per = one["steady"]["cpu_ms_per_match"]
    wall_ms = one["match_wall_s_median"] * 1000
    out: dict[str, Any] = {"match_wall_ms": round(wall_ms, 1)}
    for role in ("coordinator", "scheduler"):
        if per.get(role):
            out[f"slots_per_{role}"] = round(wall_ms / per[role], 1)
            out[f"{role}_matches_per_s_ceiling"] = round(1000 / per[role], 1)
    return out


def run_cluster(matches: int = 32, profile: Path | None = None) -> dict[str, Any]:
    """The three runs, the writes' costs and the model's inputs; with ``profile`` (a path
    for py-spy's raw stacks), a fourth run on the two workers, the coordinator profiled."""
    sandbox = shutil.which("bwrap") is not None
    runs: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    if profile is not None and not (BIN / "py-spy").exists():
        summary = {"missing": "py-spy not installed; `make bench` installs it"}
    with _terminate_raises(), tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as tmp:
        base = Path(tmp)
        runs.append(tournament("local", base / "local", matches, sandbox))
        layouts = {"1 worker": [("w1", 2)], "2 workers": [("w1", 1), ("w2", 1)]}
        for label, workers in layouts.items():
            with LocalCluster(base / f"cluster-{len(workers)}", workers, sandbox) as cluster:
                runs.append(
                    tournament(label, base / f"run-{len(workers)}", matches, sandbox, cluster)
                )
                if label == "1 worker" and profile is not None and (BIN / "py-spy").exists():
                    # A separate run (sampling must not disturb the measured ones), on the
                    # one-worker cluster: the coordinator's CPU by part.
                    raw = base / "profile-coordinator.txt"
                    tournament("profile", base / "run-profile", matches, sandbox, cluster, raw)
                    summary = profile_summary(raw)
                    profile.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(raw, profile)
                    summary["file"] = str(profile)
        writes = store_costs(base / "run-2")
    local = runs[0]["matches_per_min"]
    for r in runs:
        r["ratio_to_local"] = round(r["matches_per_min"] / local, 2) if local else None
    return {
        "config": {
            "game": GAME,
            "bots": list(BOTS),
            "options": OPTIONS,
            "matches": matches,
            "seed": SEED,
            "slots": 2,
            "sandbox": sandbox,
            "nproc": os.cpu_count() or 0,
            "note": "two workers share this machine's cores" if (os.cpu_count() or 0) <= 2 else "",
        },
        "runs": runs,
        "writes": writes,
        "profile": summary,
        "model": _model(runs),
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cluster_bench")
    parser.add_argument("--matches", type=int, default=32)
    parser.add_argument("--profile", type=Path, help="py-spy's raw stacks of the coordinator")
    args = parser.parse_args(argv)
    print(json.dumps(run_cluster(args.matches, args.profile), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
