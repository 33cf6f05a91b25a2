"""The Go stdio reference bot (reference_bots/stdio/random_bot.go), built once per test session
by the top Makefile's own rule (again only when its source changed). A fixture, so that any test
needing the bot gets it whatever order the tests run in. The build needs Go, which ``make go-bot``
(run by ``make test``) installs as root; without it the tests fail saying so, never skip.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GO_STDIO_BOT = "reference_bots/stdio/build/random_bot_go"


@pytest.fixture(scope="session")
def go_stdio_bot() -> Path:
    """The Go stdio bot's binary, after making sure its build is current."""
    if shutil.which("go") is None:
        pytest.fail(
            "the Go stdio reference bot cannot be built: `go` is missing; run `make go-bot` "
            "as root (it installs golang-go with apt-get)"
        )
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(ROOT), GO_STDIO_BOT],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"building {GO_STDIO_BOT} failed:\n{done.stdout}\n{done.stderr}")
    binary = ROOT / GO_STDIO_BOT
    assert binary.is_file(), f"make did not build {binary}"
    return binary
