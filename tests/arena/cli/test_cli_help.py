"""The ``arena`` command's help and messages: every default shown, ``--version``, one default
time control, sandbox messages that name only flags of the command printing them, and
``make demo`` installing the sandbox first."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cardarena.messages import TimeControl

from arena.bots import sandbox
from arena.bots.launch import NotInBox
from arena.cli import host
from arena.cli.main import build_parser
from arena.tournament import demo
from arena.version import arena_version

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[3]
#: Commands that start bot commands, so may print the sandbox's messages.
STARTING_BOTS = ("match", "tournament", "sprt", "replay ask")


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of ``arena``, by its command's words; ``arena host`` parses its own."""

    def walk(
        name: str, parser: argparse.ArgumentParser
    ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for word, sub in action.choices.items():
                    yield from walk(f"{name} {word}", sub)

    yield from walk("arena", build_parser())
    yield "arena host (run)", host._run_parser()
    yield "arena host add-author", host._author_parser()


def by_name() -> dict[str, argparse.ArgumentParser]:
    return {name.removeprefix("arena "): p for name, p in parsers()}


def flags_of(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_every_default_is_in_its_help() -> None:
    unstated = []
    for name, parser in parsers():
        formatter = parser._get_formatter()
        for action in parser._actions:
            default = action.default
            # Nothing to state: no default, an off switch, an empty list.
            if default is None or default is False or default is argparse.SUPPRESS:
                continue
            if default == []:
                continue
            text = formatter._expand_help(action) if action.help else ""
            shown = {str(default), f"{default:g}" if isinstance(default, float) else ""}
            if not any(s and s in text for s in shown):
                unstated.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not unstated, unstated


def test_serve_help_shows_its_defaults() -> None:
    text = by_name()["serve"].format_help()
    for default in ("127.0.0.1:50051", "whist", "none kept", "1000", "10000"):
        assert default in text, default
    from arena.server.hub import MAX_GUESTS_PER_ADDRESS

    assert f"one network address (default {MAX_GUESTS_PER_ADDRESS})" in " ".join(text.split())


def test_version_prints_the_version_and_exits_0() -> None:
    done = subprocess.run(
        [ARENA, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"arena {arena_version()}"


def test_one_default_time_control() -> None:
    from arena.host.config import check_competition
    from arena.tournament.config import check_config

    tc = TimeControl()
    for command in ("match", "serve"):
        defaults = {a.dest: a.default for a in by_name()[command]._actions}
        assert (defaults["move_ms"], defaults["bank_ms"]) == (tc.move_ms, tc.bank_ms)
    raw = {"game": "tennis", "bots": [{"name": "random"}, {"name": "rules"}]}
    assert check_config(raw, "t.toml", "t").rules.time_control == tc
    assert check_competition({"game": "tennis"}, "cup.toml", "cup").rules.time_control == tc


def test_docs_state_no_other_default_move_time() -> None:
    stale = []
    for path in [*ROOT.glob("docs/*.md"), *ROOT.glob("examples/**/*.toml"), ROOT / "README.md"]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"move_ms\s*=\s*2000|--move-ms 2000", line):
                stale.append(f"{path.relative_to(ROOT)}:{n}")
    assert not stale, stale


def sandbox_messages(monkeypatch: pytest.MonkeyPatch) -> list[sandbox.SandboxRefused]:
    """The sandbox's refusals, each raised as on a machine that lacks what it needs."""
    raised: list[sandbox.SandboxRefused] = []
    with monkeypatch.context() as m:
        m.setattr("shutil.which", lambda _: None)
        m.setattr("sys.platform", "linux")
        with pytest.raises(sandbox.SandboxUnavailable) as missing:
            sandbox.check_available()
        raised.append(missing.value)
        m.setattr("sys.platform", "darwin")
        with pytest.raises(sandbox.SandboxUnavailable) as not_linux:
            sandbox.check_available()
        raised.append(not_linux.value)
    raised.append(NotInBox('bot "x": x is not found inside the sandbox; move it under /srv'))
    return raised


def flags_in(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


def test_sandbox_messages_name_only_flags_their_commands_have(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsers_by_name = by_name()
    refusals = sandbox_messages(monkeypatch)
    for refusal in refusals:
        said = flags_in(str(refusal))
        assert said == {"--no-sandbox"}, str(refusal)
        for command in STARTING_BOTS:
            assert said <= flags_of(parsers_by_name[command]), (command, str(refusal))
        assert said <= flags_of(parsers_by_name["host (run)"])
        assert flags_in(refusal.reason) == set(), refusal.reason
    # `arena demo` has no --no-sandbox: it says why alone, and goes on unsandboxed.
    demo_flags = flags_of(parsers_by_name["demo"])
    assert "--no-sandbox" not in demo_flags
    monkeypatch.setattr("shutil.which", lambda _: None)
    monkeypatch.setattr(demo, "check_available", sandbox.check_available)
    limits, why = demo.demo_sandbox()
    assert limits is None and "bwrap is not installed" in why
    assert flags_in(why) <= demo_flags, why


def test_demo_installs_the_sandbox_first() -> None:
    makefile = (ROOT / "Makefile").read_text()
    demo_rule = re.search(r"^demo:(.*)$", makefile, re.MULTILINE)
    assert demo_rule is not None and "sandbox-tools" in demo_rule.group(1).split()
    # The README says so, in one sentence (lines joined).
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert re.search(r"`make demo`[^.]*install[^.]*bubblewrap", readme)
