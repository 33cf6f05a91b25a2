"""docs/hosting.md's "Events" blocks as written: its ``[[events]]`` tables load beside the page's
competition config, its heats config loads, and its commands run as printed against a host
serving the page's certificate, ``cup/`` its competition directory."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import pytest

from arena.host.config import load_competition
from tests.arena.host.processes import (
    GOOD_BOT,
    UNTHROTTLED,
    Host,
    bot_archive,
    make_certificate,
)
from tests.arena.host.test_hosting_page import Shell, blocks, commands
from tests.waiting import wait_until


def events_block() -> str:
    (block,) = [b for b in blocks("toml") if b.startswith("# events, in cup.toml")]
    return block


def test_the_event_tables_load_beside_the_page_s_config(tmp_path: Path) -> None:
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    path = tmp_path / "cup.toml"
    path.write_text(cup + events_block())
    cup_events = load_competition(path).events
    knockout, swiss = cup_events
    assert (knockout.name, knockout.format, knockout.entrants) == ("winter-cup", "knockout", 8)
    assert (knockout.best_of, knockout.tiebreak) == (2, "extra-deal")
    assert knockout.start == dt.datetime(2027, 1, 31, 18, tzinfo=dt.UTC)
    assert (swiss.format, swiss.start, swiss.rounds, swiss.deals_per_round) == ("swiss", None, 4, 2)
    (spoil,) = [b for b in blocks("toml") if b.startswith("# spoil.toml")]
    path.write_text(spoil)
    (heats,) = load_competition(path).events
    assert (heats.format, heats.entrants, heats.advance, heats.deals_per_heat) == ("heats", 9, 1, 2)


@pytest.mark.slow
def test_the_event_commands_run_as_printed(tmp_path: Path) -> None:
    make_certificate(tmp_path)  # cert.pem and key.pem, as the page's openssl command makes
    config = tmp_path / "cup.toml"
    config.write_text(
        'name = "cup"\ngame = "whist"\n[options]\npoints_to_win = 1\n'
        f"[limits]\n{UNTHROTTLED}" + events_block()
    )
    host = Host(config, tmp_path / "cup", (tmp_path / "cert.pem", tmp_path / "key.pem"))
    with host.running():
        for i in range(2):
            with host.client(host.add_author(f"a{i}")) as c:
                body = bot_archive(GOOD_BOT + f"# {i}\n".encode())
                headers = {"Content-Type": "application/octet-stream"}
                assert c.put(f"/api/v1/bots/b{i}/versions", content=body, headers=headers)

        def validated() -> bool:
            with host.client() as c:
                rows = c.get("/api/v1/bots").json()
            return sum(v["status"] == "validated" for b in rows for v in b["versions"]) == 2

        wait_until(validated, 120, what="two validated versions")
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        base = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        # As the page's "Steering" block exported it.
        shell = Shell(tmp_path, base | {"PATH": path, "ARENA_SERVER": host.url})
        start, listing, show = commands("arena remote admin event start")
        assert "event open started: 2 entrants" in shell.run(start)
        out = shell.run(listing)
        assert "open" in out and "running" in out and "winter-cup" in out
        assert "open: swiss" in shell.run(show)
