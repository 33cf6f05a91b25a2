"""Numeric options of ``arena serve``, ``match``, ``bot``, ``health`` and ``replay ask`` are
checked by the parser: a bad value is refused in one line (exit status 2) before anything
starts."""

from __future__ import annotations

import pytest
from cardarena.messages import MAX_TIME_MS

from arena.cli.main import build_parser

BOT = ["bot", "random"]
SERVE = ["serve"]
MATCH = ["match", "whist", "--bot", "random"]
MOVE = f"a whole number of milliseconds from 1 to {MAX_TIME_MS}"
BANK = f"a whole number of milliseconds from 0 to {MAX_TIME_MS}"
WAIT = "a number of seconds from 0.001 to 86400"


@pytest.mark.parametrize(
    ("command", "option", "value", "expected"),
    [
        (SERVE, "--move-ms", "-5", MOVE),
        (SERVE, "--move-ms", "0", MOVE),
        (SERVE, "--move-ms", "99999999999", MOVE),  # past the wire's 32 bits
        (SERVE, "--bank-ms", "-1", BANK),
        (SERVE, "--bank-ms", "ten", BANK),
        (MATCH, "--move-ms", "0", MOVE),
        (MATCH, "--bank-ms", "1.5", BANK),
        (MATCH, "--bank-ms", "4294967296", BANK),
        (MATCH, "--connect-timeout", "-1", WAIT),
        (MATCH, "--connect-timeout", "0", WAIT),
        (MATCH, "--connect-timeout", "nan", WAIT),
        (MATCH, "--connect-timeout", "inf", WAIT),
        (["health"], "--timeout", "inf", WAIT),
        (["health"], "--timeout", "-1", WAIT),
        (["replay", "ask", "r.jsonl.gz", "--at", "1", "--bot", "x"], "--timeout", "nan", WAIT),
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
