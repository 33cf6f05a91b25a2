"""``arena watch``: a server's matches listed, one match's public events followed to its
result, and the one-line refusals (spectators off, an unknown match, no server)."""

from __future__ import annotations

import http.client
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio

from arena.cli.main import main
from arena.records.view import event_text
from arena.server import open_arena_server
from engine import Event, get_game
from tests.arena.people.running import lobby_match, started
from tests.arena.wire import SHORT_WHIST, make_spec, play_with, sdk

#: A record entry's keys that are not its event's data.
HEAD = {"type", "kind", "to"}


def _watch(argv: list[str]) -> int:
    return main(["watch", *argv])


def test_watch_lists_and_follows_a_match(capsys: pytest.CaptureFixture[str]) -> None:
    async def main_() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=8)
            scenario = await play_with(server, spec, [sdk(), sdk(), sdk(), sdk()])
            assert await trio.to_thread.run_sync(_watch, [server.address]) == 0
            listed = capsys.readouterr().out.splitlines()
            assert listed == [
                f"m1  whist  finished  bot0, bot1, bot2, bot3  {scenario.outcome.result.summary}"
            ]
            assert await trio.to_thread.run_sync(_watch, ["--text", server.address, "m1"]) == 0
            lines = capsys.readouterr().out.splitlines()
            public = [
                e for e in scenario.outcome.entries if e["type"] == "event" and e["to"] is None
            ]
            names = get_game("whist").seat_names(get_game("whist").configure(4, {}))
            assert lines[:-1] == [
                event_text(Event(e["kind"], {k: v for k, v in e.items() if k not in HEAD}), names)
                for e in public
            ]
            assert lines[-1].startswith(f"end: {scenario.outcome.result.summary}")
            assert not any(" deal " in f" {line} " for line in lines)  # hands are private

            # The page's table follows the rules with the match's options: a wrong one is a line.
            bad = [server.address, "m1", "--option", "trumps=7"]
            assert await trio.to_thread.run_sync(_watch, bad) == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith(f"arena: error: {server.address}: m1: ")

            assert await trio.to_thread.run_sync(_watch, [server.address, "nope"]) == 2
            err = capsys.readouterr().err.splitlines()
            assert err == [
                f"arena: error: {server.address}: no match 'nope' "
                f"(arena watch {server.address} lists the matches)"
            ]

    trio.run(main_)


def test_watch_refuses_in_one_line_where_spectators_are_off(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def main_() -> None:
        async with open_arena_server(spectators=False) as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=8)
            await play_with(server, spec, [sdk(), sdk(), sdk(), sdk()])
            assert await trio.to_thread.run_sync(_watch, [server.address, "m1"]) == 2
            out = capsys.readouterr()
            assert out.out == ""
            assert out.err.splitlines() == [
                f"arena: error: {server.address}: this arena shows no match as it is played: it "
                "plays duplicate deals, and another rotation of a deal may still be at the table"
            ]

    trio.run(main_)


def test_watch_without_a_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _watch(["unix:/nonexistent/arena.sock"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("arena: error: unix:/nonexistent/arena.sock: ")


def _feed_event(url: str) -> None:
    """Read the live page's feed until it carries a public event (the watch is under way)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        conn.request("GET", parts.path + "feed")
        reply = conn.getresponse()
        assert reply.status == 200
        while b'"type":"event"' not in reply.readline():
            pass
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("text", [False, True], ids=["page", "text"])
def test_watch_exits_in_one_line_when_the_server_dies_mid_match(tmp_path: Path, text: bool) -> None:
    with lobby_match(tmp_path, budget_ms=200) as lobby:
        argv = ["watch", lobby.address, lobby.match_id, *(["--text"] if text else [])]
        with started(*argv, stderr=subprocess.PIPE) as watch:
            assert watch.stdout is not None and watch.stderr is not None
            first = watch.stdout.readline().strip()
            if not text:
                assert first.startswith("watch at http://127.0.0.1:"), first
                _feed_event(first.split(" ", 2)[2])
            lobby.server.kill()
            assert watch.wait(60) == 2
            err = watch.stderr.read().splitlines()
    assert len(err) == 1 and err[0].startswith(f"arena: error: {lobby.address}: "), err
    if not text:
        assert "the server went away before the match's end" in err[0], err
