"""Broken bots: the match always finishes, the fault is recorded, the bot is told, and the
policy (lenient: 3 strikes; strict: first fault) forfeits.

Faults that take time (timeouts, the reconnection grace, the connect timeout) run on the virtual
clock (tests/arena/server/fakes.py): the real servicer, hub and referee read scripted streams,
so timings are exact and nothing waits in real time. The others are one scripted raw gRPC
client each, against a real server."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import pytest
import trio
from cardarena._pb import arena_pb2 as pb

from arena.policy import RECONNECT_GRACE
from arena.server import MatchOutcome, MatchSpec, open_arena_server
from arena.server.referee import QUOTE_LIMIT
from tests.arena.server.fakes import (
    FakeBot,
    Move,
    Played,
    Script,
    answer,
    disconnect,
    garbage,
    illegal,
    late,
    run_match,
    silent,
    wrong_id,
)
from tests.arena.wire import (
    SHORT_WHIST,
    Behaviour,
    RawBot,
    Recorder,
    Scenario,
    fault_kinds,
    first_legal,
    make_spec,
    play_loop,
    play_with,
    raw,
    run_scenario,
    sdk,
)
from tests.waiting import wait_until

BAD = 1  # the broken bot sits East


def _table(bad: Behaviour) -> list[Behaviour | None]:
    return [sdk("random", 1), bad, sdk("random", 3), sdk("random", 4)]


def _errors(rec: Recorder) -> list[pb.Error]:
    return [e for bot in rec.bots for e in bot.of_kind("error")]


def _garbage(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(request_id=decision.request_id))


def test_action_without_a_choice_is_garbage() -> None:
    rec = Recorder()
    spec = make_spec("whist", 4, options=SHORT_WHIST)
    out = run_scenario(spec, _table(raw(_garbage, rec))).outcome
    assert fault_kinds(out, BAD) == ["garbage"] * 3
    assert out.result.forfeited_by == BAD
    assert {e.code for e in _errors(rec)} == {pb.ERROR_CODE_PROTOCOL}


def _play_sending_extra(
    extra: Callable[[RawBot, int], None],
) -> tuple[MatchOutcome, Recorder]:
    """Seat BAD answers every decision legally, but first sends ``extra(bot, n)``."""
    rec = Recorder()

    def behaviour(address: str, token: str) -> None:
        bot = rec.new(address)
        bot.hello(token)

        def answer(decision: pb.DecisionRequest, n: int) -> pb.BotMessage | None:
            extra(bot, n)
            return first_legal(decision, n)

        play_loop(bot, answer)
        bot.close()

    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(behaviour)).outcome
    return out, rec


def test_empty_bot_message_is_garbage() -> None:
    # No hello, action or ping in the message.
    out, _ = _play_sending_extra(lambda bot, n: bot.send(pb.BotMessage()))
    assert fault_kinds(out, BAD) == ["garbage"] * 3
    assert out.result.forfeited_by == BAD


def test_index_out_of_range_is_illegal_and_the_fallback_is_played() -> None:
    rec = Recorder()

    def bad_index(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        i = len(decision.legal_actions) if n == 0 else 0  # one bad answer, then good ones
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=i))

    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(raw(bad_index, rec)))
    result = out.outcome
    assert fault_kinds(result) == ["illegal"]
    assert "out of range" in result.faults[0].detail
    assert result.result.reason == "normal"  # one strike does not forfeit
    first = next(e for e in result.entries if e["type"] == "decision" and e["seat"] == BAD)
    assert first["fallback"] is True
    request = rec.bots[0].of_kind("decision")[0]
    assert first["action"] == request.legal_actions[0].text  # whist's fallback: first legal
    assert _errors(rec)[0].code == pb.ERROR_CODE_ILLEGAL_ACTION
    assert _errors(rec)[0].request_id == request.request_id


def test_text_that_is_no_legal_action_is_illegal() -> None:
    def bad_text(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        legal = {a.text for a in decision.legal_actions}
        text = next(f"play:{c}" for c in ("2C", "3C", "4C", "5C", "6C") if f"play:{c}" not in legal)
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, text=text))

    rec, north = Recorder(), Recorder()
    table = _table(raw(bad_text, rec))
    table[0] = raw(rec=north)
    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), table).outcome
    assert fault_kinds(out, BAD) == ["illegal"] * 3
    assert out.result.forfeited_by == BAD
    # The faulting bot is told its legal actions; the others (and spectators) only that the
    # text was illegal: the legal actions would reveal East's hand.
    errors = _errors(rec)
    assert len(errors) == 3 and all("(legal:" in e.message for e in errors)
    public = north.bots[0].of_kind("match_end")[0]
    assert len(public.faults) == 3
    assert not any("(legal:" in f.detail for f in public.faults)
    assert "(legal:" not in public.result.summary


def test_a_long_illegal_text_is_quoted_short() -> None:
    # 20,000 characters (under the 64 KiB message cap): quoted whole, each fault would carry it
    # into the MatchEnd, the logs, the record and the console several times over.
    long_text = "x" * 20_000

    def chatty(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, text=long_text))

    rec = Recorder()
    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(raw(chatty, rec)))
    faults = [f for f in out.outcome.faults if f.seat == BAD]
    assert [f.kind for f in faults] == ["illegal"] * 3
    quoted = f"{'x' * QUOTE_LIMIT!r}… (20000 characters)"
    assert [f.detail for f in faults] == [f"{quoted} is not a legal action"] * 3
    errors = _errors(rec)
    assert len(errors) == 3
    assert all(len(e.message) < 2000 and e.message.startswith(quoted) for e in errors)


def test_text_answers_are_accepted() -> None:
    def by_text(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        text = decision.legal_actions[-1].text
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, text=text))

    rec = Recorder()
    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(raw(by_text, rec)))
    assert out.outcome.faults == ()
    mine = [e["action"] for e in out.outcome.entries if e["type"] == "decision" and e["seat"] == 1]
    assert mine == [d.legal_actions[-1].text for d in rec.bots[0].of_kind("decision")]


def test_unknown_request_id_is_a_fault() -> None:
    # A request id never sent to anybody.
    out, rec = _play_sending_extra(lambda bot, n: bot.answer(10_000_000 + n, index=0))
    assert fault_kinds(out, BAD) == ["unknown_request"] * 3
    assert out.result.forfeited_by == BAD
    codes = {e.code for e in _errors(rec)}
    assert codes == {pb.ERROR_CODE_UNKNOWN_REQUEST}


def test_a_bot_cannot_answer_for_another_seat() -> None:
    """East learns North's open request id (through the test) and answers it: a wrong_seat fault
    for East; North's request stays open and North's own (different) choice is played."""
    north_requests: queue.SimpleQueue[int] = queue.SimpleQueue()
    answered = threading.Event()
    north_rec, east_rec = Recorder(), Recorder()

    def north(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        if n == 0:
            north_requests.put(decision.request_id)
            answered.wait(10)  # until the server has told East off
        last = len(decision.legal_actions) - 1
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=last))

    def east(address: str, token: str) -> None:
        bot = east_rec.new(address)
        bot.hello(token)

        def steal() -> None:
            rid = north_requests.get(timeout=10)
            bot.answer(rid, index=0)
            # Wait until the server has told East off before North answers.
            try:
                wait_until(lambda: bot.of_kind("error"), 10, what="the error for East's answer")
            finally:
                answered.set()

        threading.Thread(target=steal, daemon=True).start()
        play_loop(bot)
        bot.close()

    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=3)
    behaviours: list[Behaviour | None] = [raw(north, north_rec), east, sdk(), sdk()]
    out = run_scenario(spec, behaviours).outcome
    assert fault_kinds(out) == ["wrong_seat"]
    assert out.faults[0].seat == 1
    error = east_rec.bots[0].of_kind("error")[0]
    assert error.code == pb.ERROR_CODE_WRONG_SEAT and error.seat == 1
    first_north = north_rec.bots[0].of_kind("decision")[0]
    decisions = [e for e in out.entries if e["type"] == "decision" and e["seat"] == 0]
    assert decisions[0]["fallback"] is False
    assert decisions[0]["action"] == first_north.legal_actions[-1].text
    # East never saw a decision request for another seat.
    assert {d.seat for d in east_rec.bots[0].of_kind("decision")} == {1}


def _slow(delay: float) -> Behaviour:
    def answer(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        time.sleep(delay)  # slow on purpose: the match is still on when East comes back
        return first_legal(decision, n)

    return raw(answer)


@pytest.mark.slow
def test_reconnecting_with_the_same_token_resumes_the_seat() -> None:
    """East drops its connection once its second answer is played and comes back as soon as its
    stream is over: it gets MatchStart and the events so far again, and plays on without a
    fault."""
    second = Recorder()

    def behaviour(address: str, token: str) -> None:
        bot = RawBot(address)
        bot.hello(token)
        n = 0
        for msg in bot.messages():
            if msg.WhichOneof("kind") == "decision":
                bot.answer(msg.decision.request_id, index=0)
                n += 1
                if n == 2:
                    break
        # The event of East's own play says the server has its answer: cut the stream only then.
        asked = next(i for i, m in enumerate(bot.received) if m is msg)
        wait_until(
            lambda: any(m.WhichOneof("kind") == "event" for m in bot.received[asked:]),
            10,
            what="the event of East's second play",
        )
        bot.close()
        assert bot.ended.wait(10)
        again = second.new(address)
        again.hello(token)
        play_loop(again)
        again.close()

    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=3000)
    behaviours: list[Behaviour | None] = [_slow(0.04), behaviour, _slow(0.04), _slow(0.04)]
    out = run_scenario(spec, behaviours).outcome
    assert out.faults == ()
    assert out.result.reason == "normal"
    bot = second.bots[0]
    kinds = [m.WhichOneof("kind") for m in bot.received]
    assert kinds[:2] == ["welcome", "match_start"]
    replayed = bot.of_kind("event")
    assert replayed[0].seq == 0  # the whole visible history again
    east_decisions = [e for e in out.entries if e["type"] == "decision" and e["seat"] == 1]
    assert len(east_decisions) == 13 and not any(e["fallback"] for e in east_decisions)


def test_a_new_connection_takes_over_an_open_request() -> None:
    """A second stream with the same token supersedes the first, which still holds an open
    request: the request moves to the new stream, which answers it."""
    rec = Recorder()

    def behaviour(address: str, token: str) -> None:
        old = rec.new(address)
        old.hello(token)
        for msg in old.messages():
            if msg.WhichOneof("kind") == "decision":
                break
        new = rec.new(address)
        new.hello(token)
        play_loop(new)
        new.close()
        old.close()

    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=3000)
    out = run_scenario(spec, _table(behaviour)).outcome
    assert out.faults == ()
    old, new = rec.bots
    assert old.ended.wait(5)
    assert old.of_kind("error")[-1].message.startswith("superseded")
    assert new.of_kind("decision")[0].request_id == old.of_kind("decision")[0].request_id


def test_flooding_bot_is_struck_then_disconnected_and_forfeits() -> None:
    rec = Recorder()

    def behaviour(address: str, token: str) -> None:
        bot = rec.new(address)
        bot.hello(token)
        for i in range(600):
            bot.send(pb.BotMessage(ping=pb.Ping(nonce=i)))
        play_loop(bot)
        bot.close()

    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(behaviour)).outcome
    kinds = fault_kinds(out, BAD)
    assert kinds[0] == "flood"
    assert len(kinds) == 3 and set(kinds) <= {"flood", "disconnect"}
    assert out.result.forfeited_by == BAD
    bot = rec.bots[0]
    assert bot.ended.wait(5)
    assert any(e.code == pb.ERROR_CODE_FLOOD for e in bot.of_kind("error"))
    assert len(bot.of_kind("pong")) <= 64 + 10  # the burst, plus what refilled meanwhile


def test_a_small_burst_of_pings_is_answered_without_a_fault() -> None:
    rec = Recorder()

    def behaviour(address: str, token: str) -> None:
        bot = rec.new(address)
        bot.hello(token)
        for i in range(20):
            bot.send(pb.BotMessage(ping=pb.Ping(nonce=i)))
        play_loop(bot)
        bot.close()

    out = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), _table(behaviour)).outcome
    assert out.faults == ()
    assert [p.nonce for p in rec.bots[0].of_kind("pong")] == list(range(20))


def test_broken_bots_do_not_disturb_another_match() -> None:
    """Two matches on one server at once: flooding, garbage-sending and silent bots in one, a
    clean match in the other, which ends normally with no fault."""

    def flood_and_garbage(address: str, token: str) -> None:
        bot = RawBot(address)
        bot.hello(token)
        for _ in range(400):
            bot.send(pb.BotMessage())
        play_loop(bot, _garbage)
        bot.close()

    async def main() -> dict[str, Scenario]:
        results: dict[str, Scenario] = {}
        async with open_arena_server() as server:
            bad = make_spec("whist", 4, options=SHORT_WHIST, move_ms=300, match_id="bad")
            good = make_spec("whist", 4, options=SHORT_WHIST, match_id="good", seed=9)

            async def one(spec: MatchSpec, behaviours: list[Behaviour | None]) -> None:
                results[spec.match_id] = await play_with(server, spec, behaviours)

            bad_bots: list[Behaviour | None] = [
                flood_and_garbage,
                raw(lambda d, n: None),
                raw(_garbage),
                sdk(),
            ]
            good_bots: list[Behaviour | None] = [sdk(), sdk(), sdk(), sdk()]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(one, bad, bad_bots)
                nursery.start_soon(one, good, good_bots)
        return results

    results = trio.run(main)
    assert results["bad"].outcome.result.reason == "forfeit"
    assert results["good"].outcome.faults == ()
    assert results["good"].outcome.result.reason == "normal"


# --- on the virtual clock: the real servicer, hub and referee under scripted streams --------------


def _virtual(
    spec: MatchSpec,
    script: Script = (),
    *,
    default: Move | None = None,
    empty: bool = False,
    others: Move | None = None,
) -> Played:
    """``spec`` refereed on the virtual clock: East (:data:`BAD`) plays ``script`` (then
    ``default``), or never connects (``empty``); the others play ``others`` (by default their
    first legal action, at once)."""
    bots: list[FakeBot | None] = [
        FakeBot(f"bot{s}", default=others, token=seat.token) for s, seat in enumerate(spec.seats)
    ]
    east = FakeBot("east", script, default=default, token=spec.seats[BAD].token)
    bots[BAD] = None if empty else east
    return run_match(spec, bots)


def test_bot_that_never_answers_times_out_three_times_and_forfeits() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=200, bank_ms=100)
    played = _virtual(spec, default=silent())
    out = played.outcome
    assert fault_kinds(out, BAD) == ["timeout"] * 3
    assert out.result.reason == "forfeit" and out.result.forfeited_by == BAD
    assert out.result.ranks[BAD] == out.result.ranks[BAD + 2] == 2  # East's side loses
    errors = played.bot(BAD).errors
    assert [(e.code, e.fault, e.seat) for e in errors] == [("timeout", "timeout", BAD)] * 3
    assert [e.strikes for e in errors] == [1, 2, 3]
    north_end = played.bot(0).match_end
    assert north_end is not None and north_end.result.reason == "forfeit"
    # The bank is spent by the first timeout: 300 ms, then 200 ms each.
    assert played.virtual_s == pytest.approx(0.7)
    fallbacks = [e for e in out.entries if e["type"] == "decision" and e["fallback"]]
    assert len(fallbacks) == 2  # the third strike forfeits instead of playing on


def test_strict_policy_forfeits_on_the_first_timeout() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=200, policy="strict")
    played = _virtual(spec, default=silent())
    out = played.outcome
    assert fault_kinds(out) == ["timeout"]
    assert out.result.reason == "forfeit" and out.result.forfeited_by == BAD
    assert "timeout" in out.result.summary
    assert played.virtual_s == pytest.approx(0.2)


def test_a_timeout_after_a_wrong_id_says_the_bot_did_answer() -> None:
    # A bot that echoes the wrong request_id gets an unknown_request fault, and then the
    # request it did not answer times out: that fault must not read as a bot that sat idle.
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=200, bank_ms=0)
    out = _virtual(spec, default=wrong_id(1000)).outcome
    mine = [f for f in out.faults if f.seat == BAD]
    assert [f.kind for f in mine] == ["unknown_request", "timeout", "unknown_request"]
    rid = int(mine[1].detail.rsplit(" ", 1)[1].rstrip(")"))
    assert mine[1].detail.endswith(f"(an answer to request {rid + 1000} came instead of {rid})")


def test_a_late_answer_is_only_a_warning() -> None:
    """An answer to a request that already timed out is ignored with an Error, no new strike."""
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=200)
    # Past the 200 ms deadline, while the others' answers (125 ms each) keep the match on.
    played = _virtual(spec, [late(350)], others=answer(after_ms=125))
    assert fault_kinds(played.outcome) == ["timeout"]
    errors = played.bot(BAD).errors
    assert [(e.code, e.fault) for e in errors] == [("timeout", "timeout"), ("unknown_request", "")]
    [stray] = played.bot(BAD).strays
    assert (
        errors[1].request_id == stray.answer.request_id == played.bot(BAD).decisions[0].request_id
    )


def test_a_bot_gone_for_good_faults_after_the_grace_and_forfeits() -> None:
    """East answers 3 decisions, then drops the connection while its 4th request is open and
    never comes back: that request and the next two each wait the reconnection grace (half of
    the 600 ms the clock allows), not the whole move time, then fault."""
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=600)
    played = _virtual(spec, [answer(), answer(), answer(), disconnect()])
    out = played.outcome
    assert fault_kinds(out) == ["disconnect"] * 3
    assert out.result.forfeited_by == BAD
    grace = 600 * RECONNECT_GRACE
    assert {f.detail for f in out.faults} == {
        f"the bot was not connected, and did not come back within {grace:.0f} ms"
    }
    assert played.virtual_s == pytest.approx(3 * grace / 1000)


def test_disconnect_under_strict_policy_forfeits_after_the_grace() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=600, policy="strict")
    played = _virtual(spec, [disconnect()])
    assert fault_kinds(played.outcome) == ["disconnect"]
    assert played.outcome.result.reason == "forfeit"
    assert played.virtual_s == pytest.approx(600 * RECONNECT_GRACE / 1000)


def test_a_bot_that_never_connects_faults_without_waiting_per_move() -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=5000, connect_timeout_s=0.3)
    played = _virtual(spec, empty=True)
    assert fault_kinds(played.outcome) == ["disconnect"] * 3
    assert played.outcome.result.forfeited_by == BAD
    assert played.virtual_s == pytest.approx(0.3)  # the connect timeout, then no move time


@pytest.mark.parametrize(
    ("move", "kind"),
    [(garbage(), "garbage"), (illegal(), "illegal"), (wrong_id(10**9), "unknown_request")],
)
def test_strict_policy_forfeits_on_the_first_fault_of_any_kind(move: Move, kind: str) -> None:
    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=3000, policy="strict")
    played = _virtual(spec, default=move)
    out = played.outcome
    assert fault_kinds(out) == [kind]
    assert out.result.reason == "forfeit" and out.result.forfeited_by == BAD
    assert not any(e["type"] == "decision" and e["fallback"] for e in out.entries)
    assert played.virtual_s == 0.0  # the unknown id forfeits at once, not at the 3 s deadline
