"""The translation module: engine values <-> protocol messages, both directions."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import serde
from arena._pb import arena_pb2 as pb
from engine import Action, Event, Observation, Result, game_ids, get_game

GAMES = list(game_ids())  # every registered game: one missing is a failure


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
        msg = serde.observation_message(game_id, obs)
        wire = pb.Observation.FromString(msg.SerializeToString())
        got_game, data = serde.observation_dict(wire)
        assert got_game == game_id
        assert data == obs.to_dict()
        assert json.loads(wire.json) == obs.to_dict()
        assert wire.text == obs.render()
        state.apply(rng.choice(state.legal_actions()))
        checked += 1
    assert checked > 0


def test_observation_of_a_game_without_typed_message_falls_back_to_json() -> None:
    msg = pb.Observation(text="t", json=json.dumps({"seat": 1, "hand": ["AS"]}))
    assert serde.observation_dict(msg) == ("", {"seat": 1, "hand": ["AS"]})


def test_decision_round_trip() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), 5)
    seat = state.to_move
    assert seat is not None
    legal = state.legal_actions()
    raw = serde.decision_message(7, "m", seat, "whist", state.observation(seat), legal, 900, 50)
    decoded = serde.read_server_message(pb.ServerMessage.FromString(raw.SerializeToString()))
    assert isinstance(decoded, serde.Decision)
    assert (decoded.request_id, decoded.match_id, decoded.seat, decoded.game) == (
        7,
        "m",
        seat,
        "whist",
    )
    assert decoded.legal == legal
    assert decoded.observation == state.observation(seat).to_dict()
    assert (decoded.deadline_ms, decoded.bank_ms) == (900, 50)
    assert [a.index for a in raw.decision.legal_actions] == list(range(len(legal)))
    assert [(a.kind, a.arg) for a in raw.decision.legal_actions] == [(a.kind, a.arg) for a in legal]
    # The SDK interns actions: decoding twice gives the very same objects.
    again = serde.read_server_message(raw)
    assert isinstance(again, serde.Decision)
    assert all(a is b for a, b in zip(decoded.legal, again.legal, strict=True))


def test_bot_messages_decode() -> None:
    hello = serde.Hello("b", "2", "tok", 1, ("whist",))
    assert serde.read_bot_message(serde.hello_message(hello)) == hello
    assert serde.read_bot_message(serde.answer_message(3, index=2)) == serde.Answer(3, index=2)
    assert serde.read_bot_message(serde.answer_message(3, text="play:AS")) == serde.Answer(
        3, text="play:AS"
    )
    # Index 0 is a real choice, distinct from "no choice at all".
    assert serde.read_bot_message(serde.answer_message(3, index=0)) == serde.Answer(3, index=0)
    assert serde.read_bot_message(serde.answer_message(3)) == serde.Answer(3)
    assert serde.read_bot_message(serde.ping_message(9)) == serde.Ping(9)
    assert isinstance(serde.read_bot_message(pb.BotMessage()), serde.Garbage)


def test_server_messages_round_trip() -> None:
    result = Result((2.0, 1.0), (1, 2), "forfeit", 1, "P2 forfeits: timeout")
    faults = (serde.FaultInfo(1, "timeout", "no answer"),)
    values: list[serde.ServerMessage] = [
        serde.Welcome("1.0", "s1"),
        serde.Rejected("unknown token"),
        serde.Pong(5),
        serde.MatchEnd("m", result, faults),
        serde.ErrorInfo("timeout", "late", 2, "m", 4, "timeout", 1),
        serde.EventInfo("m", 3, "play", {"seat": 1, "card": "AS"}, False),
        serde.MatchStart(
            "m",
            "whist",
            "1.0",
            {"points_to_win": "7"},
            (0, 2),
            (serde.PlayerInfo(0, "N", "a", "1"), serde.PlayerInfo(1, "E", "b", "")),
            serde.TimeControl(100, 200),
            "strict",
            42,
        ),
    ]
    for value in values:
        wire = pb.ServerMessage.FromString(serde.server_message(value).SerializeToString())
        assert serde.read_server_message(wire) == value


def test_normal_result_has_no_forfeiting_seat_on_the_wire() -> None:
    end = serde.MatchEnd("m", Result((1.0, 0.0), (1, 2), summary="P1 wins"))
    msg = serde.server_message(end)
    assert msg.match_end.result.forfeited_by == -1
    assert msg.match_end.reason == "normal"
    decoded = serde.read_server_message(msg)
    assert isinstance(decoded, serde.MatchEnd)
    assert decoded.result.forfeited_by is None


def test_events_carry_json_and_privacy() -> None:
    public = serde.event_info("m", 0, Event("play", {"seat": 1, "card": "AS"}))
    private = serde.event_info("m", 1, Event("deal", {"hand": ["AS"]}, to=(2,)))
    assert not public.private and private.private
    msg = serde.server_message(private)
    assert json.loads(msg.event.json) == {"hand": ["AS"]}
    assert msg.event.seq == 1


def test_option_text() -> None:
    assert serde.option_text(True) == "true"
    assert serde.option_text(False) == "false"
    assert serde.option_text(7) == "7"
    assert serde.option_text("difference") == "difference"


def test_spectator_messages_round_trip() -> None:
    summary = serde.MatchSummary(
        "m", "whist", (serde.PlayerInfo(0, "N", "a"),), "finished", Result((1.0,), (1,))
    )
    assert serde.read_list_matches_response(serde.list_matches_response([summary])) == [summary]
    row = serde.Standing("a", "whist", 3, 2, 0.75, 1)
    assert serde.read_standings_response(serde.standings_response([row])) == [row]
    assert serde.read_watch_request(serde.watch_request("m")) == "m"
    assert serde.read_standings_request(serde.standings_request("whist")) == "whist"
    assert serde.read_list_matches_request(serde.list_matches_request(True)) is True


def test_action_text_round_trip_through_legal_action() -> None:
    action = Action("trump", "H")
    msg = serde.decision_message(1, "m", 0, "none", Observation(seat=0), [action], 1, 1)
    assert msg.decision.legal_actions[0].text == "trump:H"
    assert msg.decision.observation.WhichOneof("game") is None
