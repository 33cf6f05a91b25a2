"""``AgentSeat`` and its tools fed protocol messages by hand (no server, no process): the turn
and its clock, a timeout that takes the turn away, the end, the tennis table told apart by the
observation, and the tools' refusals in words."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cardarena import messages
from mcp.server.mcpserver.exceptions import ToolError

import engine
from arena.agents.mcp_server import SeatTools
from arena.agents.seat import AgentSeat, SeatError, settle_config


def start(game: str, seats: int, options: dict[str, str]) -> messages.MatchStart:
    players = tuple(messages.PlayerInfo(s, f"P{s + 1}", "bot") for s in range(seats))
    return messages.MatchStart(
        "m1", game, "1", options, (0,), players, messages.TimeControl(1000, 500), "lenient", 7
    )


def seat_zero_to_move() -> engine.MatchState:
    """A tennis match at seat 0's decision."""
    state = engine.make("tennis", seed=3)
    while state.to_move != 0:
        state.apply(state.legal_actions()[0])
    return state


def decision(state: engine.MatchState, request_id: int = 1) -> messages.Decision:
    legal = tuple(messages.Action(a.kind, a.arg) for a in state.legal_actions())
    observation = state.observation(0).to_dict()
    return messages.Decision(request_id, "m1", 0, "tennis", observation, "", legal, 1000, 500)


def test_a_turn_its_clock_a_timeout_and_the_end() -> None:
    async def main() -> None:
        seat = AgentSeat("127.0.0.1:1", "t")
        tools = SeatTools(seat)
        assert not await seat.wait_for_turn(0.01)  # nothing yet: the wait ends on its own
        seat.take(messages.Welcome("v", "s"))
        seat.take(start("tennis", 2, {"sets_to_win": "1"}))
        state = seat_zero_to_move()
        seat.take(decision(state))
        assert await seat.wait_for_turn(5)
        status = await tools.wait_for_turn(0)
        assert status["your_turn"] and status["status"] == "playing"
        assert 0 < status["time_left_ms"] <= 1500 and status["bank_ms"] == 500
        view = tools.get_state()
        assert view["text"] and len(view["legal"]) == len(state.legal_actions())
        # The referee played for the seat: its turn is gone, and the agent is told.
        seat.take(messages.ErrorInfo("timeout", "too slow", 1, "m1", request_id=1, fault="timeout"))
        status = await tools.wait_for_turn(5)
        assert not status["your_turn"]
        assert status["news"] == ["fault timeout charged (strikes 1): too slow"]
        with pytest.raises(ToolError, match="not your turn"):
            await tools.play("0")
        result = messages.Result((1.0, 0.0), (1, 2), summary="P1 wins 1-0")
        seat.take(messages.MatchEnd("m1", result))
        status = await tools.wait_for_turn(5)
        assert status["status"] == "over" and status["result"]["summary"] == "P1 wins 1-0"
        with pytest.raises(ToolError, match="the match is over"):
            await tools.play(0)

    asyncio.run(main())


def test_tools_refuse_bad_answers_in_words_and_keep_the_turn() -> None:
    async def main() -> None:
        seat = AgentSeat("127.0.0.1:1", "t")
        tools = SeatTools(seat)
        with pytest.raises(ToolError, match="no match has started"):
            tools.get_state()
        with pytest.raises(ToolError, match="name the game"):
            tools.rules()
        with pytest.raises(ToolError, match="unknown game"):
            tools.rules("x" * 1000)
        for bad in (-1.0, float("nan"), float("inf")):
            with pytest.raises(ToolError, match="timeout_s"):
                await tools.wait_for_turn(bad)
        seat.take(start("tennis", 2, {}))
        state = seat_zero_to_move()
        seat.take(decision(state))
        for answer in ("nonsense", str(len(state.legal_actions())), "-1", "\x00" * 5000):
            with pytest.raises(ToolError, match="it is still your turn"):
                await tools.play(answer)
        assert seat.turn is not None
        # No connection to write to: said, and the turn is not lost to a crash.
        with pytest.raises(ToolError, match="connection is not open"):
            await tools.play(0)

    asyncio.run(main())


def test_an_answer_after_the_time_ran_out_is_refused() -> None:
    async def main() -> None:
        seat = AgentSeat("127.0.0.1:1", "t")
        seat.take(start("tennis", 2, {}))
        state = seat_zero_to_move()
        late: Any = decision(state)
        seat.take(
            messages.Decision(
                late.request_id, "m1", 0, "tennis", late.observation, "", late.legal, 0, 0
            )
        )
        with pytest.raises(SeatError, match="ran out"):
            await seat.answer(0)

    asyncio.run(main())


def test_the_tennis_table_is_told_apart_by_the_observation() -> None:
    seat = AgentSeat("127.0.0.1:1", "t")
    seat.take(start("tennis", 2, {"sets_to_win": "1"}))
    match = seat.match
    assert match is not None and match.config is None  # singles, or doubles of two teams
    doubles = engine.make("tennis", players=4, seed=1)
    config = settle_config(match, doubles.observation(0).to_dict())
    assert config.players == 4
    seat.take(start("whist", 4, {}))
    assert seat.match is not None and seat.match.config is not None  # only one table has 4
