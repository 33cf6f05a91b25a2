"""``arena host``'s own argument handling: it parses its words itself (two forms, one entry)."""

from __future__ import annotations

import pytest

from arena.cli.main import main


def test_help_shows_both_forms_and_their_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["host", "--help"]) == 0
    out = capsys.readouterr().out
    for word in (
        "COMPETITION.toml",
        "--tls-cert",
        "--insecure",
        "add-author",
        "(default 127.0.0.1:8080)",
    ):
        assert word in out, word


def test_options_before_the_config_are_still_the_hosts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["host", "--dir", "/nonexistent"])
    assert stop.value.code == 2
    assert "the following arguments are required: config" in capsys.readouterr().err


def test_other_commands_still_refuse_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["selfplay", "whist", "--nope"])
    assert stop.value.code == 2
    assert "unrecognized arguments: --nope" in capsys.readouterr().err
