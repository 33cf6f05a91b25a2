"""The box a submitted bot command runs in: bubblewrap plus resource limits.

Every namespace is unshared (no network at all: the bot reaches the arena only through the Unix
socket bound read-only into the box), the bot's directory is read-only, /tmp and /dev/shm are small
private tmpfs (the rest of /dev is read-only), the bot runs as uid ``nobody`` with no capabilities
and may not create user namespaces of its own, and the environment is reduced to an allow-list.
prlimit caps address space, CPU time, open files and file size; a pids cgroup caps processes and a
memory cgroup caps the bot's total memory where the machine lets us make them (RLIMIT_NPROC is not
enforced for root-owned processes, which is what bwrap's user namespace maps ``nobody`` to when the
arena runs as root), else RLIMIT_NPROC counts the bot's processes.

When the arena runs as root the bot's files are checked as root's (the user namespace maps
``nobody`` to the caller), so nothing but read-only system and runtime directories is bound in,
and files under /etc that only their owner may read (shadow, private keys) are masked.
docs/sandbox.md has the whole picture.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.reaper import CGROUP_ROOT, GROUP_PREFIX, reap, sweep_stale, unified
from arena.errors import ArenaError

NOBODY = 65534
#: Environment variables a sandboxed bot keeps (plus every ``ARENA_*`` and ``LC_*``).
ENV_ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONUNBUFFERED", "PYTHONHASHSEED")
#: File name of the arena's socket inside its per-run directory.
SOCKET_NAME = "arena.sock"


#: How a command that starts bot commands lets them run bare: its flag.
NO_SANDBOX_FLAG = "--no-sandbox"


class SandboxRefused(ArenaError):
    """Bots cannot run boxed: the message says why and points at :data:`NO_SANDBOX_FLAG`;
    ``reason`` says why alone, for a command without that flag (``arena demo``)."""

    def __init__(self, reason: str, way_out: str) -> None:
        super().__init__(reason + way_out)
        self.reason = reason


class SandboxUnavailable(SandboxRefused):
    """The sandbox cannot run on this machine; the message says what is missing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, f"; run with {NO_SANDBOX_FLAG} to run bots unsandboxed")


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandboxed bot."""

    #: Address-space limit per process, and total memory of the bot where a memory cgroup can
    #: be made, in MiB.
    memory_mb: int = 1024
    #: CPU seconds over the bot's lifetime (RLIMIT_CPU).
    cpu_seconds: int = 3600
    #: Processes and threads the bot may have at once, the box's own six among them. A Python
    #: SDK bot needs 14, a Node bot 13 (docs/sandbox.md); gRPC's C core keeps a thread per core
    #: (4 to 16), so on a many-core machine a gRPC bot needs up to 12 more.
    processes: int = 64
    #: Open file descriptors per process (RLIMIT_NOFILE). A Python SDK bot holds 13, a Node bot
    #: 19. Every process of a bot may fill its own table, so a bot holds at most
    #: ``processes * open_files`` descriptors, connections to the arena among them: 4,096.
    open_files: int = 64
    #: Size of the private /tmp, and of /dev/shm, in MiB; no file may grow larger (RLIMIT_FSIZE).
    tmp_mb: int = 64


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How to box one bot command: its limits, its directory and the arena's socket directory."""

    #: Resource limits.
    limits: Limits
    #: The bot's directory: bound read-only, and its working directory.
    bot_dir: Path
    #: The directory of the arena's Unix socket, bound read-only (connecting needs no write).
    socket_dir: Path
    #: Paths to hide from the bot if they fall inside a bound directory (the arena's state, the
    #: match output): an empty tmpfs is mounted over each.
    hide: tuple[Path, ...] = ()
    #: The run's cgroup the bot's go in (:class:`arena.bots.reaper.BotRun`), or ``""``.
    run_group: str = ""


_checked: str | None = None
#: Options of the installed bwrap that older releases lack (0.8 added --disable-userns).
_OPTIONAL = ("--disable-userns", "--size")
_supported: frozenset[str] = frozenset()


def check_available() -> None:
    """Raise :class:`SandboxUnavailable` unless bubblewrap and prlimit can be used here.

    The first call also starts one empty box, so a machine that has bwrap but forbids user
    namespaces is told so in one line instead of every bot crashing.
    """
    global _checked, _supported
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable("the bot sandbox needs Linux")
    for tool, package in (("bwrap", "bubblewrap"), ("prlimit", "util-linux")):
        path = shutil.which(tool)
        if path is None:
            raise SandboxUnavailable(
                f"{tool} is not installed: Debian package {package}, which `make sandbox-tools` "
                "installs as root"
            )
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    if _checked == bwrap:
        return
    probe = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(NOBODY)]
    probe += ["--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise SandboxUnavailable(f"bwrap does not run: {err}") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"status {done.returncode}"])[-1]
        raise SandboxUnavailable(
            f"bwrap cannot make a sandbox here ({why}) until unprivileged user namespaces are "
            "allowed"
        )
    _checked = bwrap
    usage = subprocess.run([bwrap, "--help"], capture_output=True, text=True, check=False).stdout
    _supported = frozenset(opt for opt in _OPTIONAL if opt in usage.split())


@dataclass(slots=True)
class SandboxedCommand:
    """A command wrapped for the sandbox, and what to clean up after it exits."""

    #: The argv to execute.
    argv: list[str]
    #: The environment to execute it with (the allow-listed part of the caller's).
    env: dict[str, str] = field(default_factory=dict)
    #: The cgroups made for it (pids, memory), removed by :meth:`cleanup`.
    cgroups: list[Path] = field(default_factory=list)
    #: Paths bound read-only into the box.
    read_only: list[Path] = field(default_factory=list)

    def cleanup(self) -> None:
        """Kill whatever is left in the bot's cgroups and remove them.

        The kernel reaps a dead pid namespace asynchronously, so removal is retried briefly.
        """
        self.cgroups = reap(self.cgroups, 1.0)


def _new_group(parent: Path, settings: Sequence[tuple[str, str]]) -> Path | None:
    """A fresh cgroup under ``parent`` with ``settings`` written, or ``None`` if not allowed."""
    if not (parent / "cgroup.procs").exists() or not os.access(parent, os.W_OK):
        return None
    group = parent / f"{GROUP_PREFIX}{uuid.uuid4().hex[:12]}"
    try:
        group.mkdir()
        for name, value in settings:
            (group / name).write_text(value)
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()
        return None
    return group


def _make_cgroups(limits: Limits, run_group: str = "") -> list[Path]:
    """A pids and a memory cgroup for one bot (cgroup v1), or one group with both limits (v2),
    inside the run's cgroup ``run_group`` (arena/bots/reaper.py), else at the hierarchies' roots.

    Only root may make them; an empty list means the rlimits alone apply.
    """
    if os.geteuid() != 0:
        return []
    if not run_group:
        sweep_stale()  # a run sweeps once, at its start
    memory = str(limits.memory_mb * 1024 * 1024)
    if unified():
        parent = CGROUP_ROOT / run_group
        try:
            controllers = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return []
        if "pids" not in controllers:
            return []
        settings = [("pids.max", str(limits.processes))]
        if "memory" in controllers:
            settings.append(("memory.max", memory))
        group = _new_group(parent, settings)
        return [group] if group is not None else []
    groups: list[Path] = []
    pids = _new_group(CGROUP_ROOT / "pids" / run_group, [("pids.max", str(limits.processes))])
    if pids is None:
        return []
    groups.append(pids)
    mem_settings = [("memory.limit_in_bytes", memory)]
    if (CGROUP_ROOT / "memory" / "memory.memsw.limit_in_bytes").exists():
        mem_settings.append(("memory.memsw.limit_in_bytes", memory))
    mem = _new_group(CGROUP_ROOT / "memory" / run_group, mem_settings)
    if mem is not None:
        groups.append(mem)
    return groups


def _user_tasks(uid: int) -> int:
    """Threads the user runs now: RLIMIT_NPROC counts them all, not just the bot's."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


#: This package's ``arena`` directory.
_ARENA_DIR = Path(__file__).resolve().parents[1]


def _package_dir(name: str) -> Path | None:
    """The directory of the installed package ``name``, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _runtime_paths() -> list[Path]:
    """Directories the bot needs to read: the system, this Python, this project's packages and
    its protocol definition.

    The project's packages are bound one by one rather than the source tree, so a checkout's
    other contents (match records, logs, the arena's state) stay out of sight.
    """
    paths = [Path(p) for p in ("/usr", "/etc", "/opt") if Path(p).exists()]
    paths += [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    # Found, not imported: the arena's packages need not load the bots' to box them.
    packages = [_package_dir(name) for name in ("arena", "engine", "reference_bots", "cardarena")]
    paths += [p for p in packages if p is not None]
    # The protocol's .proto: bots in other languages (the Node reference bot) load it at run time.
    proto = _ARENA_DIR.parent / "proto"
    if proto.is_dir():
        paths.append(proto)
    # Keep only the outermost of nested paths: a bind of /usr covers /usr/local.
    out: list[Path] = []
    for p in sorted(set(paths), key=lambda x: len(x.parts)):
        if not any(p.is_relative_to(q) for q in out):
            out.append(p)
    return out


#: The tree whose root-only entries a box started as root masks (a test points it elsewhere).
PRIVATE_ROOT = Path("/etc")
#: Per root: its private entries, and the ``(path, mtime_ns, inode)`` of every directory walked.
_walks: dict[str, tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, int, int], ...]]] = {}


def _private_entries(root: str) -> tuple[tuple[str, bool], ...]:
    """Entries under ``root`` that other users may not read: ``(path, is_dir)``, outermost only.

    The walk stats every entry under it, which every boxed bot's start would otherwise repeat
    (docs/performance.md has the figure), so it is kept, but only while no directory it walked
    changed: an entry added or removed changes its directory's mtime, and a kept list naming a
    file that has gone since (``/etc/group.lock``, while a package tool runs) would stop every
    later box from starting (bwrap cannot mask what is not there).
    """
    kept = _walks.get(root)
    if kept is not None and all(_stamp(path) == (path, m, i) for path, m, i in kept[1]):
        return kept[0]
    found: list[tuple[str, bool]] = []
    stamps: list[tuple[str, int, int]] = []
    stack = [root]
    while stack:
        current = stack.pop()
        stamps.append(_stamp(current))
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for e in entries:
            try:
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if mode & 0o005 != 0o005:
                    found.append((e.path, True))
                else:
                    stack.append(e.path)
            elif stat.S_ISREG(mode) and not mode & 0o004:
                found.append((e.path, False))
    _walks[root] = (tuple(sorted(found)), tuple(stamps))
    return _walks[root][0]


def _stamp(path: str) -> tuple[str, int, int]:
    """A directory's path, mtime and inode (``-1``s when it cannot be stat'ed)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return (path, -1, -1)
    return (path, st.st_mtime_ns, st.st_ino)


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of ``env`` for a sandboxed bot (no secrets of the arena's)."""
    out = {
        k: v
        for k, v in env.items()
        if k in ENV_ALLOWED or (k.startswith(("ARENA_", "LC_")) and k != "ARENA_HOME")
    }
    out.update({"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "nobody", "LOGNAME": "nobody"})
    return out


#: The shell that starts bwrap and stays its parent. bwrap's --die-with-parent ties the box to
#: the thread that forked bwrap, and trio forks from a worker thread that exits after 10 idle
#: seconds, so bwrap must not be the arena's direct child. The shell also watches its stdin, a
#: pipe only the arena holds: at end of file (the arena stopped the bot, or died) it kills its
#: process group (the arena starts it as a group's leader; else bwrap alone), and the box dies
#: with it. The group, not bwrap alone: bwrap's inner process, pid 1 of the box, ties itself to
#: the outer one only once the box is set up, and until then it is still in this group. The
#: bot's exit status (or killing signal) is passed on.
_GUARD = (
    "exec 3<&0; "
    '"$@" {stdin} 3<&- & bot=$!; '
    '{ cat <&3 >/dev/null; kill -9 -$$ || kill -9 "$bot"; } 2>/dev/null & guard=$!; '
    "exec 3<&-; "
    'wait "$bot"; status=$?; '
    'kill "$guard" 2>/dev/null; '
    'if [ "$status" -gt 128 ]; then kill -"$((status - 128))" $$; fi; '
    'exit "$status"'
)


def wrap(
    command: str,
    bot_dir: Path,
    socket_dir: Path,
    limits: Limits,
    *,
    env: Mapping[str, str] | None = None,
    hide: Sequence[Path] = (),
    run_group: str = "",
    stdin_fd: int | None = None,
) -> SandboxedCommand:
    """Wrap the shell ``command`` so it runs boxed; ``socket_dir`` holds the arena's socket.
    ``stdin_fd``: a descriptor the caller passes on (``pass_fds``) to be the bot's stdin (a
    stdio bot's); else its stdin is ``/dev/null``.

    ``env`` (default: this process's environment) is reduced to :func:`sandbox_env`; ``hide``
    lists paths to cover with an empty tmpfs when a bound directory contains them; the bot's
    cgroups go inside the run's cgroup ``run_group``, if given. Run the argv with its stdin a
    pipe the caller keeps open while the bot may run (see ``_GUARD``), as the leader of a new
    process group.
    """
    check_available()
    bot_dir = bot_dir.resolve()
    socket_dir = socket_dir.resolve()
    read_only = _runtime_paths()
    argv = [
        "prlimit",
        f"--as={limits.memory_mb * 1024 * 1024}",
        f"--cpu={limits.cpu_seconds}",
        f"--nofile={limits.open_files}",
        # No file the bot writes may outgrow its /tmp (bwraps without --size leave /tmp unsized).
        # Its output is a pipe (arena/bots/process.py caps the log), so this never cuts a log.
        f"--fsize={limits.tmp_mb * 1024 * 1024}",
        "--core=0",
    ]
    cgroups = _make_cgroups(limits, run_group)
    if not cgroups:
        argv.append(f"--nproc={limits.processes + _user_tasks(os.geteuid())}")
    argv += ["--", "bwrap", "--unshare-all", "--unshare-user"]
    if "--disable-userns" in _supported:
        argv.append("--disable-userns")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "bot"]
    # The private /tmp first: binds made after it land on top of it, so a checkout or venv that
    # lives under the host's /tmp (a CI clone, say) stays visible in the box.
    if "--size" in _supported:
        argv += ["--size", str(limits.tmp_mb * 1024 * 1024)]
    argv += ["--tmpfs", "/tmp"]
    for path in read_only:
        argv += ["--ro-bind", str(path), str(path)]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path(f"/usr/{link}").exists() and Path(f"/{link}").is_symlink():
            argv += ["--symlink", f"usr/{link}", f"/{link}"]
        elif Path(f"/{link}").is_dir():
            argv += ["--ro-bind", f"/{link}", f"/{link}"]
    if os.geteuid() == 0 and PRIVATE_ROOT in read_only:
        # Inside, nobody is root outside: mask what only root may read (shadow, private keys).
        for private, is_dir in _private_entries(str(PRIVATE_ROOT)):
            argv += ["--tmpfs", private] if is_dir else ["--ro-bind", "/dev/null", private]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    # bwrap's /dev is a tmpfs the bot may write, as large as half the RAM: a /dev/shm of its
    # own (shared memory, POSIX semaphores) sized like /tmp, then the rest of /dev read-only.
    if "--size" in _supported:
        argv += ["--size", str(limits.tmp_mb * 1024 * 1024)]
    argv += ["--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    argv += ["--ro-bind", str(bot_dir), str(bot_dir)]
    argv += ["--ro-bind", str(socket_dir), str(socket_dir)]
    bound = [*read_only, bot_dir]
    for path in hide:
        p = path.resolve()
        # Never cover the bot's own directory (a hidden path above it would).
        if p.is_dir() and not bot_dir.is_relative_to(p) and any(p.is_relative_to(b) for b in bound):
            argv += ["--tmpfs", str(p)]
    argv += ["--chdir", str(bot_dir), "--", "/bin/sh", "-c", command]
    # Joined before bwrap starts, so everything of the box is in them, where the run's reaper
    # finds it (arena/bots/reaper.py).
    joins = "".join(f'echo $$ > "{g / "cgroup.procs"}" || exit 125; ' for g in cgroups)
    # /dev/fd, not ``<&N``: dash reads only one-digit descriptors in redirections.
    stdin = "</dev/null" if stdin_fd is None else f"</dev/fd/{stdin_fd}"
    guard = _GUARD.replace("{stdin}", stdin)
    argv = ["/bin/sh", "-c", joins + guard, "sandbox", *argv]
    return SandboxedCommand(
        argv=argv,
        env=sandbox_env(os.environ if env is None else env),
        cgroups=cgroups,
        read_only=read_only,
    )


#: Exit status of the probe of :func:`missing_inside` when a name is missing.
_MISSING = 3
#: Seconds the probe may take.
_PROBE_S = 30.0


def missing_inside(
    programs: Sequence[str], paths: Sequence[str], sandbox: Sandbox, env: Mapping[str, str]
) -> str | None:
    """The first of ``programs`` (looked up on the box's PATH) and ``paths`` (relative ones from
    the bot's directory) that a bot boxed by ``sandbox`` with ``env`` would not find, or ``None``.

    One box is started, as for the bot. Raises :class:`SandboxUnavailable` when it does not start.
    """
    tests = [
        f"command -v {shlex.quote(p)} >/dev/null || {{ echo {shlex.quote(p)}; exit {_MISSING}; }}"
        for p in programs
    ]
    tests += [
        f"[ -e {shlex.quote(p)} ] || {{ echo {shlex.quote(p)}; exit {_MISSING}; }}" for p in paths
    ]
    boxed = wrap(
        "; ".join([*tests, "exit 0"]),
        sandbox.bot_dir,
        sandbox.socket_dir,
        sandbox.limits,
        env=env,
        hide=sandbox.hide,
        run_group=sandbox.run_group,
    )
    try:
        # stdin stays open while the probe runs: its end stops the box (``_GUARD``).
        probe = subprocess.Popen(
            boxed.argv,
            env=boxed.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = probe.wait(timeout=_PROBE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(probe.pid, signal.SIGKILL)
            probe.wait()
            raise SandboxUnavailable(f"the sandbox did not start within {_PROBE_S:g} s") from None
        finally:
            assert probe.stdin is not None and probe.stdout is not None
            probe.stdin.close()
            out = probe.stdout.read().decode(errors="replace").strip().splitlines()
            probe.stdout.close()
    finally:
        boxed.cleanup()
    if status == 0:
        return None
    if status == _MISSING and out:
        return out[-1]
    why = out[-1] if out else f"status {status}"
    raise SandboxUnavailable(f"the sandbox does not start: {why}")


def prepare_socket_dir(path: Path) -> None:
    """Let uid nobody (sandboxed or containerised bots) reach the arena's socket directory."""
    path.chmod(0o755)


def prepare_socket(path: Path) -> None:
    """Let uid nobody connect to the arena's socket (connecting needs write permission)."""
    path.chmod(0o666)


@contextlib.contextmanager
def socket_directory(prefix: str = "arena-") -> Iterator[Path]:
    """A per-run temporary directory for the arena's Unix socket, readable by uid nobody."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        path = Path(tmp)
        prepare_socket_dir(path)
        yield path


def default_limits() -> Limits:
    """The limits ``arena match`` and ``arena tournament`` use."""
    return Limits()
