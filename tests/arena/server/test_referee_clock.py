"""The referee's clock, strikes and forfeits, on a virtual clock with scripted bots.

No gRPC, no real sleeping: each match runs on :class:`~tests.arena.server.fakes.VirtualClockLoop`
(time jumps to the next deadline when nothing else can happen) against
:class:`~tests.arena.server.fakes.FakeBot` streams, read by the real servicer and hub, so a time
control of a second per move with a bank costs milliseconds, and every duration the referee
measures is exactly the scripted one. The end-to-end versions with real bots are in
test_faults.py.

Delays are multiples of 125 ms (exact binary fractions of a second), so the clock's float
arithmetic is exact and timings can be compared with ``==``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import pytest
from cardarena.messages import Answer, Decision, MatchStart

from arena.policy import (
    ERROR_CODE,
    RECONNECT_GRACE,
    STRIKES_TO_FORFEIT,
    FaultKind,
    FaultPolicy,
    forfeit_reason,
)
from arena.server.spec import MatchOutcome, MatchSpec
from engine import JSON, OptionValue, get_game
from tests.arena.server.fakes import (
    FakeBot,
    Move,
    Played,
    VirtualClockDeadlock,
    VirtualClockLoop,
    VirtualClockOverrun,
    answer,
    answer_text,
    disconnect,
    garbage,
    illegal,
    late,
    run_match,
    run_virtual,
    silent,
)
from tests.arena.wire import make_spec

#: One deal of whist to one point: 52 decisions, 13 per seat.
SHORT_WHIST: dict[str, OptionValue] = {"points_to_win": 1, "games_per_rubber": 1}
SEATS = 4
#: The scripted bot sits East.
BAD = 1
MOVE_MS = 1000
BANK_MS = 500
#: Real seconds a match may take here: the virtual ones are several times this.
REAL_BUDGET_S = 1.0


def _spec(
    *,
    move_ms: int = MOVE_MS,
    bank_ms: int = BANK_MS,
    policy: FaultPolicy = FaultPolicy.LENIENT,
    connect_timeout_s: float = 10.0,
) -> MatchSpec:
    tokens = [f"token-seat{i}" for i in range(SEATS)]
    return make_spec(
        "whist",
        SEATS,
        options=SHORT_WHIST,
        seed=7,
        policy=policy,
        move_ms=move_ms,
        bank_ms=bank_ms,
        connect_timeout_s=connect_timeout_s,
        match_id="clock",
        tokens=tokens,
    )


def _table(bad: Sequence[Move], *, bad_seat_empty: bool = False) -> list[FakeBot | None]:
    """Prompt bots that play their last legal action (never the fallback, the first), and the
    scripted one at :data:`BAD`, prompt and last-legal past its script."""
    bots: list[FakeBot | None] = [FakeBot(f"seat{i}", default=answer(-1)) for i in range(SEATS)]
    bots[BAD] = None if bad_seat_empty else FakeBot(f"seat{BAD}", bad, default=answer(-1))
    return bots


def _play(spec: MatchSpec, bad: Sequence[Move], *, bad_seat_empty: bool = False) -> Played:
    played = run_match(spec, _table(bad, bad_seat_empty=bad_seat_empty))
    assert played.real_s < REAL_BUDGET_S
    return played


def _decisions(out: MatchOutcome, seat: int) -> list[dict[str, JSON]]:
    return [e for e in out.entries if e["type"] == "decision" and e["seat"] == seat]


def _timings(out: MatchOutcome, seat: int) -> list[tuple[float, bool]]:
    return [(t.ms, t.fallback) for t in out.timings if t.seat == seat]


def _forfeit_events(out: MatchOutcome) -> list[dict[str, JSON]]:
    return [e for e in out.entries if e["type"] == "event" and e["kind"] == "forfeit"]


def _asked_at(bot: FakeBot, decision: Decision) -> float:
    """When ``decision`` reached ``bot`` (loop time)."""
    return next(r.at for r in bot.received if r.message is decision)


def _replay_fallbacks(out: MatchOutcome) -> list[tuple[JSON, str]]:
    """Replay the record's decisions on the engine: for each fallback, the action recorded and
    the engine's fallback action at that point (they must agree)."""
    spec = out.spec
    game = get_game(spec.game)
    state = game.new_match(game.configure(spec.players, spec.options), spec.seed)
    pairs: list[tuple[JSON, str]] = []
    for entry in out.entries:
        if entry["type"] != "decision":
            continue
        assert entry["seat"] == state.to_move
        action = entry["action"]
        assert isinstance(action, str)
        if entry["fallback"]:
            pairs.append((action, state.fallback_action().text))
        state.apply(action)
    return pairs


# --- the virtual clock itself -------------------------------------------------------------


def test_the_virtual_clock_jumps_to_each_timer_in_order_without_sleeping() -> None:
    async def main() -> tuple[float, list[tuple[str, float]]]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualClockLoop)
        fired: list[tuple[str, float]] = []
        loop.call_later(2.5, lambda: fired.append(("b", loop.time())))
        loop.call_later(1.0, lambda: fired.append(("a", loop.time())))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), 30.0)
        fired.append(("wait_for", loop.time()))
        await asyncio.sleep(3600)
        assert (loop.jumps, loop.jumped_s) == (4, 3630.0)  # one jump per timer waited for
        return loop.time(), fired

    began = time.perf_counter()
    now, fired = run_virtual(main())
    assert time.perf_counter() - began < REAL_BUDGET_S
    assert now == 3630.0
    assert fired == [("a", 1.0), ("b", 2.5), ("wait_for", 30.0)]


def test_the_virtual_clock_reports_a_loop_that_would_wait_forever() -> None:
    async def main() -> None:
        await asyncio.get_running_loop().create_future()  # nothing will ever set it

    with pytest.raises(VirtualClockDeadlock):
        run_virtual(main(), idle_real_s=0.0)


def test_the_virtual_clock_stops_a_loop_that_spends_real_time() -> None:
    async def main() -> None:
        time.sleep(0.02)  # real time, which the virtual clock cannot skip
        await asyncio.sleep(1)

    with pytest.raises(VirtualClockOverrun):
        run_virtual(main(), real_budget_s=0.01)


# --- the bank ----------------------------------------------------------------------------


def test_an_answer_past_the_move_time_draws_exactly_the_overrun_from_the_bank() -> None:
    # 1250 ms: 250 over; 1000 ms: nothing over; 1125 ms: 125 over. 500 - 250 - 125 = 125.
    played = _play(_spec(), [late(1250), late(MOVE_MS), late(1125)])
    out, bot = played.outcome, played.bot(BAD)
    assert out.faults == ()
    assert out.result.reason == "normal"
    assert [d.bank_ms for d in bot.decisions[:4]] == [500, 250, 250, 125]
    assert {d.deadline_ms for d in bot.decisions} == {MOVE_MS}
    assert all(d.bank_ms == 125 for d in bot.decisions[3:])
    assert played.match.slots[BAD].bank_ms == 125.0
    assert [s.bank_ms for i, s in enumerate(played.match.slots) if i != BAD] == [500.0] * 3
    timings = _timings(out, BAD)
    assert timings[:4] == [(1250.0, False), (1000.0, False), (1125.0, False), (0.0, False)]
    assert bot.errors == [] and bot.strays == []
    # Nothing but the scripted waits took any (virtual) time.
    assert played.virtual_s == (1250 + 1000 + 1125) / 1000


def test_no_answer_within_move_time_plus_bank_is_a_timeout_and_empties_the_bank() -> None:
    # The answer would come 250 ms after the deadline (move + bank = 1500 ms), while the
    # seat's next request (answered in 500 ms) is open.
    played = _play(_spec(), [late(MOVE_MS + BANK_MS + 250), late(500)])
    out, bot = played.outcome, played.bot(BAD)
    assert [(f.seat, f.kind) for f in out.faults] == [(BAD, FaultKind.TIMEOUT)]
    assert out.result.reason == "normal"  # one strike: play on
    # Charged at the deadline exactly, and the referee played the fallback for it.
    assert _timings(out, BAD)[0] == (float(MOVE_MS + BANK_MS), True)
    assert _replay_fallbacks(out) == [(_decisions(out, BAD)[0]["action"],) * 2]
    first, second = bot.decisions[:2]
    assert first.bank_ms == BANK_MS
    assert second.bank_ms == 0 and second.deadline_ms == MOVE_MS
    assert played.match.slots[BAD].bank_ms == 0.0
    error, warning = bot.errors
    assert error.code == ERROR_CODE[FaultKind.TIMEOUT]
    assert (error.fault, error.strikes, error.seat) == (FaultKind.TIMEOUT, 1, BAD)
    assert error.request_id == first.request_id
    # The late answer found its request closed: it was not played, only warned of (no strike).
    [stray] = bot.strays
    assert stray.answer.request_id == first.request_id
    assert (warning.code, warning.fault, warning.strikes) == ("unknown_request", "", 0)
    assert warning.request_id == first.request_id
    assert _timings(out, BAD)[1] == (500.0, False)
    assert stray.at == _asked_at(bot, first) + (MOVE_MS + BANK_MS + 250) / 1000


# --- the fault policy -------------------------------------------------------------------


def test_lenient_policy_forfeits_on_the_third_strike_not_before() -> None:
    played = _play(_spec(), [silent()] * STRIKES_TO_FORFEIT)
    out, bot = played.outcome, played.bot(BAD)
    assert [(f.seat, f.kind) for f in out.faults] == [(BAD, FaultKind.TIMEOUT)] * STRIKES_TO_FORFEIT
    whys = [
        forfeit_reason(FaultPolicy.LENIENT, n, f.kind, f.detail)
        for n, f in enumerate(out.faults, 1)
    ]
    assert whys[:-1] == [None] * (STRIKES_TO_FORFEIT - 1)
    assert whys[-1] is not None
    # The strikes before the last were played through (fallbacks); the last forfeits.
    assert len(bot.decisions) == STRIKES_TO_FORFEIT
    assert [e.strikes for e in bot.errors] == list(range(1, STRIKES_TO_FORFEIT + 1))
    assert _timings(out, BAD) == [(float(MOVE_MS + BANK_MS), True)] + [(float(MOVE_MS), True)] * (
        STRIKES_TO_FORFEIT - 2
    )
    fallbacks = _replay_fallbacks(out)
    assert len(fallbacks) == STRIKES_TO_FORFEIT - 1
    assert all(recorded == expected for recorded, expected in fallbacks)
    result = out.result
    assert (result.reason, result.forfeited_by) == ("forfeit", BAD)
    assert result.summary.endswith(whys[-1])
    [event] = _forfeit_events(out)
    assert (event["seat"], event["why"]) == (BAD, whys[-1])
    # Everyone is told, with the faults.
    for seat in range(SEATS):
        end = played.bot(seat).match_end
        assert end is not None
        assert end.result.forfeited_by == BAD and end.faults == out.faults
    # The bank went on the first timeout, the move time on each of the others.
    assert played.virtual_s == (MOVE_MS + BANK_MS + MOVE_MS * (STRIKES_TO_FORFEIT - 1)) / 1000


@pytest.mark.parametrize(
    ("move", "kind"),
    [
        (silent(), FaultKind.TIMEOUT),
        (illegal(), FaultKind.ILLEGAL),
        (answer_text("play:nonsense"), FaultKind.ILLEGAL),
        (garbage(), FaultKind.GARBAGE),
        (disconnect(250), FaultKind.DISCONNECT),
    ],
)
def test_strict_policy_forfeits_on_the_first_fault(move: Move, kind: FaultKind) -> None:
    played = _play(_spec(policy=FaultPolicy.STRICT), [move])
    out = played.outcome
    [fault] = out.faults
    assert (fault.seat, fault.kind) == (BAD, kind)
    why = forfeit_reason(FaultPolicy.STRICT, 1, fault.kind, fault.detail)
    assert why is not None
    assert (out.result.reason, out.result.forfeited_by) == ("forfeit", BAD)
    [event] = _forfeit_events(out)
    assert event["why"] == why
    assert _replay_fallbacks(out) == []  # forfeited, not played on
    assert len(played.bot(BAD).decisions) == 1


# --- what faults are charged as ------------------------------------------------------------


def test_illegal_index_and_garbage_are_charged_and_the_bot_told_its_strikes() -> None:
    played = _play(_spec(), [answer(0), illegal(125), garbage(250)])
    out, bot = played.outcome, played.bot(BAD)
    kinds = [FaultKind.ILLEGAL, FaultKind.GARBAGE]
    assert [(f.seat, f.kind) for f in out.faults] == [(BAD, k) for k in kinds]
    assert out.result.reason == "normal"  # two strikes: play on
    asked = bot.decisions[1:3]
    assert [(e.code, e.fault, e.strikes, e.seat) for e in bot.errors] == [
        (ERROR_CODE[k], k, n, BAD) for n, k in enumerate(kinds, 1)
    ]
    assert [e.request_id for e in bot.errors] == [d.request_id for d in asked]
    assert {e.match_id for e in bot.errors} == {out.spec.match_id}
    # The illegal index names the legal range the bot was offered.
    assert f"{len(asked[0].legal)}" in out.faults[0].detail
    # Charged when the answer came, and played through with the fallback.
    assert _timings(out, BAD)[:3] == [(0.0, False), (125.0, True), (250.0, True)]
    assert [a == b for a, b in _replay_fallbacks(out)] == [True, True]
    assert played.match.slots[BAD].strikes == 2
    # Only the faulting bot hears of it before the end.
    assert all(played.bot(s).errors == [] for s in range(SEATS) if s != BAD)


def test_a_negative_index_is_illegal_not_an_index_from_the_end() -> None:
    # The wire's index is unsigned; an Answer built in-process is not, and Python's -1 would
    # quietly be the last legal action.
    bots = _table([])
    bad = bots[BAD]
    assert bad is not None

    def negative(decision: Decision, n: int) -> Move:
        if n == 0:
            asyncio.get_running_loop().call_soon(bad.deliver, Answer(decision.request_id, -1))
            return silent()
        return answer(-1)

    bad.script = negative
    played = run_match(_spec(), bots)
    out = played.outcome
    assert [(f.seat, f.kind) for f in out.faults] == [(BAD, FaultKind.ILLEGAL)]
    assert "-1 is out of range" in out.faults[0].detail
    assert _timings(out, BAD)[0] == (0.0, True)  # the referee played the fallback at once


def test_faults_of_different_kinds_add_up_to_a_forfeit() -> None:
    script = [illegal(), answer_text("play:nonsense"), garbage()]
    played = _play(_spec(), script)
    out, bot = played.outcome, played.bot(BAD)
    kinds = [FaultKind.ILLEGAL, FaultKind.ILLEGAL, FaultKind.GARBAGE][:STRIKES_TO_FORFEIT]
    assert [f.kind for f in out.faults] == kinds
    assert [e.strikes for e in bot.errors] == list(range(1, STRIKES_TO_FORFEIT + 1))
    assert (out.result.reason, out.result.forfeited_by) == ("forfeit", BAD)
    last = out.faults[-1]
    assert _forfeit_events(out)[0]["why"] == forfeit_reason(
        FaultPolicy.LENIENT, STRIKES_TO_FORFEIT, last.kind, last.detail
    )


def test_a_disconnect_while_deciding_is_charged_and_the_empty_seat_faults_on() -> None:
    played = _play(_spec(), [disconnect(250)])
    out, bot = played.outcome, played.bot(BAD)
    assert [(f.seat, f.kind) for f in out.faults] == [
        (BAD, FaultKind.DISCONNECT)
    ] * STRIKES_TO_FORFEIT
    assert bot.disconnected and bot.stream_ended
    assert len(bot.decisions) == 1 and bot.errors == []  # gone: told nothing more
    assert played.match.slots[BAD].conn is None
    # It left 250 ms in and had half its 1.5 s (move time and bank) to come back: charged at
    # 1000 ms; each later decision waits the same grace for it, from when it is asked.
    grace = (MOVE_MS + BANK_MS) * RECONNECT_GRACE
    assert _timings(out, BAD) == [(250.0 + grace, True)] + [(grace, True)] * (
        STRIKES_TO_FORFEIT - 2
    )
    assert (out.result.reason, out.result.forfeited_by) == ("forfeit", BAD)
    assert played.virtual_s == (250.0 + grace * STRIKES_TO_FORFEIT) / 1000.0
    assert [(e["seat"], e["event"]) for e in out.entries if e["type"] == "connection"] == [
        (BAD, "lost")
    ]


def test_a_bot_that_never_connects_is_waited_for_then_charged_on_each_decision() -> None:
    played = _play(_spec(connect_timeout_s=5.0), [], bad_seat_empty=True)
    out = played.outcome
    assert [(f.seat, f.kind) for f in out.faults] == [
        (BAD, FaultKind.DISCONNECT)
    ] * STRIKES_TO_FORFEIT
    assert (out.result.reason, out.result.forfeited_by) == ("forfeit", BAD)
    # The match started at the connect timeout exactly, and took no time after it.
    assert [r.at for r in played.bot(0).received if isinstance(r.message, MatchStart)] == [5.0]
    assert played.virtual_s == 5.0


# --- exact virtual timings -----------------------------------------------------------------


def test_recorded_decision_times_are_exactly_the_scripted_delays() -> None:
    # Every seat answers late by its own pattern: 125 ms steps, within the move time.
    def delay(seat: int, n: int) -> int:
        return 125 * (seat + 1) + 125 * (n % 3)

    def script(seat: int) -> Callable[[Decision, int], Move]:
        return lambda decision, n: late(delay(seat, n), index=-1)

    bots: list[FakeBot | None] = [FakeBot(f"seat{s}", script(s)) for s in range(SEATS)]
    began = time.perf_counter()
    played = run_match(_spec(), bots)
    real_s = time.perf_counter() - began
    out = played.outcome
    assert out.faults == () and out.result.reason == "normal"
    asked = [0] * SEATS
    expected: list[float] = []
    for t in out.timings:
        expected.append(float(delay(t.seat, asked[t.seat])))
        asked[t.seat] += 1
    assert len(expected) == 52
    assert [t.ms for t in out.timings] == expected
    assert [e["ms"] for e in out.entries if e["type"] == "decision"] == expected
    # Each request reached its bot the instant the previous answer was read.
    for s in range(SEATS):
        bot = played.bot(s)
        assert [a.at for a in bot.sent] == [
            _asked_at(bot, d) + delay(s, n) / 1000 for n, d in enumerate(bot.decisions)
        ]
        assert all(a.open for a in bot.sent)
    # Within the move time: no bank drawn.
    assert [s.bank_ms for s in played.match.slots] == [float(BANK_MS)] * SEATS
    # The match took the sum of the delays of virtual time (about 20 s), and nearly no real time.
    assert played.virtual_s == sum(expected) / 1000
    assert played.virtual_s > 15 and real_s < REAL_BUDGET_S
