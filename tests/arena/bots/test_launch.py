"""``arena/bots/launch.py``: the one-line advice for a bot command its box would not run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.arena.run_arena import arena_error

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def test_a_venv_made_from_a_python_the_box_cannot_see_gets_true_advice(tmp_path: Path) -> None:
    # A venv as `python -m venv` makes it from a Python outside the box (a pyenv or a home-built
    # one): its bin/python is a link to that Python. The venv is under the bot's directory
    # already, so "move it under DIR" (the old advice) named where it already was.
    outside = tmp_path / "pyenv" / "bin"
    outside.mkdir(parents=True)
    python = (outside / "python3.11").resolve()
    python.write_text("#!/bin/sh\n")  # stands for that Python: the box never runs it
    python.chmod(0o755)
    work = (tmp_path / "bot").resolve()
    venv = work / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {outside}\nversion = 3.11\n")
    (venv / "bin" / "python").symlink_to(python)
    (work / "bot.py").write_text("")
    match = ["match", "tennis", "--option", "sets_to_win=1", "--out", "m"]
    line = arena_error(
        *match, "--bot", "arena bot rules", "--bot", ".venv/bin/python bot.py", cwd=work
    )
    assert (
        f".venv/bin/python is the Python of the virtual environment {venv}, a link to {python}, "
        "which is not found inside the sandbox"
    ) in line, line
    assert f"/usr/bin/python3 -m venv --clear {venv}" in line, line
    assert f"move it under {work}" not in line, line
    assert not (work / "m").exists()


def test_a_file_outside_the_bots_directory_is_still_told_to_move_there(tmp_path: Path) -> None:
    script = tmp_path / "elsewhere.sh"
    script.write_text("#!/bin/sh\nexec arena bot random\n")
    script.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    match = ["match", "tennis", "--option", "sets_to_win=1", "--out", "m"]
    line = arena_error(*match, "--bot", "arena bot rules", "--bot", str(script), cwd=work)
    assert line.endswith(f"move it under {work} or pass --no-sandbox"), line
