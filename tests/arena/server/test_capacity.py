"""No bot can crowd the others out of a server: streams that never say Hello, guests of a lobby,
bots for another game and spectators each hold a bounded share, and a bot with a known token is
always let in (docs/protocol.md, "Capacity")."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
import trio
from cardarena._pb import arena_pb2 as pb
from cardarena._pb import arena_pb2_grpc as pb_grpc

from arena.rules import MatchRules
from arena.server import ArenaServer, new_token, open_arena_server
from arena.server.hub import HELLO_GRACE_S, MAX_GREETING
from arena.server.lobby import Lobby, LobbyConfig
from arena.server.service import MAX_WATCHERS
from tests.arena.run_arena import arena_error
from tests.arena.wire import SHORT_WHIST, RawBot, make_spec, play_loop, play_with, raw
from tests.waiting import async_wait_until, asyncio_wait_until, wait_until

ARENA = str(Path(sys.executable).parent / "arena")


class Hog:
    """A client that opens ``streams`` Play streams on one channel without ever saying Hello,
    and opens a new one whenever the server ends one: all it wants is the server's capacity."""

    def __init__(self, address: str, streams: int) -> None:
        self.address, self.streams = address, streams
        self.opened = 0
        self.rejections: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub: Any = pb_grpc.ArenaStub(channel)

            async def hold() -> None:
                while not self._stop.is_set():
                    call = stub.Play()
                    self.opened += 1
                    try:
                        async for msg in call:
                            if msg.WhichOneof("kind") == "rejected":
                                self.rejections.append(msg.rejected.reason)
                    except grpc.aio.AioRpcError:
                        pass

            tasks = [asyncio.ensure_future(hold()) for _ in range(self.streams)]
            await asyncio.to_thread(self._stop.wait)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> Hog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def greeting_ages(server: ArenaServer) -> list[float]:
    """How long (s) each stream the server holds has waited for its Hello, as the server sees
    it (read on its loop thread; no API tells it)."""

    def ages() -> list[float]:
        hub = server._hub
        now = hub._loop.time()
        return [now - conn.opened_at for conn in hub._greeting]

    return server._call(ages)


@pytest.mark.slow
def test_streams_that_never_say_hello_cannot_lock_the_bots_out() -> None:
    async def main() -> None:
        # 300 held streams filled the old cap of 256 concurrent calls: bots got RESOURCE_EXHAUSTED.
        async with open_arena_server() as server:

            def hog_past_its_grace() -> bool:
                ages = greeting_ages(server)
                return len(ages) >= 300 and min(ages) > HELLO_GRACE_S

            with Hog(server.address, 300) as hog:
                await async_wait_until(
                    hog_past_its_grace, 30, what="300 hog streams on the server past their grace"
                )
                spec = make_spec("whist", 4, options=SHORT_WHIST, connect_timeout_s=20)
                scenario = await play_with(server, spec, [raw()] * 4)
            assert scenario.outcome.result.reason == "normal"
            assert scenario.outcome.faults == ()
            # The bots' arrival closed the hog's streams that had waited past their grace.
            reason = f"more than {MAX_GREETING} streams are waiting to say Hello"
            assert hog.rejections and set(hog.rejections) == {reason}

    trio.run(main)


def test_many_bots_connecting_at_once_are_all_welcomed() -> None:
    # Ten times the streams allowed to wait for their Hello, all opened before any says it:
    # bots starting together (a tournament's first matches) are no attack.
    n = 10 * MAX_GREETING
    kinds: list[str] = []

    async def main() -> None:
        async with open_arena_server() as server:
            tokens = [new_token() for _ in range(n)]
            for token in tokens:
                server.add_token(token)

            async def burst() -> None:
                async with grpc.aio.insecure_channel(server.address) as channel:
                    stub: Any = pb_grpc.ArenaStub(channel)
                    calls = [stub.Play() for _ in tokens]
                    await asyncio_wait_until(
                        lambda: len(greeting_ages(server)) >= n,
                        20,
                        what=f"the server to hold all {n} streams, none of which has said Hello",
                    )
                    for call, token in zip(calls, tokens, strict=True):
                        hello = pb.Hello(bot_name="b", token=token, protocol_version=1)
                        await call.write(pb.BotMessage(hello=hello))
                    for call in calls:
                        kinds.append((await call.read()).WhichOneof("kind"))
                        call.cancel()

            await trio.to_thread.run_sync(lambda: asyncio.run(burst()))

    trio.run(main)
    assert kinds == ["welcome"] * n


async def run_lobby(server: ArenaServer, config: LobbyConfig, body: Callable[[], None]) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Lobby(server, config).run)
        await trio.to_thread.run_sync(body)
        nursery.cancel_scope.cancel()


def test_a_full_lobby_refuses_guests_in_words() -> None:
    async def main() -> None:
        async with open_arena_server(max_connections=2) as server:

            def guests() -> None:
                bots = [RawBot(server.address) for _ in range(3)]
                try:
                    for bot in bots[:2]:
                        bot.hello("")
                        assert (msg := bot.recv()) is not None and msg.WhichOneof(
                            "kind"
                        ) == "welcome"
                    bots[2].hello("")
                    msg = bots[2].recv()
                    assert msg is not None and msg.rejected.reason == (
                        "the server is full (2 bots); try later"
                    )
                    assert bots[2].ended.wait(10)
                finally:
                    for bot in bots:
                        bot.close()

            await run_lobby(
                server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST)), guests
            )

    trio.run(main)


def welcomed(bot: RawBot) -> bool:
    bot.hello("")
    msg = bot.recv()
    return msg is not None and msg.WhichOneof("kind") == "welcome"


def test_one_address_cannot_take_every_guest_seat(tmp_path: Path) -> None:
    async def main() -> None:
        sock = tmp_path / "arena.sock"
        async with open_arena_server(unix=sock, max_guests_per_address=2) as server:

            def guests() -> None:
                bots = [RawBot(server.address) for _ in range(3)]
                local = RawBot(f"unix:{sock}")
                try:
                    assert welcomed(bots[0]) and welcomed(bots[1])
                    bots[2].hello("")
                    msg = bots[2].recv()
                    assert msg is not None and msg.rejected.reason == (
                        "2 bots from your address are playing already; try later"
                    )
                    assert bots[2].ended.wait(10)
                    # Another address (here a local process on the Unix socket) still gets in.
                    assert welcomed(local)
                finally:
                    for bot in (*bots, local):
                        bot.close()

            await run_lobby(
                server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST)), guests
            )

    trio.run(main)


def test_a_lobby_rejects_the_hello_of_a_bot_for_another_game() -> None:
    async def main() -> None:
        async with open_arena_server() as server:

            def tennis_bot() -> None:
                bot = RawBot(server.address)
                try:
                    hello = pb.Hello(bot_name="t", token="", protocol_version=1, games=["tennis"])
                    bot.send(pb.BotMessage(hello=hello))
                    assert bot.ended.wait(10)  # it would have waited, unseatable, for ever
                    # Refused at its Hello, not welcomed and then dropped.
                    assert bot.of_kind("welcome") == []
                    assert [r.reason for r in bot.of_kind("rejected")] == [
                        "this bot plays tennis; this server plays whist only"
                    ]
                finally:
                    bot.close()

            await run_lobby(
                server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST)), tennis_bot
            )

    trio.run(main)


def test_spectators_beyond_the_cap_are_refused_and_the_match_plays_on() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST)
            go = threading.Event()
            codes: list[grpc.StatusCode] = []

            def held_back(address: str, token: str) -> None:
                bot = RawBot(address)
                bot.hello(token)
                go.wait(30)  # keeps the match running while spectators come
                try:
                    play_loop(bot)
                finally:
                    bot.close()

            async def watchers() -> None:
                await async_wait_until(
                    lambda: spec.match_id in [m.match_id for m in server.summaries(True)],
                    20,
                    what="the match to be on the board",
                )

                async def watch_all() -> None:
                    async with grpc.aio.insecure_channel(server.address) as channel:
                        stub: Any = pb_grpc.SpectatorStub(channel)
                        request = pb.WatchMatchRequest(match_id=spec.match_id)
                        calls = [stub.WatchMatch(request) for _ in range(MAX_WATCHERS + 1)]
                        # They start at once, in no set order: whichever comes last is refused.
                        for call in calls:
                            try:
                                await call.read()  # the public events so far
                                codes.append(grpc.StatusCode.OK)
                            except grpc.aio.AioRpcError as err:
                                codes.append(err.code())
                        for call in calls:
                            call.cancel()

                await trio.to_thread.run_sync(lambda: asyncio.run(watch_all()))
                go.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(watchers)
                scenario = await play_with(server, spec, [held_back, raw(), raw(), raw()])
            assert sorted(codes, key=str) == sorted(
                [grpc.StatusCode.OK] * MAX_WATCHERS + [grpc.StatusCode.RESOURCE_EXHAUSTED], key=str
            )
            assert scenario.outcome.result.reason == "normal"

    trio.run(main)


@pytest.mark.slow
def test_a_second_server_cannot_take_over_a_live_unix_socket(tmp_path: Path) -> None:
    path = tmp_path / "arena.sock"
    first = subprocess.Popen(
        [ARENA, "serve", "--listen", "127.0.0.1:0", "--unix", str(path), "--log-level", "error"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(path.is_socket, 20, what=f"the first server to listen on {path}")
        line = arena_error("serve", "--listen", "127.0.0.1:0", "--unix", str(path))
        assert line == f"arena: error: cannot listen on unix:{path}: another server listens there"
        health = subprocess.run(
            [ARENA, "health", "--server", f"unix:{path}"], capture_output=True, timeout=30
        )
        assert health.returncode == 0  # the first server still has its socket
    finally:
        first.terminate()
        first.wait(30)


@pytest.mark.slow
def test_a_stale_socket_is_reused_and_a_bad_socket_path_is_one_line(tmp_path: Path) -> None:
    stale = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(stale))  # a socket file nobody listens on: a server that was killed
    server = subprocess.Popen(
        [ARENA, "serve", "--listen", "127.0.0.1:0", "--unix", str(stale), "--log-level", "error"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: subprocess.run(
                [ARENA, "health", "--server", f"unix:{stale}"], capture_output=True, timeout=30
            ).returncode == 0,
            20,
            what=f"the server to answer on the stale socket {stale}",
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = arena_error("serve", "--listen", "127.0.0.1:0", "--unix", str(blocker / "x.sock"))
    assert line == f"arena: error: cannot listen on unix:{blocker / 'x.sock'}: Not a directory"


def test_a_bot_for_other_games_is_told_its_match_is_not_one_of_them() -> None:
    # In a registered match too, not only in a lobby: the bot learns why it cannot play.
    spec = make_spec("tennis", 2, options={"sets_to_win": 1}, connect_timeout_s=0.5)

    def whist_only(address: str, token: str) -> None:
        bot = RawBot(address)
        try:
            hello = pb.Hello(bot_name="w", token=token, protocol_version=1, games=["whist"])
            bot.send(pb.BotMessage(hello=hello))
            assert bot.ended.wait(10)
            assert [r.reason for r in bot.of_kind("rejected")] == [
                "this bot plays whist; its match here is tennis"
            ]
        finally:
            bot.close()

    async def main() -> None:
        async with open_arena_server() as server:
            scenario = await play_with(server, spec, [whist_only, raw()])
            assert scenario.outcome.result.forfeited_by == 0

    trio.run(main)
