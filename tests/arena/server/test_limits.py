"""The server's descriptors cannot be exhausted by one peer (arena/server/limits.py;
docs/protocol.md, "Limits"): the server raises its own open-files limit, closes connections
that never send their HTTP/2 preface, and caps what one TCP address, or one sandboxed bot on the
Unix socket, may hold; a cap that is hit is a warning in the server's log."""

from __future__ import annotations

import gzip
import json
import resource
import select
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import structlog
import trio
from cardarena._pb import arena_pb2 as pb

from arena.server import new_token, open_arena_server
from arena.server.limits import (
    CENSUS_INTERVAL_S,
    IDLE_GRACE_S,
    MAX_CONNECTIONS_PER_BOT,
    MAX_IDLE_PER_ADDRESS,
    grpc_endpoint,
)
from tests.arena.descriptors import (
    PREFACE,
    USUAL_SOFT,
    closed_by_server,
    hard_open_files,
    soft_open_files,
)
from tests.arena.wire import RawBot
from tests.waiting import async_wait_until, wait_until

ARENA = str(Path(sys.executable).parent / "arena")


def tcp(address: str, preface: bool) -> socket.socket:
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.settimeout(None)  # closed_by_server reads with MSG_DONTWAIT
    if preface:
        sock.sendall(PREFACE)
    return sock


def test_grpc_peers_read_as_endpoints() -> None:
    assert grpc_endpoint("ipv4:127.0.0.1:5000") == ("127.0.0.1", 5000)
    assert grpc_endpoint("ipv6:%5B::1%5D:5001") == ("::1", 5001)
    assert grpc_endpoint("ipv6:[::ffff:10.0.0.2]:7") == ("10.0.0.2", 7)
    assert grpc_endpoint("unix:") is None
    assert grpc_endpoint("ipv4:nonsense") is None


def test_every_server_raises_its_soft_open_files_limit_to_the_hard_limit() -> None:
    hard = hard_open_files()

    async def main() -> None:
        async with open_arena_server():
            assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard

    with soft_open_files(USUAL_SOFT):
        trio.run(main)


def test_a_connection_that_never_sends_a_byte_is_closed_within_seconds() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            silent = tcp(server.address, preface=False)
            opened = time.monotonic()
            with silent:
                # gRPC's own default waits 120 s.
                await async_wait_until(
                    lambda: closed_by_server(silent), 30, what="the server to close the socket"
                )
            assert time.monotonic() - opened < 30

    trio.run(main)


def test_idle_connections_past_the_cap_of_one_address_are_closed_and_logged() -> None:
    """Connections that sent their preface (so the handshake timeout passes them) but carry
    no bot stream: one address keeps MAX_IDLE_PER_ADDRESS of them; a welcomed bot's connection
    from the same address, older than all, stays."""
    extra = 20

    async def main() -> list[dict[str, Any]]:
        async with open_arena_server() as server:
            token = new_token()
            server.add_token(token)
            bot = RawBot(server.address)
            idle: list[socket.socket] = []
            try:
                bot.hello(token)
                welcome = await trio.to_thread.run_sync(bot.recv)
                assert welcome is not None and welcome.WhichOneof("kind") == "welcome"
                with structlog.testing.capture_logs() as logs:
                    for _ in range(MAX_IDLE_PER_ADDRESS + extra):
                        idle.append(tcp(server.address, preface=True))

                    def shed() -> list[bool]:
                        closed = [closed_by_server(s) for s in idle]
                        return closed if sum(closed) >= extra else []

                    # The server's keepalive would close them only after 30 s.
                    closed = await async_wait_until(
                        shed, 10 + IDLE_GRACE_S, what=f"{extra} idle connections closed"
                    )
                assert sum(closed) == extra
                assert not bot.ended.is_set()
                bot.send(pb.BotMessage(ping=pb.Ping(nonce=7)))
                pong = await trio.to_thread.run_sync(bot.recv)
                assert pong is not None and pong.WhichOneof("kind") == "pong"
            finally:
                bot.close()
                for s in idle:
                    s.close()
            return [e for e in logs if e["event"] == "connections over the cap closed"]

    warnings = trio.run(main)
    assert warnings and warnings[0]["log_level"] == "warning"
    first = warnings[0]
    assert (first["peer"], first["cap"]) == ("tcp 127.0.0.1", MAX_IDLE_PER_ADDRESS)
    assert sum(w["closed"] for w in warnings) == extra


#: Holds COUNT connections to the Unix socket PATH, each sent the preface, and writes how many
#: the server has closed to the file REPORT whenever that changes, until its stdin closes.
HOLDER = """
import os, select, socket, sys
path, count, report = sys.argv[1], int(sys.argv[2]), sys.argv[3]
preface = bytes.fromhex(sys.argv[4])
socks = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(preface)
    s.setblocking(False)
    socks.append(s)
def closed(s):
    try:
        while True:
            if s.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
gone = set()
last = -1
while not select.select([sys.stdin], [], [], 0.05)[0]:
    gone |= {i for i, s in enumerate(socks) if i not in gone and closed(s)}
    if len(gone) != last:
        last = len(gone)
        with open(report + ".tmp", "w") as f:
            f.write(" ".join(map(str, sorted(gone))))
        os.replace(report + ".tmp", report)
"""


def _holder(
    path: Path, count: int, report: Path, *, own_namespace: bool
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", HOLDER, str(path), str(count), str(report), PREFACE.hex()]
    if own_namespace:  # a pid namespace of its own, as every sandboxed bot has
        bwrap = shutil.which("bwrap")
        assert bwrap is not None, "bwrap must be installed (Debian package bubblewrap)"
        argv = [bwrap, "--unshare-user", "--unshare-pid", "--dev-bind", "/", "/", "--", *argv]
    return subprocess.Popen(argv, stdin=subprocess.PIPE)


def _closed_indices(report: Path) -> list[int] | None:
    try:
        return [int(i) for i in report.read_text().split()]
    except FileNotFoundError:
        return None


def test_unix_peers_past_their_connection_cap_lose_their_newest_and_are_logged(
    tmp_path: Path,
) -> None:
    """A process in a pid namespace of its own (as every sandboxed bot is) and a process in the
    server's namespace (a bot run without a sandbox) each keep MAX_CONNECTIONS_PER_BOT."""
    held = MAX_CONNECTIONS_PER_BOT + 24
    sock = tmp_path / "arena.sock"

    async def main() -> list[dict[str, Any]]:
        async with open_arena_server(unix=sock):
            with structlog.testing.capture_logs() as logs:
                boxed = _holder(sock, held, tmp_path / "boxed", own_namespace=True)
                local = _holder(sock, held, tmp_path / "local", own_namespace=False)
                try:
                    for report in ("boxed", "local"):
                        closed = await async_wait_until(
                            lambda r=report: (c := _closed_indices(tmp_path / r)) and len(c) >= 24,
                            20,
                            what=f"24 of the {report} holder's connections closed",
                        )
                    for report in ("boxed", "local"):
                        closed = _closed_indices(tmp_path / report)
                        assert closed is not None and len(closed) == 24, (report, closed)
                finally:
                    for proc in (boxed, local):
                        assert proc.stdin is not None
                        proc.stdin.close()
                        proc.wait(10)
            return [e for e in logs if e["event"] == "connections over the cap closed"]

    warnings = trio.run(main)
    assert sorted(w["peer"].split(" ")[0] for w in warnings) == ["bot", "process"], warnings
    bot = next(w for w in warnings if w["peer"].startswith("bot "))
    assert bot["peer"].startswith("bot pid:[")
    for w in warnings:
        assert (w["held"], w["cap"], w["closed"]) == (held, MAX_CONNECTIONS_PER_BOT, 24)


# --- the attack from outside, against `arena serve` -------------------------------------------


def _serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    """``arena serve`` (a tennis lobby writing records to tmp_path/out) with the usual soft
    open-files limit, and its address once it serves."""
    hard = hard_open_files()
    proc = subprocess.Popen(
        [
            *("prlimit", f"--nofile={USUAL_SOFT}:{hard}", "--"),  # execs: the same pid
            *(ARENA, "serve", "--game", "tennis", "--option", "sets_to_win=1"),
            *("--listen", "127.0.0.1:0", "--out", str(tmp_path / "out"), "--log-level", "warning"),
        ],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "serve.err", "w"),  # noqa: SIM115
        text=True,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    assert ready, "arena serve did not start"
    line = proc.stdout.readline()  # arena: serving tennis on 127.0.0.1:PORT; Ctrl-C stops
    assert line.startswith("arena: serving tennis on "), line
    return proc, line.split(" on ")[1].split(";")[0]


def _warnings(stderr: Path) -> list[dict[str, Any]]:
    lines = stderr.read_text().splitlines()
    return [json.loads(ln) for ln in lines if "connections over the cap closed" in ln]


def _open_files_limit(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open files limit")


@pytest.mark.slow
def test_a_thousand_silent_sockets_leave_arena_serve_open_to_honest_bots(tmp_path: Path) -> None:
    """The issue's attack: 1,100 TCP sockets that never send a byte, against a server started
    with the usual soft limit of 1024, once locked every bot out for 120 s and logged nothing."""
    hard = hard_open_files()
    with soft_open_files(min(hard, 4 * USUAL_SOFT)):  # this test's own 1,100 sockets
        serve, address = _serve(tmp_path)
        silent: list[socket.socket] = []
        bots: list[subprocess.Popen[bytes]] = []
        try:
            silent = [tcp(address, preface=False) for _ in range(1100)]
            bots = [
                subprocess.Popen(
                    [ARENA, "bot", "random", "--server", address, "--matches", "1"],
                    stderr=subprocess.DEVNULL,
                )
                for _ in range(4)
            ]
            exits = [bot.wait(60) for bot in bots]
            assert exits == [0, 0, 0, 0]
            records = wait_until(
                lambda: len(found := sorted((tmp_path / "out").glob("*.jsonl.gz"))) == 2 and found,
                20,
                what="both lobby matches' records",
            )
            warnings = wait_until(
                lambda: _warnings(tmp_path / "serve.err"), 20, what="the server's warning"
            )
            assert _open_files_limit(serve.pid) == (hard, hard)
        finally:
            for s in silent:
                s.close()
            for bot in bots:
                if bot.poll() is None:
                    bot.kill()
            serve.terminate()
            serve.wait(30)
    for record in records:
        result = json.loads(gzip.decompress(record.read_bytes()).splitlines()[-1])
        assert (result["reason"], result["faults"]) == ("normal", []), record
    assert warnings[0]["peer"] == "tcp 127.0.0.1", warnings


#: A server whose every spare descriptor is taken, as a busy process's are when it runs out:
#: ``fill`` on stdin starts a thread that holds every descriptor as soon as one is free (as
#: gRPC's accept loop does), ``free`` releases them and stops it. Its log goes to stderr.
STARVED_SERVER = """
import os, sys, threading, time, trio
from arena.logging import configure
from arena.server import new_token, open_arena_server
configure("info", json=True)
held, stop = [], threading.Event()
def hog():
    while not stop.is_set():
        try:
            held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            time.sleep(0.001)
async def main():
    async with open_arena_server() as server:
        token = new_token()
        server.add_token(token)
        print(server.address, token, flush=True)
        for line in sys.stdin:
            if line.strip() == "fill":
                threading.Thread(target=hog, daemon=True).start()
            elif line.strip() == "free":
                stop.set()
                while held:
                    os.close(held.pop())
            print("ok", flush=True)
trio.run(main)
"""


@pytest.mark.slow
def test_the_census_keeps_working_with_no_descriptor_to_spare(tmp_path: Path) -> None:
    """Out of descriptors (issue 41), the census still closes a crowding address's idle
    connections, says nothing more than that (no error each second), and the server takes an
    honest bot once descriptors are free again."""
    extra = 20
    err = tmp_path / "server.err"
    with err.open("w") as stderr:
        server = subprocess.Popen(
            [*("prlimit", "--nofile=256:256", "--", sys.executable, "-c", STARVED_SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert server.stdin is not None and server.stdout is not None
    idle: list[socket.socket] = []
    try:
        address, token = server.stdout.readline().split()

        def command(word: str) -> None:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(word + "\n")
            server.stdin.flush()
            assert server.stdout.readline().strip() == "ok"

        def descriptors() -> int:
            return len(list(Path(f"/proc/{server.pid}/fd").iterdir()))

        before = descriptors()
        idle = [tcp(address, preface=True) for _ in range(MAX_IDLE_PER_ADDRESS + extra)]
        wait_until(lambda: descriptors() >= before + len(idle), 10, what="every one accepted")
        command("fill")
        wait_until(lambda: descriptors() == 256, 10, what="no descriptor left")
        closed = wait_until(
            lambda: sum(closed_by_server(s) for s in idle) >= extra and idle,
            10 + IDLE_GRACE_S,
            what="the idle connections past the cap closed, with no descriptor to spare",
        )
        assert sum(closed_by_server(s) for s in closed) == extra
        # Three counts more at the limit: they are quiet.
        time.sleep(3 * CENSUS_INTERVAL_S)
        command("free")
        bot = RawBot(address)
        try:
            bot.hello(token)
            welcome = bot.recv()
            assert welcome is not None and welcome.WhichOneof("kind") == "welcome"
        finally:
            bot.close()
    finally:
        for s in idle:
            s.close()
        server.kill()
        server.wait()
    events = [json.loads(line) for line in err.read_text().splitlines() if line.startswith("{")]
    assert [e["event"] for e in events if e["level"] in ("warning", "error")] == [
        "connections over the cap closed"
    ], err.read_text()
