"""``arena submit`` refuses, in one line and before creating anything, a command that cannot
start (its bot would forfeit every match it is seated in), and a tournament refuses a
registered bot whose program has gone since; ``--home ""`` is refused, never taken for the
default home. Every run here has its own home under tmp_path, and the default home is pointed
into tmp_path too, so nothing is written to the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.layout import ENV_VAR

#: Every test here runs `arena` commands as processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")


def arena(
    tmp_path: Path, *args: str, path: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    # Were anything to fall back to the default home, it would be this one.
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [ARENA, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=cwd or tmp_path,
    )


def assert_refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert says in lines[0], lines[0]


def script(path: Path) -> Path:
    """An executable bot script: the random reference bot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexec arena bot random\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("nonexistent-xyz", "program 'nonexistent-xyz' not found on PATH"),
        ("echo 'unterminated", "cannot parse the command: No closing quotation"),
        ("./missing.sh --fast", "program './missing.sh' not found"),
    ],
)
def test_submit_refuses_a_command_that_cannot_start(
    tmp_path: Path, command: str, says: str
) -> None:
    home = tmp_path / "home"
    done = arena(
        tmp_path, "submit", "b", "--version", "1", "--command", command, "--home", str(home)
    )
    assert_refused(done, says)
    assert not home.exists()  # refused before the home or its registry was made
    assert not (tmp_path / "xdg").exists()


def test_submit_refusal_leaves_an_existing_registry_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok = arena(tmp_path, "submit", "a", "--version", "1", "--command", "arena bot random",
               "--home", str(home))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    db = home / "bots.sqlite"
    before = db.read_bytes()
    bad = arena(tmp_path, "submit", "a", "--version", "2", "--command", "nonexistent-xyz",
                "--home", str(home))  # fmt: skip
    assert_refused(bad, "not found on PATH")
    assert db.read_bytes() == before
    listed = json.loads(arena(tmp_path, "bots", "--json", "--home", str(home)).stdout)
    assert [b["ref"] for b in listed] == ["a@1"]


def test_a_relative_program_is_looked_for_in_the_bots_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"
    script(src / "bot.sh")
    home = tmp_path / "home"
    # Run from elsewhere: ./bot.sh exists in --dir, not in the current directory.
    done = arena(tmp_path, "submit", "b", "--version", "1", "--command", "./bot.sh", "--dir",
                 str(src), "--home", str(home), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    elsewhere = arena(tmp_path, "submit", "b", "--version", "2", "--command", "./bot.sh",
                      "--home", str(home), cwd=tmp_path)  # fmt: skip
    assert_refused(elsewhere, "program './bot.sh' not found")


def tournament(tmp_path: Path, home: Path, bot: str, out: Path) -> subprocess.CompletedProcess[str]:
    """A short tennis tournament of registered ``bot`` against ``random``, without a sandbox."""
    args = ["tournament", "--game", "tennis", "--option", "sets_to_win=1", "--matches", "2"]
    args += ["--bot", bot, "--bot", "random", "--out", str(out), "--home", str(home)]
    return arena(tmp_path, *args, "--no-sandbox", "--quiet", "--json")


def test_a_tournament_refuses_a_registered_bot_whose_program_is_gone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    src = tmp_path / "src"
    bot = script(src / "bot.sh")
    submit = ["submit", "b", "--version", "1", "--command", "./bot.sh", "--dir", str(src)]
    done = arena(tmp_path, *submit, "--home", str(home))
    assert done.returncode == 0, done.stderr
    # While it is there, the bot plays (and never forfeits).
    played = tournament(tmp_path, home, "b", tmp_path / "t1")
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["faults"] == {}
    bot.unlink()
    out = tmp_path / "t2"
    gone = tournament(tmp_path, home, "b", out)
    assert_refused(gone, "registered bot b@1 cannot run: program './bot.sh' not found")
    assert not out.exists()  # refused before the tournament started
    src.rmdir()
    assert_refused(
        tournament(tmp_path, home, "b", out),
        f"registered bot b@1 cannot run: its directory '{src}' not found",
    )
    assert not out.exists()


def test_a_tournament_refuses_a_registered_program_no_longer_on_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    bin_dir = tmp_path / "bin"
    script(bin_dir / "my-tennis-bot")
    with_bin = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    submit = ["submit", "m", "--version", "1", "--command", "my-tennis-bot"]
    done = arena(tmp_path, *submit, "--home", str(home), path=with_bin)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "t"
    gone = tournament(tmp_path, home, "m", out)
    assert_refused(gone, "registered bot m@1 cannot run: program 'my-tennis-bot' not found on PATH")
    assert not out.exists()


@pytest.mark.parametrize("command", ["submit", "bots", "tournament"])
def test_an_empty_home_is_refused_not_taken_for_the_default(tmp_path: Path, command: str) -> None:
    args = {
        "submit": ["submit", "b", "--version", "1", "--command", "arena bot random"],
        "bots": ["bots"],
        "tournament": ["tournament", "--game", "tennis", "--bot", "random", "--bot", "rules",
                       "--out", str(tmp_path / "t"), "--no-sandbox", "--quiet"],
    }[command]  # fmt: skip
    assert_refused(arena(tmp_path, *args, "--home", ""), "--home is empty")
    assert not (tmp_path / "xdg").exists()
    assert not (tmp_path / "t").exists()
