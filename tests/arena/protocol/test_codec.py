"""The translation module: engine values <-> protocol messages, both directions."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from cardarena import codec as bot_codec
from cardarena import messages
from cardarena import observations as sdk_observations
from cardarena._pb import arena_pb2 as pb
from google.protobuf.descriptor import Descriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.protocol import codec, observations, spectator, wireformat
from engine import Action, Event, Observation, game_ids, get_game

GAMES = list(game_ids())  # every registered game: one missing is a failure


def _wire_named(data: Any, descriptor: Descriptor | None) -> Any:
    """An engine ``to_dict()`` under the typed message's field names (observations.ENGINE_NAMES
    turned round): what ``Observation.json`` holds and json_format reads."""
    if descriptor is None or not isinstance(data, dict):
        return data
    out = {}
    for f in descriptor.fields:
        value = data[sdk_observations.engine_name(f)]
        if f.message_type is not None:
            sub = f.message_type
            value = (
                [_wire_named(v, sub) for v in value] if f.is_repeated else _wire_named(value, sub)
            )
        out[f.name] = value
    return out


def test_json_names_differ_from_the_engine_only_where_the_proto_renamed() -> None:
    """tennis_whist's and tennis's ``hand_size`` is ``hand_count`` on the wire (C++ cannot
    generate a field ``hand_size`` beside a repeated ``hand``); every other key is the same."""
    for game_id in ("tennis_whist", "tennis"):
        game = get_game(game_id)
        state = game.new_match(game.configure(), 1)
        assert state.to_move is not None
        obs = state.observation(state.to_move)
        data = json.loads(observations.observation_message(game_id, obs).json)
        engine = obs.to_dict()
        if game_id == "tennis_whist":
            assert data["hand_count"] == engine["hand_size"] > 0 and "hand_size" not in data
            assert set(data) - {"hand_count"} == set(engine) - {"hand_size"}
        else:
            players = data["players"][0]
            assert players["hand_count"] == engine["players"][0]["hand_size"] > 0
            assert "hand_size" not in players


@pytest.mark.parametrize("game_id", GAMES)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_observation_round_trip_equals_engine_to_dict(game_id: str, seed: int) -> None:
    """Over a whole random match, what the SDK rebuilds from the typed message is exactly the
    engine's to_dict(), the JSON field holds the same, and the text is the engine's render()."""
    game = get_game(game_id)
    state = game.new_match(game.configure(), seed)
    rng = random.Random(seed)
    checked = 0
    while (seat := state.to_move) is not None:
        obs = state.observation(seat)
        msg = observations.observation_message(game_id, obs)
        wire = pb.Observation.FromString(msg.SerializeToString())
        got_game, data = sdk_observations.observation_dict(wire)
        assert got_game == game_id
        assert data == obs.to_dict()
        descriptor = observations.observation_descriptor(game_id)
        assert json.loads(wire.json) == _wire_named(obs.to_dict(), descriptor)
        assert wire.text == obs.render()
        state.apply(rng.choice(state.legal_actions()))
        checked += 1
    assert checked > 0


def test_observation_of_a_game_without_typed_message_falls_back_to_json() -> None:
    msg = pb.Observation(text="t", json=json.dumps({"seat": 1, "hand": ["AS"]}))
    assert sdk_observations.observation_dict(msg) == ("", {"seat": 1, "hand": ["AS"]})


def test_decision_round_trip() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), 5)
    seat = state.to_move
    assert seat is not None
    legal = state.legal_actions()
    raw = codec.bytes_to_proto(
        codec.decision_to_bytes(7, "m", seat, "whist", state.observation(seat), legal, 900, 50)
    )
    decoded = bot_codec.proto_to_plain(pb.ServerMessage.FromString(raw.SerializeToString()))
    assert isinstance(decoded, messages.Decision)
    assert (decoded.request_id, decoded.match_id, decoded.seat, decoded.game) == (
        7,
        "m",
        seat,
        "whist",
    )
    # The SDK's own actions (no engine), the same choices in the same order.
    assert decoded.legal == tuple(messages.Action(a.kind, a.arg) for a in legal)
    assert decoded.observation == state.observation(seat).to_dict()
    assert (decoded.deadline_ms, decoded.bank_ms) == (900, 50)
    assert [a.index for a in raw.decision.legal_actions] == list(range(len(legal)))
    assert [(a.kind, a.arg) for a in raw.decision.legal_actions] == [(a.kind, a.arg) for a in legal]
    # The SDK interns actions: decoding twice gives the very same objects.
    again = bot_codec.proto_to_plain(raw)
    assert isinstance(again, messages.Decision)
    assert decoded.legal and all(a is b for a, b in zip(decoded.legal, again.legal, strict=True))


def test_bot_messages_decode() -> None:
    hello = messages.Hello("b", "2", "tok", 1, ("whist",))
    assert codec.bot_proto_to_plain(bot_codec.hello_to_proto(hello)) == hello
    assert codec.bot_proto_to_plain(bot_codec.answer_to_proto(3, index=2)) == messages.Answer(
        3, index=2
    )
    assert codec.bot_proto_to_plain(
        bot_codec.answer_to_proto(3, text="play:AS")
    ) == messages.Answer(3, text="play:AS")
    # Index 0 is a real choice, distinct from "no choice at all".
    assert codec.bot_proto_to_plain(bot_codec.answer_to_proto(3, index=0)) == messages.Answer(
        3, index=0
    )
    assert codec.bot_proto_to_plain(bot_codec.answer_to_proto(3)) == messages.Answer(3)
    assert codec.bot_proto_to_plain(bot_codec.ping_to_proto(9)) == messages.Ping(9)
    assert isinstance(codec.bot_proto_to_plain(pb.BotMessage()), messages.Garbage)


def test_server_messages_round_trip() -> None:
    result = messages.Result((2.0, 1.0), (1, 2), "forfeit", 1, "P2 forfeits: timeout")
    faults = (messages.FaultInfo(1, "timeout", "no answer"),)
    values: list[messages.ServerMessage] = [
        messages.Welcome("1.0", "s1"),
        messages.Rejected("unknown token"),
        messages.Pong(5),
        messages.MatchEnd("m", result, faults),
        messages.ErrorInfo("timeout", "late", 2, "m", 4, "timeout", 1),
        messages.EventInfo("m", 3, "play", {"seat": 1, "card": "AS"}, False),
        messages.MatchStart(
            "m",
            "whist",
            "1.0",
            {"points_to_win": "7"},
            (0, 2),
            (messages.PlayerInfo(0, "N", "a", "1"), messages.PlayerInfo(1, "E", "b", "")),
            messages.TimeControl(100, 200),
            "strict",
            42,
        ),
    ]
    for value in values:
        wire = pb.ServerMessage.FromString(codec.plain_to_proto(value).SerializeToString())
        assert bot_codec.proto_to_plain(wire) == value


def test_normal_result_has_no_forfeiting_seat_on_the_wire() -> None:
    end = messages.MatchEnd("m", messages.Result((1.0, 0.0), (1, 2), summary="P1 wins"))
    msg = codec.plain_to_proto(end)
    assert msg.match_end.result.forfeited_by == -1
    assert msg.match_end.reason == "normal"
    decoded = bot_codec.proto_to_plain(msg)
    assert isinstance(decoded, messages.MatchEnd)
    assert decoded.result.forfeited_by is None


def test_events_carry_json_and_privacy() -> None:
    public = codec.event_to_plain("m", 0, Event("play", {"seat": 1, "card": "AS"}))
    private = codec.event_to_plain("m", 1, Event("deal", {"hand": ["AS"]}, to=(2,)))
    assert not public.private and private.private
    msg = codec.plain_to_proto(private)
    assert json.loads(msg.event.json) == {"hand": ["AS"]}
    assert msg.event.seq == 1


def test_option_text() -> None:
    assert codec.option_to_text(True) == "true"
    assert codec.option_to_text(False) == "false"
    assert codec.option_to_text(7) == "7"
    assert codec.option_to_text("difference") == "difference"


def test_spectator_messages_round_trip() -> None:
    summary = messages.MatchSummary(
        "m",
        "whist",
        (messages.PlayerInfo(0, "N", "a"),),
        messages.MatchStatus.FINISHED,
        messages.Result((1.0,), (1,)),
    )
    assert spectator.read_list_matches_response(spectator.list_matches_response([summary])) == [
        summary
    ]
    row = messages.Standing("a", "whist", 3, 2, 0.75, 1)
    assert spectator.read_standings_response(spectator.standings_response([row])) == [row]
    assert spectator.read_watch_request(spectator.watch_request("m")) == "m"
    assert spectator.read_standings_request(spectator.standings_request("whist")) == "whist"
    assert spectator.read_list_matches_request(spectator.list_matches_request(True)) is True


def test_action_text_round_trip_through_legal_action() -> None:
    action = Action("trump", "H")
    msg = codec.bytes_to_proto(
        codec.decision_to_bytes(1, "m", 0, "none", Observation(seat=0), [action], 1, 1)
    )
    assert msg.decision.legal_actions[0].text == "trump:H"
    assert msg.decision.observation.WhichOneof("game") is None


# --- lean messages: Hello.batch_events / omit_text / omit_json ---------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        {"batch_events": True},
        {"omit_text": True},
        {"omit_json": True},
        {"batch_events": True, "omit_text": True, "omit_json": True},
    ],
)
def test_hello_lean_flags_round_trip(flags: dict[str, bool]) -> None:
    hello = messages.Hello("b", "2", "tok", 1, ("whist",), 3, **flags)
    wire = pb.BotMessage.FromString(bot_codec.hello_to_proto(hello).SerializeToString())
    assert {k: getattr(wire.hello, k) for k in flags} == flags
    assert codec.bot_proto_to_plain(wire) == hello


def test_a_hello_without_the_flags_asks_for_none_of_them() -> None:
    # An old bot's Hello (fields 7-9 unknown to it) decodes to today's behaviour.
    old = pb.BotMessage(hello=pb.Hello(bot_name="old", token="t", protocol_version=1))
    hello = codec.bot_proto_to_plain(pb.BotMessage.FromString(old.SerializeToString()))
    assert isinstance(hello, messages.Hello)
    assert (hello.batch_events, hello.omit_text, hello.omit_json) == (False, False, False)
    assert bot_codec.hello_to_proto(messages.Hello("b")).hello.SerializeToString() == (
        pb.Hello(bot_name="b", protocol_version=1).SerializeToString()
    )


def _whist_decision_point(seed: int) -> tuple[Observation, int, list[Action], list[Event]]:
    """A whist state some tricks in, with its events (private deals included)."""
    game = get_game("whist")
    state = game.new_match(game.configure(), seed)
    rng = random.Random(seed)
    for _ in range(9):
        state.apply(rng.choice(state.legal_actions()))
    seat = state.to_move
    assert seat is not None
    return state.observation(seat), seat, list(state.legal_actions()), list(state.events)


def test_decision_with_events_round_trip() -> None:
    obs, seat, legal, events = _whist_decision_point(11)
    infos = [codec.event_to_plain("m", seq, e) for seq, e in enumerate(events)]
    assert any(i.private for i in infos) and any(not i.private for i in infos)
    held = [codec.plain_to_proto(i) for i in infos]
    bodies = [m.event.SerializeToString() for m in held]
    raw = codec.bytes_to_proto(
        codec.decision_to_bytes(
            7, "m", seat, "whist", obs, legal, 900, 50, events=bodies, text=False, json=False
        )
    )
    wire = pb.ServerMessage.FromString(raw.SerializeToString())
    assert list(wire.decision.events) == [m.event for m in held]
    decoded = bot_codec.proto_to_plain(wire)
    assert isinstance(decoded, messages.Decision)
    assert decoded.events == tuple(infos)
    # Each decodes as the same Event sent alone would have.
    assert list(decoded.events) == [bot_codec.proto_to_plain(m) for m in held]
    # Carrying events changes nothing else in the request.
    bare = codec.bytes_to_proto(
        codec.decision_to_bytes(7, "m", seat, "whist", obs, legal, 900, 50, text=False, json=False)
    )
    wire.decision.ClearField("events")
    assert wire == bare
    assert decoded.observation == obs.to_dict() and decoded.legal == tuple(
        messages.Action(a.kind, a.arg) for a in legal
    )
    assert decoded.text == ""


def test_a_reader_may_skip_decoding_the_events_a_decision_carries() -> None:
    obs, seat, legal, events = _whist_decision_point(11)
    bodies = [codec.event_to_body("m", seq, e) for seq, e in enumerate(events)]
    raw = codec.bytes_to_proto(
        codec.decision_to_bytes(1, "m", seat, "whist", obs, legal, 900, 50, events=bodies)
    )
    full = bot_codec.proto_to_plain(raw)
    lean = bot_codec.proto_to_plain(raw, events=False)
    assert isinstance(full, messages.Decision) and isinstance(lean, messages.Decision)
    assert len(full.events) == len(events) > 0 and lean.events == ()
    assert dataclasses.replace(full, events=()) == lean


def test_a_decision_without_events_carries_none() -> None:
    obs, seat, legal, _ = _whist_decision_point(3)
    raw = codec.bytes_to_proto(codec.decision_to_bytes(1, "m", seat, "whist", obs, legal, 900, 50))
    assert len(raw.decision.events) == 0
    decoded = bot_codec.proto_to_plain(pb.ServerMessage.FromString(raw.SerializeToString()))
    assert isinstance(decoded, messages.Decision) and decoded.events == ()
    assert decoded.text == obs.render()


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize(("text", "as_json"), [(False, False), (False, True), (True, False)])
def test_observation_without_renderings_keeps_the_typed_message(
    game_id: str, text: bool, as_json: bool
) -> None:
    game = get_game(game_id)
    state = game.new_match(game.configure(), 2)
    rng = random.Random(2)
    checked = 0
    while (seat := state.to_move) is not None and checked < 40:
        obs = state.observation(seat)
        full = observations.observation_message(game_id, obs)
        lean = observations.observation_message(game_id, obs, text=text, json=as_json)
        assert lean.text == (full.text if text else "")
        assert lean.json == (full.json if as_json else "")
        assert full.text and full.json  # the defaults still fill both
        assert lean.WhichOneof("game") == game_id
        assert getattr(lean, game_id) == getattr(full, game_id)
        wire = pb.Observation.FromString(lean.SerializeToString())
        assert sdk_observations.observation_dict(wire) == (game_id, obs.to_dict())
        state.apply(rng.choice(state.legal_actions()))
        checked += 1
    assert checked > 0


def test_an_unwanted_rendering_is_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    obs, seat, legal, _ = _whist_decision_point(5)

    def boom(*args: object) -> str:
        raise AssertionError("computed a rendering that was not asked for")

    monkeypatch.setattr(type(obs), "render", boom)
    monkeypatch.setattr(wireformat, "dumps", boom)
    msg = codec.bytes_to_proto(
        codec.decision_to_bytes(1, "m", seat, "whist", obs, legal, 1, 1, text=False, json=False)
    )
    assert msg.decision.observation.whist.seat == seat
    with pytest.raises(AssertionError, match="not asked for"):
        observations.observation_message("whist", obs, text=True, json=False)
    with pytest.raises(AssertionError, match="not asked for"):
        observations.observation_message("whist", obs, text=False, json=True)


def test_a_game_without_typed_message_keeps_its_json_when_json_is_omitted() -> None:
    # The JSON is then the only machine-readable form of the observation.
    obs = Observation(seat=1)
    msg = observations.observation_message("none", obs, text=False, json=False)
    assert msg.WhichOneof("game") is None and msg.text == ""
    assert sdk_observations.observation_dict(msg) == ("", obs.to_dict())


@pytest.mark.parametrize("game_id", game_ids())
def test_event_message_equals_the_event_info_encoding(game_id: str) -> None:
    game = get_game(game_id)
    state = game.new_match(game.configure(), 4)
    rng = random.Random(4)
    while state.to_move is not None and len(state.events) < 300:
        state.apply(rng.choice(state.legal_actions()))
    assert state.events
    for seq, event in enumerate(state.events):
        fast = codec.event_to_proto("m", seq, event)
        assert fast == codec.plain_to_proto(codec.event_to_plain("m", seq, event))


# --- the wire encoder, against protobuf's own construction --------------------------------------


def _built_by_protobuf(
    request_id: int,
    match_id: str,
    seat: int,
    game_id: str,
    obs: Observation,
    legal: list[Action],
    events: list[tuple[int, Event]],
    text: bool,
    as_json: bool,
) -> pb.ServerMessage:
    """The DecisionRequest built field by field with the protobuf API, the typed observation
    filled by protobuf's json_format from the engine's to_dict(): nothing of the codec's encoder."""
    from google.protobuf import json_format

    msg = pb.ServerMessage()
    d = msg.decision
    d.request_id, d.match_id, d.seat = request_id, match_id, seat
    data = obs.to_dict()
    if text:
        d.observation.text = obs.render()
    descriptor = observations.observation_descriptor(game_id)
    if descriptor is not None:
        data = _wire_named(data, descriptor)
    if as_json or descriptor is None:
        d.observation.json = json.dumps(data)
    if descriptor is not None:
        json_format.ParseDict(data, getattr(d.observation, game_id))
    for i, a in enumerate(legal):
        d.legal_actions.add(index=i, text=a.text, kind=a.kind, arg=a.arg)
    d.deadline_ms, d.bank_ms = 900, 12345
    for seq, e in events:
        d.events.add(
            match_id=match_id,
            seq=seq,
            kind=e.kind,
            json=json.dumps(dict(e.data)),
            private=e.to is not None,
        )
    return msg


def _json_apart(msg: pb.ServerMessage) -> tuple[pb.ServerMessage, list[object]]:
    """``msg`` with its JSON strings taken out and parsed (key order and spacing may differ)."""
    copy = pb.ServerMessage()
    copy.CopyFrom(msg)
    d = copy.decision
    parsed: list[object] = [json.loads(d.observation.json) if d.observation.json else None]
    d.observation.json = ""
    for e in d.events:
        parsed.append(json.loads(e.json))
        e.json = ""
    return copy, parsed


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize(("text", "as_json"), [(True, True), (False, False), (True, False)])
def test_decision_bytes_parse_to_what_protobuf_builds(
    game_id: str, text: bool, as_json: bool
) -> None:
    game = get_game(game_id)
    state = game.new_match(game.configure(), 11)
    rng = random.Random(11)
    sent = 0
    request_id = 2**40 - 3  # ids past 14 bits take long varints
    match_id = "m-é♠"  # non-ASCII: lengths are in bytes
    checked = 0
    while (seat := state.to_move) is not None and checked < 150:
        obs, legal = state.observation(seat), list(state.legal_actions())
        events = list(enumerate(state.events))[sent:]
        sent = len(state.events)
        got = codec.decision_to_bytes(
            request_id + checked,
            match_id,
            seat,
            game_id,
            obs,
            legal,
            900,
            12345,
            events=[codec.event_to_body(match_id, seq, e) for seq, e in events],
            text=text,
            json=as_json,
        )
        want = _built_by_protobuf(
            request_id + checked, match_id, seat, game_id, obs, legal, events, text, as_json
        )
        assert _json_apart(pb.ServerMessage.FromString(got)) == _json_apart(want)
        state.apply(rng.choice(legal))
        checked += 1
    assert checked > 20


def test_compact_json_matches_json_dumps() -> None:
    samples: list[object] = [
        {"seat": 2, "card": "QH", "ok": True, "none": None},
        {"nested": {"a": [1, 2.5, -3, "ü♣"], "b": []}, "f": 1e-7, "big": 2**70},
        [1, "two", {"three": 3.0}],
        "plain string",
        {"quote": 'say "hi"\n', "nan": float("nan"), "inf": float("-inf")},
    ]
    for data in samples:
        assert wireformat.dumps(data) == json.dumps(data, separators=(",", ":"), ensure_ascii=False)
