"""A config nested deeper than Python's recursion limit is one line, exit status 2, never a
3,000-line traceback from tomllib's recursive parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.arena.run_arena import arena_error

#: 5,000 nested arrays: far past the recursion limit, yet a small file.
DEEP = 'game = "whist"\nx = ' + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("command", ["tournament", "host"])
def test_a_deeply_nested_config_is_one_line(tmp_path: Path, command: str) -> None:
    (tmp_path / "deep.toml").write_text(DEEP)
    line = arena_error(command, "deep.toml", cwd=tmp_path)
    assert line == "arena: error: deep.toml: invalid TOML: arrays or tables nested too deeply"
