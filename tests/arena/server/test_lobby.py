"""``arena serve``'s lobby: whoever connects is seated, match after match."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio
from cardarena._pb import arena_pb2 as pb
from cardarena.bot import RandomBot
from cardarena.client import BotRun, run_bot

from arena.records.format import read_record
from arena.rules import MatchRules
from arena.server import ArenaServer, open_arena_server
from arena.server.lobby import Lobby, LobbyConfig
from tests.arena.run_arena import arena_error
from tests.arena.wire import SHORT_WHIST, RawBot, join_all, make_spec, play_loop
from tests.helpers import free_port

ARENA = str(Path(sys.executable).parent / "arena")


async def play_in_lobby(server: ArenaServer, config: LobbyConfig) -> list[BotRun]:
    """Four random bots with no token, each for two matches, through a lobby of ``config``."""
    runs: list[BotRun] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Lobby(server, config).run)

        def bot(i: int) -> None:
            # No token: the lobby gives each bot an identity of its own.
            runs.append(run_bot(RandomBot(i), server.address, "", matches=2))

        threads = [threading.Thread(target=bot, args=(i,), daemon=True) for i in range(4)]
        for t in threads:
            t.start()
        await trio.to_thread.run_sync(join_all, threads)
        nursery.cancel_scope.cancel()
    return runs


def test_lobby_seats_waiting_bots_into_consecutive_matches() -> None:
    runs: list[BotRun] = []

    async def main() -> None:
        async with open_arena_server() as server:
            runs.extend(
                await play_in_lobby(
                    server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST), seed=7)
                )
            )
            # The bots said in Hello they would leave after two matches (max_matches): the
            # lobby seats them exactly twice, so no third match starts as they hang up.
            matches = server.summaries(running_only=False)
            ids = [m.match_id for m in matches]
            run = ids[0].split("-")[1]  # this server run's tag: match ids never name the seed
            assert ids == [f"whist-{run}-1", f"whist-{run}-2"]
            assert [m.status for m in matches] == ["finished", "finished"]
            assert all(m.result is not None and m.result.reason == "normal" for m in matches)
            assert {p.bot_name for m in matches for p in m.players} == {"random"}

    trio.run(main)
    assert sorted(r.matches for r in runs) == [2, 2, 2, 2]


def test_lobby_ignores_bots_for_other_games() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            lobby = Lobby(server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST)))
            from cardarena.messages import Hello

            from arena.server.connections import Connection

            conn = Connection("c", "peer")
            conn.hello = Hello("x", games=("tennis",))
            lobby.add(conn)
            assert not lobby._waiting
            conn.hello = Hello("x", games=("whist",))
            lobby.add(conn)
            assert lobby._waiting == [conn]

    trio.run(main)


@pytest.mark.slow
def _stop(serve: subprocess.Popen[str], signum: signal.Signals) -> str:
    """Send ``signum`` to ``serve``; its stderr once it exited. A server still running 30 s
    later is killed and the test fails: no test leaves one behind."""
    serve.send_signal(signum)
    try:
        return serve.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        serve.kill()
        serve.communicate()
        raise AssertionError(f"arena serve ignored {signum.name} for 30 s and was killed") from None


def test_arena_serve_command_plays_bots_that_connect() -> None:
    port = free_port()
    serve = subprocess.Popen(
        [
            *(ARENA, "serve", "--listen", f"127.0.0.1:{port}", "--game", "whist"),
            *("--option", "points_to_win=1", "--option", "games_per_rubber=1"),
            *("--log-level", "error"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stdout is not None
        banner = serve.stdout.readline()
        assert banner.startswith(f"arena: serving whist on 127.0.0.1:{port}")
        bots = [
            subprocess.Popen(
                [ARENA, "bot", name, "--server", f"127.0.0.1:{port}", "--matches", "1"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for name in ("random", "rules", "random", "rules")
        ]
        assert [b.wait(timeout=60) for b in bots] == [0, 0, 0, 0]
    finally:
        # Whatever failed, nothing this test started outlives it.
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.communicate()
        err = _stop(serve, signal.SIGINT)
    assert serve.returncode == 130, err
    assert err.strip().splitlines()[-1] == "arena: interrupted"


def test_arena_serve_stops_on_sigterm_in_one_line() -> None:
    # systemd, `docker stop`, `kill`: a clean stop, status 0, as for `arena host`.
    port = free_port()
    serve = subprocess.Popen(
        [ARENA, "serve", "--listen", f"127.0.0.1:{port}", "--log-level", "error"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        assert serve.stdout.readline().startswith("arena: serving")
    finally:
        err = _stop(serve, signal.SIGTERM)
    assert serve.returncode == 0, err
    assert err.strip().splitlines() == ["arena: serve stopped (SIGTERM)"]


def test_bot_names_are_cleaned_up() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("t")

            def client() -> RawBot:
                bot = RawBot(server.address)
                bot.hello("t", name="evil\nname" + "x" * 100)
                bot.send(pb.BotMessage(ping=pb.Ping(nonce=1)))
                assert bot.recv() is not None and bot.recv() is not None
                bot.close()
                return bot

            await trio.to_thread.run_sync(client)
            spec = make_spec("whist", 4, options=SHORT_WHIST, tokens=["t", "u", "v", "w"])
            match = server.register(spec)
            assert match.slots[0].bot_name == "bot0"  # the spec's name wins

    trio.run(main)


def _serve_error(listen: str) -> str:
    """``arena serve --listen LISTEN`` must fail at once: its whole stderr."""
    done = subprocess.run(
        [ARENA, "serve", "--listen", listen], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    return done.stderr


@pytest.mark.slow
def test_arena_serve_refuses_a_bad_address_in_one_line() -> None:
    # gRPC alone would listen on 99999 mod 65536.
    err = _serve_error("127.0.0.1:99999")
    assert err == (
        "arena: error: cannot listen on '127.0.0.1:99999': "
        "expected HOST:PORT with a port from 0 to 65535\n"
    )
    assert _serve_error("50051").count("\n") == 1


@pytest.mark.slow
def test_arena_serve_on_a_taken_port_says_so_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _serve_error(f"127.0.0.1:{port}")
    # One line of ours: nothing from gRPC's C core (it logged its own "E… add_port.cc" line).
    assert err == f"arena: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_a_record_the_lobby_cannot_write_costs_the_record_not_the_server(
    tmp_path: Path,
) -> None:
    out = tmp_path / "records"
    runs: list[BotRun] = []

    async def main() -> None:
        async with open_arena_server() as server:
            out.write_text("the disk went away")  # every record's directory is now a file
            config = LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST), seed=7, out=out)
            runs.extend(await play_in_lobby(server, config))
            finished = [m.status for m in server.summaries(running_only=False)]
            assert finished == ["finished", "finished"]  # the second match was still played

    trio.run(main)
    assert sorted(r.matches for r in runs) == [2, 2, 2, 2]
    assert out.read_text() == "the disk went away"


@pytest.mark.slow
def test_arena_serve_refuses_an_output_directory_it_cannot_make(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = arena_error("serve", "--listen", "127.0.0.1:0", "--out", str(blocker / "records"))
    assert line == (
        f"arena: error: {blocker / 'records'}: cannot create the output directory (Not a directory)"
    )


def test_a_guests_seat_is_resumed_only_with_the_secret_the_server_gave_it(
    tmp_path: Path,
) -> None:
    """Guests choose their own tokens, which anyone may send: a stream with guest 0's token
    mid-match becomes a guest of its own and is told nothing of the match; the seat resumes,
    and the record says so, only for the secret Welcome gave guest 0."""
    chosen = [f"guest-{i}" for i in range(4)]
    secrets: list[str] = []
    impostor_welcome: list[str] = []

    async def main() -> None:
        async with open_arena_server() as server:

            def hello(bot: RawBot, token: str) -> None:
                # One match each: once it ends, nobody waits in the lobby for a second.
                msg = pb.Hello(bot_name="g", token=token, protocol_version=1, max_matches=1)
                bot.send(pb.BotMessage(hello=msg))

            def body() -> None:
                guests = [RawBot(server.address) for _ in chosen]
                for bot, token in zip(guests, chosen, strict=True):
                    hello(bot, token)
                    msg = bot.recv()
                    assert msg is not None and msg.WhichOneof("kind") == "welcome"
                    secrets.append(msg.welcome.resume_token)
                others = [threading.Thread(target=play_loop, args=(b,)) for b in guests[1:]]
                for t in others:
                    t.start()
                first = guests[0]
                while (msg := first.recv()) is not None and msg.WhichOneof("kind") != "decision":
                    pass
                # Guest 0 is deciding: someone else says Hello with its token.
                impostor = RawBot(server.address)
                hello(impostor, chosen[0])
                msg = impostor.recv()
                assert msg is not None and msg.WhichOneof("kind") == "welcome"
                impostor_welcome.append(msg.welcome.resume_token)
                # Guest 0's stream breaks; it comes back with its secret and plays on.
                first.close()
                back = RawBot(server.address)
                hello(back, secrets[0])
                play_loop(back)
                join_all(others)
                assert [m.WhichOneof("kind") for m in impostor.received] == ["welcome"]
                assert back.of_kind("match_start") and back.of_kind("match_end")
                for bot in [impostor, back, *guests[1:]]:
                    bot.close()

            config = LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST), seed=5, out=tmp_path)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(Lobby(server, config).run)
                await trio.to_thread.run_sync(body)
                nursery.cancel_scope.cancel()

    trio.run(main)
    # Each guest's secret is the server's, not its own token, and no two are alike.
    assert len(set(secrets + impostor_welcome)) == 5
    assert all(len(s) >= 16 and s not in chosen for s in secrets + impostor_welcome)
    [path] = tmp_path.glob("*.jsonl.gz")
    record = read_record(path)
    assert record.result["reason"] == "normal" and record.result["faults"] == []
    lines = [(e["seat"], e["event"]) for e in record.entries if e["type"] == "connection"]
    assert lines == [(0, "lost"), (0, "resumed")]
