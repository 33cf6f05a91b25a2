"""Launching bot processes from plain shell commands, on trio.

A bot command is run by ``/bin/sh -c`` in its own session (process group), with the arena's
virtualenv ``bin`` first on ``PATH`` (so ``arena bot rules`` resolves) and ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_SEED`` in its environment. Its stdout and stderr go to a log file. At the
end the whole group is terminated, then killed.

With a :class:`~arena.sandbox.Sandbox` the command runs boxed (arena/sandbox.py): bubblewrap with
no network, the bot's directory read-only, resource limits; it then reaches the arena only
through the Unix socket in the sandbox's socket directory, so its ``ARENA_ADDRESS`` must be that
socket's ``unix:`` address.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

import trio

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.sandbox import Limits, Sandbox, SandboxedCommand

#: Seconds between SIGTERM and SIGKILL when stopping a bot.
STOP_GRACE_S = 1.0


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
    _log: BinaryIO
    #: The sandbox wrapping, when boxed (its cgroups are removed at :meth:`stop`).
    sandboxed: SandboxedCommand | None = None

    @property
    def returncode(self) -> int | None:
        """Exit status once it has exited."""
        return self.process.returncode

    async def wait(self) -> int:
        """Wait for the process to exit; its status."""
        return await self.process.wait()

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
        self._log.close()

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
    return next((ln for ln in reversed(lines) if ln), "")[:limit]


async def launch_bot(
    command: str, env: Mapping[str, str], log_path: Path, sandbox: Sandbox | None = None
) -> BotProcess:
    """Start ``command`` with ``env``; its output goes to ``log_path``.

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
    log_file = log_path.open("wb")
    try:
        process = await trio.lowlevel.open_process(
            run,
            shell=sandbox is None,
            env=dict(env),
            # A boxed bot's guard shell watches a pipe the arena holds (arena/sandbox.py).
            stdin=subprocess.DEVNULL if boxed is None else subprocess.PIPE,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except BaseException:
        log_file.close()
        if boxed is not None:
            boxed.cleanup()
        raise
    return BotProcess(command, log_path, process, log_file, boxed)


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
