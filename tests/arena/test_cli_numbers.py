"""Numeric options of ``arena serve``, ``match`` and ``bot`` are checked by the parser: a bad
value is refused in one line (exit status 2) before anything starts."""

from __future__ import annotations

import pytest

from arena.cli import build_parser

BOT = ["bot", "random"]
SERVE = ["serve"]
MATCH = ["match", "whist", "--bot", "random"]


@pytest.mark.parametrize(
    ("command", "option", "value", "expected"),
    [
        (SERVE, "--move-ms", "-5", "a whole number of at least 1"),
        (SERVE, "--move-ms", "0", "a whole number of at least 1"),
        (SERVE, "--bank-ms", "-1", "a whole number of at least 0"),
        (SERVE, "--bank-ms", "ten", "a whole number of at least 0"),
        (MATCH, "--move-ms", "0", "a whole number of at least 1"),
        (MATCH, "--bank-ms", "1.5", "a whole number of at least 0"),
        (BOT, "--matches", "-3", "a whole number of at least 1"),
        (BOT, "--give-up", "-1", "a number of seconds of at least 0"),
        (BOT, "--give-up", "nan", "a number of seconds of at least 0"),
        (BOT, "--give-up", "inf", "a number of seconds of at least 0"),
    ],
)
def test_a_bad_number_is_refused_in_one_line(
    command: list[str],
    option: str,
    value: str,
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*command, option, value])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"error: argument {option}: expected {expected}; got {value!r}")


def test_good_numbers_pass_as_numbers() -> None:
    args = build_parser().parse_args([*SERVE, "--move-ms", "1", "--bank-ms", "0"])
    assert (args.move_ms, args.bank_ms) == (1, 0)
    args = build_parser().parse_args([*BOT, "--matches", "2", "--give-up", "0.5"])
    assert (args.matches, args.give_up) == (2, 0.5)
