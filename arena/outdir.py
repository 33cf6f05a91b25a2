"""Output directories (records, logs, results): made on demand, or refused in one line.

A path that cannot be a directory (below a file, on a read-only or vanished mount) is a user's
mistake to report before any work is done, never an ``OSError`` traceback after it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from arena.errors import ArenaError

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
