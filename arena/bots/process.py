"""Bot processes started from plain shell commands, on trio.

A bot command is run by ``/bin/sh -c`` in its own session (process group), with the arena's
virtualenv ``bin`` first on ``PATH`` (so ``arena bot rules`` resolves) and ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_SEED`` in its environment. Its stdout and stderr go through a pipe to a
log file that keeps at most :data:`LOG_CAP` bytes (:class:`BotOutput`). At the end the whole group
is terminated, then killed.

With a :class:`~arena.bots.sandbox.Sandbox` the command runs boxed (arena/bots/sandbox.py):
bubblewrap with no network, the bot's directory read-only, resource limits; it then reaches the
arena only through the Unix socket in the sandbox's socket directory, so its ``ARENA_ADDRESS`` must
be that socket's ``unix:`` address.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

from arena.bots.logs import DRAIN_S, LOG_CAP, BotOutput, last_line
from arena.bots.reaper import member_group, reap
from arena.bots.sandbox import Sandbox, SandboxedCommand, wrap

#: Seconds between SIGTERM and SIGKILL when stopping a bot.
STOP_GRACE_S = 1.0

#: Seconds a bot has to exit on its own once its stream has ended after its last match (to run
#: its end_match, save what it learnt, flush its log) before it is stopped.
EXIT_GRACE_S = 2.0


def bot_environment(
    address: str, token: str, seed: int, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a bot process."""
    env = dict(os.environ if base is None else base)
    # The arena's address is its own, in plaintext: how its operator reaches other hosts is not.
    for name in ("ARENA_CA_CERT", "ARENA_RESOLVE"):
        env.pop(name, None)
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
    #: An unboxed bot's cgroup in the run's (removed at :meth:`stop`), if any.
    tracked: list[Path] = field(default_factory=list)

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
        if self.tracked:
            self.tracked = await trio.to_thread.run_sync(reap, self.tracked, 1.0)
        await self.output.finish_async(STOP_GRACE_S, hurry=True)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)


@dataclass(slots=True)
class StdioPipes:
    """The pipes of a bot that speaks over its stdin and stdout (``protocol = "stdio"``): the
    bot's ends, closed here once it has started, and the arena's, which the server takes."""

    #: The bot's stdin (read end).
    bot_stdin: int
    #: The arena's end of it.
    to_bot: int
    #: The bot's stdout (write end).
    bot_stdout: int
    #: The arena's end of it.
    from_bot: int

    @classmethod
    def open(cls) -> StdioPipes:
        """Two new pipes."""
        bot_stdin, to_bot = os.pipe()
        try:
            from_bot, bot_stdout = os.pipe()
        except BaseException:
            os.close(bot_stdin)
            os.close(to_bot)
            raise
        return cls(bot_stdin, to_bot, bot_stdout, from_bot)

    def close_bot_ends(self) -> None:
        """Close the bot's ends (it has its own copies once started)."""
        for fd in (self.bot_stdin, self.bot_stdout):
            with contextlib.suppress(OSError):
                os.close(fd)

    def close_all(self) -> None:
        """Close every end (the bot did not start, or the server could not take them)."""
        self.close_bot_ends()
        for fd in (self.to_bot, self.from_bot):
            with contextlib.suppress(OSError):
                os.close(fd)


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


async def launch_bot(
    command: str,
    env: Mapping[str, str],
    log_path: Path,
    sandbox: Sandbox | None = None,
    log_cap: int = LOG_CAP,
    run_group: str = "",
    stdio: StdioPipes | None = None,
) -> BotProcess:
    """Start ``command`` with ``env``; its output goes to ``log_path`` (at most ``log_cap``
    bytes of it, see :class:`BotOutput`). With ``stdio`` its stdin and stdout are those pipes
    and only its stderr goes to the log (the caller closes the bot's ends).

    With ``sandbox`` the command runs boxed (raises ``SandboxUnavailable`` when the machine
    cannot box it); without, it joins a cgroup inside the run's cgroup ``run_group``, if given,
    where the run's reaper finds it (arena/bots/reaper.py).
    """
    # Before boxing: the box hides the output directory, which must exist to be covered.
    log_path.parent.mkdir(parents=True, exist_ok=True)
    boxed: SandboxedCommand | None = None
    run: str | list[str] = command
    tracked: list[Path] = []
    if sandbox is None:
        group = member_group(run_group)
        if group is not None:
            tracked.append(group)
            run = f'echo $$ > "{group / "cgroup.procs"}" || exit 125; {command}'
    else:
        boxed = wrap(
            command,
            sandbox.bot_dir,
            sandbox.socket_dir,
            sandbox.limits,
            env=env,
            hide=sandbox.hide,
            run_group=sandbox.run_group,
            stdin_fd=None if stdio is None else stdio.bot_stdin,
        )
        run, env = boxed.argv, boxed.env
    try:
        # A pipe, not the log file itself: a file would let the bot fill the disk.
        output = BotOutput(log_path, log_cap)
    except BaseException:
        if boxed is not None:
            boxed.cleanup()
        reap(tracked, 1.0)
        raise
    try:
        process = await trio.lowlevel.open_process(
            run,
            shell=sandbox is None,
            env=dict(env),
            # A boxed bot's guard shell watches a pipe the arena holds (arena/bots/sandbox.py).
            stdin=_stdin(boxed, stdio),
            stdout=output.child_fd if stdio is None else stdio.bot_stdout,
            stderr=subprocess.STDOUT if stdio is None else output.child_fd,
            start_new_session=True,
            pass_fds=(stdio.bot_stdin,) if stdio is not None and boxed is not None else (),
        )
    except BaseException:
        output.close_child_fd()  # the log ends empty
        if boxed is not None:
            boxed.cleanup()
        reap(tracked, 1.0)
        raise
    output.close_child_fd()
    return BotProcess(command, log_path, process, output, boxed, tracked)


def _stdin(boxed: SandboxedCommand | None, stdio: StdioPipes | None) -> int:
    """A bot process's stdin: a boxed bot's guard pipe (its own stdin is passed on to it),
    else the stdio bot's pipe, else nothing."""
    if boxed is not None:
        return subprocess.PIPE
    return subprocess.DEVNULL if stdio is None else stdio.bot_stdin
