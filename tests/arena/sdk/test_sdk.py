"""The Python SDK and ``arena bot``: Welcome/Rejected, reconnection with backoff, a clean exit
when the server goes away, and strategies that see the engine's own observation dicts."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any

import cardarena.client
import grpc
import pytest
import trio
from cardarena import messages
from cardarena._pb import arena_pb2 as pb
from cardarena._pb import arena_pb2_grpc as pb_grpc
from cardarena.bot import Bot, RandomBot
from cardarena.client import BotError, BotRejected, BotRun, run_bot
from cardarena.messages import Action, Result

from arena.protocol import codec
from arena.server import open_arena_server
from engine import get_game
from reference_bots.catalog import RulesOrRandomBot
from tests.arena.run_arena import arena_error
from tests.arena.wire import SHORT_WHIST, join_all, make_spec, play_with, raw, sdk
from tests.helpers import free_port
from tests.waiting import async_wait_until, wait_until

ARENA = str(Path(sys.executable).parent / "arena")


class Recording(Bot):
    """Checks every observation against the engine's view of the same seat."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__(0)
        self.seen: list[dict[str, Any]] = []
        self.starts: list[tuple[str, int, dict[str, Any]]] = []

    def start_match(self, game: str, seat: int, options: Mapping[str, Any]) -> None:
        self.starts.append((game, seat, dict(options)))

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        self.seen.append(dict(observation))
        assert all(isinstance(a, Action) for a in legal)
        return 0


def test_the_bot_sees_the_engine_observation_and_the_options_as_sent() -> None:
    """Every observation dict the SDK hands the bot equals the engine's ``to_dict()`` for that
    seat at that moment (rebuilt by replaying the record)."""
    bot = Recording()
    outcomes = []

    def behaviour(address: str, token: str) -> None:
        run_bot(bot, address, token, matches=1)

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=3)
            scenario = await play_with(server, spec, [behaviour, sdk(), sdk(), sdk()])
            outcomes.append(scenario.outcome)

    trio.run(main)
    # The options as MatchStart carries them (text): the SDK knows no game.
    assert bot.starts == [("whist", 0, {"points_to_win": "1", "games_per_rubber": "1"})]
    game = get_game("whist")
    state = game.new_match(game.configure(None, SHORT_WHIST), 3)
    expected = []
    for e in outcomes[0].entries:
        if e["type"] == "decision":
            if e["seat"] == 0:
                expected.append(state.observation(0).to_dict())
            state.apply(str(e["action"]))
    assert bot.seen == expected and len(expected) == 13


class Hooked(Bot):
    """Keeps what the SDK's hooks and ``turn`` told it."""

    name = "hooked"

    def __init__(self) -> None:
        super().__init__(0)
        self.events: list[tuple[str, str, dict[str, Any], bool]] = []
        self.turns: list[Any] = []
        self.ends: list[tuple[str, Result]] = []
        self.events_before: list[int] = []  # events seen when each decision came

    def on_event(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        self.events.append((match_id, kind, dict(data), private))

    def end_match(self, match_id: str, result: Result) -> None:
        self.ends.append((match_id, result))

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        self.turns.append(self.turn)
        self.events_before.append(len(self.events))
        return 0


def test_the_hooks_see_every_event_in_order_the_turn_and_the_end() -> None:
    """``on_event`` gets the events seat 0 may see, in order, each before the decision that
    follows it; ``turn`` names the match, seat, table and clock; ``end_match`` the result."""
    bot = Hooked()
    outcomes = []

    def behaviour(address: str, token: str) -> None:
        run_bot(bot, address, token, matches=1)

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=5)
            scenario = await play_with(server, spec, [behaviour, sdk(), sdk(), sdk()])
            outcomes.append(scenario.outcome)

    trio.run(main)
    outcome = outcomes[0]
    game = get_game("whist")
    state = game.new_match(game.configure(None, SHORT_WHIST), 5)
    seen_at_decisions = []
    for e in outcome.entries:
        if e["type"] == "decision":
            if e["seat"] == 0:
                seen_at_decisions.append(len(state.visible_events(0)))
            state.apply(str(e["action"]))
    visible = state.visible_events(0)
    match_id = outcome.spec.match_id
    got = [(kind, data, private) for mid, kind, data, private in bot.events]
    assert {mid for mid, *_ in bot.events} == {match_id}
    assert got == [(v.kind, dict(v.data), v.to is not None) for v in visible]
    assert bot.events_before == seen_at_decisions
    assert [t.match_id for t in bot.turns] == [match_id] * len(bot.turns) and bot.turns
    assert {(t.seat, t.seats) for t in bot.turns} == {(0, 4)}
    assert all(t.deadline_ms > 0 and t.elapsed_ms() >= 0 for t in bot.turns)
    assert bot.turns[0].options == {"points_to_win": "1", "games_per_rubber": "1"}
    assert [(mid, r.summary) for mid, r in bot.ends] == [(match_id, outcome.result.summary)]


def test_a_bot_without_an_event_hook_gets_no_events_decoded() -> None:
    assert Hooked.wants_events() and not Recording.wants_events()


def test_unknown_token_raises_bot_rejected() -> None:
    async def main() -> None:
        async with open_arena_server() as server:

            def client() -> None:
                with pytest.raises(BotRejected, match="unknown token"):
                    run_bot(RandomBot(1), server.address, "nope", matches=1)

            await trio.to_thread.run_sync(client)

    trio.run(main)


def test_arena_bot_exits_with_one_line_when_rejected() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            cmd = [ARENA, "bot", "random", "--server", server.address, "--token", "nope"]
            proc = await trio.to_thread.run_sync(
                lambda: subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            )
            assert proc.returncode == 2
            assert proc.stderr.strip().splitlines()[-1] == (
                "arena: error: the server rejected the bot: unknown token"
            )

    trio.run(main)


def test_reconnects_with_backoff_until_the_server_is_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot starts before the server listens; it retries, connects, and plays its match."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    runs: list[BotRun] = []
    spec = make_spec("whist", 4, options=SHORT_WHIST, tokens=["a", "b", "c", "d"])
    # How each of the bot's connections ended: (welcomed, why it stopped, resume token).
    attempts: list[tuple[bool, str | None, str]] = []
    play_stream = cardarena.client._play_stream

    def recorded(*args: Any) -> tuple[bool, str | None, str]:
        attempts.append(play_stream(*args))
        return attempts[-1]

    monkeypatch.setattr(cardarena.client, "_play_stream", recorded)

    def early_bot() -> None:
        runs.append(run_bot(RandomBot(1), address, "a", matches=1, give_up_s=20))

    early = threading.Thread(target=early_bot, daemon=True)
    early.start()
    wait_until(lambda: attempts, 20, what="the bot's first attempt to connect")
    assert attempts[0] == (False, None, "")  # nobody listened: it will try again

    async def main() -> None:
        async with open_arena_server(address) as server:
            scenario = await play_with(server, spec, [None, sdk(), sdk(), sdk()])
            assert scenario.outcome.faults == ()
            await trio.to_thread.run_sync(join_all, [early])

    trio.run(main)
    assert runs and runs[0].matches == 1 and runs[0].connections >= 2
    assert runs[0].stopped == "matches"


def test_exits_cleanly_when_the_server_goes_away() -> None:
    runs: list[BotRun] = []

    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("waiting")
            address = server.address
            idle: list[str | None] = []  # the tokens of the bots welcomed with nothing to play
            server.idle_hook = lambda conn: idle.append(conn.token)

            def bot() -> None:
                runs.append(run_bot(RandomBot(1), address, "waiting", give_up_s=0.8))

            thread = threading.Thread(target=bot, daemon=True)
            thread.start()
            await async_wait_until(lambda: idle, 10, what="the server to welcome the bot")
            assert idle == ["waiting"]
        start = time.monotonic()
        await trio.to_thread.run_sync(join_all, [thread])
        assert time.monotonic() - start < 5

    trio.run(main)
    # The server shut down cleanly, ending the stream between matches: nothing more to play.
    assert runs[0].stopped == "ended" and runs[0].matches == 0
    assert runs[0].welcomes == 1
    # Never welcomed at all is told apart.
    never = run_bot(RandomBot(1), "127.0.0.1:1", "t", give_up_s=0.2)
    assert (never.stopped, never.welcomes, never.matches) == ("unreachable", 0, 0)


@pytest.mark.slow
def test_gives_up_when_the_server_dies() -> None:
    # Killed, the server ends no stream: it breaks. The bot tries again for give_up_s, then stops.
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "arena"), "serve", "--listen", f"127.0.0.1:{port}",
         "--log-level", "info"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    runs: list[BotRun] = []
    watchdog = threading.Timer(30, server.kill)  # ends the wait below if no Hello ever comes
    watchdog.start()
    try:
        assert server.stderr is not None
        thread = threading.Thread(
            target=lambda: runs.append(run_bot(RandomBot(1), f"127.0.0.1:{port}", give_up_s=1.0)),
            daemon=True,
        )
        thread.start()
        # Welcomed, the bot waits in the lobby for three more players.
        assert any("bot welcomed" in line for line in server.stderr)
    finally:
        watchdog.cancel()
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    thread.join(15)
    assert runs and runs[0].stopped == "server gone" and runs[0].welcomes == 1


@pytest.mark.slow
def test_resumes_a_match_after_losing_the_connection() -> None:
    """The server drops North's stream right after North decided; the SDK reconnects within the
    backoff and North plays on without a single fault."""
    run: list[BotRun] = []

    def slow(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
        time.sleep(0.1)  # slow on purpose: the match is still on when North comes back
        return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=0))

    def north(address: str, token: str) -> None:
        run.append(run_bot(RulesOrRandomBot(1), address, token, matches=1))

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, move_ms=3000)
            match = server.register(spec)

            async def kick() -> None:
                await async_wait_until(
                    lambda: any(t.seat == 0 for t in match.timings()),
                    30,
                    interval=0.002,
                    what="North's first decision",
                )
                assert server.disconnect(spec.seats[0].token)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(kick)
                scenario = await play_with(server, spec, [north, raw(slow), raw(slow), raw(slow)])
            assert scenario.outcome.faults == ()

    trio.run(main)
    assert run[0].connections == 2 and run[0].matches == 1


class Broken(Bot):
    name = "broken"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        raise RuntimeError("strategy bug")


def test_a_strategy_error_costs_one_move_not_the_match() -> None:
    def behaviour(address: str, token: str) -> None:
        run_bot(Broken(), address, token, matches=1)

    spec = make_spec("whist", 4, options=SHORT_WHIST)

    async def main() -> None:
        async with open_arena_server() as server:
            scenario = await play_with(server, spec, [behaviour, sdk(), sdk(), sdk()])
            assert scenario.outcome.faults == ()
            assert scenario.outcome.result.reason == "normal"

    trio.run(main)


class _Scripted(pb_grpc.ArenaServicer):
    """A stand-in server (not the arena): records the Hello, then plays one whist decision in a
    lean DecisionRequest that carries the match's events so far, then ends the match."""

    def __init__(self) -> None:
        game = get_game("whist")
        state = game.new_match(game.configure(), 4)
        rng = random.Random(4)
        while state.to_move != 0:
            state.apply(rng.choice(state.legal_actions()))
        self.observation = state.observation(0).to_dict()
        events = [
            codec.plain_to_proto(codec.event_to_plain("m1", seq, e))
            for seq, e in enumerate(state.events)
            if e.visible_to(0)
        ]
        self.script = [
            codec.plain_to_proto(messages.Welcome("scripted", "s1")),
            codec.plain_to_proto(
                messages.MatchStart(
                    "m1",
                    "whist",
                    game.version,
                    {},
                    (0,),
                    (),
                    messages.TimeControl(),
                    "lenient",
                    1,
                )
            ),
        ]
        self.decision = codec.bytes_to_proto(
            codec.decision_to_bytes(
                77,
                "m1",
                0,
                "whist",
                state.observation(0),
                state.legal_actions(),
                1000,
                1000,
                events=[m.event.SerializeToString() for m in events],
                text=False,
                json=False,
            )
        )
        self.end = codec.plain_to_proto(messages.MatchEnd("m1", Result((1.0,), (1,))))
        self.hello: pb.Hello | None = None
        self.answer: pb.Action | None = None

    def Play(
        self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.ServerMessage]:
        self.hello = next(request_iterator).hello
        yield from self.script
        yield self.decision
        self.answer = next(request_iterator).action
        yield self.end


def test_sdk_asks_for_lean_messages_and_plays_a_decision_that_carries_events() -> None:
    servicer = _Scripted()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    bot = Recording()
    try:
        run = run_bot(bot, f"127.0.0.1:{port}", "tok", matches=1, give_up_s=5)
    finally:
        server.stop(None)
    assert servicer.hello is not None
    assert (servicer.hello.batch_events, servicer.hello.omit_text, servicer.hello.omit_json) == (
        True,
        True,
        True,
    )
    assert len(servicer.decision.decision.events) > 1
    assert servicer.decision.decision.observation.json == ""  # the bot reads the typed message
    assert bot.seen == [servicer.observation]
    assert servicer.answer is not None and servicer.answer.request_id == 77
    assert (run.decisions, run.matches, run.errors) == (1, 1, 0)


class Draws(Bot):
    """Remembers the first number its generator gives in each decision."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.draws: list[float] = []

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        self.draws.append(self.rng.random())
        return 0


def _play_scripted(bot: Bot) -> _Scripted:
    servicer = _Scripted()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        run_bot(bot, f"127.0.0.1:{port}", "tok", matches=1, give_up_s=5)
    finally:
        server.stop(None)
    return servicer


def test_run_bot_seeds_an_unseeded_bot_from_each_match_bot_seed() -> None:
    # The script's MatchStart says bot_seed 1: whatever the generator did before, the match
    # starts from that seed, so a bot plays the same moves in a fresh or a reused process.
    bot = Draws()
    bot.rng.random()
    servicer = _play_scripted(bot)
    bot_seed = servicer.script[-1].match_start.bot_seed
    assert bot_seed and bot.draws == [random.Random(bot_seed).random()]


def test_run_bot_leaves_a_bot_the_author_seeded_alone() -> None:
    bot = Draws(seed=99)
    _play_scripted(bot)
    assert bot.seeded and bot.draws == [random.Random(99).random()]


@pytest.mark.slow
def test_arena_bot_that_never_reaches_a_server_says_so_and_fails() -> None:
    # Silence and exit status 0 read as "played and done": a typo in --server must not.
    line = arena_error("bot", "random", "--server", "127.0.0.1:1", "--give-up", "0.3")
    assert line == "arena: error: no arena server answered at 127.0.0.1:1 within 0.3 s"


def test_run_bot_inside_a_running_asyncio_loop_is_refused_in_words() -> None:
    # run_bot blocks and runs its own grpc.aio loop: on a thread already running one it would
    # fail deep inside asyncio; it says what to do instead, before connecting anywhere.
    async def main() -> None:
        with pytest.raises(BotError, match="call it where no asyncio loop runs"):
            run_bot(RandomBot(1), "127.0.0.1:1", "t", give_up_s=0.1)

    asyncio.run(main())


@pytest.mark.slow
def test_ctrl_c_stops_arena_bot_in_one_line_while_playing_or_reconnecting() -> None:
    # run_bot runs each connection on an asyncio loop of its own: Ctrl-C must still end
    # `arena bot` as any arena command ends, whether it is connected or between attempts.
    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("waiting")  # welcomed, then waits for a match that never comes

            def interrupted(sign: str, *target: str) -> tuple[int | None, str]:
                """Start `arena bot`, wait until it logs ``sign``, then Ctrl-C it."""
                bot = subprocess.Popen(
                    [ARENA, "bot", "random", *target, "--give-up", "30", "--log-level", "info"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    # A child of a non-interactive shell may inherit SIGINT ignored; a user's
                    # Ctrl-C is not.
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                )
                assert bot.stderr is not None
                stderr = bot.stderr
                lines: list[str] = []

                def read() -> None:
                    for line in stderr:
                        lines.append(line)

                def logged() -> bool:
                    assert bot.poll() is None, "".join(lines)[-2000:]
                    return any(sign in line for line in lines)

                reader = threading.Thread(target=read, daemon=True)
                reader.start()
                try:
                    wait_until(logged, 30, what=f"`arena bot` to log {sign}")
                    bot.send_signal(signal.SIGINT)
                    bot.wait(timeout=20)
                finally:
                    if bot.poll() is None:
                        bot.kill()
                        bot.wait()
                reader.join(10)
                return bot.returncode, "".join(lines)

            for sign, target in (
                # Connected: welcomed, it waits for a match.
                ('"event": "welcomed"', ("--server", server.address, "--token", "waiting")),
                # Between two attempts to reach a server that is not there.
                ('"event": "connection lost"', ("--server", "127.0.0.1:1")),
            ):
                code, err = await trio.to_thread.run_sync(interrupted, sign, *target)
                assert code == 130, err[-2000:]
                assert "Traceback" not in err, err[-2000:]
                assert err.strip().splitlines()[-1] == "arena: interrupted"

    trio.run(main)
