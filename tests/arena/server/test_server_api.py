"""The trio-facing API over the server's loop thread (arena/server/api.py), and the referee's
single deadline timer per match."""

from __future__ import annotations

import sqlite3
import time

import pytest
import trio
from cardarena._pb import arena_pb2 as pb

from arena.errors import ArenaError
from arena.server import open_arena_server
from tests.arena.wire import SHORT_WHIST, RawBot, first_legal, make_spec, raw, run_scenario


def test_cancelling_run_match_winds_the_match_down_on_the_loop() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, connect_timeout_s=60.0)

    async def main() -> None:
        async with open_arena_server() as server:
            server.register(spec)
            assert server.matches() == [spec.match_id]
            with trio.move_on_after(0.3) as scope:
                await server.run_match(spec)  # no bot ever connects
            assert scope.cancelled_caught
            # The referee task was cancelled and unregistered the match: the id is free again.
            assert server.matches() == []
            server.register(spec)
            assert server.matches() == [spec.match_id]
            with pytest.raises(ArenaError, match="already registered"):
                server.register(spec)

    trio.run(main)


def test_errors_cross_from_the_loop_to_the_trio_caller() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            with pytest.raises(ArenaError, match="no match 'nope'"):
                await server.wait_ready("nope")
            assert server.disconnect("no-such-token") is False
            assert server.summaries() == [] and server.standings() == []

    trio.run(main)


def test_a_deadline_sooner_than_the_armed_timer_still_fires_on_time() -> None:
    # Move time 100 ms, bank 300 ms. Seat 0 spends 150 ms of its bank on its first decision,
    # answers the second at once and hangs on the third: that deadline (100 + 150 ms) comes
    # sooner than the timer armed for the other seats' instant decisions (each 400 ms ahead),
    # so the referee must re-arm it earlier, not wait for the old one.
    def slow_then_silent(decision: pb.DecisionRequest, n: int) -> pb.BotMessage | None:
        if n == 0:
            time.sleep(0.25)  # slow on purpose: 150 ms of the bank spent
        return first_legal(decision, n) if n < 2 else None

    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=100, bank_ms=300)
    scenario = run_scenario(spec, [raw(slow_then_silent), raw(), raw(), raw()])
    mine = [e for e in scenario.outcome.entries if e["type"] == "decision" and e["seat"] == 0]
    assert mine[0]["fallback"] is False and mine[1]["fallback"] is False
    third = mine[2]
    assert third["fallback"] is True
    # Its budget: the move time plus what the first decision left of the bank.
    budget = 100.0 + 300.0 - (float(mine[0]["ms"]) - 100.0)  # type: ignore[arg-type]
    assert budget - 5.0 <= float(third["ms"]) < budget + 100.0, (budget, third)  # type: ignore[arg-type]
    # Its bank spent, every later decision times out after the move time alone.
    later = [float(e["ms"]) for e in mine[3:] if e["fallback"]]  # type: ignore[arg-type]
    assert later and all(95.0 <= ms < 240.0 for ms in later), later


def test_a_failing_token_registry_rejects_the_bot_at_once_in_words() -> None:
    def broken(token: str) -> tuple[str, str] | None:
        raise sqlite3.OperationalError("database is locked")

    async def main() -> None:
        async with open_arena_server() as server:
            server.token_owner = broken

            def client() -> RawBot:
                bot = RawBot(server.address)
                bot.hello("some-token")
                assert bot.ended.wait(5)  # rejected at once, not after the Hello timeout
                bot.close()
                return bot

            bot = await trio.to_thread.run_sync(client)
            assert bot.of_kind("rejected")[0].reason == (
                "the arena cannot check tokens right now; try again later"
            )
            # The server goes on: a token it knows is still welcomed.
            server.add_token("known")
            server.token_owner = None

            def known() -> RawBot:
                bot = RawBot(server.address)
                bot.hello("known")
                msg = bot.recv()
                bot.close()
                assert msg is not None and msg.HasField("welcome")
                return bot

            await trio.to_thread.run_sync(known)

    trio.run(main)
