"""Scripted agents that play a seat through ``arena mcp`` with the real ``mcp`` client library,
and the real arena they play in: :func:`arena.match.play_commands`' server (what ``arena match``
and ``arena play`` use) with ``arena bot`` processes in the other seats and the agent's seat
left to whoever connects with its token."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import trio
from cardarena.messages import TimeControl
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from arena.match import CommandMatch, play_commands
from arena.policy import FaultPolicy
from arena.server import MatchSpec
from engine import OptionValue
from tests.helpers import free_port
from tests.waiting import asyncio_wait_until

ARENA = str(Path(sys.executable).parent / "arena")


class ToolFailed(Exception):
    """A tool answered with an error result (its text is the message)."""


@dataclass
class Agent:
    """An MCP session with the seat, and what the tools answered."""

    session: ClientSession
    #: Every tool error's text, in order.
    errors: list[str] = field(default_factory=list)
    #: Every answer's news (what the referee said), in order.
    news: list[str] = field(default_factory=list)
    #: The last status seen.
    last: dict[str, Any] = field(default_factory=dict)
    #: What the server told the agent at the start (its instructions).
    instructions: str = ""

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """A tool's answer as a dict; raises :class:`ToolFailed` for an error result."""
        result = await self.session.call_tool(tool, arguments)
        text = "".join(getattr(c, "text", "") for c in result.content)  # type: ignore[union-attr]
        if result.is_error:  # type: ignore[union-attr]
            self.errors.append(text)
            raise ToolFailed(text)
        answer: dict[str, Any] = json.loads(text)
        self.news += answer.get("news", [])
        return answer

    async def wait(self, timeout_s: float = 10.0) -> dict[str, Any]:
        status = await self.call("wait_for_turn", timeout_s=timeout_s)
        self.last = status
        return status


Play = Callable[[Agent], Awaitable[None]]


async def turns(agent: Agent) -> AsyncIterator[dict[str, Any]]:
    """``wait_for_turn``'s answer at each of the seat's turns, until the match is over."""
    while True:
        status = await agent.wait()
        if status["status"] in ("over", "closed"):
            return
        if status["your_turn"]:
            yield status


async def play_first(agent: Agent) -> None:
    """Play the first legal action at every turn (by number) until the match is over."""
    async for _ in turns(agent):
        state = await agent.call("get_state")
        await agent.call("play", action=state["legal"][0]["index"])


async def over_stdio(token: str, address: str, play: Play, *extra: str) -> Agent:
    """Start ``arena mcp`` as an agent framework does (a subprocess on stdio) and ``play``."""
    params = StdioServerParameters(
        command=ARENA,
        args=["mcp", "--server", address, "--token", token, "--linger", "0.2", *extra],
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        agent = Agent(session, instructions=(await session.initialize()).instructions or "")
        await play(agent)
        return agent


async def over_http(token: str, address: str, play: Play, *extra: str) -> Agent:
    """Start ``arena mcp --transport http`` and ``play`` through the streamable HTTP client."""
    port = free_port()
    cmd = [ARENA, "mcp", "--server", address, "--token", token, "--transport", "http"]
    cmd += ["--listen", f"127.0.0.1:{port}", "--linger", "0.2", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        banner = await anyio.to_thread.run_sync(proc.stderr.readline)
        assert banner.strip() == f"arena: MCP seat at http://127.0.0.1:{port}/mcp", banner
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            agent = Agent(session, instructions=init.instructions or "")
            await play(agent)
        await asyncio_wait_until(lambda: proc.poll() is not None, 30, what="arena mcp to exit")
        assert proc.returncode == 0, proc.stderr.read()
        return agent
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


Transport = Callable[..., Awaitable[Agent]]


@dataclass
class Played:
    """A match with an agent's seat: the match, and the agent (or what stopped it)."""

    match: CommandMatch
    agent: Agent | None
    error: BaseException | None


def agent_seat(
    transport: Transport, play: Play, seat: int, *extra: str
) -> tuple[Callable[[MatchSpec, str], AbstractAsyncContextManager[object]], list[Any]]:
    """``play_commands``' ``attend``: the agent at ``seat`` in a thread of its own (its own
    asyncio loop, as an agent framework's), joined after the match; and where its outcome
    (an :class:`Agent` or the exception) lands."""
    outcome: list[Any] = []

    @asynccontextmanager
    async def attend(spec: MatchSpec, address: str) -> AsyncIterator[None]:
        token = spec.seats[seat].token

        def run() -> None:
            try:
                outcome.append(anyio.run(transport, token, address, play, *extra))
            except BaseException as err:
                outcome.append(err)

        thread = threading.Thread(target=run, name="agent", daemon=True)
        thread.start()
        try:
            yield
        finally:
            await trio.to_thread.run_sync(thread.join, 60.0)

    return attend, outcome


def play_match(
    game: str,
    bots: Sequence[str],
    out: Path,
    play: Play = play_first,
    *,
    transport: Transport = over_stdio,
    seat: int = 0,
    players: int | None = None,
    options: dict[str, OptionValue] | None = None,
    time_control: TimeControl | None = None,
    fault_policy: FaultPolicy = FaultPolicy.LENIENT,
    extra: Sequence[str] = (),
) -> Played:
    """One match of ``game``: the agent at ``seat``, ``bots`` (commands) in the others."""
    commands: list[str | None] = list(bots)
    commands.insert(seat, None)
    attend, outcome = agent_seat(transport, play, seat, *extra)

    async def main() -> CommandMatch:
        played = await play_commands(
            game,
            commands,
            players=players,
            options=options,
            seed=5,
            out_dir=out,
            time_control=time_control or TimeControl(move_ms=5_000, bank_ms=20_000),
            fault_policy=fault_policy,
            attend=attend,
        )
        assert isinstance(played, CommandMatch)
        return played

    match = trio.run(main)
    got = outcome[0] if outcome else None
    if isinstance(got, Agent):
        return Played(match, got, None)
    return Played(match, None, got)


def at_once(*matches: Callable[[], Played]) -> list[Played]:
    """Play ``matches`` at the same time, each in a thread of its own (most of a match's time
    here is processes starting, which need not wait for each other); their results in order.
    Each match's own failure is raised for it."""
    done: dict[int, Played | BaseException] = {}

    def run(i: int) -> None:
        try:
            done[i] = matches[i]()
        except BaseException as err:
            done[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(matches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    results = []
    for i in range(len(matches)):
        got = done.get(i, AssertionError(f"match {i} did not end in 300 s"))
        if isinstance(got, BaseException):
            raise got
        results.append(got)
    return results


def verify(record: Path) -> str:
    """``arena replay verify``'s output; fails unless it verifies."""
    proc = subprocess.run(
        [ARENA, "replay", "verify", str(record)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
