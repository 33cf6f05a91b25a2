"""Launching bot processes from plain shell commands, on trio.

A bot command is run by ``/bin/sh -c`` in its own session (process group), with the arena's
virtualenv ``bin`` first on ``PATH`` (so ``arena bot rules`` resolves) and ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_SEED`` in its environment. Its stdout and stderr go through a pipe to a
log file that keeps at most :data:`LOG_CAP` bytes (:class:`BotOutput`). At the end the whole group
is terminated, then killed.

With a :class:`~arena.sandbox.Sandbox` the command runs boxed (arena/sandbox.py): bubblewrap with
no network, the bot's directory read-only, resource limits; it then reaches the arena only
through the Unix socket in the sandbox's socket directory, so its ``ARENA_ADDRESS`` must be that
socket's ``unix:`` address.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.sandbox import Limits, Sandbox, SandboxedCommand

#: Seconds between SIGTERM and SIGKILL when stopping a bot.
STOP_GRACE_S = 1.0

#: Most bytes of a bot's output its log keeps, per seat per match: the first ``LOG_CAP -
#: LOG_TAIL`` (how it started) and the last ``LOG_TAIL`` (how it ended). A bot printing a line per
#: decision writes well under 1 MiB a match, so 4 MiB leaves room for verbose debugging, while a
#: tournament's thousands of seat logs stay within a few GiB even if every bot floods.
LOG_CAP = 4 * 1024 * 1024
#: Bytes of the end of a bot's output kept when it writes more than :data:`LOG_CAP`.
LOG_TAIL = 64 * 1024
#: Past the cap the arena reads a bot's output at most this fast (bytes a second): a bot that
#: writes faster waits on its writes instead of costing the arena a core to throw them away.
LOG_DRAIN_RATE = 256 * 1024
#: Seconds to let a bot's last output reach its log after the bot exits (children it left may
#: hold the pipe open for longer).
DRAIN_S = 0.5
_CHUNK = 64 * 1024
_NOTE_ROOM = 512


class CappedLog:
    """A log file that keeps at most ``cap`` bytes of what is written to it: the head, then a
    note of how much was dropped, then the last ``tail`` bytes (written at :meth:`close`; memory
    holds no more than ``tail``). Write errors (a full disk) lose the output, never raise.
    """

    def __init__(self, path: Path, cap: int = LOG_CAP, tail: int = LOG_TAIL) -> None:
        self._file = path.open("wb")
        self._cap = cap
        self._tail_max = min(tail, cap // 2)
        # Room kept for the note, so that the file never exceeds the cap.
        self._head_left = max(0, cap - self._tail_max - _NOTE_ROOM)
        self._tail = bytearray()
        #: Bytes written to it.
        self.total = 0
        #: Bytes of them not in the file.
        self.dropped = 0
        self._failed = False

    @property
    def past_head(self) -> bool:
        """Whether the head is full (what comes now only reaches the kept tail)."""
        return self._head_left == 0

    def write(self, data: bytes) -> None:
        """Add ``data``."""
        self.total += len(data)
        if self._head_left:
            head = data[: self._head_left]
            self._head_left -= len(head)
            data = data[len(head) :]
            self._write(head)
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_max
            if excess > 0:
                del self._tail[:excess]
                self.dropped += excess

    def close(self, why: str = "") -> None:
        """Write the note (if anything was dropped; ``why`` is added to it) and the tail."""
        tail = bytes(self._tail)
        if self.dropped:
            # Let the kept tail start at a line: a fragment would be mistaken for a whole line.
            cut = tail.find(b"\n") + 1
            if 0 < cut < len(tail):
                self.dropped += cut
                tail = tail[cut:]
            head = self.total - self.dropped - len(tail)
            note = (
                f"\n[arena: {self.dropped} bytes of output dropped here: the bot wrote "
                f"{self.total} bytes, over the log cap of {self._cap}; the log keeps the first "
                f"{head} and the last {len(tail)}{why}]\n"
            )
            self._write(note.encode()[:_NOTE_ROOM])
        self._write(tail)
        with contextlib.suppress(OSError):
            self._file.close()

    def _write(self, data: bytes) -> None:
        if self._failed:
            return
        try:
            self._file.write(data)
            self._file.flush()  # readable at once: last_line(), a user's `tail -f`
        except OSError:
            self._failed = True


class BotOutput:
    """A bot's stdout and stderr: a pipe (give the child :attr:`child_fd`) that a thread copies
    into a :class:`CappedLog` at ``path``. Past the log's head the pipe is read at ``rate`` bytes
    a second at most. The thread ends at end of file (every writer gone) and closes the log.
    """

    def __init__(
        self,
        path: Path,
        cap: int = LOG_CAP,
        tail: int = LOG_TAIL,
        rate: int = LOG_DRAIN_RATE,
    ) -> None:
        self.log = CappedLog(path, cap, tail)
        try:
            # Non-inheritable: a bot inheriting another's write end would hold that pipe open.
            self._read_fd, self.child_fd = os.pipe()
        except BaseException:
            self.log.close()
            raise
        self._rate = rate
        self._hurry = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"output {path.name}", daemon=True)
        self._thread.start()

    def close_child_fd(self) -> None:
        """Drop the arena's copy of the pipe's write end (once the child has its own, or did not
        start): end of file then comes when the bot and its children are gone."""
        if self.child_fd >= 0:
            os.close(self.child_fd)
            self.child_fd = -1

    def finish(self, timeout: float, hurry: bool = False) -> bool:
        """Wait up to ``timeout`` seconds for the log to be complete; whether it is. ``hurry``
        (the bot's processes are gone) reads what is left at full speed meanwhile."""
        if hurry:
            self._hurry.set()
        self._thread.join(timeout)
        done = not self._thread.is_alive()
        if hurry and not done:
            # Still open after the bot was stopped: a process that escaped its group holds the
            # pipe. Back to the paced rate, so its chatter costs no more than a live bot's.
            self._hurry.clear()
        return done

    async def finish_async(self, timeout: float, hurry: bool = False) -> bool:
        """:meth:`finish` for trio code."""
        return await trio.to_thread.run_sync(self.finish, timeout, hurry, abandon_on_cancel=True)

    def _run(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self._read_fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self.log.write(chunk)
                if self.log.past_head and not self._hurry.is_set():
                    self._hurry.wait(len(chunk) / self._rate)
        finally:
            os.close(self._read_fd)
            self.log.close(
                f". Past the cap the arena reads at most {self._rate} bytes/s of output, "
                "so a bot writing faster waits on its writes"
            )


def bot_environment(
    address: str, token: str, seed: int, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a bot process."""
    env = dict(os.environ if base is None else base)
    bin_dir = str(Path(sys.executable).parent)
    path = env.get("PATH", "")
    env["PATH"] = bin_dir + (os.pathsep + path if path else "")
    env["ARENA_ADDRESS"] = address
    env["ARENA_TOKEN"] = token
    env["ARENA_SEED"] = str(seed)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass(eq=False)
class BotProcess:
    """A running bot command."""

    #: The shell command.
    command: str
    #: Where its output goes.
    log_path: Path
    #: The process (``/bin/sh`` or what it exec'd).
    process: trio.Process
    #: Its output, on its way to :attr:`log_path`.
    output: BotOutput
    #: The sandbox wrapping, when boxed (its cgroups are removed at :meth:`stop`).
    sandboxed: SandboxedCommand | None = None

    @property
    def returncode(self) -> int | None:
        """Exit status once it has exited."""
        return self.process.returncode

    async def wait(self) -> int:
        """Wait for the process to exit; its status (its last output is in the log by then,
        unless children it left hold its output open)."""
        code = await self.process.wait()
        await self.output.finish_async(DRAIN_S)
        return code

    def last_output(self) -> str:
        """The last non-empty line the bot wrote (for fault details)."""
        return last_line(self.log_path)

    def exit_detail(self, with_output: bool = False) -> str:
        """``bot process exited with status 1``: why the process is gone; ``with_output`` adds
        the bot's last line of output (keep that out of public fault details: a bot may print its
        own private cards)."""
        code = self.process.returncode
        if code is None:
            return "still running"
        how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        tail = self.last_output() if with_output else ""
        return f"bot process {how}" + (f": {tail}" if tail else "")

    async def stop(self) -> None:
        """Terminate the bot's whole process group, then kill it if it lingers."""
        if self.process.returncode is None:
            self._signal(signal.SIGTERM)
            with trio.move_on_after(STOP_GRACE_S):
                await self.process.wait()
        if self.process.returncode is None:
            self._signal(signal.SIGKILL)
            await self.process.wait()
        else:
            self._signal(signal.SIGKILL)  # children the shell may have left behind
        if self.sandboxed is not None:
            if self.process.stdin is not None:
                await self.process.stdin.aclose()
            await trio.to_thread.run_sync(self.sandboxed.cleanup)
        await self.output.finish_async(STOP_GRACE_S, hurry=True)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)


class RunningBot(Protocol):
    """What a match needs of a started bot, process or container."""

    async def wait(self) -> int:
        """Wait for the bot to exit; its status."""
        ...

    def exit_detail(self, with_output: bool = False) -> str:
        """Why the bot is gone, for the fault record (``with_output``: plus its last line)."""
        ...

    async def stop(self) -> None:
        """Stop the bot and release what it held."""
        ...


def last_line(path: Path, limit: int = 300) -> str:
    """The last non-empty line of a log file, shortened to ``limit`` characters."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - 4096))
            lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines()]
    except OSError:
        return ""
    # Node (and the JVM) print an uncaught error's stack frames after it, and Node its version
    # last: the error itself is the telling line.
    said = [ln for ln in lines if ln and not _NOT_TELLING.match(ln)]
    return (said[-1] if said else "")[:limit]


#: Lines that follow an uncaught error: stack frames (``at f (bot.js:3:9)``) and Node's
#: ``Node.js v20.20.2``.
_NOT_TELLING = re.compile(r"at \S|Node\.js v\d+(\.\d+)*$")


async def launch_bot(
    command: str,
    env: Mapping[str, str],
    log_path: Path,
    sandbox: Sandbox | None = None,
    log_cap: int = LOG_CAP,
) -> BotProcess:
    """Start ``command`` with ``env``; its output goes to ``log_path`` (at most ``log_cap``
    bytes of it, see :class:`BotOutput`).

    With ``sandbox`` the command runs boxed (raises ``SandboxUnavailable`` when the machine
    cannot box it).
    """
    # Before boxing: the box hides the output directory, which must exist to be covered.
    log_path.parent.mkdir(parents=True, exist_ok=True)
    boxed: SandboxedCommand | None = None
    run: str | list[str] = command
    if sandbox is not None:
        from arena.sandbox import wrap

        boxed = wrap(
            command,
            sandbox.bot_dir,
            sandbox.socket_dir,
            sandbox.limits,
            env=env,
            hide=sandbox.hide,
        )
        run, env = boxed.argv, boxed.env
    try:
        # A pipe, not the log file itself: a file would let the bot fill the disk.
        output = BotOutput(log_path, log_cap)
    except BaseException:
        if boxed is not None:
            boxed.cleanup()
        raise
    try:
        process = await trio.lowlevel.open_process(
            run,
            shell=sandbox is None,
            env=dict(env),
            # A boxed bot's guard shell watches a pipe the arena holds (arena/sandbox.py).
            stdin=subprocess.DEVNULL if boxed is None else subprocess.PIPE,
            stdout=output.child_fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except BaseException:
        output.close_child_fd()  # the log ends empty
        if boxed is not None:
            boxed.cleanup()
        raise
    output.close_child_fd()
    return BotProcess(command, log_path, process, output, boxed)


@dataclass(frozen=True, slots=True)
class Confinement:
    """How the bots of one run are confined (``arena match``, a tournament).

    Sandboxed commands and containers reach the arena only through its Unix socket, which
    lives alone in ``socket_dir`` (a per-run directory that uid nobody may enter).
    """

    #: The directory of the arena's Unix socket.
    socket_dir: Path
    #: Limits of sandboxed commands; ``None`` runs commands unsandboxed (``--no-sandbox``).
    limits: Limits | None = None
    #: Limits of bot containers (they are always confined).
    container_limits: Limits | None = None
    #: Paths sandboxed bots must not see even inside bound directories (state, records).
    hide: tuple[Path, ...] = ()

    @property
    def address(self) -> str:
        """The arena's address for a confined bot."""
        from arena.sandbox import SOCKET_NAME

        return f"unix:{self.socket_dir / SOCKET_NAME}"


async def start_bot(
    command: str,
    env: Mapping[str, str],
    log_path: Path,
    confinement: Confinement | None = None,
    *,
    image: str | None = None,
    bot_dir: Path | None = None,
) -> RunningBot:
    """Start one seat's bot: a container when ``image`` is given (``command``, if not empty,
    overrides the image's own) or ``command`` is ``image:IMAGE [CMD]``, else the shell
    ``command``, sandboxed when ``confinement`` has limits. ``bot_dir`` is the command's
    directory (default: the current one). A confined bot's ``ARENA_ADDRESS`` becomes the Unix
    socket's. Raises ``OSError`` or :class:`~arena.errors.ArenaError` when the bot cannot start.
    """
    from arena.docker_bots import launch_container, parse_image_bot
    from arena.sandbox import Limits, Sandbox

    if image is None:
        parsed = parse_image_bot(command)
        if parsed is not None:
            image, override = parsed
            command = override or ""
    if image is not None:
        if confinement is None:
            raise ArenaError("a bot image needs the arena's Unix socket (no confinement given)")
        return await launch_container(
            image,
            {**env, "ARENA_ADDRESS": confinement.address},
            log_path,
            confinement.socket_dir,
            confinement.container_limits or Limits(),
            command or None,
        )
    where = bot_dir if bot_dir is not None else Path.cwd()
    if confinement is not None and confinement.limits is not None:
        sandbox = Sandbox(confinement.limits, where, confinement.socket_dir, confinement.hide)
        return await launch_bot(
            command, {**env, "ARENA_ADDRESS": confinement.address}, log_path, sandbox
        )
    if bot_dir is not None:
        command = f"cd {shlex.quote(str(bot_dir))} && {command}"
    return await launch_bot(command, env, log_path)
