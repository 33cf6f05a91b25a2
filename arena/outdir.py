"""Output directories (records, logs, results): made on demand, or refused in one line.

A path that cannot be a directory (below a file, on a read-only or vanished mount) is a user's
mistake to report before any work is done, never an ``OSError`` traceback after it.
"""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaError


def make_output_dir(path: Path, error: type[ArenaError] = ArenaError) -> Path:
    """Create ``path`` and its parents if needed and return it; ``error`` when it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise error(f"{path}: cannot create the output directory ({err.strerror})") from None
    return path
