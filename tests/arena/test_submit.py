"""The bot registry: ``arena submit``, ``arena bots``, the arena's home, ``NAME@VERSION`` in
tournaments, and a registered bot connecting on its own with its token."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots.command import BotProgram
from arena.layout import ENV_VAR, arena_home, default_home, registry_path
from arena.records.format import read_record
from arena.registry import Registry, RegistryError, hash_token, resolve_bot, split_ref
from arena.tournament.config import TournamentConfigError, check_config
from tests.arena.run_arena import arena_error
from tests.waiting import wait_until

ARENA = str(Path(sys.executable).parent / "arena")


def _arena(*args: str, home: Path | None = None, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if home is not None:
        env[ENV_VAR] = str(home)
    return subprocess.run(
        [ARENA, *args], env=env, capture_output=True, text=True, timeout=60, check=False, **kw
    )  # type: ignore[call-overload]


def _submit(home: Path, name: str, version: str, *what: str) -> str:
    done = _arena("submit", name, "--version", version, *what, "--json", home=home)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["token"])


def test_home_is_flag_then_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/x/data")
    assert default_home() == Path("/x/data/card-arena")
    assert arena_home() == Path("/x/data/card-arena")
    monkeypatch.setenv(ENV_VAR, "/from/env")
    assert arena_home() == Path("/from/env")
    assert arena_home("/from/flag") == Path("/from/flag")
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_home() == Path.home() / ".local" / "share" / "card-arena"


@pytest.mark.slow
def test_submit_prints_a_token_and_bots_lists_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _arena("submit", "alice", "--version", "1.0", "--command", "arena bot rules", home=home)
    assert done.returncode == 0, done.stderr
    assert "registered alice@1.0 (command" in done.stdout
    token = done.stdout.split("token: ")[1].split()[0]
    assert token.startswith("cab_") and len(token) > 30
    _submit(home, "bob", "2", "--image", "bob-bot:2")
    listed = _arena("bots", home=home)
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["bot", "kind", "submitted", "runs"]
    assert lines[1].split()[:2] == ["alice@1.0", "command"] and lines[1].endswith("arena bot rules")
    assert lines[2].split()[:2] == ["bob@2", "image"] and lines[2].endswith("bob-bot:2")
    rows = json.loads(_arena("bots", "--json", home=home).stdout)
    assert [(r["ref"], r["kind"]) for r in rows] == [("alice@1.0", "command"), ("bob@2", "image")]
    assert rows[0]["workdir"] == str(Path.cwd())
    assert all("token" not in r for r in rows)
    # State lives in the home only, owner-only; the token itself is never stored.
    db = registry_path(home)
    assert db.stat().st_mode & 0o777 == 0o600 and home.stat().st_mode & 0o777 == 0o700
    assert token.encode() not in db.read_bytes()
    with Registry(db) as reg:
        found = reg.by_token(token)
        assert found is not None and found.ref == "alice@1.0"
        assert reg.by_token("cab_wrong") is None


def test_a_home_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory")
    line = arena_error(
        "submit", "b1", "--version", "1", "--command", "arena bot random", env={ENV_VAR: str(home)}
    )
    assert line == (
        f"arena: error: {home}: cannot use it as the arena's home (File exists); "
        "set --home or $ARENA_HOME to a directory"
    )
    assert home.read_text() == "not a directory"


@pytest.mark.slow
def test_home_flag_beats_the_environment(tmp_path: Path) -> None:
    env_home, flag_home = tmp_path / "env", tmp_path / "flag"
    done = _arena(
        "submit", "carol", "--version", "1", "--command", "true", "--home", str(flag_home),
        home=env_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert registry_path(flag_home).exists() and not env_home.exists()
    assert "carol@1" in _arena("bots", "--home", str(flag_home)).stdout
    assert "no bots registered" in _arena("bots", home=env_home).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["alice", "--version", "1", "--command", "true"], "alice@1 is already registered"),
        (["random", "--version", "1", "--command", "true"], "is a reference bot's"),
        (["bad name", "--version", "1", "--command", "true"], "bot name 'bad name'"),
        (["dave", "--version", "v 1", "--command", "true"], "version 'v 1'"),
        (["dave", "--version", "1", "--image", "a b"], "is not an image name"),
        (["dave", "--version", "1", "--command", "true", "--dir", "/no/such"], "no such directory"),
    ],
)
@pytest.mark.slow
def test_submit_refuses_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    home = tmp_path / "home"
    _submit(home, "alice", "1", "--command", "true")
    done = _arena("submit", *args, home=home)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_submit_needs_exactly_one_of_command_and_image(tmp_path: Path) -> None:
    both = _arena(
        "submit", "e", "--version", "1", "--command", "true", "--image", "y", home=tmp_path
    )
    assert both.returncode == 2 and "not allowed with" in both.stderr
    neither = _arena("submit", "e", "--version", "1", home=tmp_path)
    assert neither.returncode == 2 and "one of the arguments" in neither.stderr


def test_name_resolves_to_the_latest_version_and_name_at_version_to_that_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv(ENV_VAR, str(home))
    workdir = tmp_path / "src"
    workdir.mkdir()
    with Registry(registry_path(home)) as reg:
        reg.submit("alice", "1", command="arena bot random", workdir=workdir)
        reg.submit("alice", "2", command="arena bot rules", workdir=workdir)
        reg.submit("imgbot", "7", image="imgbot:7")
    assert resolve_bot("alice").ref == "alice@2"
    assert resolve_bot("alice@1").program.command == "arena bot random"
    config = check_config(
        {
            "game": "tennis",
            "bots": [{"name": "alice"}, {"name": "alice@1"}, {"name": "imgbot"}, {"name": "rules"}],
        },
        "t.toml",
        "t",
    )
    by_name = {b.name: b for b in config.bots}
    assert list(by_name) == ["alice@2", "alice@1", "imgbot@7", "rules"]
    assert by_name["alice@2"].program.command == "arena bot rules"
    assert by_name["alice@2"].program.workdir == str(workdir)
    assert by_name["alice@1"].program.command == "arena bot random"
    assert by_name["imgbot@7"].program == BotProgram(image="imgbot:7")
    assert config.identity()["bots"][2] == {"name": "imgbot@7", "command": "", "image": "imgbot:7"}


#: The registry as the code before the stores' shared base wrote it: ``executescript`` of this,
#: then ``meta`` ``schema`` '1' in a statement of its own (a kill between them left none).
OLD_REGISTRY_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('command', 'image')),
    command    TEXT,
    image      TEXT,
    workdir    TEXT,
    token_hash TEXT NOT NULL UNIQUE,
    created    TEXT NOT NULL,
    UNIQUE (name, version)
);
"""


@pytest.mark.parametrize("schema_row", [True, False])
def test_a_registry_written_by_the_earlier_code_opens_and_keeps_its_bots(
    tmp_path: Path, schema_row: bool
) -> None:
    db = tmp_path / "bots.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con, con:
        con.executescript(OLD_REGISTRY_DDL)
        if schema_row:
            con.execute("INSERT INTO meta VALUES ('schema', '1')")
        con.execute(
            "INSERT INTO bots (name, version, kind, image, token_hash, created) "
            "VALUES ('old', '1', 'image', 'old:1', ?, '2026-01-02T03:04:05Z')",
            (hash_token("cab_old"),),
        )
    with Registry(db) as reg:
        old = reg.resolve("old")
        assert (old.ref, old.program.image, old.created) == (
            "old@1",
            "old:1",
            "2026-01-02T03:04:05Z",
        )
        assert reg.owner("cab_old") == ("old", "1")
        new, _ = reg.submit("old", "2", image="old:2")
        assert [b.ref for b in reg.bots()] == ["old@1", "old@2"]
        assert new.created.endswith("Z") and new.created > old.created
        assert reg.meta("schema") == ("1" if schema_row else None)


@pytest.mark.parametrize(
    ("bots", "message"),
    [
        ([{"name": "alice@9"}, {"name": "random"}], "alice has no version '9' (registered: 1)"),
        ([{"name": "zed"}, {"name": "random"}], "no bot named 'zed' is registered"),
        ([{"name": "alice"}, {"name": "alice@1"}], "duplicate bot 'alice@1'"),
        ([{"name": "al ice@1"}, {"name": "random"}], "is not a bot reference"),
    ],
)
def test_unknown_or_duplicate_registered_bots_are_config_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bots: list[dict[str, str]], message: str
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv(ENV_VAR, str(home))
    with Registry(registry_path(home)) as reg:
        reg.submit("alice", "1", command="arena bot random")
    with pytest.raises(TournamentConfigError, match=r"bots\[[01]\]") as info:
        check_config({"game": "tennis", "bots": bots}, "t.toml", "t")
    assert message in str(info.value)


def test_without_a_registry_an_unknown_bot_names_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "empty"))
    with pytest.raises(TournamentConfigError, match=r"no bots are registered in .*empty"):
        check_config({"game": "tennis", "bots": [{"name": "x"}, {"name": "random"}]}, "t", "t")
    assert not (tmp_path / "empty").exists()  # looking up creates nothing


def test_split_ref() -> None:
    assert split_ref("a") == ("a", None)
    assert split_ref("a@1.2+b") == ("a", "1.2+b")
    for bad in ("", "@1", "a@", "a b@1", "a@1@2"):
        with pytest.raises(RegistryError):
            split_ref(bad)
    assert hash_token("t") != "t" and len(hash_token("t")) == 64


@pytest.mark.slow
def test_tournament_plays_registered_bots_by_name_and_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _submit(home, "alice", "1", "--command", "arena bot random")
    _submit(home, "alice", "2", "--command", "arena bot rules")
    done = _arena(
        "tournament", "--game", "tennis", "--option", "sets_to_win=1", "--matches", "2",
        "--bot", "alice", "--bot", "alice@1", "--out", str(tmp_path / "t"), "--quiet", "--json",
        "--home", str(home),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    standings = json.loads(done.stdout)
    assert standings["matches_done"] == 2
    assert {r["bot"] for r in standings["ratings"]["ratings"]} == {"alice@2", "alice@1"}
    assert standings["faults"] == {}


@pytest.mark.slow
def test_registered_bot_connects_on_its_own_with_its_token(tmp_path: Path) -> None:
    """``arena serve --registered-only``: bots submitted to its home connect from anywhere with
    their tokens and are seated under their registered names (not the names their Hellos
    claim); any other token is rejected."""
    home = tmp_path / "home"
    records = tmp_path / "records"
    tokens = [_submit(home, f"remote{i}", "1", "--command", "true") for i in range(2)]
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    server = subprocess.Popen(
        [ARENA, "serve", "--game", "tennis", "--option", "sets_to_win=1", "--listen",
         "127.0.0.1:0", "--registered-only", "--home", str(home), "--log-level", "warning",
         "--out", str(records)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        address = line.split(" on ")[1].split(";")[0].strip()
        bogus = _arena("bot", "random", "--server", address, "--token", "cab_not-registered")
        assert bogus.returncode != 0
        assert "rejected" in bogus.stderr and "unknown token" in bogus.stderr
        bots = [
            subprocess.Popen(
                [ARENA, "bot", "random", "--server", address, "--token", t, "--matches", "1"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for t in tokens
        ]
        deadline = time.monotonic() + 60
        for bot in bots:
            _, err = bot.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert bot.returncode == 0, err
        health = _arena("health", "--server", address)
        assert health.returncode == 0 and health.stdout.startswith("healthy: ")
        # The two registered bots were seated and played (the lobby may seat them once more
        # before they leave).
        assert int(health.stdout.split("(")[1].split()[0]) >= 1
        # `arena bot random` says "random" in its Hello; the records name the registered bots.
        written = sorted(
            wait_until(
                lambda: list(records.glob("*.jsonl.gz")), 10, what=f"a match record in {records}"
            )
        )
        seats = read_record(written[0]).header["seats"]
        assert {s["bot_name"] for s in seats} == {"remote0@1", "remote1@1"}, seats
        assert {s["bot_version"] for s in seats} == {"1"}
    finally:
        server.terminate()
        server.wait(timeout=10)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
def test_health_fails_in_one_line_when_nobody_answers() -> None:
    done = _arena("health", "--server", "127.0.0.1:1", "--timeout", "0.5")
    assert done.returncode == 1
    assert done.stdout.count("\n") == 1 and done.stdout.startswith("unhealthy: 127.0.0.1:1: ")
