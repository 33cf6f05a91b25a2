"""How to start a bot (:class:`BotProgram`), and its shell command checked before it is stored or
run: a tournament config's ``command`` and ``arena submit --command`` share this check, so a
command that cannot start is refused in one line instead of forfeiting every match it is seated
in.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arena.errors import ArenaError

#: What runs a bot: a shell command, or a Docker image.
BotKind = Literal["command", "image"]

#: How a bot talks to the arena: gRPC (it connects to ``ARENA_ADDRESS``), or JSON lines on its
#: stdin and stdout (arena/server/stdio.py).
BotProtocol = Literal["grpc", "stdio"]

#: The protocols a bot entry may name.
PROTOCOLS: tuple[BotProtocol, ...] = ("grpc", "stdio")

#: ``arena match --bot stdio:CMD``: the bot ``CMD`` speaks over its stdin and stdout.
STDIO_PREFIX = "stdio:"


@dataclass(frozen=True, slots=True)
class BotProgram:
    """How to start a bot, wherever it is described (a tournament config's ``bots``, a registered
    version, a seat of ``arena match``): a shell command run in ``workdir``, or a Docker image.

    The arena sets ``ARENA_ADDRESS``, ``ARENA_TOKEN`` and ``ARENA_SEED`` for it.
    """

    #: Shell command (run by ``/bin/sh -c``); with ``image``, the container's command instead of
    #: the image's own (``""``: the image's).
    command: str = ""
    #: Docker image, or ``""`` for a local command.
    image: str = ""
    #: The command's directory, or ``""`` for the current one.
    workdir: str = ""
    #: How it talks to the arena.
    protocol: BotProtocol = "grpc"

    @classmethod
    def of_command(cls, command: str) -> BotProgram:
        """The program of an ``arena match --bot`` command: ``stdio:CMD`` is ``CMD`` speaking
        over its stdin and stdout, anything else a command as given. Raises
        :class:`ArenaError` for ``stdio:`` alone."""
        if command.startswith(STDIO_PREFIX):
            rest = command[len(STDIO_PREFIX) :].strip()
            if not rest:
                raise ArenaError(f"{STDIO_PREFIX} needs a command, e.g. {STDIO_PREFIX}./my-bot")
            return cls(rest, protocol="stdio")
        return cls(command)

    @property
    def kind(self) -> BotKind:
        """``image`` or ``command``."""
        return "image" if self.image else "command"

    @property
    def target(self) -> str:
        """What runs: the command or the image."""
        return self.image if self.image else self.command

    @property
    def directory(self) -> Path | None:
        """The command's directory, or ``None`` for the current one."""
        return Path(self.workdir) if self.workdir else None


def bot_path() -> str:
    """PATH for bot commands: the running interpreter's bin directory first, so ``arena`` and
    the venv's tools resolve inside bot commands."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def check_command(command: str, workdir: Path | None = None) -> None:
    """Raise :class:`ArenaError` (the problem, without the key naming the command) when
    ``command``, run by the shell in ``workdir`` (default: the current directory), cannot start
    its program: it does not parse, is empty, or its program is not found."""
    if workdir is not None and not workdir.is_dir():
        raise ArenaError(f"its directory {str(workdir)!r} not found")
    try:
        words = shlex.split(command)
    except ValueError as err:
        raise ArenaError(f"cannot parse the command: {err}") from None
    if not words:
        raise ArenaError("empty command")
    program = words[0]
    if "=" in program:  # ``VAR=value prog``: leave shell forms to the shell
        return
    if os.sep in program:
        # The shell runs the command in ``workdir``: a relative program is found there.
        if not (workdir / program if workdir is not None else Path(program)).exists():
            raise ArenaError(f"program {program!r} not found")
        return
    if shutil.which(program, path=bot_path()) is None:
        raise ArenaError(f"program {program!r} not found on PATH")


def host_names(command: str, workdir: Path | None = None) -> tuple[list[str], list[str]]:
    """What ``command``, run by the shell in ``workdir`` (default: the current directory), names
    that this machine has: its program when a bare name found on PATH (``([name], …)``), and each
    word with a slash that names an existing path, its program among them (``(…, [path, …])``).

    A sandbox must show the bot the same (:func:`arena.bots.sandbox.missing_inside`). A command
    that does not parse or leaves its parsing to the shell (``VAR=value prog``) names nothing.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return [], []
    if not words or "=" in words[0]:
        return [], []
    base = workdir if workdir is not None else Path.cwd()
    programs = (
        [words[0]] if os.sep not in words[0] and shutil.which(words[0], path=bot_path()) else []
    )
    paths = [w for w in dict.fromkeys(words) if os.sep in w and (base / w).exists()]
    return programs, paths
