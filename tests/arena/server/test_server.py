"""The arena server over real gRPC on loopback: full matches of every game, authentication,
no private information on the wire, spectators."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trio
from cardarena import codec as bot_codec
from cardarena import messages
from cardarena._pb import arena_pb2 as pb
from cardarena._pb import arena_pb2_grpc as pb_grpc
from cardarena.client import run_bot

from arena.protocol import spectator
from arena.seeds import seat_seed
from arena.server import MatchOutcome, MatchSpec, open_arena_server
from arena.server.service import NOT_SHOWN
from engine import JSON, MatchState, game_ids, get_game
from reference_bots.catalog import make_bot
from tests.arena.wire import (
    SHORT_WHIST,
    RawBot,
    Recorder,
    join_all,
    make_spec,
    play_with,
    raw,
    run_scenario,
    sdk,
)


def _replay(game_id: str, seed: int, entries: list[dict[str, JSON]]) -> MatchState:
    game = get_game(game_id)
    state = game.new_match(game.configure(), seed)
    for e in entries:
        if e["type"] == "decision":
            state.apply(str(e["action"]))
    return state


@pytest.mark.parametrize("game_id", list(game_ids()))
def test_full_match_over_grpc(game_id: str) -> None:
    """A whole match with default options between the reference bots (rules where a strategy
    exists), through the Python SDK: no faults, and the record replays to the same result."""
    game = get_game(game_id)
    seats = game.num_seats(game.configure())
    behaviours = [sdk("rules" if i % 2 == 0 else "random", seed=i) for i in range(seats)]
    spec = make_spec(game_id, seats, seed=11, move_ms=5000, bank_ms=5000)
    out = run_scenario(spec, behaviours).outcome
    assert out.faults == ()
    assert out.result.reason == "normal"
    decisions = [e for e in out.entries if e["type"] == "decision"]
    assert len(decisions) == len(out.timings) > 0
    assert not any(e["fallback"] for e in decisions)
    replayed = _replay(game_id, 11, out.entries)
    assert replayed.result() == out.result
    events = [e for e in out.entries if e["type"] == "event"]
    assert events == [{"type": "event", **ev.to_dict()} for ev in replayed.events]
    header = json.loads(json.dumps(out.header))
    assert header["game"] == game_id and header["seed"] == 11
    assert header["game_version"] == game.version
    assert [s["bot_name"] for s in header["seats"]] == [f"bot{i}" for i in range(seats)]
    assert out.result_dict()["faults"] == []


CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")


def test_no_private_information_on_the_wire() -> None:
    """Everything North receives, checked against the engine's hands: an observation never
    names a card another seat holds unseen, every event North gets is public or its own, and it
    gets all of those."""
    rec = Recorder()
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=21)
    out = run_scenario(spec, [raw(rec=rec), sdk(), sdk(), sdk()]).outcome
    assert out.faults == ()
    north = rec.bots[0]
    game = get_game("whist")
    state = game.new_match(game.configure(None, SHORT_WHIST), 21)
    hidden_at_north_turns: list[set[str]] = []
    own_hands: list[list[str]] = []
    for e in out.entries:
        if e["type"] != "decision":
            continue
        if e["seat"] == 0:
            views = [json.loads(json.dumps(state.observation(s).to_dict())) for s in range(4)]
            hidden: set[str] = set()
            for o in (1, 2, 3):
                hidden |= set(views[o]["hand"])
            if views[0]["turn_up_in_hand"]:  # the dealer's turn-up is face up: public
                hidden.discard(views[0]["turn_up"])
            hidden_at_north_turns.append(hidden)
            own_hands.append(views[0]["hand"])
        state.apply(str(e["action"]))
    requests = north.of_kind("decision")
    assert len(requests) == len(hidden_at_north_turns) == 13
    for request, hidden, hand in zip(requests, hidden_at_north_turns, own_hands, strict=True):
        wire_text = str(request) + request.observation.json + request.observation.text
        leaked = set(CARD.findall(wire_text)) & hidden
        assert not leaked, f"North was sent hidden cards {leaked}"
        assert list(request.observation.whist.hand) == hand
    events = north.of_kind("event")
    # Numbered over what North may see: a gap would tell of an event it may not.
    visible = [e for e in state.events if e.visible_to(0)]
    assert visible and [ev.seq for ev in events] == list(range(len(visible)))
    for ev in events:
        original = visible[ev.seq]
        assert ev.kind == original.kind
        assert json.loads(ev.json) == dict(original.data)
        assert ev.private == (original.to is not None)
    assert all(e.to is None or e.to == (0,) for e in visible)


def test_unknown_token_is_rejected() -> None:
    async def main() -> None:
        async with open_arena_server() as server:

            def client() -> RawBot:
                bot = RawBot(server.address)
                bot.hello("not-a-token")
                assert bot.ended.wait(10)
                bot.close()
                return bot

            bot = await trio.to_thread.run_sync(client)
            assert [m.WhichOneof("kind") for m in bot.received] == ["rejected"]
            assert bot.received[0].rejected.reason == "unknown token"
            assert bot.status == grpc.StatusCode.OK

    trio.run(main)


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        (pb.BotMessage(ping=pb.Ping(nonce=1)), "the first message must be Hello"),
        (
            pb.BotMessage(hello=pb.Hello(bot_name="x", token="t", protocol_version=2)),
            "protocol version 2 is not supported",
        ),
        (pb.BotMessage(hello=pb.Hello(bot_name="x")), "a token is required"),
    ],
)
def test_bad_hello_is_rejected(first: pb.BotMessage, reason: str) -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("t")

            def client() -> RawBot:
                bot = RawBot(server.address)
                bot.send(first)
                assert bot.ended.wait(10)
                bot.close()
                return bot

            bot = await trio.to_thread.run_sync(client)
            assert bot.received[0].rejected.reason.startswith(reason)

    trio.run(main)


def test_an_unset_protocol_version_is_welcomed_with_a_warning() -> None:
    """proto3 cannot tell 0 from a field the bot forgot: read as 1, but said so."""

    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("t")

            def client(version: int) -> RawBot:
                bot = RawBot(server.address)
                bot.hello("t", version=version)
                assert bot.recv() is not None
                bot.send(pb.BotMessage(ping=pb.Ping(nonce=9)))  # its Pong follows any warning
                while (msg := bot.recv()) is not None and msg.WhichOneof("kind") != "pong":
                    pass
                bot.close()
                return bot

            unset = await trio.to_thread.run_sync(client, 0)
            kinds = [m.WhichOneof("kind") for m in unset.received]
            assert kinds == ["welcome", "error", "pong"]
            error = unset.received[1].error
            assert error.code == pb.ERROR_CODE_PROTOCOL and error.fault == ""
            assert error.message == "Hello.protocol_version is 0 (unset), read as 1: set it to 1"
            assert unset.received[0].welcome.resume_token == "t"
            one = await trio.to_thread.run_sync(client, 1)
            assert [m.WhichOneof("kind") for m in one.received] == ["welcome", "pong"]

    trio.run(main)


def test_match_start_tells_each_bot_its_own_seat_and_seed() -> None:
    recs = [Recorder() for _ in range(4)]
    spec = make_spec("whist", 4, options=SHORT_WHIST, seed=5)
    run_scenario(spec, [raw(rec=r) for r in recs])
    for seat, rec in enumerate(recs):
        bot = rec.bots[0]
        assert bot.received[0].WhichOneof("kind") == "welcome"
        start = bot.of_kind("match_start")[0]
        assert list(start.seats) == [seat]
        assert start.bot_seed == seat_seed(5, seat)
        assert start.options == {"points_to_win": "1", "games_per_rubber": "1"}
        assert [p.seat_name for p in start.players] == ["N", "E", "S", "W"]
        assert start.fault_policy == "lenient"
        assert {d.seat for d in bot.of_kind("decision")} == {seat}
        end = bot.of_kind("match_end")[0]
        assert end.reason == "normal" and end.result.summary


def test_one_connection_may_play_every_seat() -> None:
    """One token for all four seats: one MatchStart naming them all, and every decision."""

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, tokens=["same"] * 4)
            scenario = await play_with(server, spec, [sdk(), None, None, None])
            assert scenario.outcome.faults == ()
            assert len(scenario.outcome.timings) == 52

    trio.run(main)


def test_bots_can_connect_over_the_unix_socket(tmp_path: Path) -> None:
    async def main() -> None:
        sock = tmp_path / "arena.sock"
        async with open_arena_server(unix=sock) as server:
            assert server.unix_address == f"unix:{sock}"
            spec = make_spec("whist", 4, options=SHORT_WHIST)
            server.register(spec)
            done: list[int] = []

            def bot(token: str, seed: int) -> None:
                assert server.unix_address is not None
                run = run_bot(make_bot("random", seed), server.unix_address, token, matches=1)
                done.append(run.matches)

            threads = [
                threading.Thread(target=bot, args=(s.token, i), daemon=True)
                for i, s in enumerate(spec.seats)
            ]
            for t in threads:
                t.start()
            outcome = await server.run_match(spec)
            await trio.to_thread.run_sync(join_all, threads)
            assert outcome.faults == () and done == [1, 1, 1, 1]
        assert not sock.exists()

    trio.run(main)


def test_spectators_see_matches_public_events_and_standings() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=8)
            scenario = await play_with(server, spec, [sdk(), sdk(), sdk(), sdk()])

            def spectate() -> tuple[
                list[messages.MatchSummary], list[pb.ServerMessage], list[messages.Standing]
            ]:
                with grpc.insecure_channel(server.address) as channel:
                    stub = pb_grpc.SpectatorStub(channel)
                    listed = spectator.read_list_matches_response(
                        stub.ListMatches(spectator.list_matches_request())
                    )
                    watched = list(stub.WatchMatch(spectator.watch_request("m1")))
                    standings = spectator.read_standings_response(
                        stub.Standings(spectator.standings_request("whist"))
                    )
                    with pytest.raises(grpc.RpcError) as info:
                        list(stub.WatchMatch(spectator.watch_request("nope")))
                    assert info.value.code() == grpc.StatusCode.NOT_FOUND
                return listed, watched, standings

            listed, watched, standings = await trio.to_thread.run_sync(spectate)
            assert [(m.match_id, m.status) for m in listed] == [("m1", "finished")]
            events = [m.event for m in watched if m.WhichOneof("kind") == "event"]
            assert watched[-1].WhichOneof("kind") == "match_end"
            public = [
                e for e in scenario.outcome.entries if e["type"] == "event" and e["to"] is None
            ]
            assert [e.kind for e in events] == [e["kind"] for e in public]
            assert events and not any(e.private for e in events)
            assert all(e.kind != "deal" for e in events)  # the hands are private
            rows = {r.bot_name: r for r in standings}
            assert sum(r.matches for r in rows.values()) == 4
            winners = {s for s, r in enumerate(scenario.outcome.result.ranks) if r == 1}
            for seat in range(4):
                row = rows[f"bot{seat}"]
                assert row.wins == (seat in winners)
                assert row.mean_score == (1.0 if seat in winners else 0.0)

    trio.run(main)


def test_a_server_that_shows_nothing_answers_spectators_empty_and_refuses_watching() -> None:
    async def main() -> None:
        async with open_arena_server(spectators=False) as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=8)
            await play_with(server, spec, [sdk(), sdk(), sdk(), sdk()])

            def spectate() -> tuple[list[messages.MatchSummary], list[messages.Standing]]:
                with grpc.insecure_channel(server.address) as channel:
                    stub = pb_grpc.SpectatorStub(channel)
                    listed = spectator.read_list_matches_response(
                        stub.ListMatches(spectator.list_matches_request())
                    )
                    standings = spectator.read_standings_response(
                        stub.Standings(spectator.standings_request("whist"))
                    )
                    with pytest.raises(grpc.RpcError) as info:
                        list(stub.WatchMatch(spectator.watch_request("m1")))
                    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
                    assert info.value.details() == NOT_SHOWN
                return listed, standings

            assert await trio.to_thread.run_sync(spectate) == ([], [])

    trio.run(main)


def test_a_running_match_can_be_watched_live() -> None:
    """A spectator who joins mid-match gets the public events so far, then the rest live."""

    async def main() -> None:
        async with open_arena_server() as server:
            spec = make_spec("whist", 4, options=SHORT_WHIST, seed=2)
            got: list[pb.ServerMessage] = []
            started = trio.Event()

            async def watch() -> None:
                await started.wait()

                def spectate() -> None:
                    with grpc.insecure_channel(server.address) as channel:
                        stub = pb_grpc.SpectatorStub(channel)
                        got.extend(stub.WatchMatch(spectator.watch_request("m1")))

                await trio.to_thread.run_sync(spectate)

            def slow(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
                if n == 0:
                    trio.from_thread.run_sync(started.set, trio_token=token)
                time.sleep(0.01)  # slow on purpose: the spectator joins mid-match
                return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=0))

            token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch)
                scenario = await play_with(server, spec, [raw(slow), sdk(), sdk(), sdk()])
            seqs = [m.event.seq for m in got if m.WhichOneof("kind") == "event"]
            public = [
                e for e in scenario.outcome.entries if e["type"] == "event" and e["to"] is None
            ]
            assert seqs == list(range(len(public)))  # numbered over the public events alone
            assert got[-1].WhichOneof("kind") == "match_end"

    trio.run(main)


def test_duplicate_match_id_and_bad_config_are_refused() -> None:
    from arena.errors import ArenaError
    from engine import ConfigError

    async def main() -> None:
        async with open_arena_server() as server:
            server.register(make_spec("whist", 4))
            with pytest.raises(ArenaError, match="already registered"):
                server.register(make_spec("whist", 4))
            with pytest.raises(ConfigError, match="has 4 seats; the match names 3 bots"):
                server.register(make_spec("whist", 3, match_id="m2"))
            with pytest.raises(ConfigError, match="no option"):
                server.register(make_spec("whist", 4, options={"x": 1}, match_id="m3"))

    trio.run(main)


def test_a_bot_playing_two_matches_at_once() -> None:
    """One connection holds seats in two concurrent matches and answers both."""

    async def main() -> None:
        async with open_arena_server() as server:
            a = make_spec(
                "whist", 4, options=SHORT_WHIST, match_id="a", tokens=["x", "p", "q", "r"]
            )
            b = make_spec(
                "whist", 4, options=SHORT_WHIST, match_id="b", tokens=["s", "x", "t", "u"]
            )
            server.register(a)
            server.register(b)
            ran: list[int] = []

            def shared() -> None:
                ran.append(run_bot(make_bot("random", 1), server.address, "x", matches=2).matches)

            def one(token: str) -> None:
                run_bot(make_bot("random", 2), server.address, token, matches=1)

            threads = [threading.Thread(target=shared, daemon=True)] + [
                threading.Thread(target=one, args=(t,), daemon=True) for t in "pqrstu"
            ]
            for t in threads:
                t.start()
            outcomes: list[MatchOutcome] = []
            async with trio.open_nursery() as nursery:

                async def run(spec: MatchSpec) -> None:
                    outcomes.append(await server.run_match(spec))

                nursery.start_soon(run, a)
                nursery.start_soon(run, b)
            await trio.to_thread.run_sync(join_all, threads)
            assert ran == [2]
            assert len(outcomes) == 2 and all(o.faults == () for o in outcomes)

    trio.run(main)


def test_a_stream_without_hello_is_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("arena.server.hub.HELLO_TIMEOUT_S", 0.2)

    async def main() -> None:
        async with open_arena_server() as server:

            def client() -> RawBot:
                bot = RawBot(server.address)
                assert bot.ended.wait(10)  # no message sent at all
                bot.close()
                return bot

            bot = await trio.to_thread.run_sync(client)
            assert bot.received[0].rejected.reason == "no Hello within 0.2 s"

    trio.run(main)


def test_a_token_never_reads_as_a_command_line_option(monkeypatch: pytest.MonkeyPatch) -> None:
    # One token in 64 would start with "-", and `arena bot --token -x…` takes it for an option.
    from arena.server import hub

    drawn = iter(["-starts-with-a-dash", "_fine-token"])
    monkeypatch.setattr(hub.secrets, "token_urlsafe", lambda n: next(drawn))
    assert hub.new_token() == "_fine-token"


def _raw_stream(address: str, chunks: list[bytes], want: int) -> list[pb.ServerMessage]:
    """Send ``chunks`` as they are on one Arena.Play stream; the first ``want`` replies."""
    got: list[pb.ServerMessage] = []
    sent = threading.Event()

    def requests() -> Iterator[bytes]:
        yield from chunks
        sent.wait(10)  # keep the stream open until the replies are in

    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/cardarena.v1.Arena/Play", response_deserializer=pb.ServerMessage.FromString
        )
        call = play(requests(), timeout=10)
        for msg in call:
            got.append(msg)
            if len(got) == want:
                break
        sent.set()
        call.cancel()
    return got


def test_undecodable_bytes_are_a_garbage_fault_not_a_broken_stream() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            server.add_token("t")
            hello = bot_codec.hello_to_proto(messages.Hello("raw", "1", "t", 1)).SerializeToString()
            ping = bot_codec.ping_to_proto(7).SerializeToString()
            # A length past the message's end: protobuf cannot parse it.
            got = await trio.to_thread.run_sync(
                _raw_stream, server.address, [hello, b"\x12\x7f\x08", ping], 3
            )
            kinds = [m.WhichOneof("kind") for m in got]
            assert kinds == ["welcome", "error", "pong"], got
            assert got[1].error.code == pb.ERROR_CODE_PROTOCOL
            assert "undecodable" in got[1].error.message
            assert got[2].pong.nonce == 7  # the stream goes on

    trio.run(main)


def test_undecodable_bytes_first_are_rejected_as_no_hello() -> None:
    async def main() -> None:
        async with open_arena_server() as server:
            got = await trio.to_thread.run_sync(_raw_stream, server.address, [b"\xff\xff"], 1)
            assert got[0].rejected.reason == "the first message must be Hello"

    trio.run(main)
