"""Nothing a run of the arena starts outlives it: the run's cgroups, its temporary directory, and
the reaper, a small process that removes both, and kills whatever is left in the cgroups, once
the arena is gone, however it went (``kill -9`` included).

:func:`bot_run` starts the reaper first, in a session of its own (a signal to the arena's
process group does not reach it), with the read end of a pipe whose only writer is the arena on
its stdin; nothing is ever written, so end of file means the arena has ended or died. Only then
does :func:`bot_run` make the run's directory (the socket's, ``arena-…`` in the temporary
directory) and, as root, the run's cgroup in each hierarchy (``cardarena-NS-PID-…``: the arena's
pid namespace and pid). Every boxed bot's cgroups are made inside the run's, and the box's guard
joins them before it starts bwrap, so bwrap and everything it starts are in them, including an
inner bwrap still setting up its box, which bwrap's ``--die-with-parent`` does not yet cover
(docs/sandbox.md). At end of file the reaper kills every process in the run's cgroups, removes
them, the run's bot containers (labelled with the run's name) and the directory, and exits; at a
normal end the arena waits for it.

Each :func:`bot_run` also sweeps what a dead run left, should its reaper have been killed too: a
run cgroup whose arena (same pid namespace) no longer exists.

Run as a script (``python -I reaper.py DIR [CGROUP ...]``), this module is the reaper: it imports
only the standard library, so it starts fast and needs nothing of the arena's installation.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Where cgroup v1 hierarchies (per controller) or the v2 unified hierarchy are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Name prefix of every cgroup the arena makes.
GROUP_PREFIX = "cardarena-"
#: A run's cgroup: ``cardarena-<pid namespace>-<arena pid>-<random>``.
_RUN_GROUP = re.compile(rf"{GROUP_PREFIX}(\d+)-(\d+)-[0-9a-f]+")
#: Seconds the reaper goes on killing and removing before it gives up (the kernel reaps a dead
#: pid namespace asynchronously, so a cgroup may stay busy a moment after its last kill).
REAP_S = 10.0
#: Seconds after which an empty per-bot ``cardarena-*`` cgroup at a hierarchy's root (made
#: outside any run, or by an older arena) is taken for the leftover of a killed arena.
STALE_GROUP_S = 600.0


def unified() -> bool:
    """Whether the machine has the unified (v2) hierarchy at :data:`CGROUP_ROOT`."""
    return (CGROUP_ROOT / "cgroup.controllers").exists()


def hierarchies() -> list[Path]:
    """The roots the arena's cgroups go under: the unified one, or the v1 pids and memory ones."""
    if unified():
        return [CGROUP_ROOT]
    return [
        CGROUP_ROOT / c for c in ("pids", "memory") if (CGROUP_ROOT / c / "cgroup.procs").exists()
    ]


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_tree(group: Path) -> int:
    """SIGKILL every process in ``group`` and the cgroups below it; how many were found."""
    kill = group / "cgroup.kill"  # v2 (Linux 5.14): the whole subtree at once
    if kill.exists():
        with contextlib.suppress(OSError):
            kill.write_text("1")
    found = 0
    for where, _dirs, _files in os.walk(group):
        try:
            pids = Path(where, "cgroup.procs").read_text().split()
        except OSError:
            continue
        for pid in pids:
            found += 1
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
    return found


def remove_tree(group: Path) -> bool:
    """Remove ``group`` and the cgroups below it, deepest first; whether it is gone."""
    for where, _dirs, _files in os.walk(group, topdown=False):
        with contextlib.suppress(OSError):
            os.rmdir(where)
    return not group.exists()


def reap(groups: Sequence[Path], timeout: float = REAP_S) -> list[Path]:
    """Kill what is in ``groups`` and remove them, again until they are gone or ``timeout``
    seconds have passed (a process may still fork, or join, between two looks); those left."""
    deadline = time.monotonic() + timeout
    left = [g for g in groups if g.exists()]
    while left:
        for group in list(left):
            kill_tree(group)
            if remove_tree(group):
                left.remove(group)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return left


def sweep_stale() -> None:
    """Kill and remove what dead runs left in the cgroup hierarchies: each run cgroup whose arena
    (in this pid namespace; another's pids mean nothing here) is gone, and empty per-bot groups
    older than :data:`STALE_GROUP_S` outside any run."""
    namespace = _pid_namespace()
    now = time.time()
    for root in hierarchies():
        with contextlib.suppress(OSError):
            for group in root.glob(f"{GROUP_PREFIX}*"):
                owner = _RUN_GROUP.fullmatch(group.name)
                if owner is not None:
                    if int(owner[1]) == namespace and not _alive(int(owner[2])):
                        reap([group], 1.0)
                    continue
                with contextlib.suppress(OSError):
                    if now - group.stat().st_mtime > STALE_GROUP_S:
                        group.rmdir()  # refused while a process is in it


def _make_run_groups(name: str) -> list[Path]:
    """The run's cgroup ``name`` in each hierarchy that lets us make it (only root may), with the
    controllers of its bots' limits enabled below it (v2)."""
    if os.geteuid() != 0:
        return []
    made: list[Path] = []
    for root in hierarchies():
        group = root / name
        try:
            group.mkdir()
        except OSError:
            continue
        made.append(group)
        if root == CGROUP_ROOT:  # unified: the controllers its children's limits need
            wanted = {"pids", "memory"} & set((root / "cgroup.subtree_control").read_text().split())
            for controller in sorted(wanted):
                with contextlib.suppress(OSError):
                    (group / "cgroup.subtree_control").write_text(f"+{controller}")
    return made


def member_group(run_group: str) -> Path | None:
    """A fresh cgroup without limits inside the run's ``run_group`` (in the first hierarchy), for
    an unboxed bot the run's reaper must find; ``None`` when there is no run cgroup."""
    roots = hierarchies()
    if not run_group or not roots:
        return None
    group = roots[0] / run_group / f"{GROUP_PREFIX}{secrets.token_hex(6)}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


@dataclass(frozen=True, slots=True)
class BotRun:
    """What one run of the arena confines its bots in; :func:`bot_run` makes it."""

    #: The run's own temporary directory (only the arena may enter it).
    directory: Path
    #: The directory of the arena's Unix socket, inside :attr:`directory`, readable by uid nobody:
    #: boxes bind it read-only, containers mount it.
    socket_dir: Path
    #: The name of the run's cgroup in each hierarchy, in which bots' cgroups go; ``""`` when
    #: none could be made (then bots' cgroups, if any, go at the hierarchies' roots).
    cgroup: str


@contextlib.contextmanager
def bot_run() -> Iterator[BotRun]:
    """The run's directory and cgroups, and the reaper that removes them, and kills what is left
    in the cgroups, when this process ends or dies."""
    sweep_stale()
    name = f"{GROUP_PREFIX}{_pid_namespace()}-{os.getpid()}-{secrets.token_hex(4)}"
    directory = Path(tempfile.gettempdir()) / f"arena-{secrets.token_hex(6)}"
    groups = [root / name for root in hierarchies()] if os.geteuid() == 0 else []
    # The reaper first, told where everything will be: whenever the arena dies from here on,
    # there is someone to remove what it made.
    reaper = _start_reaper(directory, groups)
    try:
        directory.mkdir(mode=0o700)
    except BaseException:
        reaper[0].kill()  # the name is taken: nothing there is ours to remove
        os.close(reaper[1])
        reaper[0].wait()
        raise
    try:
        socket_dir = directory / "socket"
        socket_dir.mkdir()
        socket_dir.chmod(0o755)  # the arena's umask aside: uid nobody must reach the socket
        made = _make_run_groups(name)
        yield BotRun(directory, socket_dir, name if made else "")
    finally:
        if not _stop_reaper(reaper):
            cleanup(directory, groups)


def _start_reaper(directory: Path, groups: Sequence[Path]) -> tuple[subprocess.Popen[bytes], int]:
    read, write = os.pipe()  # neither end is inherited by anything else the arena starts
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", __file__, str(directory), *map(str, groups)],
            stdin=read,
            # Off the arena's output: a reader of `arena … | head` must not wait for it.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except BaseException:
        os.close(write)
        raise
    finally:
        os.close(read)
    return process, write


def _stop_reaper(reaper: tuple[subprocess.Popen[bytes], int]) -> bool:
    """Let the reaper clean up and wait for it; whether it did."""
    process, write = reaper
    os.close(write)
    try:
        return process.wait(timeout=REAP_S + 5.0) == 0
    except subprocess.TimeoutExpired:
        process.kill()  # stuck: the arena cleans up itself
        process.wait()
        return False


def _docker_socket() -> str | None:
    """The Docker engine's Unix socket (``DOCKER_HOST`` or the default), if there is one."""
    address = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    path = address.removeprefix("unix://")
    return path if address.startswith("unix://") and os.path.exists(path) else None


def remove_containers(run: str, timeout: float = 10.0) -> int:
    """Remove the bot containers labelled with ``run`` (arena/bots/docker.py ``RUN_LABEL``),
    through the engine's API with the standard library only; how many. Best effort: no engine,
    no containers."""
    found = _docker_socket()
    if found is None:
        return 0
    path: str = found

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(path)

    def call(method: str, url: str) -> bytes:
        con = Connection("docker", timeout=timeout)
        try:
            con.request(method, url)
            return con.getresponse().read()
        finally:
            con.close()

    filters = urllib.parse.quote(json.dumps({"label": [f"card-arena.run={run}"]}))
    try:
        listed = json.loads(call("GET", f"/containers/json?all=1&filters={filters}"))
        ids = [c["Id"] for c in listed if isinstance(c, dict) and isinstance(c.get("Id"), str)]
        for container in ids:
            call("DELETE", f"/containers/{urllib.parse.quote(container)}?force=1&v=1")
    except (OSError, ValueError, http.client.HTTPException):
        return 0
    return len(ids)


def cleanup(directory: Path, groups: Sequence[Path]) -> None:
    """Kill what is left in the run's cgroups and remove them, remove the run's bot containers,
    then its directory."""
    reap(groups)
    remove_containers(directory.name)
    shutil.rmtree(directory, ignore_errors=True)


def main(argv: Sequence[str]) -> int:
    """The reaper: wait for end of file on stdin, then :func:`cleanup` ``DIR [CGROUP ...]``."""
    if not argv:
        return 2
    with contextlib.suppress(OSError):
        while os.read(0, 4096):
            pass
    cleanup(Path(argv[0]), [Path(g) for g in argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
