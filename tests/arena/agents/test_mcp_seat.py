"""``arena mcp``: scripted agents on the real ``mcp`` client library play whole matches of every
game through the seat's tools, over stdio (``arena mcp`` a subprocess of the client) and
streamable HTTP, against ``arena bot`` processes on the arena's real server; the records
verify. Agents that answer illegally or too slowly meet the referee's rules (one that hangs up:
test_mcp_serve.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
from cardarena.messages import TimeControl

from arena.records.format import read_record
from engine import OptionValue
from tests.arena.agents.agents import (
    Agent,
    Played,
    ToolFailed,
    Transport,
    at_once,
    over_http,
    over_stdio,
    play_first,
    play_match,
    turns,
    verify,
)

pytestmark = [pytest.mark.slow, pytest.mark.agents]

RANDOM, RULES = "arena bot random", "arena bot rules"

#: (game, players, options, the other seats' bots, transport): both transports, every game.
GAMES: list[tuple[str, int, dict[str, OptionValue], list[str]]] = [
    ("whist", 4, {"points_to_win": 1, "games_per_rubber": 1}, [RANDOM, RULES, RANDOM]),
    ("tennis_whist", 2, {"sets_to_win": 1}, [RULES]),
    ("spoil_five", 3, {"rounds": 1}, [RANDOM, RULES]),
    ("forty_five", 2, {"points_to_win": 5}, [RULES]),
    ("tennis", 2, {"sets_to_win": 1}, [RANDOM]),
    # Doubles with one seat per team: as many seats as singles, told apart by the observation.
    ("tennis", 4, {"sets_to_win": 1}, [RULES]),
]


async def from_the_hand(agent: Agent) -> None:
    """With the legal actions unlisted (--no-list-legal): name a card of the hand, the next
    one when refused, until one is taken."""
    async for _ in turns(agent):
        state = await agent.call("get_state")
        assert state["legal"] == [] and state["text"], state
        for card in state["observation"]["hand"]:
            try:
                await agent.call("play", action=f"play:{card}")
                break
            except ToolFailed as refused:
                assert "it is still your turn" in str(refused)
        else:
            raise AssertionError(f"no card of the hand was taken: {state['text']}")


async def read_and_play(agent: Agent) -> None:
    """Read the rules once, then at each turn the state, and play by the action's text and
    by its number in turn."""
    count = 0
    async for status in turns(agent):
        if not count:
            rules = await agent.call("rules")
            assert rules["game"] == status["match"]["game"]
            assert rules["pages"] and all(p["text"].strip() for p in rules["pages"])
        assert 0 < status["time_left_ms"] <= 25_000, status
        state = await agent.call("get_state")
        assert state["text"] and state["text_version"] and state["observation"], state
        legal = state["legal"]
        assert legal and [a["index"] for a in legal] == list(range(len(legal))), legal
        pick = legal[count % len(legal)]
        answer = pick["text"] if count % 2 else pick["index"]
        played = await agent.call("play", action=answer)
        assert played["index"] == pick["index"], (played, pick)
        count += 1


def _faults(played: Played) -> list[dict[str, object]]:
    faults = played.match.outcome.result_dict().get("faults", [])
    assert isinstance(faults, list)
    return faults


def _agent(played: Played) -> Agent:
    assert played.agent is not None, played.error
    return played.agent


@pytest.mark.parametrize("transport", [over_stdio, over_http], ids=["stdio", "http"])
def test_an_agent_plays_a_whole_match_of_every_game(tmp_path: Path, transport: Transport) -> None:
    def match(i: int) -> Callable[[], Played]:
        game, players, options, bots = GAMES[i]
        # Whist's agent is not shown the legal actions, and names cards of its hand.
        unlisted = game == "whist"
        return functools.partial(
            play_match,
            game,
            bots,
            tmp_path / str(i),
            from_the_hand if unlisted else read_and_play,
            transport=transport,
            players=players,
            options=options,
            extra=["--no-list-legal"] if unlisted else [],
        )

    everything = at_once(*(match(i) for i in range(len(GAMES))))
    for (game, players, *_), played in zip(GAMES, everything, strict=True):
        agent = _agent(played)
        assert agent.last["status"] == "over", (game, players)
        result = agent.last["result"]
        assert result["reason"] == "normal" and result["faults"] == [], (game, players, result)
        assert result["summary"] == played.match.outcome.result.summary
        # The server's instructions tell the loop, and whether the actions are listed.
        assert "wait_for_turn" in agent.instructions
        assert ("numbered" in agent.instructions) == (game != "whist"), agent.instructions
        if game != "whist":
            assert agent.errors == [], (game, players, agent.errors)
        seats = read_record(played.match.record).header["seats"]
        assert seats[0]["bot_name"] == "mcp-agent", seats
        assert "replayed" in verify(played.match.record)


async def illegal_first(agent: Agent) -> None:
    """At its first turn: bad answers of every sort, then legal play to the end."""
    with pytest.raises(ToolFailed, match="timeout_s"):
        await agent.call("wait_for_turn", timeout_s=-1)
    status = await agent.wait()
    while not status["your_turn"]:
        status = await agent.wait()
    state = await agent.call("get_state")
    n = len(state["legal"])
    for bad in ("play:ZZ", "what a lovely hand", str(n), n, -1, "", "x" * 10_000):
        with pytest.raises(ToolFailed, match="it is still your turn"):
            await agent.call("play", action=bad)
    with pytest.raises(ToolFailed):  # not a string or a number: the arguments' check
        await agent.call("play", action={"index": 0})
    with pytest.raises(ToolFailed):
        await agent.call("no_such_tool")
    assert (await agent.call("get_state"))["your_turn"], "the seat kept its turn"
    await agent.call("play", action=state["legal"][0]["text"])
    await play_first(agent)
    with pytest.raises(ToolFailed, match="the match is over"):
        await agent.call("play", action=0)
    over = await agent.call("get_state")
    assert over["result"]["summary"] and over["legal"] == [] and not over["your_turn"]


async def slow_once(agent: Agent) -> None:
    """Let the first decision's time run out (told by wait_for_turn), then play on in time."""
    status = await agent.wait()
    while not status["your_turn"]:
        status = await agent.wait()
    while not any("fault timeout" in n for n in agent.news):
        await agent.wait()
    await play_first(agent)


def test_illegal_answers_cost_nothing_and_a_slow_agent_is_charged_a_timeout(
    tmp_path: Path,
) -> None:
    tennis: dict[str, OptionValue] = {"sets_to_win": 1}
    refused, slow = at_once(
        functools.partial(
            play_match, "tennis", [RANDOM], tmp_path / "a", illegal_first, options=tennis
        ),
        functools.partial(
            play_match,
            "tennis",
            [RANDOM],
            tmp_path / "b",
            slow_once,
            transport=over_http,
            options=tennis,
            time_control=TimeControl(move_ms=3_000, bank_ms=0),
        ),
    )
    # Illegal and unreadable answers: refused with the reason, the turn kept, nothing charged.
    agent = _agent(refused)
    # The reason names what is legal, for the agent to choose again.
    refusals = [e for e in agent.errors if "not played:" in e]
    assert len(refusals) >= 6 and all("legal:" in e or "e.g." in e for e in refusals), agent.errors
    assert agent.last["status"] == "over"
    assert _faults(refused) == []
    verify(refused.match.record)
    # Too slow once: a timeout, the referee's move for the seat, then play goes on.
    agent = _agent(slow)
    faults = _faults(slow)
    assert [(f["seat"], f["kind"]) for f in faults] == [(0, "timeout")], faults
    assert agent.last["result"]["faults"][0]["kind"] == "timeout"
    assert slow.match.outcome.result.reason == "normal"
    entries = read_record(slow.match.record).entries
    assert any(e.get("fallback") and e.get("seat") == 0 for e in entries), entries[:3]
    verify(slow.match.record)
