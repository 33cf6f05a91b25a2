"""Opt-in protocol speed-ups over a real server: events batched into DecisionRequests
(Hello.batch_events) and observations without their text / JSON renderings (omit_text,
omit_json). A bot that opts in must learn exactly what one that does not learns, in the same
order, only in fewer and smaller messages."""

from __future__ import annotations

import json
import threading
from typing import Any

import trio

from arena.server import MatchOutcome, open_arena_server
from tests.arena.wire import (
    SHORT_WHIST,
    RawBot,
    Recorder,
    join_all,
    make_spec,
    play_loop,
    raw,
    run_scenario,
)


def _visible_seqs(outcome: MatchOutcome, seat: int) -> list[int]:
    """The seqs ``seat`` is sent: 0, 1, 2, … over the events it may see in the match record
    (the referee's truth), so a gap never tells of an event it may not see."""
    events = [e for e in outcome.entries if e["type"] == "event"]
    return list(range(sum(1 for e in events if e["to"] is None or seat in e["to"])))  # type: ignore[operator]


def _learned(bot: RawBot) -> list[tuple[int, str]]:
    """``(seq, json)`` of every event the bot was told, in the order it was told them."""
    out: list[tuple[int, str]] = []
    for msg in bot.received:
        kind = msg.WhichOneof("kind")
        if kind == "event":
            out.append((msg.event.seq, msg.event.json))
        elif kind == "decision":
            out.extend((e.seq, e.json) for e in msg.decision.events)
    return out


def test_batched_bot_learns_the_same_events_in_the_same_order_in_fewer_messages() -> None:
    lean, plain = Recorder(), Recorder()
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=5)
    # Seats 0 and 1 opt in; 2 and 3 are old-style bots.
    scenario = run_scenario(
        spec, [raw(rec=lean, lean=True), raw(rec=lean, lean=True), raw(rec=plain), raw(rec=plain)]
    )
    outcome = scenario.outcome
    assert outcome.result.reason == "normal" and not outcome.faults
    for bot in lean.bots + plain.bots:
        (seat,) = bot.of_kind("match_start")[0].seats  # threads start in any order
        learned = _learned(bot)
        assert [seq for seq, _ in learned] == _visible_seqs(outcome, seat), seat
    for bot in lean.bots:
        kinds = [m.WhichOneof("kind") for m in bot.received]
        # Separate Event messages only ever come right before a non-decision message
        # (here: the events after the last decision, flushed just before MatchEnd).
        for i, kind in enumerate(kinds):
            if kind == "event":
                after = next(k for k in kinds[i:] if k != "event")
                assert after == "match_end", kinds[i - 2 : i + 3]
        assert any(m.decision.events for m in bot.received if m.HasField("decision"))
    for bot in plain.bots:
        assert not any(m.decision.events for m in bot.received if m.HasField("decision"))
    lean_msgs = len(lean.bots[0].received)
    plain_msgs = len(plain.bots[0].received)
    assert lean_msgs < plain_msgs / 2, (lean_msgs, plain_msgs)


def test_omitted_renderings_are_empty_and_the_typed_observation_unchanged() -> None:
    lean, plain = Recorder(), Recorder()
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=9)
    # Each connection plays two seats, so both see the same decisions.
    tokens = [spec.seats[0].token, spec.seats[0].token, spec.seats[2].token, spec.seats[2].token]
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=9, tokens=tokens)

    async def main() -> MatchOutcome:
        async with open_arena_server() as server:
            server.register(spec)
            threads = [
                threading.Thread(target=raw(rec=lean, lean=True), args=(server.address, tokens[0])),
                threading.Thread(target=raw(rec=plain), args=(server.address, tokens[2])),
            ]
            for t in threads:
                t.start()
            outcome = await server.run_match(spec)
            await trio.to_thread.run_sync(join_all, threads)
            return outcome

    outcome = trio.run(main)
    assert outcome.result.reason == "normal"
    lean_obs = [m.decision.observation for m in lean.bots[0].received if m.HasField("decision")]
    plain_obs = [m.decision.observation for m in plain.bots[0].received if m.HasField("decision")]
    assert lean_obs and plain_obs
    assert all(o.text == "" and o.json == "" and o.HasField("whist") for o in lean_obs)
    assert all(o.text and o.json for o in plain_obs)
    # The typed message is still whole: the deciding seat's full hand at the first decision.
    first = lean_obs[0].whist
    assert first.seat in (0, 1) and len(first.hand) == 13
    assert json.loads(plain_obs[0].json)["seat"] in (2, 3)


def test_a_batched_bot_replacing_its_stream_mid_decision_gets_everything_once() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=3)
    token = spec.seats[0].token

    async def main() -> tuple[MatchOutcome, RawBot]:
        async with open_arena_server() as server:
            server.register(spec)
            others = [
                threading.Thread(target=raw(), args=(server.address, s.token), daemon=True)
                for s in spec.seats[1:]
            ]
            for t in others:
                t.start()
            first = RawBot(server.address)
            first.hello(token, lean=True)
            second: dict[str, Any] = {}

            def replace() -> None:
                # Hold a decision unanswered and open a new stream with the same token: the
                # new stream takes over the seat and the open request (the old one is ended).
                for msg in first.messages():
                    if msg.HasField("decision"):
                        break
                bot = RawBot(server.address)
                bot.hello(token, lean=True)
                second["bot"] = bot
                play_loop(bot)
                bot.close()
                first.close()

            t = threading.Thread(target=replace, daemon=True)
            t.start()
            outcome = await server.run_match(spec)
            await trio.to_thread.run_sync(join_all, [t, *others])
            return outcome, second["bot"]

    outcome, bot = trio.run(main)
    assert outcome.result.reason == "normal" and not outcome.faults
    # The new stream: MatchStart, then every event seat 0 may see, each once and in order
    # (those before the takeover ride inside the re-sent request).
    learned = [seq for seq, _ in _learned(bot)]
    assert learned == _visible_seqs(outcome, 0)
    kinds = [m.WhichOneof("kind") for m in bot.received]
    assert kinds[:3] == ["welcome", "match_start", "decision"], kinds[:5]
    assert bot.received[2].decision.events
    assert bot.received[2].decision.observation.text == ""
