"""A real ``arena match`` of tennis (one set, seed 3) between a Python bot given by its source
and ``arena bot random``: what the SDK's end-to-end tests play."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ARENA = str(Path(sys.executable).parent / "arena")


def play_tennis(
    tmp_path: Path, source: str, *extra: str, first: bool = True
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Play the bot of ``source`` (at seat 0 when ``first``, else 1); ``extra``: more of
    ``arena match``'s arguments. The finished process (exit status 0 asserted) and the record
    (the first match's, with ``--games N``)."""
    bot = tmp_path / "bot_under_test.py"
    bot.write_text(source)
    out = tmp_path / "out"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))}"
    bots = [command, "arena bot random"] if first else ["arena bot random", command]
    match = ["match", "tennis", "--option", "sets_to_win=1", "--seed", "3", "--no-sandbox"]
    done = subprocess.run(
        [ARENA, *match, "--out", str(out), "--bot", bots[0], "--bot", bots[1], *extra],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    records = sorted(out.glob("*.jsonl.gz"))
    assert records and ("--games" in extra or len(records) == 1), records
    return done, records[0]
