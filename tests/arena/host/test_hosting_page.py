"""docs/hosting.md's blocks as written: its competition config, its cluster table and a bot's
manifest load verbatim, and its certificate command runs as printed (the host it makes reaches
its own API with it: tests/arena/host/test_host_certificates.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cardarena.resolve import parse_resolve

from arena.host.apitypes import MatchOut
from arena.host.client import RemoteClient
from arena.host.config import load_competition
from arena.host.store import CompetitionStore
from arena.policy import FaultPolicy
from arena.snapshots.archive import MANIFEST_NAME, read_manifest
from tests.helpers import free_port
from tests.waiting import wait_until

PAGE = Path(__file__).resolve().parents[3] / "docs" / "hosting.md"


def blocks(language: str) -> list[str]:
    """The page's fenced blocks of ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)


def test_the_competition_config_loads_as_written(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    path = tmp_path / "cup.toml"
    path.write_text(cup)
    config = load_competition(path)
    # Every key the page sets took effect.
    rules = config.rules
    assert (config.name, rules.game_id, rules.config.players) == ("whist-cup", "whist", 4)
    assert dict(rules.config.options)["points_to_win"] == 5
    assert config.rules.fault_policy is FaultPolicy.LENIENT
    assert (config.rules.time_control.move_ms, config.rules.time_control.bank_ms) == (1000, 10000)
    assert config.ladder.concurrency == 2 and config.authors.invite_code == "a long secret"
    # With the cluster's table beside it, as the page says to add it.
    (workers,) = [b for b in blocks("toml") if b.startswith("[workers]")]
    path.write_text(cup + workers)
    assert load_competition(path).workers.dask == "tcp://scheduler.example.org:8786"


def test_the_retention_table_and_the_prune_commands_run_as_written(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    (retention,) = [b for b in blocks("toml") if b.startswith("[retention]")]
    (tmp_path / "cup.toml").write_text(cup + retention)
    config = load_competition(tmp_path / "cup.toml")
    kept = config.retention
    assert (kept.records_days, kept.records_mib, kept.logs_days, kept.logs_mib) == (
        *(180, 20480),
        *(30, 2048),
    )
    assert not kept.published and kept.interval_s == 3600
    CompetitionStore(tmp_path / "cup", config).close()  # a competition directory, host stopped
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    shell = Shell(tmp_path, {k: v for k, v in os.environ.items() if k != "ARENA_HOME"})
    shell.env["PATH"] = path
    dry, real = commands("arena host prune")
    assert "would remove 0 files" in shell.run(dry)
    assert "removed 0 files" in shell.run(real)


def test_the_challenges_table_loads_as_written(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    (challenges,) = [b for b in blocks("toml") if b.startswith("[challenges]")]
    (tmp_path / "cup.toml").write_text(cup + challenges)
    c = load_competition(tmp_path / "cup.toml").challenges
    assert c.enabled and not c.rated and c.opponents == "newest"
    assert (c.per_author_per_day, c.max_open_per_author) == (10, 1)
    assert (c.move_ms, c.bank_ms) == (60_000, 600_000)
    # Off unless enabled.
    (tmp_path / "cup.toml").write_text(cup)
    assert not load_competition(tmp_path / "cup.toml").challenges.enabled


def test_a_bot_s_manifest_reads_as_written(tmp_path: Path) -> None:
    (manifest,) = [b for b in blocks("toml") if b.startswith("command = ")]
    (tmp_path / MANIFEST_NAME).write_text(manifest)
    read = read_manifest(tmp_path)
    assert read.command == "python3 bot.py"


def test_the_certificate_command_runs_as_printed(tmp_path: Path) -> None:
    (command,) = [b for b in blocks("sh") if b.startswith("openssl req")]
    argv = shlex.split(command.replace("\\\n", " "))
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    context = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    assert (tmp_path / "key.pem").stat().st_size > 0


# --- the page's shell blocks, run as written against a host serving the page's certificate -----

NAME = "arena.example.org"


def commands(first: str) -> list[str]:
    """The commands of the page's ``sh`` block starting with ``first``, one a line (a line
    ending in ``\\`` joined to the next)."""
    (block,) = [b for b in blocks("sh") if b.startswith(first)]
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


class Shell:
    """A bash session in ``cwd``: each command run as written (quotes, ``$(…)``, comments),
    its ``export``s kept for the next, as a user following the page in a terminal."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd, self.env = cwd, dict(env)

    def run(self, command: str) -> str:
        if command.startswith("export "):
            done = self._bash(f"{command}\nenv -0")
            self.env = dict(v.split("=", 1) for v in done.stdout.split("\0") if "=" in v)
            return ""
        return self._bash(command).stdout

    def start(self, command: str, output: Path) -> subprocess.Popen[bytes]:
        """``command`` in the background (its output into ``output``)."""
        with output.open("wb") as out:
            return subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=out,
                start_new_session=True,  # Ctrl-C reaches the command whatever bash does
            )

    def _bash(self, command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.cwd, env=self.env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
        return done


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def hosted(tmp_path: Path) -> Iterator[tuple[Shell, Shell, RemoteClient]]:
    """The host's shell with the page's host running, the author's shell beside it (another
    directory: another machine), and a client that watches the host as the author would."""
    host_dir, author_dir = tmp_path / "host", tmp_path / "author"
    host_dir.mkdir()
    author_dir.mkdir()
    http, grpc = free_port(), free_port()
    # Only what a test machine cannot share with the real host: free ports, which the page's
    # addresses are mapped to (and the gRPC address the host advertises, on the free port).
    resolve = ",".join(
        f"{NAME}:{port}:127.0.0.1:{free}"
        for port, free in ((8443, http), (50051, grpc), (grpc, grpc))
    )
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env = base | {"PATH": path, "ARENA_RESOLVE": resolve}
    host = Shell(host_dir, env)
    for command in commands("openssl req"):
        host.run(command)
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    (host_dir / "cup.toml").write_text(cup)
    (command,) = commands("arena host cup.toml")
    command = command.replace(":8443 ", f":{http} ").replace(":50051 ", f":{grpc} ")
    proc = host.start(command, tmp_path / "host.log")
    info = host_dir / "cup" / "private" / "host.json"
    wait_until(lambda: info.is_file() or proc.poll() is not None, 60, what="the host to start")
    assert proc.poll() is None, (tmp_path / "host.log").read_text()
    # The author has the host's certificate (it is public), nothing else of the host's.
    (author_dir / "cert.pem").write_bytes((host_dir / "cert.pem").read_bytes())
    watcher = RemoteClient(
        f"https://{NAME}:8443", cafile=host_dir / "cert.pem", resolve=parse_resolve(resolve)
    )
    try:
        yield host, Shell(author_dir, env), watcher
    finally:
        _stop(proc)


def _a_match_of(watcher: RemoteClient, ref: str) -> MatchOut | None:
    """A ladder match with ``ref`` at the table whose record is published."""
    found = [m for m in watcher.matches(phase="ladder") if m.record_available and ref in m.seats]
    return found[0] if found else None


@pytest.mark.slow
@pytest.mark.host  # a real host for many seconds: make test-host
def test_the_host_s_and_the_author_s_commands_run_as_printed(
    hosted: tuple[Shell, Shell, RemoteClient],
) -> None:
    host, author, watcher = hosted
    (add_author,) = commands("arena host add-author")
    token = re.search(r"API token (cau_\S+)", host.run(add_author))
    assert token is not None
    # Steering, from the host's own machine: the admin's "…" is the first line's flags.
    export, pause, resume, close = commands(f"export ARENA_SERVER=https://{NAME}:8443\narena")
    host.run(export)
    assert "ladder: paused" in host.run(pause)
    flags = pause.split("--pause", 1)[1].strip()
    assert "ladder: running, pace: 30 units per minute" in host.run(resume.replace("…", flags))

    # The author: a bot from the page's blocks, submitted with the commands as printed.
    (manifest,) = [b for b in blocks("toml") if b.startswith("command = ")]
    (bot,) = [b for b in blocks("python") if b.startswith("# bot.py")]
    (author.cwd / "mybot").mkdir()
    (author.cwd / "mybot" / MANIFEST_NAME).write_text(manifest)
    for where in (author.cwd / "mybot", author.cwd):
        (where / "bot.py").write_text(bot)
    export, submit = commands(f"export ARENA_SERVER=https://{NAME}:8443 ARENA_API_TOKEN")
    author.run(export.replace("cau_…", token.group(1)))
    assert "submitted mybot@1 (version 1)" in author.run(submit)
    wait_until(lambda: watcher.version(1).status == "validated", 120, what="mybot@1 validated")
    # Its validation log and its validation match's record, as the page says to get them.
    assert author.run("arena remote log 1").endswith("\nvalidated\n")
    assert "wrote validate-1-1.jsonl.gz" in author.run("arena remote validation 1")
    live_command, bot_command = commands("arena remote live")
    printed = author.run(live_command)
    live = re.search(r"token: (cal_\S+)", printed)
    assert live is not None
    # The whole environment the bot needs: the host's name (its gRPC port), the certificate.
    cert, grpc = author.cwd / "cert.pem", watcher.status().grpc_port
    assert (
        f"ARENA_ADDRESS={NAME}:{grpc} ARENA_TOKEN={live.group(1)} ARENA_CA_CERT={cert}" in printed
    )
    playing = author.start(bot_command.replace("cal_…", live.group(1)), author.cwd / "bot.log")
    try:
        match = wait_until(lambda: _a_match_of(watcher, "mybot-live@1"), 60, what="a match")
    finally:
        _stop(playing)
    assert "welcomed" in (author.cwd / "bot.log").read_text()

    # The results, their placeholders filled in.
    seat = str(match.seats.index("mybot@1"))
    for command in commands("arena remote leaderboard"):
        command = command.replace("[--latest] [--all]", "--latest --all")
        command = command.replace("MATCH_ID", match.match_id).replace("SEAT", seat)
        assert author.run(command.replace(" ID", " 1")) is not None
    assert (author.cwd / f"{match.match_id}.jsonl.gz").stat().st_size > 0
    assert "ladder: closed" in host.run(close.replace("…", flags))


# --- "Seasons and events": seasons, results and exports -----------------------------------------


def test_the_seasons_and_announce_tables_load_as_written(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    path = tmp_path / "cup.toml"
    loaded = []
    for block in blocks("toml"):
        if block.startswith(("[seasons]", "[announce]")):
            path.write_text(cup + block)
            loaded.append(load_competition(path))
    by_length, by_schedule, announcing = loaded
    assert (by_length.seasons.length_s, by_length.seasons.ratings) == (14 * 86400, "reset")
    assert [s.name for s in by_schedule.seasons.schedule] == ["Spring", "Summer"]
    assert by_schedule.seasons.ratings == "carry"
    assert announcing.announce.secret_file == "webhook.secret"
    assert announcing.announce.webhook_url == "https://hooks.example.org/arena"


def test_the_page_s_signature_check_accepts_the_host_s_signature_only() -> None:
    from arena.host.announce import signature

    (verify,) = [b for b in blocks("python") if b.startswith("# verify.py")]
    space: dict[str, object] = {}
    exec(verify, space)
    verified = space["verified"]
    assert callable(verified)
    body = b'{"event": "season.finished"}'
    assert verified(b"secret", body, signature(b"secret", body))
    assert not verified(b"secret", body + b" ", signature(b"secret", body))
    assert not verified(b"other", body, signature(b"secret", body))


@pytest.mark.slow
def test_the_seasons_and_exports_commands_run_as_printed(
    hosted: tuple[Shell, Shell, RemoteClient],
) -> None:
    host, _, watcher = hosted
    export, listed, one, end = commands(f"export ARENA_SERVER=https://{NAME}:8443 ARENA_CA_CERT")
    host.run(export)
    assert "Season 1" in host.run(listed)
    assert "standings (as they stand now)" in host.run(one)
    ended = host.run(end)
    assert "Season 1 ended" in ended and "Season 2 (Autumn) started" in ended
    assert [s.state for s in watcher.seasons()] == ["archived", "current"]
    standings, frozen, matches = commands("arena remote export standings")
    host.run(standings)
    header = (host.cwd / "standings.csv").read_text().splitlines()[0]
    assert header == "rank,ref,bot,author,elo,plus_minus,matches,score,retired,provisional"
    assert json.loads(host.run(frozen)) == []  # season 1 of the page's host rated nobody
    host.run(matches)
    assert (host.cwd / "matches.csv").read_text().startswith("match_id,unit,phase,season,")
