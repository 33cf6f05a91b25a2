"""A person's desk (arena/people/desk.py) fed a seat's messages as the arena would send them,
built here from the engine: the page is told the seat's own hand and nothing of the others'
but their sizes; answers are taken once, for the open decision only."""

from __future__ import annotations

import json
from typing import Any

from cardarena import messages

from arena.people.desk import Desk
from arena.records.view import without_paths
from engine import get_game
from tests.arena.replay_truth import card_tokens


def start(game_id: str, players: int, options: dict[str, str]) -> messages.MatchStart:
    names = [messages.PlayerInfo(s, f"P{s}", "bot") for s in range(players)]
    return messages.MatchStart(
        "m1", game_id, "1", options, (0,), tuple(names), messages.TimeControl(), "lenient", 1
    )


def test_a_whist_seat_sees_its_hand_the_table_and_the_others_sizes() -> None:
    game = get_game("whist")
    options = {"points_to_win": "1", "games_per_rubber": "1"}
    config = game.configure(None, options)
    state = game.new_match(config, 11)
    desk = Desk(seat=2, secret="s")
    desk.take(start("whist", 4, options))
    while state.to_move != 2:
        state.apply(state.legal_actions()[0])
    for seq, event in enumerate(state.events):
        if event.visible_to(2):
            desk.take(
                messages.EventInfo("m1", seq, event.kind, dict(event.data), event.to is not None)
            )
    obs = state.observation(2).to_dict()
    legal = tuple(messages.Action(a.kind, a.arg) for a in state.legal_actions())
    desk.take(messages.Decision(7, "m1", 2, "whist", obs, "", legal, 1000, 5000))
    decision = desk.feed[-1]
    assert decision["type"] == "decision" and decision["request_id"] == 7
    step = decision["step"]
    assert step["private"][2]["hand"] == obs["hand"]
    assert [bool(p) for p in step["private"]] == [False, False, True, False]
    assert "hand" not in step["public"] and step["public"]["tricks"] == obs["tricks"]
    assert step["hand_sizes"] == [len(state.observation(s).to_dict()["hand"]) for s in range(4)]
    others = {c for s in (0, 1, 3) for c in state.observation(s).to_dict()["hand"]}
    others.discard(obs["turn_up"])  # turned up for all to see, then taken into the dealer's hand
    assert not others & set(card_tokens(json.dumps(desk.feed)))
    assert desk.answer(6, 0) == "that decision is no longer open"
    assert desk.answer(7, len(legal)) == f"no legal action {len(legal)}"
    assert desk.answer(7, 0) == ""
    assert desk.answers.get_nowait() == (7, 0)
    assert desk.answer(7, 0) == "that decision is no longer open"


def test_a_timeout_closes_the_decision_and_the_end_tells_the_result() -> None:
    game = get_game("spoil_five")
    config = game.configure(3, {})
    state = game.new_match(config, 2)
    desk = Desk(seat=0, secret="s")
    desk.take(start("spoil_five", 3, {}))
    while state.to_move != 0:
        state.apply(state.legal_actions()[0])
    legal = tuple(messages.Action(a.kind, a.arg) for a in state.legal_actions())
    obs = state.observation(0).to_dict()
    desk.take(messages.Decision(3, "m1", 0, "spoil_five", obs, "", legal, 1000, 0))
    desk.take(messages.ErrorInfo("timeout", "no answer", 1, "m1", 3, "timeout", 0))
    assert desk.pending is None and desk.answer(3, 0)
    result = messages.Result((0.0, 1.0, 0.0), (2, 1, 2), "forfeit", 0, "P2 wins")
    faults = (messages.FaultInfo(0, "timeout", "no answer"), messages.FaultInfo(1, "x", "y"))
    desk.take(messages.MatchEnd("m1", result, faults))
    end = desk.feed[-1]
    assert end["type"] == "end" and desk.ended
    assert end["result"]["forfeited_by"] == "P1" and end["result"]["faults"] == [
        {"seat": 0, "kind": "timeout", "detail": "no answer"}
    ]


def test_between_decisions_the_table_moves_on_with_the_events_and_never_guesses() -> None:
    for game_id, players, options, seat in [
        ("whist", None, {"points_to_win": "1", "games_per_rubber": "1"}, 1),
        ("spoil_five", 4, {}, 2),
        ("forty_five", 4, {"points_to_win": "15"}, 3),
        ("tennis", 4, {}, 1),
        ("tennis", 2, {}, 0),
        ("tennis_whist", 3, {"sets_to_win": "1"}, 2),
    ]:
        game = get_game(game_id)
        config = game.configure(players, options)
        state = game.new_match(config, 5)
        desk = Desk(seat=seat, secret="s", players=config.players)
        desk.take(start(game_id, game.num_seats(config), options))
        views = seq = rid = actions = 0
        while state.to_move is not None:
            if state.to_move == seat:
                rid += 1
                legal = tuple(messages.Action(a.kind, a.arg) for a in state.legal_actions())
                obs = state.observation(seat).to_dict()
                desk.take(messages.Decision(rid, "m1", seat, game_id, obs, "", legal, 1, 0))
                assert desk.answer(rid, 0) == ""
            before = len(state.events)
            state.apply(state.legal_actions()[0])
            actions += 1
            for event in state.events[before:]:
                seq += 1
                if event.visible_to(seat):
                    private = event.to is not None
                    desk.take(messages.EventInfo("m1", seq, event.kind, dict(event.data), private))
                last = desk.feed[-1]
                if last["type"] == "view":
                    views += 1
                    desk.feed.append({"type": "seen"})
                    truth = state.observation(seat).to_dict()
                    assert desk.table is not None
                    shared = without_paths(truth, frozenset(desk.table.private))
                    assert not game.restore_unchecked & step_keys(last["step"]), game_id
                    step = last["step"]
                    mine = step["private"][seat]
                    assert {k: truth[k] for k in mine} == mine, (game_id, seq)
                    wrong = {k: v for k, v in step["public"].items() if shared[k] != v}
                    assert not wrong, (game_id, seq, wrong)
                    assert step["seat"] == state.to_move
        # Most actions are followed (the others' cards drawn where the events show them).
        assert views >= actions // 2, (game_id, views, actions)


def step_keys(step: dict[str, Any]) -> set[str]:
    """The observation fields a step carries, shared or the seat's own."""
    return set(step["public"]) | {k for p in step["private"] for k in p}
