"""The bot sandbox (arena/bots/sandbox.py): hostile bots try to escape during a real match.

Each hostile bot (tests/arena/bots/hostile/) sits in one seat of a whist match over the real server,
sandboxed like every bot of ``arena match``, with sandboxed reference bots in the other seats. At
its first decision it tries to escape (a TCP connection to a port this test listens on, writing
outside its directory, forking without limit, allocating 2 GiB); the attempt must be refused, the
bot dies of it, the crash is recorded as its seat's fault, and the match goes on to a result.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio
from cardarena.messages import TimeControl

import arena.bots.sandbox as sandbox_module
from arena.bots.command import BotProgram, host_names
from arena.bots.docker import container_environment, container_options, parse_image_bot
from arena.bots.launch import Confinement, start_bot
from arena.bots.process import RunningBot, bot_environment
from arena.bots.sandbox import (
    SOCKET_NAME,
    Limits,
    SandboxUnavailable,
    check_available,
    prepare_socket,
    socket_directory,
    wrap,
)
from arena.seeds import seat_seed
from arena.server import MatchOutcome, MatchSpec, SeatSpec, new_token, open_arena_server
from tests.arena.run_arena import arena_error

HOSTILE = Path(__file__).resolve().parent / "hostile"
ARENA = str(Path(sys.executable).parent / "arena")
LIMITS = Limits(memory_mb=1024, processes=64)
#: Short whist: one game to 5 points.
OPTIONS = {"points_to_win": 5, "games_per_rubber": 1}


@dataclass
class Played:
    """A finished match and each seat's bot output."""

    outcome: MatchOutcome
    logs: list[str]
    #: Each seat's bot exit status (``None``: it was still running at the end and was stopped).
    exits: list[int | None]


async def _play(commands: list[str], tmp: Path, seed: int = 1, hostile: int = 1) -> Played:
    """Play one whist match, every seat sandboxed, the bots started from tests/arena/hostile;
    the ``hostile`` seat's bot is given a few seconds after the match to finish dying."""
    spec = MatchSpec(
        match_id=f"sandbox-{secrets.token_hex(4)}",
        game="whist",
        seats=tuple(SeatSpec(new_token()) for _ in commands),
        seed=seed,
        players=4,
        options=OPTIONS,
        time_control=TimeControl(2000, 10000),
        connect_timeout_s=20.0,
    )
    log_paths = [tmp / f"seat{i}.log" for i in range(len(commands))]
    with socket_directory() as sockets:
        async with open_arena_server("127.0.0.1:0", unix=sockets / SOCKET_NAME) as server:
            prepare_socket(sockets / SOCKET_NAME)
            server.register(spec)
            confinement = Confinement(sockets, LIMITS, hide=(tmp,))
            bots: list[RunningBot] = []
            exits: list[int | None] = [None] * len(commands)
            done = False

            async def watch(seat: int, bot: RunningBot) -> None:
                exits[seat] = await bot.wait()
                if not done:
                    server.seat_crashed(spec.match_id, seat, bot.exit_detail())

            try:
                async with trio.open_nursery() as nursery:
                    for seat, (command, seat_spec) in enumerate(
                        zip(commands, spec.seats, strict=True)
                    ):
                        env = bot_environment(
                            server.address, seat_spec.token, seat_seed(spec.seed, seat)
                        )
                        program = BotProgram(command, workdir=str(HOSTILE))
                        bot = await start_bot(program, env, log_paths[seat], confinement)
                        bots.append(bot)
                        nursery.start_soon(watch, seat, bot)
                    outcome = await server.run_match(spec)
                    done = True
                    with trio.move_on_after(5):
                        exits[hostile] = await bots[hostile].wait()
                    nursery.cancel_scope.cancel()
            finally:
                with trio.CancelScope(shield=True):
                    for bot in bots:
                        await bot.stop()
    return Played(outcome, [p.read_text(errors="replace") for p in log_paths], exits)


def _hostile_match(tmp: Path, hostile: str) -> Played:
    """The hostile command in seat 1, reference bots in the others."""
    commands = [f"{ARENA} bot rules", hostile, f"{ARENA} bot random", f"{ARENA} bot rules"]
    return trio.run(_play, commands, tmp)


def _assert_stopped_and_recorded(played: Played, seat: int = 1) -> str:
    """The hostile seat's attempt was blocked and killed its bot; the fault is on its seat; the
    match reached its result (the other seats played on cleanly)."""
    outcome = played.outcome
    log = played.logs[seat]
    assert "hostile bot up: uid 65534" in log, log
    assert "ESCAPED" not in log, log
    assert "blocked:" in log, log
    assert played.exits[seat] == 3, played.exits
    # The stream closing or the process exiting, whichever the arena notices first.
    faults = [f for f in outcome.faults if f.seat == seat]
    assert faults and faults[0].kind in ("crash", "disconnect"), outcome.faults
    assert all(f.seat == seat for f in outcome.faults), outcome.faults
    # Lenient policy: three strikes forfeit the seat, which ranks last; the match ends normally.
    assert outcome.result.ranks[seat] == max(outcome.result.ranks)
    assert outcome.result.reason in ("forfeit", "normal"), outcome.result.reason
    others = [t for t in outcome.timings if t.seat != seat and not t.fallback]
    assert others, "the other seats played"
    return next(ln for ln in log.splitlines() if ln.startswith("blocked:"))


@pytest.mark.slow
def test_network_attempt_is_stopped_and_recorded(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        played = _hostile_match(tmp_path, f"python network.py {port}")
        why = _assert_stopped_and_recorded(played)
        # The box has its own network namespace: only its own loopback, where nothing listens.
        assert "Network is unreachable" in why or "Connection refused" in why, why
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
    finally:
        listener.close()


@pytest.mark.slow
def test_writing_outside_its_directory_is_stopped_and_recorded(tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    played = _hostile_match(tmp_path, f"python write_outside.py {target}")
    why = _assert_stopped_and_recorded(played)
    import arena

    name = "escaped-by-hostile-bot.txt"
    for path in (target, HOSTILE / name, Path(arena.__file__).parent / name):
        assert not path.exists(), path
    assert why.count("Read-only file system") == 2, why  # its own dir and the arena's


@pytest.mark.slow
def test_fork_bomb_is_stopped_and_recorded(tmp_path: Path) -> None:
    played = _hostile_match(tmp_path, "python fork_bomb.py")
    why = _assert_stopped_and_recorded(played)
    children = int(why.split("fork refused after ")[1].split()[0])
    assert children < LIMITS.processes, why


@pytest.mark.slow
def test_two_gib_allocation_is_stopped_and_recorded(tmp_path: Path) -> None:
    played = _hostile_match(tmp_path, "python memory_hog.py")
    why = _assert_stopped_and_recorded(played)
    assert "MemoryError" in why, why


@pytest.mark.slow
def test_sandboxed_bot_sees_no_secrets_and_cleans_up(tmp_path: Path) -> None:
    """The box: uid nobody, no capabilities, no nested user namespaces, the allow-listed
    environment only, /etc/shadow masked, a small /tmp, and no cgroup left behind."""
    script = (
        "id -u; grep CapEff /proc/self/status; env; "
        "cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ || echo shadow-refused; "
        "touch ./x 2>/dev/null && echo WROTE-DIR || echo dir-read-only; "
        "unshare -U true 2>/dev/null && echo USERNS || echo userns-refused; "
        "head -c 100000000 /dev/zero > /tmp/big 2>/dev/null && echo TMP-UNBOUNDED || echo tmp-full"
    )
    wrapped = wrap(
        script,
        tmp_path,
        tmp_path,
        LIMITS,
        env={"PATH": "/usr/bin:/bin", "ARENA_TOKEN": "t", "SECRET_KEY": "s", "ARENA_HOME": "/h"},
    )
    # stdin is the guard's pipe: the box lives while it is open (arena/bots/sandbox.py).
    proc = subprocess.Popen(
        wrapped.argv, env=wrapped.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 0
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.stdout.close()
        wrapped.cleanup()
    assert out.splitlines()[0] == "65534"
    assert "CapEff:\t0000000000000000" in out
    assert "ARENA_TOKEN=t" in out and "SECRET_KEY" not in out and "ARENA_HOME" not in out
    assert "shadow-refused" in out and "dir-read-only" in out
    assert "userns-refused" in out and "tmp-full" in out
    assert not (tmp_path / "x").exists()
    assert wrapped.cgroups == []  # removed


def _no_bwrap_path(tmp_path: Path) -> str:
    """A PATH with sh and prlimit but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "prlimit"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.mark.slow
def test_missing_bwrap_is_one_clear_line_and_no_sandbox_still_plays(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": _no_bwrap_path(tmp_path)}
    base = [ARENA, "match", "tennis", "--option", "sets_to_win=1", "--out", str(tmp_path / "m")]
    bots = ["--bot", "arena bot random", "--bot", "arena bot random"]
    refused = subprocess.run(base + bots, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert "bwrap is not installed" in lines[0] and "--no-sandbox" in lines[0]
    assert not (tmp_path / "m").exists()  # refused before anything ran
    played = subprocess.run(
        [*base, *bots, "--no-sandbox"], env=env, capture_output=True, text=True, timeout=60
    )
    assert played.returncode == 0, played.stderr
    assert "tennis match" in played.stdout


def test_check_available_names_the_missing_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _no_bwrap_path(tmp_path))
    with pytest.raises(SandboxUnavailable, match="bwrap is not installed"):
        check_available()


@pytest.mark.slow
def test_arena_match_sandboxes_by_default(tmp_path: Path) -> None:
    """``arena match`` boxes its bots: a bot command runs as nobody, in its directory (here the
    current one), where the match's output directory shows up empty."""
    probe = "id -u; ls -A out | wc -l; exec arena bot random"
    done = subprocess.run(
        [
            ARENA,
            "match",
            "tennis",
            "--option",
            "sets_to_win=1",
            "--out",
            "out",
            *("--bot", probe, "--bot", "arena bot random"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    logs = sorted((tmp_path / "out" / "logs").glob("*seat0.log"))
    assert logs and logs[0].read_text().splitlines()[:2] == ["65534", "0"]


def test_image_bots_parse_and_get_a_locked_down_container(tmp_path: Path) -> None:
    assert parse_image_bot("arena bot random") is None
    assert parse_image_bot("image:bots/alice:1") == ("bots/alice:1", None)
    assert parse_image_bot("image:alice:1 arena bot rules") == ("alice:1", "arena bot rules")
    host_env = {
        "ARENA_ADDRESS": f"unix:{tmp_path}/arena.sock",
        "ARENA_TOKEN": "tok",
        "ARENA_SEED": "5",
        "PATH": "/host/bin",
        "AWS_SECRET_ACCESS_KEY": "s",
    }
    assert container_environment(host_env, tmp_path) == {
        "ARENA_ADDRESS": "unix:/arena/arena.sock",
        "ARENA_TOKEN": "tok",
        "ARENA_SEED": "5",
        "PYTHONUNBUFFERED": "1",
    }
    options = container_options(Limits(memory_mb=512, processes=32, open_files=100), tmp_path)
    assert options["network_mode"] == "none"
    assert options["read_only"] is True and options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["user"] == "65534:65534"
    assert options["mem_limit"] == options["memswap_limit"] == "512m"
    assert options["pids_limit"] == 32
    assert options["volumes"] == {str(tmp_path): {"bind": "/arena", "mode": "ro"}}
    assert {u["Name"]: u["Hard"] for u in options["ulimits"]}["nofile"] == 100


@pytest.mark.slow
def test_missing_docker_engine_is_one_clear_line(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    done = subprocess.run(
        [
            ARENA,
            "match",
            "tennis",
            "--out",
            str(tmp_path / "m"),
            *("--bot", "image:some-bot:1", "--bot", "arena bot random"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Docker engine is reachable at unix://" in lines[0], lines
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_tournament_boxes_a_hostile_bot_and_goes_on(tmp_path: Path) -> None:
    """``arena tournament`` sandboxes by default: a bot that tries the network in every match is
    stopped each time, its faults are stored, and every match of the tournament is played."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        done = subprocess.run(
            [
                ARENA,
                "tournament",
                "--game",
                "tennis",
                "--option",
                "sets_to_win=1",
                "--bot",
                f"hostile=python network.py {port}",
                "--bot",
                "random",
                "--matches",
                "2",
                "--out",
                str(tmp_path / "t"),
                "--quiet",
                "--json",
            ],
            cwd=HOSTILE,  # the bot's directory: its command runs there, read-only
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        standings = json.loads(done.stdout)
        assert standings["matches_done"] == standings["matches_total"] == 2
        assert standings["faults"]["hostile"]  # recorded, per bot
        assert "random" not in standings["faults"]
        with pytest.raises(BlockingIOError):
            listener.accept()
        logs = sorted((tmp_path / "t" / "logs").glob("*.log"))
        hostile_logs = [p.read_text() for p in logs if "hostile bot up" in p.read_text()]
        assert len(hostile_logs) == 2
        assert all("blocked: " in text and "ESCAPED" not in text for text in hostile_logs)
    finally:
        listener.close()


@pytest.mark.slow
def test_runtime_paths_under_tmp_stay_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout or venv under the host's /tmp (a CI clone) must not vanish under the box's
    private /tmp: the tmpfs is mounted before the read-only binds."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "marker").write_text("visible\n")
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    real = sandbox_module._runtime_paths
    monkeypatch.setattr(sandbox_module, "_runtime_paths", lambda: [*real(), venv])
    wrapped = wrap(f"cat {venv}/marker", bot_dir, bot_dir, LIMITS, env={"PATH": "/usr/bin:/bin"})
    proc = subprocess.Popen(
        wrapped.argv, env=wrapped.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 0
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.stdout.close()
        wrapped.cleanup()
    assert out == "visible\n"


@pytest.mark.slow
def test_a_command_outside_its_sandbox_is_refused_before_any_match(tmp_path: Path) -> None:
    """A bot script this machine runs but the box would not show (outside the working directory)
    is refused in one line naming the bot and the sandbox, before any match or output, by `arena
    tournament` (whose config check, on the host, passes it) and `arena match`; --no-sandbox
    plays it."""
    script = tmp_path / "elsewhere" / "bot.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexec arena bot random\n")
    script.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    line = arena_error(
        *("tournament", "--game", "tennis", "--option", "sets_to_win=1", "--matches", "2"),
        *("--bot", f"outside={script}", "--bot", "random", "--out", "t", "--quiet"),
        cwd=work,
    )
    assert line.startswith(f'arena: error: bot "outside": {script} is not found inside the sandbox')
    assert f"binds only the bot's directory {work}" in line and "--no-sandbox" in line, line
    match = ["match", "tennis", "--option", "sets_to_win=1", "--out", "m"]
    line = arena_error(*match, "--bot", "arena bot rules", "--bot", str(script), cwd=work)
    assert f"seat 1 (--bot '{script}'): {script} is not found inside the sandbox" in line, line
    assert not (work / "t").exists() and not (work / "m").exists()
    played = subprocess.run(
        [ARENA, *match, "--bot", "arena bot rules", "--bot", str(script), "--no-sandbox"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert played.returncode == 0, played.stderr
    assert "faults:" not in played.stdout, played.stdout


def test_host_names_are_what_a_command_names_on_this_machine(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    assert host_names(f"sh {tmp_path}/bot.py --x /no/such", tmp_path) == (
        ["sh"],
        [f"{tmp_path}/bot.py"],
    )
    assert host_names("./bot.py", tmp_path) == ([], ["./bot.py"])
    assert host_names("no-such-program-here", tmp_path) == ([], [])
    assert host_names("X=1 sh", tmp_path) == ([], [])


def _boxed(command: str, bot_dir: Path) -> tuple[int, str]:
    """Run ``command`` in a box; its exit status and output (stderr too: bwrap's complaints)."""
    wrapped = wrap(command, bot_dir, bot_dir, LIMITS, env={"PATH": "/usr/bin:/bin"})
    proc = subprocess.Popen(
        wrapped.argv,
        env=wrapped.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()
        return proc.wait(timeout=30), out
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        wrapped.cleanup()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.skipif(os.geteuid() != 0, reason="root-only entries are masked when run as root")
def test_a_root_only_file_that_vanished_does_not_stop_later_boxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root-only temporary file under /etc (``/etc/group.lock`` while a package tool runs) is
    masked in the boxes started while it is there; once it is gone, the next box must start:
    a walk of /etc kept for the life of the process named it still, and bwrap refused
    (``Can't create file at /etc/group.lock``) every box after."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "group").write_text("shown\n")
    lock = etc / "group.lock"
    lock.write_text("root only\n")
    lock.chmod(0o600)
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    real = sandbox_module._runtime_paths
    monkeypatch.setattr(sandbox_module, "_runtime_paths", lambda: [*real(), etc])
    monkeypatch.setattr(sandbox_module, "PRIVATE_ROOT", etc)
    show = f"cat {etc}/group"
    assert _masks(lock, bot_dir)
    assert _boxed(show, bot_dir) == (0, "shown\n")
    lock.unlink()
    assert not _masks(lock, bot_dir)
    assert _boxed(show, bot_dir) == (0, "shown\n")  # not "bwrap: Can't create file at …"
    # And a new root-only file is masked as soon as it is there.
    lock.write_text("root only\n")
    lock.chmod(0o600)
    assert _masks(lock, bot_dir)
    assert _boxed(show, bot_dir) == (0, "shown\n")


def _masks(path: Path, bot_dir: Path) -> bool:
    """Whether a box started now would cover ``path`` with /dev/null."""
    wrapped = wrap("true", bot_dir, bot_dir, LIMITS, env={"PATH": "/usr/bin:/bin"})
    wrapped.cleanup()
    argv = wrapped.argv
    return any(argv[i : i + 3] == ["--ro-bind", "/dev/null", str(path)] for i in range(len(argv)))
