"""docs/other-languages.md's Go section, read and run as written: its code blocks, and its shell
blocks run by bash in a directory of the test's (``arena`` there is the venv's, its matches
unsandboxed and written under that directory)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "other-languages.md"
ARENA = Path(sys.executable).with_name("arena")


def go_section() -> str:
    text = PAGE.read_text()
    start = text.index("### Go\n")
    return text[start : text.index("\n### ", start + 1)]


def blocks(language: str) -> list[str]:
    """The section's fenced blocks marked ``language``, in page order."""
    return re.findall(rf"```{language}\n(.*?)```", go_section(), re.S)


def shell_block(naming: str) -> str:
    """The one ``sh`` block that mentions ``naming``."""
    (block,) = [b for b in blocks("sh") if naming in b]
    return block


def run_block(block: str, cwd: Path, go_cache: Path) -> subprocess.CompletedProcess[str]:
    """``block`` run by ``bash -e`` in ``cwd``, each ``arena match`` line with a fixed seed, its
    record under ``cwd/out`` and no sandbox (which may be missing where the tests run)."""
    lines = block.replace("\\\n", " ").splitlines()
    script = "\n".join(
        f"{ARENA}{line[len('arena') :]} --no-sandbox --seed 1 --out out"
        if line.startswith("arena match ")
        else line
        for line in lines
    )
    env = {**os.environ, "PWD": str(cwd), "GOCACHE": str(go_cache)}
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
