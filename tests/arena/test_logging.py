"""structlog setup: JSON lines when stderr is not a terminal, readable lines otherwise."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator

import pytest
import structlog

from arena.logging import configure


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
