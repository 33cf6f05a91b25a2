"""``--log-format``: console lines for a person at a terminal, JSON lines for anything else or when
asked; the choice, and what a real terminal (a pty) gets."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys

import pytest

from arena.logging import LOG_FORMATS, wants_json


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_renderer_choice() -> None:
    assert not wants_json("auto", _Tty())
    assert wants_json("auto", io.StringIO())
    assert wants_json("json", _Tty()) and wants_json("json", io.StringIO())
    assert not wants_json("console", _Tty()) and not wants_json("console", io.StringIO())
    assert set(LOG_FORMATS) == {"auto", "console", "json"}
    with pytest.raises(ValueError, match="log format"):
        wants_json("xml", io.StringIO())


SCRIPT = """\
import sys
import structlog
from arena.logging import configure, wants_json

configure("warning", json=wants_json(sys.argv[1], sys.stderr))
log = structlog.get_logger("t")
log.warning("fault", seat=1, kind="crash")
log.warning("bot crashed", seat=2)
"""


def on_a_terminal(log_format: str) -> list[str]:
    """The log lines of a process whose stderr is a pty, colours stripped."""
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-c", SCRIPT, log_format],
            stderr=follower,
            stdout=subprocess.DEVNULL,
            timeout=60,
            check=True,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty's end, on Linux
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    text = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())
    return [ln for ln in text.splitlines() if ln.strip()]


def test_a_terminal_gets_one_readable_line_per_record() -> None:
    lines = on_a_terminal("auto")
    assert len(lines) == 2, lines
    assert "fault" in lines[0] and "kind=crash" in lines[0] and "seat=1" in lines[0]
    assert not any(ln.lstrip().startswith("{") for ln in lines), lines


def test_json_on_a_terminal_when_asked() -> None:
    lines = on_a_terminal("json")
    assert [json.loads(ln)["event"] for ln in lines] == ["fault", "bot crashed"]
