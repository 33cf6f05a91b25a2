"""``arena mcp`` at its edges: a user's mistakes in one line, a seat whose server is not there
(the tools say so; nothing crashes), and a competition host's live version played through it
with its live token, as the host's hub seats one; a stream the server cuts mid-match, resumed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio

from arena.host.live import LiveBots
from arena.host.store import CompetitionStore
from arena.server import open_arena_server
from tests.arena.agents.agents import Agent, Play, ToolFailed, over_stdio, play_first, turns
from tests.arena.host.serving import competition
from tests.arena.run_arena import arena_error
from tests.arena.wire import fault_kinds, make_spec, play_with, raw
from tests.helpers import free_port


def behaviour(play: Play, into: list[Any]) -> Callable[[str, str], None]:
    """A seat's behaviour for ``play_with``: an agent over stdio; its :class:`Agent` (or what
    stopped it) lands in ``into``."""

    def run(address: str, token: str) -> None:
        try:
            into.append(anyio.run(over_stdio, token, address, play))
        except BaseException as err:
            into.append(err)

    return run


@pytest.mark.slow
@pytest.mark.agents
def test_mistakes_are_one_line(tmp_path: Path) -> None:
    seat = ("mcp", "--server", "127.0.0.1:1", "--token", "t")
    http = (*seat, "--transport", "http")
    assert arena_error(*http, "--listen", "nowhere") == (
        "arena: error: --listen 'nowhere': give HOST:PORT, e.g. 127.0.0.1:8765"
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = arena_error(*http, "--listen", f"127.0.0.1:{port}")
        assert line == f"arena: error: --listen '127.0.0.1:{port}': Address already in use"
    missing = tmp_path / "ca.pem"
    assert arena_error(*seat, "--ca-cert", str(missing)) == (
        f"arena: error: cannot read the CA certificate '{missing}': No such file or directory"
    )
    assert arena_error(*seat, "--matches", "-1") == (
        "arena: error: --matches must be 0 (no limit) or more"
    )
    assert arena_error("mcp", "--server", "127.0.0.1:1", "--token", "") == (
        "arena: error: --token: give the seat's token"
    )


async def nobody_there(agent: Agent) -> None:
    status = await agent.wait(20)
    assert status["status"] == "closed" and not status["your_turn"], status
    assert "connection lost" in status["closed"], status
    for tool, arguments in [
        ("play", {"action": "0"}),
        ("get_state", {}),
        ("rules", {}),
        ("rules", {"game": "chess"}),
        ("wait_for_turn", {"timeout_s": "soon"}),
        ("wait_for_turn", {"timeout_s": float("nan")}),
    ]:
        with pytest.raises(ToolFailed):
            await agent.call(tool, **arguments)
    assert "connection ended" in agent.errors[0], agent.errors
    assert "unknown game 'chess'" in agent.errors[3], agent.errors
    # Before any match, the rules of a game named.
    rules = await agent.call("rules", game="forty_five")
    assert [p["name"] for p in rules["pages"]] == ["spoil-five.md", "forty_five.md"]
    assert (await agent.call("wait_for_turn", timeout_s=0))["status"] == "closed"


@pytest.mark.slow
@pytest.mark.agents
def test_a_seat_with_no_server_says_so_and_its_tools_refuse_in_words() -> None:
    # Up for a while after the connection failed (--linger), for the agent to hear why.
    address = f"127.0.0.1:{free_port()}"
    agent = anyio.run(over_stdio, "t", address, nobody_there, "--linger", "60")
    assert len(agent.errors) == 6


@pytest.mark.slow
@pytest.mark.agents
def test_a_live_versions_token_plays_through_arena_mcp(tmp_path: Path) -> None:
    store = CompetitionStore(tmp_path / "cup", competition())
    author, _ = store.add_author("ann")
    _, live_token = store.add_live_version(author.id, "claude-at-the-table")
    agents: list[Any] = []
    arrivals: list[str] = []

    agent = behaviour(play_first, agents)

    async def main() -> None:
        async with open_arena_server() as server:
            # What the host's hub asks of a token: a live version's name, or a match's own.
            live = LiveBots(store, server.connected, lambda: arrivals.append("live"))
            server.token_owner = live.owner
            spec = make_spec(
                "whist",
                4,
                options={"points_to_win": 1, "games_per_rubber": 1},
                move_ms=5_000,
                bank_ms=10_000,
                tokens=[live_token, *(make_spec("whist", 3).seats[i].token for i in range(3))],
            )
            scenario = await play_with(server, spec, [agent, raw(), raw(), raw()])
            assert scenario.outcome.result.reason == "normal"
            assert fault_kinds(scenario.outcome) == []

    try:
        trio.run(main)
    finally:
        store.close()
    assert isinstance(agents[0], Agent), agents
    assert agents[0].last["status"] == "over"
    # The hub knew the token for a live version's, as a competition host's does.
    assert arrivals == ["live"]


@pytest.mark.slow
@pytest.mark.agents
def test_a_stream_lost_mid_match_is_resumed_and_the_match_played_out() -> None:
    two_turns = threading.Event()
    agents: list[Any] = []

    async def play_then_carry_on(agent: Agent) -> None:
        played = 0
        async for _ in turns(agent):
            # The line may be cut under any call: the decision will come again.
            state = await agent.call("get_state")
            if not state["your_turn"]:
                continue
            try:
                await agent.call("play", action=state["legal"][0]["index"])
            except ToolFailed:
                continue
            played += 1
            if played == 2:
                two_turns.set()

    agent = behaviour(play_then_carry_on, agents)

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("tennis", 2, options={"sets_to_win": 1}, move_ms=5_000, bank_ms=10_000)
            token = spec.seats[0].token

            async def cut() -> None:
                assert await trio.to_thread.run_sync(two_turns.wait, 60)
                # The server ends the agent's stream mid-match; its seat waits for it.
                assert server.disconnect(token, "a test cuts the line")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(cut)
                scenario = await play_with(server, spec, [agent, raw()])
            assert isinstance(agents[0], Agent), agents
            assert scenario.outcome.result.reason == "normal", (agents[0].news, agents[0].last)
            assert fault_kinds(scenario.outcome) == []

    trio.run(main)
    news = agents[0].news
    assert any("connecting again" in n for n in news), news
    assert agents[0].last["status"] == "over"
