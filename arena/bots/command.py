"""A bot's shell command checked before it is stored or run: a tournament config's ``command``
and ``arena submit --command`` share this check, so a command that cannot start is refused in
one line instead of forfeiting every match it is seated in.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from arena.errors import ArenaError


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
