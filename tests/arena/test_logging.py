"""structlog setup: JSON lines when stderr is not a terminal, readable lines otherwise."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
import structlog
import structlog.testing

from arena.logging import configure
from tests.arena.run_arena import arena_error


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    yield
    structlog.reset_defaults()  # later tests must not log into these buffers


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    configure("info", stream=out)
    structlog.get_logger("t").info("match over", match_id="m1", faults=0)
    structlog.get_logger("t").debug("hidden")
    (line,) = out.getvalue().splitlines()
    data = json.loads(line)
    assert data["event"] == "match over" and data["match_id"] == "m1" and data["level"] == "info"
    assert "timestamp" in data


def test_console_lines_on_a_terminal() -> None:
    out = _Tty()
    configure("warning", stream=out)
    structlog.get_logger("t").warning("fault", seat=1)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert "fault" in text and "seat=" in text and not text.startswith("{")


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="log level"):
        configure("loud")


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )


def test_a_bot_process_that_logs_nothing_never_imports_structlog_or_rich() -> None:
    # Every tournament seat is such a process: the two were over a quarter of its start.
    out = _run(
        "import sys\n"
        "from arena.cli.main import main\n"
        "main(['bot', 'random', '--server', 'unix:/nonexistent/arena.sock', '--token', 't',\n"
        "      '--give-up', '0'])\n"
        "print('structlog' in sys.modules, 'rich' in sys.modules)\n"
    )
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["match", "whist", "--bot", "random", "--bot", "random"],
        ["bot", "random"],
        ["tournament", "--game", "whist", "--bot", "random"],
        ["demo"],
    ],
)
def test_an_unknown_log_level_is_refused_in_one_line_before_anything_runs(
    command: list[str],
) -> None:
    assert arena_error(*command, "--log-level", "loud").endswith(
        "error: argument --log-level: invalid choice: 'loud' "
        "(choose from 'debug', 'info', 'warning', 'error')"
    )
