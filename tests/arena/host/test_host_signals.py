"""Ctrl-C stops a host mid-ladder as SIGTERM does: one line, status 130, no bot left running."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive
from tests.arena.host.test_host_service import CONFIG
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


def _bots_of(directory: Path) -> list[str]:
    """Processes running a snapshot of this competition (its bots, boxed or not)."""
    found = subprocess.run(
        ["pgrep", "-af", str(directory / "snapshots")], capture_output=True, text=True
    )
    return found.stdout.splitlines()


def test_ctrl_c_mid_ladder_stops_the_host_and_its_bots(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(CONFIG)
    host = Host(config, tmp_path / "cup", tls=None)
    host.start()
    try:
        octet = {"Content-Type": "application/octet-stream"}
        for name in ("alice", "bob"):
            with host.client(host.add_author(name)) as c:
                code = GOOD_BOT + f"# {name}\n".encode()
                r = c.put(f"/api/v1/bots/{name}/versions", content=bot_archive(code), headers=octet)
                assert r.status_code == 201, r.text
        wait_until(lambda: bool(_bots_of(host.directory)), 120, what="a ladder match's bots")
        out = host.interrupt()
    finally:
        host.stop()
    assert "arena: host stopped (SIGINT)" in out and "Traceback" not in out, out
    wait_until(lambda: not _bots_of(host.directory), 10, what="the host's bots to be gone")
