"""Tournament config errors: one line naming the key, exit status 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.config import TournamentConfigError, load_config
from tests.arena.run_arena import arena_error

ARENA = str(Path(sys.executable).parent / "arena")

GOOD = """
game = "whist"
seed = 3
matches_per_pairing = 2
[options]
points_to_win = 5
[[bots]]
name = "random"
[[bots]]
name = "rules"
command = "arena bot rules"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def test_a_good_config_loads_with_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.rules.game_id == "whist"
    assert config.rules.config.int_option("points_to_win") == 5
    assert [b.name for b in config.bots] == ["random", "rules"]
    assert config.bots[0].program.command == "arena bot random"  # a built-in bot needs no command
    assert (config.format, config.duplicate, config.rules.fault_policy) == (
        "round_robin",
        True,
        "lenient",
    )
    assert config.output == Path("out/tournaments/t")


def test_flags_override_the_file_and_options_merge(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, GOOD),
        {"seed": 9, "options": {"games_per_rubber": "1"}, "fault_policy": "strict"},
    )
    assert config.seed == 9
    assert config.rules.config.int_option("points_to_win") == 5
    assert config.rules.config.int_option("games_per_rubber") == 1
    assert config.rules.fault_policy == "strict"


def test_identity_leaves_out_what_does_not_change_results(tmp_path: Path) -> None:
    a = load_config(write(tmp_path, GOOD), {"concurrency": 1, "output": "x"})
    b = load_config(write(tmp_path, GOOD), {"concurrency": 4, "output": "y"})
    assert a.identity() == b.identity()
    c = load_config(write(tmp_path, GOOD), {"seed": 4})
    assert a.identity() != c.identity()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace('game = "whist"\n', ""), r"t\.toml: game: missing \(required\)"),
        (GOOD.replace('game = "whist"', 'game = "bridge"'), r"game: unknown game 'bridge'"),
        (GOOD.replace("points_to_win = 5", "trumps = 5"), r"options: .*no option 'trumps'"),
        (
            GOOD.replace("points_to_win = 5", "points_to_win = 0"),
            r"options: option 'points_to_win' must be between 1 and 50; got 0",
        ),
        (
            GOOD.replace('name = "random"', 'name = "deep-blue"'),
            r"bots\[0\]: unknown bot 'deep-blue': give a command",
        ),
        (
            GOOD.replace('command = "arena bot rules"', 'command = "no-such-program --fast"'),
            r"bots\[1\]\.command: program 'no-such-program' not found on PATH",
        ),
        (GOOD.replace('name = "random"', 'name = "rules"'), r"bots\[1\]\.name: duplicate"),
        (GOOD.replace("seed = 3", 'seed = "x"'), r"seed: must be an integer; got 'x'"),
        (GOOD.replace("seed = 3", "sede = 3"), r"sede: unknown key"),
        ("players = 5\n" + GOOD, r"players: whist is played by 4 players; got 5"),
        (
            GOOD.replace("matches_per_pairing = 2", "matches_per_pairing = 3"),
            r"matches_per_pairing: must be a multiple of 2",
        ),
        (GOOD.replace("seed = 3", 'format = "swiss"'), r"format: must be one of round_robin"),
        (GOOD + "[time_control]\nmove_ms = 0\n", r"time_control\.move_ms: must be at least 1"),
        (
            GOOD.replace('name = "rules"\n', 'name = "rules"\ncolour = "red"\n'),
            r"bots\[1\]\.colour",
        ),
        (
            'game = "whist"\n[[bots]]\nname = "rules"\n',
            r"bots: a tournament needs at least 2 bots; got 1",
        ),
        ("game = \n", r"t\.toml: invalid TOML: .*line 1"),
        (
            GOOD.replace('command = "arena bot rules"', 'command = "arena bot rules"\nfiles = 3'),
            r"bots\[1\]\.files: must be a list of paths; got 3",
        ),
        (
            GOOD.replace(
                'command = "arena bot rules"', 'command = "arena bot rules"\nfiles = ["../x"]'
            ),
            r"bots\[1\]\.files: '\.\./x' must be a path inside the current directory",
        ),
        (
            GOOD.replace(
                'command = "arena bot rules"', 'command = "arena bot rules"\nfiles = ["nosuch"]'
            ),
            r"bots\[1\]\.files: 'nosuch' not found",
        ),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(TournamentConfigError, match=expected) as info:
        load_config(write(tmp_path, text))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace('game = "whist"\n', ""), "game: missing (required)"),
        (GOOD.replace('game = "whist"', 'game = "bridge"'), "game: unknown game 'bridge'"),
        (GOOD.replace("points_to_win = 5", "points_to_win = 99"), "must be between 1 and 50"),
        (GOOD.replace('name = "random"', 'name = "deep-blue"'), "unknown bot 'deep-blue'"),
    ],
    ids=["missing-key", "unknown-game", "bad-option", "unknown-bot"],
)
@pytest.mark.slow
def test_cli_config_error_is_one_line_and_exit_2(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, text)
    proc = run_cli("tournament", "t.toml", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("arena: error: t.toml: ")
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()  # nothing was started


@pytest.mark.slow
def test_cli_missing_config_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli("tournament", "nowhere.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "arena: error: nowhere.toml: no such config file"


@pytest.mark.slow
def test_cli_binary_config_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A compiled program or an image passed by mistake: not UTF-8, which TOML must be.
    (tmp_path / "t.toml").write_bytes(b'game = "whist"\n\xd0\xff\x00\x7fELF')
    line = arena_error("tournament", "t.toml", cwd=tmp_path)
    assert line == "arena: error: t.toml: invalid TOML: not UTF-8 text (byte 15)"


def test_cli_ratings_on_a_directory_without_results_is_exit_2(tmp_path: Path) -> None:
    proc = run_cli("ratings", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "no results file" in proc.stderr


def test_time_control_flags_merge_with_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "[time_control]\nmove_ms = 300\nbank_ms = 700\n")
    config = load_config(path, {"time_control": {"bank_ms": 50}})
    assert (config.rules.time_control.move_ms, config.rules.time_control.bank_ms) == (300, 50)
