"""Starting one seat's bot, whatever it is: a Docker image in a locked-down container, a shell
command boxed by the sandbox, or a plain process (``--no-sandbox``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from arena.bots.command import BotProgram
from arena.bots.docker import launch_container, parse_image_bot
from arena.bots.process import RunningBot, launch_bot
from arena.bots.sandbox import SOCKET_NAME, Limits, Sandbox
from arena.errors import ArenaError


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
        return f"unix:{self.socket_dir / SOCKET_NAME}"


async def start_bot(
    program: BotProgram | str,
    env: Mapping[str, str],
    log_path: Path,
    confinement: Confinement | None = None,
) -> RunningBot:
    """Start one seat's bot: a container when ``program`` names an image (its ``command``, if not
    empty, overrides the image's own) or its command is ``image:IMAGE [CMD]``, else its shell
    command, in its directory (default: the current one), sandboxed when ``confinement`` has
    limits. A plain string is a command. A confined bot's ``ARENA_ADDRESS`` becomes the Unix
    socket's. Raises ``OSError`` or :class:`~arena.errors.ArenaError` when the bot cannot start.
    """
    if isinstance(program, str):
        program = BotProgram(program)
    command, image, bot_dir = program.command, program.image or None, program.directory
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
