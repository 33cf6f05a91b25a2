"""Starting one seat's bot, whatever it is: a Docker image in a locked-down container, a shell
command boxed by the sandbox, or a plain process (``--no-sandbox``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots.command import BotProgram, host_names
from arena.bots.docker import check_available as check_docker
from arena.bots.docker import launch_container, parse_image_bot
from arena.bots.process import BotProcess, RunningBot, StdioPipes, bot_environment, launch_bot
from arena.bots.reaper import BotRun
from arena.bots.sandbox import (
    NO_SANDBOX_FLAG,
    SOCKET_NAME,
    Limits,
    Sandbox,
    SandboxRefused,
    check_available,
    default_limits,
    missing_inside,
)
from arena.errors import ArenaError

#: Hands a started stdio bot's pipes to the arena server (``ArenaServer.attach_stdio``):
#: ``(from_bot, to_bot, label)``; the server owns both descriptors from the call on.
StdioAttach = Callable[[int, int, str], Awaitable[None]]


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
    #: The run's cgroup, in which sandboxed bots' cgroups go (:class:`~arena.bots.reaper.BotRun`:
    #: its reaper kills what is left in it when the arena ends, however); ``""``: none.
    run_group: str = ""

    @classmethod
    def of_run(
        cls,
        run: BotRun,
        limits: Limits | None,
        container_limits: Limits | None = None,
        hide: tuple[Path, ...] = (),
    ) -> Confinement:
        """The confinement of the bots of ``run``: its socket directory and its cgroup."""
        return cls(run.socket_dir, limits, container_limits, hide, run.cgroup)

    @property
    def address(self) -> str:
        """The arena's address for a confined bot."""
        return f"unix:{self.socket_dir / SOCKET_NAME}"


async def start_bot(
    program: BotProgram | str,
    env: Mapping[str, str],
    log_path: Path,
    confinement: Confinement | None = None,
    attach: StdioAttach | None = None,
) -> RunningBot:
    """Start one seat's bot: a container when ``program`` names an image (its ``command``, if not
    empty, overrides the image's own) or its command is ``image:IMAGE [CMD]``, else its shell
    command, in its directory (default: the current one), sandboxed when ``confinement`` has
    limits. A plain string is a command. A confined bot's ``ARENA_ADDRESS`` becomes the Unix
    socket's. A ``protocol = "stdio"`` program speaks over pipes that ``attach`` hands to the
    server. Raises ``OSError`` or :class:`~arena.errors.ArenaError` when the bot cannot start.
    """
    if isinstance(program, str):
        program = BotProgram(program)
    if program.protocol == "stdio":
        return await _start_stdio_bot(program, env, log_path, confinement, attach)
    command, image = program.command, program.image or None
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
    return await _start_command(command, program.directory, env, log_path, confinement)


async def _start_command(
    command: str,
    bot_dir: Path | None,
    env: Mapping[str, str],
    log_path: Path,
    confinement: Confinement | None,
    stdio: StdioPipes | None = None,
) -> BotProcess:
    """Start a shell command in ``bot_dir`` (default: the current one), sandboxed when
    ``confinement`` has limits; over ``stdio``'s pipes, if given."""
    where = bot_dir if bot_dir is not None else Path.cwd()
    if confinement is not None and confinement.limits is not None:
        sandbox = Sandbox(
            confinement.limits,
            where,
            confinement.socket_dir,
            confinement.hide,
            confinement.run_group,
        )
        boxed_env = {**env, "ARENA_ADDRESS": confinement.address}
        return await launch_bot(command, boxed_env, log_path, sandbox, stdio=stdio)
    if bot_dir is not None:
        command = f"cd {shlex.quote(str(bot_dir))} && {command}"
    run_group = confinement.run_group if confinement is not None else ""
    return await launch_bot(command, env, log_path, run_group=run_group, stdio=stdio)


async def _start_stdio_bot(
    program: BotProgram,
    env: Mapping[str, str],
    log_path: Path,
    confinement: Confinement | None,
    attach: StdioAttach | None,
) -> RunningBot:
    """Start a stdio bot (a command, boxed as any) and hand its pipes to the server."""
    if attach is None:
        raise ArenaError('this command does not run stdio bots (protocol = "stdio")')
    if program.image or parse_image_bot(program.command) is not None:
        raise ArenaError("a stdio bot is a command, not an image")
    pipes = StdioPipes.open()
    try:
        proc = await _start_command(
            program.command, program.directory, env, log_path, confinement, pipes
        )
    except BaseException:
        pipes.close_all()
        raise
    pipes.close_bot_ends()
    try:
        await attach(pipes.from_bot, pipes.to_bot, str(proc.process.pid))
    except BaseException:
        await proc.stop()
        raise
    return proc


def confine(programs: Sequence[BotProgram], no_sandbox: bool = False) -> Limits | None:
    """The sandbox limits for bots started from ``programs`` (``None`` with ``no_sandbox``: plain
    processes), as ``arena match``, ``arena tournament`` and ``arena replay ask`` choose them.

    Raises one line, before anything starts, when the bots need a sandbox or a Docker engine this
    machine lacks.
    """
    images = [p for p in programs if p.image or parse_image_bot(p.command) is not None]
    if images:
        check_docker()
    if no_sandbox:
        return None
    if len(images) < len(programs):
        check_available()
    return default_limits()


class NotInBox(SandboxRefused):
    """A bot command names a program or file its sandbox does not show it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, f" or pass {NO_SANDBOX_FLAG}")


def check_in_box(bots: Sequence[tuple[str, BotProgram]], confinement: Confinement) -> None:
    """Raise :class:`NotInBox`, naming the bot (each labelled, e.g. ``bot "x"``), when a command
    names a program or file this machine has but its box does not show it (a path outside the
    bot's directory and the system's), which would forfeit every match it plays.

    One box per distinct command and directory, started as the bot's would be; nothing to do when
    ``confinement`` runs commands unsandboxed. Names the machine lacks are the shell's to report.
    """
    if confinement.limits is None:
        return
    seen: set[tuple[str, Path]] = set()
    for label, program in bots:
        if program.image or parse_image_bot(program.command) is not None:
            continue
        where = (program.directory or Path.cwd()).resolve()
        if (program.command, where) in seen:
            continue
        seen.add((program.command, where))
        names, paths = host_names(program.command, where)
        if not names and not paths:
            continue
        sandbox = Sandbox(
            confinement.limits,
            where,
            confinement.socket_dir,
            confinement.hide,
            confinement.run_group,
        )
        env = bot_environment(confinement.address, "", 0)
        missing = missing_inside(names, paths, sandbox, env)
        if missing is None:
            continue
        raise NotInBox(f"{label}: {_not_in_box(missing, missing in names, where)}")


def _not_in_box(missing: str, program: bool, where: Path) -> str:
    """Why ``missing`` (a program on PATH, or a path from ``where``) is not seen inside the bot's
    box, and what to do about it."""
    binds = (
        f"inside the sandbox (bubblewrap binds only the bot's directory {where}, /usr, /etc, /opt "
        "and the arena's runtime: docs/sandbox.md)"
    )
    if program:
        return f"program {missing} is not on PATH {binds}; move it under {where}"
    path = Path(os.path.normpath(where / missing))
    target = path.resolve()
    if path.is_relative_to(where) and not target.is_relative_to(where):
        # Under the bot's directory already, so "move it there" is no advice: it is a link (a
        # venv's python) to something outside the box.
        inside = [d for d in path.parents if d.is_relative_to(where)]
        venv = next((d for d in inside if (d / "pyvenv.cfg").is_file()), None)
        if venv is not None:
            return (
                f"{missing} is the Python of the virtual environment {venv}, a link to {target}, "
                f"which is not found {binds}; make the environment again from a Python under "
                f"/usr or /opt (e.g. /usr/bin/python3 -m venv --clear {venv}, then install its "
                "packages again)"
            )
        return (
            f"{missing} is a link to {target}, which is not found {binds}; "
            f"move {target} under {where}"
        )
    return f"{missing} is not found {binds}; move it under {where}"
