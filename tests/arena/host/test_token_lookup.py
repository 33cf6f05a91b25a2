"""The referee never waits on the competition's store: a Hello's token is looked up off the
server's loop (arena/server/hub.py, arena/host/live.py), so a store held locked by the API or the
ladder delays that one Hello while every running match keeps its deadlines."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest
import trio
from cardarena._pb import arena_pb2 as pb

from arena.host.live import LiveBots
from arena.host.store import CompetitionStore
from arena.host.throttle import Throttle, TokenGate
from arena.server import hub, open_arena_server
from tests.arena.host.serving import competition
from tests.arena.wire import RawBot, fault_kinds, make_spec, play_with, raw

#: How long the store stays locked while the match plays.
HOLD_S = 3.0
#: A deadline a stalled loop would miss: the bots answer well inside it.
MOVE_MS = 250


def _live_version(tmp_path: Path) -> tuple[CompetitionStore, str]:
    store = CompetitionStore(tmp_path / "competition", competition())
    author, _ = store.add_author("ann")
    _, token = store.add_live_version(author.id, "wanderer")
    return store, token


def test_a_locked_store_delays_one_hello_and_no_decision(tmp_path: Path) -> None:
    store, live_token = _live_version(tmp_path)
    playing = threading.Event()
    held = threading.Event()
    released = threading.Event()
    answered_while_held: list[int] = []
    arrivals: list[str] = []

    def answer(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        if held.is_set() and not released.is_set():
            answered_while_held.append(n)
        if n == 3:
            playing.set()
        time.sleep(0.005)  # a bot that thinks a little, so the match outlasts the hold
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=0))

    def hold_the_store_and_say_hello(address: str) -> RawBot:
        with store._mutex:  # what an API call or the ladder's commit holds
            held.set()
            bot = RawBot(address)
            bot.hello(live_token, name="claims-another-name")
            bot.send(pb.BotMessage(ping=pb.Ping(nonce=7)))  # sent before its Welcome
            time.sleep(HOLD_S)  # the lock held this long is what the test is about
            released.set()
        return bot

    async def main() -> None:
        async with open_arena_server() as server:
            live = LiveBots(store, server.connected, lambda: arrivals.append("live"))
            server.token_owner = live.owner
            options = {"points_to_win": 5, "games_per_rubber": 1}
            spec = make_spec("whist", 4, options=options, move_ms=MOVE_MS, policy="strict")
            # The match's own tokens are looked up too (they belong to no version).
            async with trio.open_nursery() as nursery:
                results: list[RawBot] = []

                async def locker() -> None:
                    assert await trio.to_thread.run_sync(playing.wait, 30)
                    results.append(
                        await trio.to_thread.run_sync(hold_the_store_and_say_hello, server.address)
                    )

                nursery.start_soon(locker)
                scenario = await play_with(server, spec, [raw(answer)] * 4)
            bot = results[0]
            assert released.is_set()
            # The live bot was welcomed once the lock was let go, under the name its token
            # gives, and its early Ping was answered after the Welcome.
            kinds = [bot.recv(10).WhichOneof("kind") for _ in range(2)]
            assert kinds == ["welcome", "pong"], kinds
            assert arrivals == ["live"] and live.token(1) == live_token
            bot.close()
            # Every decision met its deadline while the store was locked.
            assert len(answered_while_held) >= 20, len(answered_while_held)
            assert fault_kinds(scenario.outcome) == []
            decisions = [e for e in scenario.outcome.entries if e["type"] == "decision"]
            assert decisions and not [e for e in decisions if e["fallback"]]

    try:
        trio.run(main)
    finally:
        store.close()


def test_a_store_locked_past_the_wait_turns_the_bot_away_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "OWNER_TIMEOUT_S", 0.5)
    store, live_token = _live_version(tmp_path)

    async def main() -> None:
        async with open_arena_server() as server:
            server.token_owner = LiveBots(store, server.connected, lambda: None).owner

            def client() -> RawBot:
                bot = RawBot(server.address)
                bot.hello(live_token)
                assert bot.ended.wait(10)
                bot.close()
                return bot

            with store._mutex:
                bot = await trio.to_thread.run_sync(client)
            assert bot.of_kind("rejected")[0].reason == hub.CANNOT_CHECK
            # Unlocked, the same token is welcomed.
            again = await trio.to_thread.run_sync(RawBot, server.address)
            again.hello(live_token)
            msg = await trio.to_thread.run_sync(again.recv)
            again.close()
            assert msg is not None and msg.HasField("welcome")

    try:
        trio.run(main)
    finally:
        store.close()


def first_legal(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=0))


def test_guessed_live_tokens_lock_the_address_out_as_wrong_api_tokens_do(tmp_path: Path) -> None:
    store = CompetitionStore(tmp_path / "competition", competition())
    author, _ = store.add_author("ann")
    _, live_token = store.add_live_version(author.id, "wanderer")
    retired, retired_token = store.add_live_version(author.id, "old")
    store.retire_version(retired.id, "replaced")
    limits = dataclasses.replace(
        competition().limits, auth_failures=3, auth_window_s=60, auth_lockout_s=30
    )
    clock = [1000.0]
    throttle = Throttle(limits, clock=lambda: clock[0])

    async def main() -> None:
        async with open_arena_server() as server:
            server.token_owner = LiveBots(store, server.connected, lambda: None).owner
            server.guard_tokens(TokenGate(throttle))

            def first(token: str) -> pb.ServerMessage:
                bot = RawBot(server.address)
                bot.hello(token)
                msg = bot.recv()
                bot.close()
                assert msg is not None
                return msg

            async def answer(token: str) -> str:
                msg = await trio.to_thread.run_sync(first, token)
                return "welcome" if msg.HasField("welcome") else msg.rejected.reason

            # The author's own retired token is refused in words, and is no guess.
            for _ in range(5):
                assert (
                    await answer(retired_token)
                    == f"{retired.ref} is retired: it plays no more matches"
                )
            assert await answer(live_token) == "welcome"
            for guess in ("cal_a", "cal_b", "cal_c"):
                assert await answer(guess) == "unknown token"
            locked = "too many failed authentications from your address; try again in 30 s"
            assert await answer(live_token) == locked
            assert await answer("cal_d") == locked
            # The host's own bots, from the same address, still take their seats: a match's
            # tokens are the arena's, not guesses.
            spec = make_spec("whist", 4, options={"points_to_win": 1, "games_per_rubber": 1})
            scenario = await play_with(server, spec, [raw(first_legal)] * 4)
            assert fault_kinds(scenario.outcome) == []
            assert await answer(live_token) == locked
            clock[0] += 30
            assert await answer(live_token) == "welcome"

    try:
        trio.run(main)
    finally:
        store.close()
