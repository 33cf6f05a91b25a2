"""The arena's state directory: the bot registry and its tokens live in one place.

``--home DIR`` on a command wins, then the ``ARENA_HOME`` environment variable, then
``$XDG_DATA_HOME/card-arena`` (``~/.local/share/card-arena`` when XDG_DATA_HOME is unset). The
Docker image sets ``ARENA_HOME=/data``, its volume. The directory is created on first use, readable
by its owner only (it holds the registry of bots and their token hashes).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from arena.errors import ArenaError, UsageError

#: The environment variable naming the state directory.
ENV_VAR = "ARENA_HOME"
#: The registry's file inside the state directory.
REGISTRY_FILE = "bots.sqlite"


def default_home() -> Path:
    """``$XDG_DATA_HOME/card-arena``, else ``~/.local/share/card-arena``."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "card-arena"


def arena_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The state directory: ``explicit`` (from ``--home``), else ``$ARENA_HOME``, else the default.

    Nothing is created; see :func:`ensure_home`. An empty ``explicit`` (``--home ""``, an unset
    shell variable) is refused rather than taken for "the default": that would put the state
    where the user did not ask.
    """
    if explicit is not None:
        if not str(explicit):
            raise UsageError("--home is empty; give the arena's state directory")
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return default_home()


def ensure_home(home: Path) -> Path:
    """Create ``home`` (mode 0700) if needed and return it; :class:`ArenaError` when it cannot
    be (``$ARENA_HOME`` naming a file, a read-only place)."""
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as err:
        raise ArenaError(
            f"{home}: cannot use it as the arena's home ({err.strerror}); "
            f"set --home or ${ENV_VAR} to a directory"
        ) from None
    return home


def use_home(explicit: str | os.PathLike[str] | None) -> Path:
    """Apply a command's ``--home``: it becomes ``$ARENA_HOME`` for this process, so every part
    of the command (tournament configs resolving registered bots, the server) sees one home."""
    home = arena_home(explicit)
    os.environ[ENV_VAR] = str(home)
    return home


def registry_path(home: Path) -> Path:
    """The registry database inside ``home``."""
    return home / REGISTRY_FILE


def add_home_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--home DIR`` to a subcommand that touches the arena's state."""
    parser.add_argument(
        "--home",
        default=None,
        metavar="DIR",
        help=f"the arena's state directory (default: ${ENV_VAR}, else {default_home()})",
    )
