"""Running the ``arena`` command as a user would, for tests of its one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

#: The console script of this venv.
ARENA = str(Path(sys.executable).parent / "arena")


def arena_error(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
    """Run ``arena ARGS``, check it failed as a user's mistake should (exit status 2, no
    traceback, nothing on stdout), and return the last line of its stderr."""
    proc = subprocess.run(
        [ARENA, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**os.environ, **env} if env is not None else None,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout == "", proc.stdout[-2000:]
    return proc.stderr.strip().splitlines()[-1]
