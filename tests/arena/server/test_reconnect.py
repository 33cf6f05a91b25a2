"""A seat whose bot loses its connection has a grace to come back (arena.policy.RECONNECT_GRACE)
before its decision faults; a bot back in time answers as if nothing happened, and the record
says what happened to the seat's connection. On the virtual clock: timings are exact."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading

import pytest
from cardarena.client import BotRun, run_bot

from arena.policy import RECONNECT_GRACE, STRIKES_TO_FORFEIT, FaultKind, FaultPolicy
from arena.server.spec import MatchOutcome, MatchSpec
from reference_bots.catalog import make_bot
from tests.arena.server.fakes import FakeBot, FakeServer, answer, disconnect, run_virtual
from tests.arena.wire import SHORT_WHIST, RawBot, make_spec, play_loop, run_scenario, sdk

MOVE_MS, BANK_MS = 1000, 500
#: The seat that drops out.
LEAVER = 1
#: When its stream breaks: 250 ms into its first decision.
LEAVES_AT_MS = 250.0
#: How long the seat may stay away while it decides.
GRACE_MS = (MOVE_MS + BANK_MS) * RECONNECT_GRACE


def _spec(policy: FaultPolicy = FaultPolicy.LENIENT) -> MatchSpec:
    tokens = [f"token-seat{i}" for i in range(4)]
    return make_spec(
        "whist",
        4,
        options=SHORT_WHIST,
        seed=3,
        policy=policy,
        move_ms=MOVE_MS,
        bank_ms=BANK_MS,
        match_id="reconnect",
        tokens=tokens,
    )


async def _referee(spec: MatchSpec, back_after_ms: float | None) -> tuple[MatchOutcome, FakeBot]:
    """The leaver drops out at its first decision; a new stream of its (the same token) says
    Hello ``back_after_ms`` later (``None``: never); the new stream's bot."""
    server = FakeServer()
    loop = asyncio.get_running_loop()
    newcomer = FakeBot("back", default=answer(after_ms=100), token="token-seat1")
    leaver = FakeBot("leaver", [disconnect(after_ms=LEAVES_AT_MS)], token="token-seat1")
    bots = [
        leaver if s == LEAVER else FakeBot(f"seat{s}", token=f"token-seat{s}") for s in range(4)
    ]
    if back_after_ms is not None:

        def drop() -> None:
            FakeBot.disconnect(leaver)
            loop.call_later(back_after_ms / 1000.0, newcomer.connect, server)

        leaver.disconnect = drop  # type: ignore[method-assign]
    played = await server.play(spec, bots)
    return played.outcome, newcomer


def _connections(out: MatchOutcome) -> list[tuple[int, str]]:
    return [(e["seat"], e["event"]) for e in out.entries if e["type"] == "connection"]  # type: ignore[misc]


def _leaver_timings(out: MatchOutcome) -> list[tuple[float, bool]]:
    return [(t.ms, t.fallback) for t in out.timings if t.seat == LEAVER]


@pytest.mark.parametrize("policy", [FaultPolicy.LENIENT, FaultPolicy.STRICT])
def test_a_bot_back_within_the_grace_answers_its_decision_with_no_fault(
    policy: FaultPolicy,
) -> None:
    back = GRACE_MS - 10
    out, newcomer = run_virtual(_referee(_spec(policy), back))
    assert out.faults == ()
    assert out.result.reason == "normal"
    # The request was sent again to the new stream, which answered it 100 ms later.
    assert newcomer.decisions and len(newcomer.decisions) == len(_leaver_timings(out))
    assert _leaver_timings(out)[0] == (LEAVES_AT_MS + back + 100, False)
    assert _connections(out) == [(LEAVER, "lost"), (LEAVER, "resumed")]


def test_a_bot_back_after_the_grace_is_charged_once_and_plays_on() -> None:
    out, newcomer = run_virtual(_referee(_spec(), GRACE_MS + 10))
    assert [(f.seat, f.kind) for f in out.faults] == [(LEAVER, FaultKind.DISCONNECT)]
    assert out.faults[0].detail == (
        f"the bot was not connected, and did not come back within {GRACE_MS:.0f} ms"
    )
    assert out.result.reason == "normal"
    # Charged when the grace ran out, counted from when it left; its later decisions are its.
    timings = _leaver_timings(out)
    assert timings[0] == (LEAVES_AT_MS + GRACE_MS, True)
    assert all(not fallback for _, fallback in timings[1:]) and len(timings) > 1
    assert len(newcomer.decisions) == len(timings) - 1
    assert _connections(out) == [(LEAVER, "lost"), (LEAVER, "resumed")]


def test_a_bot_that_never_comes_back_waits_the_grace_at_each_decision_then_forfeits() -> None:
    out, _ = run_virtual(_referee(_spec(), None))
    assert [(f.seat, f.kind) for f in out.faults] == [
        (LEAVER, FaultKind.DISCONNECT)
    ] * STRIKES_TO_FORFEIT
    assert (out.result.reason, out.result.forfeited_by) == ("forfeit", LEAVER)
    # Each later decision waits the grace from when it is asked (no bank was used up).
    assert _leaver_timings(out) == [(LEAVES_AT_MS + GRACE_MS, True)] + [(GRACE_MS, True)] * (
        STRIKES_TO_FORFEIT - 2
    )
    assert _connections(out) == [(LEAVER, "lost")]


# --- over a real server: a proxy cuts one bot's connection mid-match ---------------------------


class CuttingProxy:
    """A TCP relay to ``upstream`` that breaks its first connection at the bot's ``cut_at``-th
    write (dropping it: mid-match, that write is an answer, so the seat's request stays open);
    later connections are relayed whole."""

    def __init__(self, upstream: str, cut_at: int) -> None:
        host, port = upstream.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._cut_at = cut_at
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        #: Connections accepted; whether the first was cut.
        self.accepted = 0
        self.cut = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            server = socket.create_connection(self._upstream)
            cut_at = self._cut_at if self.accepted == 1 else None
            threading.Thread(target=self._pump, args=(client, server, cut_at), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, cut_at: int | None) -> None:
        writes = 0
        try:
            while data := src.recv(65536):
                writes += 1
                if writes == cut_at:
                    self.cut = True
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._listener.close()


def test_an_sdk_bot_whose_connection_is_cut_mid_decision_resumes_with_no_fault() -> None:
    proxies: list[CuttingProxy] = []
    runs: list[BotRun] = []

    def through_proxy(address: str, token: str) -> None:
        proxy = CuttingProxy(address, cut_at=12)
        proxies.append(proxy)
        try:
            runs.append(run_bot(make_bot("random", 1), proxy.address, token, matches=1))
        finally:
            proxy.close()

    spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=2000)
    s = run_scenario(spec, [sdk(), through_proxy, sdk(), sdk()])
    assert proxies and proxies[0].cut, "the proxy must have cut the connection mid-match"
    assert s.outcome.faults == ()
    assert s.outcome.result.reason == "normal"
    assert runs and runs[0].connections == 2 and runs[0].matches == 1
    assert _connections(s.outcome) == [(1, "lost"), (1, "resumed")]


def test_a_second_stream_with_a_seats_token_takes_it_over_and_the_record_says_so() -> None:
    """The token is the seat's secret: whoever has it may take the seat over (a bot that
    restarted while its old stream lingers), but never silently."""
    streams: list[RawBot] = []

    def twice(address: str, token: str) -> None:
        first = RawBot(address)
        first.hello(token)
        while (msg := first.recv()) is not None and msg.WhichOneof("kind") != "decision":
            pass
        second = RawBot(address)
        second.hello(token)
        streams.extend([first, second])
        play_loop(second)
        assert first.ended.wait(10)
        for bot in streams:
            bot.close()

    s = run_scenario(make_spec("whist", 4, options=SHORT_WHIST), [sdk(), twice, sdk(), sdk()])
    assert s.outcome.faults == ()
    assert _connections(s.outcome) == [(1, "taken_over")]
    first, second = streams
    assert [e.message for e in first.of_kind("error")] == [
        "superseded by a new connection with the same token"
    ]
    assert second.of_kind("match_start") and second.of_kind("match_end")
