"""The competition config: defaults, and every mistake one line naming its key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.host.config import (
    DEFAULT_PROVISIONAL_INTERVAL,
    DEFAULT_PROVISIONAL_MATCHES,
    MAX_UNITS_PER_MINUTE,
    CompetitionConfigError,
    check_units_per_minute,
    load_competition,
)
from arena.tournament.config import MAX_CONCURRENCY

GOOD = """
name = "whist-cup"
game = "whist"
fault_policy = "strict"
[options]
points_to_win = 5
[time_control]
move_ms = 500
bank_ms = 3000
[ladder]
concurrency = 3
units_per_minute = 2.5
[validation]
opponent = "rules"
matches = 2
[submissions]
max_upload_mib = 8
max_files = 100
max_unpacked_mib = 64
allow_images = false
[authors]
invite_code = "let-me-in-please"
[final]
top = 6
matches_per_pairing = 4
"""


def write(tmp_path: Path, text: str, name: str = "cup.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_full_config_loads(tmp_path: Path) -> None:
    config = load_competition(write(tmp_path, GOOD))
    assert config.name == "whist-cup"
    assert config.rules.game_id == "whist"
    assert config.rules.config.int_option("points_to_win") == 5
    assert config.places == ((0, 2), (1, 3))
    assert (config.rules.time_control.move_ms, config.rules.time_control.bank_ms) == (500, 3000)
    assert config.rules.fault_policy == "strict"
    assert (config.ladder.concurrency, config.ladder.units_per_minute) == (3, 2.5)
    assert (config.validation.opponent, config.validation.matches) == ("rules", 2)
    assert config.validation.opponent_command == "arena bot rules"
    assert config.submissions.max_upload_bytes == 8 * 1024 * 1024
    assert (config.submissions.max_files, config.submissions.allow_images) == (100, False)
    assert config.authors.invite_code == "let-me-in-please"
    assert (config.final.top, config.final.matches_per_pairing) == (6, 4)


def test_defaults_and_the_secret_stays_out_of_repr(tmp_path: Path) -> None:
    config = load_competition(write(tmp_path, 'game = "tennis_whist"\nplayers = 3\n', "my.toml"))
    assert config.name == "my"  # the file's stem
    assert config.places == ((0,), (1,), (2,))
    assert (config.ladder.concurrency, config.ladder.units_per_minute) == (2, 0.0)
    assert (config.validation.opponent, config.validation.matches) == ("random", 1)
    assert config.submissions.max_upload_mib == 32
    assert (config.submissions.max_files, config.submissions.max_unpacked_mib) == (2000, 256)
    assert config.submissions.allow_images is False
    assert config.authors.invite_code is None
    images = load_competition(
        write(tmp_path, 'game = "whist"\n[submissions]\nallow_images = true\n', "img.toml")
    )
    assert images.submissions.allow_images is True
    assert config.final.top == 4
    assert config.final.matches_per_pairing == 12  # a multiple of the 3 rotations
    assert config.rules.fault_policy == "lenient"
    secret = load_competition(write(tmp_path, GOOD))
    assert "let-me-in-please" not in repr(secret)


def test_identity_holds_what_fixes_results_only(tmp_path: Path) -> None:
    a = load_competition(write(tmp_path, GOOD))
    b = load_competition(
        write(
            tmp_path,
            GOOD.replace("concurrency = 3", "concurrency = 1")
            .replace('name = "whist-cup"', 'name = "renamed"')
            .replace("top = 6", "top = 2")
            .replace("matches = 2", "matches = 5"),
        )
    )
    assert a.identity() == b.identity()
    assert a.identity() == {
        "game": "whist",
        "game_version": a.rules.game.version,
        "players": 4,
        "options": {"games_per_rubber": 3, "points_to_win": 5},
        "fault_policy": "strict",
        "time_control": {"move_ms": 500, "bank_ms": 3000},
    }
    for change in ("points_to_win = 6", "move_ms = 501"):
        key = change.split(" = ")[0]
        other = load_competition(write(tmp_path, re.sub(rf"{key} = \d+", change, GOOD)))
        assert other.identity() != a.identity()


def _drop(section: str, key: str) -> str:
    return GOOD.replace(f"[{section}]\n", f"[{section}]\n{key}\n", 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace('game = "whist"\n', ""), r"cup\.toml: game: missing \(required\)"),
        (GOOD.replace('"whist"', '"bridge"'), r"cup\.toml: game: unknown game 'bridge'"),
        ("colour = 1\n" + GOOD, r"cup\.toml: colour: unknown key \(known keys: name, game"),
        (GOOD.replace('name = "whist-cup"', 'name = "../x"'), r"cup\.toml: name: must be 1-64"),
        (GOOD.replace("points_to_win = 5", "points_to_win = 0"), r"options: option 'points_to"),
        (GOOD.replace("points_to_win = 5", "trumps = 5"), r"cup\.toml: options: .*'trumps'"),
        ('game = "whist"\nplayers = 5\n', r"cup\.toml: players: whist is played by 4"),
        ('game = "whist"\nplayers = "four"\n', r"cup\.toml: players: must be an integer"),
        (GOOD.replace('"strict"', '"harsh"'), r"cup\.toml: fault_policy: must be one of"),
        (GOOD.replace("move_ms = 500", "move_ms = 0"), r"time_control\.move_ms: must be at least"),
        (_drop("time_control", "tick = 1"), r"cup\.toml: time_control\.tick: unknown key"),
        (GOOD.replace("concurrency = 3", 'concurrency = "x"'), r"ladder\.concurrency: must be"),
        (
            GOOD.replace("concurrency = 3", f"concurrency = {MAX_CONCURRENCY + 1}"),
            rf"ladder\.concurrency: must be at most {MAX_CONCURRENCY} \(every match",
        ),
        (GOOD.replace("= 2.5", "= -1"), r"ladder\.units_per_minute: must be between 0"),
        (GOOD.replace("= 2.5", '= "fast"'), r"ladder\.units_per_minute: must be a number"),
        (GOOD.replace("= 2.5", "= nan"), r"ladder\.units_per_minute: must be a number"),
        (_drop("ladder", "table_size = 4"), r"cup\.toml: ladder\.table_size: unknown key"),
        (GOOD.replace('"rules"', '"deep-blue"'), r"validation\.opponent: must be one of random"),
        (GOOD.replace("matches = 2", "matches = 0"), r"validation\.matches: must be at least 1"),
        (GOOD.replace("max_upload_mib = 8", "max_upload_mib = 99999"), r"max_upload_mib: must"),
        (GOOD.replace("max_files = 100", "max_files = true"), r"submissions\.max_files: must"),
        (GOOD.replace("allow_images = false", "allow_images = 1"), r"allow_images: must be true"),
        (GOOD.replace('"let-me-in-please"', '"short"'), r"authors\.invite_code: must be a str"),
        (GOOD.replace("top = 6", "top = 1"), r"cup\.toml: final\.top: must be at least 2"),
        (
            GOOD.replace("matches_per_pairing = 4", "matches_per_pairing = 3"),
            r"final\.matches_per_pairing: must be a multiple of 2",
        ),
        (GOOD.replace("top = 6", "top = 5000"), r"final\.top: the final would have"),
        ('game = "whist"\nfinal = 3\n', r"cup\.toml: final: must be a table"),
        (GOOD + "colour = 1\n", r"cup\.toml: final\.colour: unknown key \(known: top, match"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(CompetitionConfigError) as caught:
        load_competition(write(tmp_path, text))
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(expected, message), message


def test_the_invite_code_is_not_echoed(tmp_path: Path) -> None:
    with pytest.raises(CompetitionConfigError) as caught:
        load_competition(write(tmp_path, GOOD.replace('"let-me-in-please"', '"abc"')))
    assert "abc" not in str(caught.value)


def test_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(CompetitionConfigError, match=r"no such config file"):
        load_competition(tmp_path / "missing.toml")
    with pytest.raises(CompetitionConfigError, match=r"invalid TOML"):
        load_competition(write(tmp_path, "game = "))


def test_the_pace_check_is_shared() -> None:
    assert check_units_per_minute(0) == 0.0
    assert check_units_per_minute(MAX_UNITS_PER_MINUTE) == MAX_UNITS_PER_MINUTE
    for bad in (-0.5, MAX_UNITS_PER_MINUTE * 2, True, "1", float("inf")):
        with pytest.raises(ValueError):
            check_units_per_minute(bad)


def test_the_provisional_rule_has_defaults_and_keys(tmp_path: Path) -> None:
    plain = load_competition(write(tmp_path, 'game = "whist"\n', "plain.toml"))
    assert (plain.ladder.provisional_matches, plain.ladder.provisional_interval) == (
        DEFAULT_PROVISIONAL_MATCHES,
        DEFAULT_PROVISIONAL_INTERVAL,
    )
    text = 'game = "whist"\n[ladder]\nprovisional_matches = 30\nprovisional_interval = 80\n'
    config = load_competition(write(tmp_path, text, "set.toml"))
    assert (config.ladder.provisional_matches, config.ladder.provisional_interval) == (30, 80)
    with pytest.raises(CompetitionConfigError, match=r"ladder\.provisional_interval: must be at"):
        load_competition(
            write(tmp_path, 'game = "whist"\n[ladder]\nprovisional_interval = 0\n', "bad.toml")
        )
