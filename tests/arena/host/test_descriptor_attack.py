"""Issue 41's descriptor attack, run: strangers trickling request bodies into a host that has few
descriptors to spare, while its ladder plays two honest versions.

Before the ``[http]`` limits (arena/host/guard.py), every such connection was held for as long as
its body kept trickling; under a 1,024-descriptor limit the host could no longer start its bots
and the ladder charged the failures to them. Now an address holds at most
``max_connections_per_address`` connections, and a body slower than ``min_body_rate`` is cut
after ``body_timeout_s``: the ladder plays on through the attack, and no honest version is
charged a fault.
"""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.host]

#: The host's descriptors: enough for the host and its matches, not for the attack unlimited.
NOFILE = 256
#: Attackers per source address (in all, more connections than the host has descriptors),
#: and their addresses (loopback: any 127.x works on Linux).
PER_ADDRESS = 100
SOURCES = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")
ATTACK_S = 20.0
LIMITS = """[http]
header_timeout_s = 2
body_timeout_s = 2
min_body_rate = 64
max_connections_per_address = 8
max_connections = 64
"""


@contextmanager
def descriptors(limit: int) -> Iterator[None]:
    """Processes started meanwhile get ``limit`` descriptors, hard limit too (the host raises its
    soft limit to its hard one)."""
    popen = subprocess.Popen

    def lowered() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    def limited(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        return popen(*args, preexec_fn=lowered, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", limited)
        yield


def _matches(directory: Path) -> tuple[int, list[object]]:
    """Finished matches, and the faults stored with them."""
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT faults FROM matches WHERE state = 'done'").fetchall()
    finally:
        con.close()
    faults = [f for (text,) in rows for f in json.loads(text or "[]")]
    return len(rows), faults


async def _attacker(port: int, source: str, request: bytes, until: float) -> None:
    """One connection slot of the attacker: a body at a byte a second, again when cut."""
    while trio.current_time() < until:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=source)
        except OSError:
            await trio.sleep(0.5)  # the attacker's pace of retrying
            continue
        async with stream:
            try:
                await stream.send_all(request)
                while trio.current_time() < until:
                    await stream.send_all(b" ")
                    with trio.move_on_after(1.0):  # the trickle's pace
                        if not await stream.receive_some(4096):
                            break
                        break  # answered (408): connect again
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        await trio.sleep(0.5)


def _enough_descriptors_here(needed: int) -> None:
    """The attacker (this process) gets its descriptors: its sockets, not the host's, are the
    test's point."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"needs {needed} descriptors for the attacker; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def attack(host: Host, token: str) -> int:
    """Every source address's attackers, half on registration, half on an upload route; the
    status an honest caller got midway (0: no answer within 10 s)."""
    port = host.http_port
    register = (
        b"POST /api/v1/authors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000\r\n\r\n{"
    )
    upload = (
        b"PUT /api/v1/bots/flood/versions HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\n"
        b"Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n"
    )

    honest: list[int] = []

    def status() -> int:
        try:
            with host.client() as c:
                return c.get("/api/v1/status", timeout=10).status_code
        except httpx.TransportError:
            return 0

    async def main() -> None:
        until = trio.current_time() + ATTACK_S
        async with trio.open_nursery() as nursery:
            for source in SOURCES:
                for i in range(PER_ADDRESS):
                    request = register if i % 2 else upload
                    nursery.start_soon(_attacker, port, source, request, until)
            await trio.sleep(ATTACK_S / 2)  # the attack in full swing
            honest.append(await trio.to_thread.run_sync(status))

    _enough_descriptors_here(2 * PER_ADDRESS * len(SOURCES))
    trio.run(main)
    return honest[0]


def test_a_descriptor_attack_leaves_the_ladder_playing_and_no_fault_charged(
    tmp_path: Path,
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        competition_config(extra='[authors]\ninvite_code = "a long secret"\n' + LIMITS)
    )
    host = Host(config, tmp_path / "cup", None)
    with descriptors(NOFILE):
        host.start()
    try:
        alice, bob, mallory = (host.add_author(n) for n in ("alice", "bob", "mallory"))
        octet = {"Content-Type": "application/octet-stream"}
        for token, bot in ((alice, "alpha"), (bob, "beta")):
            with host.client(token) as c:
                code = bot_archive(GOOD_BOT + f"# {bot}\n".encode())
                r = c.put(f"/api/v1/bots/{bot}/versions", content=code, headers=octet)
                assert r.status_code == 201, r.text
        wait_until(lambda: _matches(host.directory)[0] >= 2, 120, what="the ladder to play")
        before, _ = _matches(host.directory)
        honest = attack(host, mallory)
        during, _ = _matches(host.directory)
        assert host.proc is not None and host.proc.poll() is None, "the host stopped"
        with host.client() as c:
            assert c.get("/api/v1/status").status_code == 200
        wait_until(
            lambda: _matches(host.directory)[0] >= during + 2, 120, what="the ladder to play on"
        )
        played, faults = _matches(host.directory)
        print(f"matches: {before} before, {during - before} during the attack, {played} at the end")
        assert faults == []
        assert honest == 200, "an honest call went unanswered during the attack"
        assert during >= before + 3, "the ladder stalled during the attack"
        with host.client(alice) as c:
            rows = c.get("/api/v1/leaderboard").json()
        assert {r["ref"] for r in rows} == {"alpha@1", "beta@1"}
    finally:
        host.stop()
