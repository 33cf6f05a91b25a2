"""Where the arena keeps things: its state directory (home), output directories, and the names
of records and seat logs inside them.

The home: ``--home DIR`` on a command wins, then the ``ARENA_HOME`` environment variable, then
``$XDG_DATA_HOME/card-arena`` (``~/.local/share/card-arena`` when XDG_DATA_HOME is unset). The
Docker image sets ``ARENA_HOME=/data``, its volume. The directory is created on first use, readable
by its owner only (it holds the registry of bots and their token hashes).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from arena.errors import ArenaError, UsageError

# Ending of a match record's file name: engine.records', as in-process play names records alike.
from engine.records import RECORD_SUFFIX as RECORD_SUFFIX

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


# --- output directories: made on demand, or refused in one line ------------------------------
# A path that cannot be a directory (below a file, on a read-only or vanished mount) is a user's
# mistake to report before any work is done, never an ``OSError`` traceback after it.

#: Ending of the temporary file :func:`write_atomically` renames into place (its name is
#: ``.<file name>.<random>.tmp``, beside the file).
TEMP_SUFFIX = ".tmp"


def make_output_dir(path: Path, error: type[ArenaError] = ArenaError) -> Path:
    """Create ``path`` and its parents if needed and return it; ``error`` when it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise error(f"{path}: cannot create the output directory ({err.strerror})") from None
    return path


def write_atomically(path: Path, data: bytes, fail: Callable[[str], Exception]) -> None:
    """Write ``data`` to ``path`` so that a crash never leaves a partial file there: into a
    temporary file beside it, synced, then renamed over it (mode 0644: records and pages are
    meant to be shared). An ``OSError`` becomes ``fail(its words)``, raised."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    except OSError as err:
        raise fail(str(err.strerror or err)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise fail(str(err.strerror or err)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- what goes where in an output directory: one naming for every command --------------------

#: A tournament's records and its bots' logs, inside its output directory (``arena match`` and
#: ``arena serve`` write records straight into their ``--out``, logs into its ``logs/``).
RECORDS_DIR = "records"
LOGS_DIR = "logs"
#: Bots' content-addressed snapshots: a tournament's on a cluster, a competition's versions.
SNAPSHOTS_DIR = "snapshots"
#: A competition's image tarballs (versions submitted as Docker images).
IMAGES_DIR = "images"
#: A competition's own files, for the host only: its admin token, where it listens.
PRIVATE_DIR = "private"


def record_name(match_id: str) -> str:
    """A match record's file name: ``whist-1a2b3c4d.jsonl.gz``."""
    return f"{match_id}{RECORD_SUFFIX}"


def seat_log_name(match_id: str, seat: int) -> str:
    """The file name of the log of a seat's bot in a match: ``whist-1a2b3c4d.seat0.log``."""
    return f"{match_id}.seat{seat}.log"


def match_of_file(name: str) -> str | None:
    """The match id a record's or a seat log's file name (:func:`record_name`,
    :func:`seat_log_name`) belongs to; ``None`` for any other name."""
    if name.endswith(RECORD_SUFFIX):
        return name.removesuffix(RECORD_SUFFIX) or None
    stem, dot, seat = name.removesuffix(".log").rpartition(".seat")
    if name.endswith(".log") and dot and stem and seat.isascii() and seat.isdigit():
        return stem
    return None
