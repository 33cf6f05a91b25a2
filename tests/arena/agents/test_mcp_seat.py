"""``arena mcp``: scripted agents on the real ``mcp`` client library play whole matches of every
game through the seat's tools, over stdio (``arena mcp`` a subprocess of the client) and
streamable HTTP, against ``arena bot`` processes on the arena's real server; the records
verify. Agents that answer illegally, too slowly, or hang up meet the referee's rules."""

from __future__ import annotations

import threading
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
    over_http,
    over_stdio,
    play_first,
    play_match,
    verify,
)

pytestmark = pytest.mark.slow

RANDOM, RULES = "arena bot random", "arena bot rules"

#: (game, players, options, the other seats' bots, transport): both transports, every game.
GAMES: list[tuple[str, int, dict[str, OptionValue], list[str], Transport]] = [
    ("whist", 4, {"points_to_win": 1, "games_per_rubber": 1}, [RANDOM, RULES, RANDOM], over_stdio),
    ("tennis_whist", 2, {"sets_to_win": 1}, [RULES], over_http),
    ("spoil_five", 3, {"rounds": 1}, [RANDOM, RULES], over_stdio),
    ("forty_five", 2, {"points_to_win": 5}, [RULES], over_http),
    ("tennis", 2, {"sets_to_win": 1}, [RANDOM], over_stdio),
    # Doubles with one seat per team: as many seats as singles, told apart by the observation.
    ("tennis", 4, {"sets_to_win": 1}, [RULES], over_http),
]


async def read_and_play(agent: Agent) -> None:
    """Read the rules once, then at each turn the state, and play by the action's text and
    by its number in turn."""
    turns = 0
    while True:
        status = await agent.wait()
        if status["status"] in ("over", "closed"):
            return
        if not status["your_turn"]:
            continue
        if not turns:
            rules = await agent.call("rules")
            assert rules["game"] == status["match"]["game"]
            assert rules["pages"] and all(p["text"].strip() for p in rules["pages"])
        assert 0 < status["time_left_ms"] <= 25_000, status
        state = await agent.call("get_state")
        assert state["text"] and state["text_version"] and state["observation"], state
        legal = state["legal"]
        assert all(f"{a['index']}. {a['text']}" in state["text"] for a in legal), state["text"]
        pick = legal[turns % len(legal)]
        answer = pick["text"] if turns % 2 else pick["index"]
        played = await agent.call("play", action=answer)
        assert played["index"] == pick["index"], (played, pick)
        turns += 1


def _faults(played: Played) -> list[dict[str, object]]:
    faults = played.match.outcome.result_dict().get("faults", [])
    assert isinstance(faults, list)
    return faults


def _agent(played: Played) -> Agent:
    assert played.agent is not None, played.error
    return played.agent


def test_an_agent_plays_a_whole_match_of_every_game(tmp_path: Path) -> None:
    # The six matches at once, each in a thread of its own: most of their time is processes
    # starting, which need not wait for each other.
    done: dict[int, Played | BaseException] = {}

    def play(i: int) -> None:
        game, players, options, bots, transport = GAMES[i]
        try:
            done[i] = play_match(
                game,
                bots,
                tmp_path / str(i),
                read_and_play,
                transport=transport,
                players=players,
                options=options,
            )
        except BaseException as err:
            done[i] = err

    threads = [threading.Thread(target=play, args=(i,)) for i in range(len(GAMES))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    for i, (game, players, *_) in enumerate(GAMES):
        played = done[i]
        assert isinstance(played, Played), (game, players, played)
        agent = _agent(played)
        assert agent.last["status"] == "over", (game, players)
        result = agent.last["result"]
        assert result["reason"] == "normal" and result["faults"] == [], (game, players, result)
        assert result["summary"] == played.match.outcome.result.summary
        assert agent.errors == [], (game, players)
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


def test_illegal_and_unreadable_answers_are_refused_with_the_reason_and_cost_nothing(
    tmp_path: Path,
) -> None:
    played = play_match(
        "tennis", [RANDOM], tmp_path, illegal_first, transport=over_http, options={"sets_to_win": 1}
    )
    agent = _agent(played)
    assert any("names no legal action" in e for e in agent.errors), agent.errors
    assert agent.last["status"] == "over"
    assert _faults(played) == []
    verify(played.match.record)


async def slow_once(agent: Agent) -> None:
    """Let the first decision's time run out (told by wait_for_turn), then play on in time."""
    status = await agent.wait()
    while not status["your_turn"]:
        status = await agent.wait()
    while not any("fault timeout" in n for n in agent.news):
        await agent.wait()
    await play_first(agent)


def test_a_slow_agent_is_charged_a_timeout_and_the_referee_plays_for_it(tmp_path: Path) -> None:
    played = play_match(
        "tennis",
        [RANDOM],
        tmp_path,
        slow_once,
        options={"sets_to_win": 1},
        time_control=TimeControl(move_ms=800, bank_ms=400),
    )
    agent = _agent(played)
    faults = _faults(played)
    assert [(f["seat"], f["kind"]) for f in faults] == [(0, "timeout")], faults
    assert agent.last["result"]["faults"][0]["kind"] == "timeout"
    assert played.match.outcome.result.reason == "normal"
    # The record marks the referee's move for the seat, and replays.
    entries = read_record(played.match.record).entries
    assert any(e.get("fallback") and e.get("seat") == 0 for e in entries), entries[:3]
    verify(played.match.record)


async def hang_up(agent: Agent) -> None:
    """Play two turns, then leave: the client closes, and ``arena mcp`` with it."""
    turns = 0
    while turns < 2:
        status = await agent.wait()
        if status["your_turn"]:
            state = await agent.call("get_state")
            await agent.call("play", action=state["legal"][0]["index"])
            turns += 1


def test_an_agent_that_disconnects_forfeits_under_the_fault_rules(tmp_path: Path) -> None:
    played = play_match(
        "tennis",
        [RULES],
        tmp_path,
        hang_up,
        options={"sets_to_win": 1},
        time_control=TimeControl(move_ms=300, bank_ms=300),
    )
    _agent(played)
    result = played.match.outcome.result
    assert result.reason == "forfeit" and result.forfeited_by == 0, result
    assert {f["kind"] for f in _faults(played)} <= {"disconnect", "timeout"}, _faults(played)
    verify(played.match.record)
