"""docs/llm.md's walk-through on a real ``arena serve``: an agent that hangs up mid-match forfeits
under the fault rules, and the server plays on: the next agent, over HTTP, plays a whole match
on it; both records verify."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from arena.records.format import read_record
from tests.arena.agents.agents import ARENA, Agent, over_http, over_stdio, play_first, verify
from tests.helpers import free_port
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.agents]


async def hang_up(agent: Agent) -> None:
    """Play one turn, then leave (the client closes, and ``arena mcp`` with it)."""
    while not (await agent.wait())["your_turn"]:
        pass
    state = await agent.call("get_state")
    await agent.call("play", action=state["legal"][0]["index"])


def test_an_agent_hangs_up_and_the_server_plays_on(tmp_path: Path) -> None:
    port = free_port()
    address = f"127.0.0.1:{port}"
    records = tmp_path / "records"
    serve = subprocess.Popen(
        [
            *(ARENA, "serve", "--listen", address, "--game", "tennis"),
            *("--option", "sets_to_win=1", "--move-ms", "2000", "--bank-ms", "1000"),
            *("--out", str(records), "--log-level", "error"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    bot = subprocess.Popen(
        [ARENA, "bot", "random", "--server", address, "--matches", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert serve.stdout is not None
        assert serve.stdout.readline().startswith(f"arena: serving tennis on {address}")
        # Any token is an identity in the lobby.
        first = anyio.run(over_stdio, "first-agent", address, hang_up)
        assert first.errors == []
        found = wait_until(
            lambda: sorted(records.glob("*.jsonl.gz")) or None, 60, what="the first record"
        )
        assert serve.poll() is None, "arena serve survived the agent's hang-up"
        second = anyio.run(over_http, "second-agent", address, play_first)
        assert second.last["status"] == "over" and second.last["result"]["faults"] == []
        assert bot.wait(60) == 0
        found = wait_until(
            lambda: len(files := sorted(records.glob("*.jsonl.gz"))) == 2 and files,
            60,
            what="the second record",
        )
    finally:
        for proc in (bot, serve):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in (bot, serve):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    results = {}
    for path in found:
        record = read_record(path)
        names = [s["bot_name"] for s in record.header["seats"]]
        seat = names.index("mcp-agent")
        results[path] = (seat, record.result)
        verify(path)
    (first_seat, hung), (_, played) = sorted(results.values(), key=lambda r: r[1]["reason"])
    assert hung["reason"] == "forfeit" and hung["forfeited_by"] == first_seat, hung
    assert {f["kind"] for f in hung["faults"]} <= {"disconnect", "timeout"}, hung
    assert played["reason"] == "normal" and played["faults"] == [], played
