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


#: Two short tennis matches (one per seat order) between the two reference bots.
TINY_TENNIS = """
game = "tennis"
seed = 11
matches_per_pairing = 2
duplicate = false
[options]
sets_to_win = 1
[[bots]]
name = "random"
[[bots]]
name = "rules"
"""


def played_tournament(where: Path, config: str = TINY_TENNIS) -> Path:
    """Write ``config`` to ``where/t.toml``, play it to its end into ``where/out`` (no sandbox)
    and return ``where``."""
    (where / "t.toml").write_text(config)
    proc = subprocess.run(
        [ARENA, "tournament", "t.toml", "--out", "out", "--quiet", "--no-sandbox"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return where
