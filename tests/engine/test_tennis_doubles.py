"""Tennis doubles: scenario 11 in both control modes, the card exchange, seats and views, and
properties over random playouts. Players: A1 = 0, B1 = 1, A2 = 2, B2 = 3."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Action, IllegalActionError
from engine.games.tennis import GAME, TennisState
from engine.games.tennis_cards import LF, RB, TYPE_TEXT
from tests.engine.test_tennis import (
    check_conservation,
    new,
    playout,
    position,
    set_hand,
    texts,
    win_game,
)

A1, B1, A2, B2 = 0, 1, 2, 3
SEEDS = st.integers(0, 2**31 - 1)
MODES = ["team", "players"]


def doubles(control: str = "team", seed: int = 1) -> TennisState:
    return new(4, seed, control=control)


def finish_exchanges(state: TennisState) -> None:
    """Both teams keep their cards."""
    while state.phase == 1:
        legal = state.legal_actions()
        assert legal[0].text == "done"
        state.apply("done")


def ball_in_b_lf(control: str) -> TennisState:
    """A1 serves from the left, In: the ball is in team B's LF."""
    s = doubles(control)
    return position(
        s,
        server=A1,
        point_number=1,
        hands={
            B1: ["LF-LB", "SMASH", "KILL", "OUT"],
            B2: ["LF-RB", "RB-LB", "SMASH"],
        },
        serve=["IN"],
    )


def ball_in_b_rb(control: str) -> TennisState:
    """B1 serves from the right, In to A's RF; A1 hits RF-RB: the ball is in team B's RB."""
    s = doubles(control)
    position(
        s,
        server=B1,
        hands={A1: ["RF-RB"], A2: ["RF-LB"], B1: ["RB-LB", "LF-LB"], B2: ["RB-RF", "KILL"]},
        serve=["IN"],
    )
    assert s.ball == 0 and s.answering == 0
    s.apply("shot:A1:RF-RB")
    assert s.ball == RB and s.answering == 1
    return s


# --- scenario 11 ----------------------------------------------------------------------------------


def test_scenario_11_ball_in_lf_team_mode_only_left_player_shoots() -> None:
    s = ball_in_b_lf("team")
    assert s.ball == LF and s.answering == 1 and s.to_move == 1
    assert texts(s.legal_actions()) == [
        "pass",
        "shot:B2:LF-RB",
        "smash:B1",
        "smash:B2",
        "kill:B1",
        "out:B1",
        "pass:B1:LF-LB",
        "pass:B1:SMASH",
        "pass:B1:KILL",
        "pass:B1:OUT",
        "pass:B2:LF-RB",
        "pass:B2:RB-LB",
        "pass:B2:SMASH",
    ]
    with pytest.raises(IllegalActionError, match="only B2 may hit a shot from LF"):
        s.apply("shot:B1:LF-LB")
    s.apply("shot:B2:LF-RB")
    assert s.ball == RB and s.answering == 0 and s.sizes[B2] == 2


@pytest.mark.parametrize("answer", ["smash:B1", "kill:B1", "out:B1"])
def test_scenario_11_ball_in_lf_players_mode_partner_may_smash_kill_or_out(answer: str) -> None:
    s = ball_in_b_lf("players")
    assert s.to_move == B2  # the Left player covers LF
    assert texts(s.legal_actions()) == [
        "pass",
        "shot:B2:LF-RB",
        "smash:B2",
        "leave",
        "pass:B2:LF-RB",
        "pass:B2:RB-LB",
        "pass:B2:SMASH",
    ]
    s.apply("leave")
    assert s.to_move == B1 and s.observation(B1).left_by == "B2"
    legal = texts(s.legal_actions())
    assert legal == [
        "pass",
        "smash:B1",
        "kill:B1",
        "out:B1",
        "pass:B1:LF-LB",
        "pass:B1:SMASH",
        "pass:B1:KILL",
        "pass:B1:OUT",
    ]
    assert "shot:B1:LF-LB" not in legal and "leave" not in legal  # B1 never hits from B's LF
    points = list(s.points)
    s.apply(answer)
    if answer == "smash:B1":
        assert s.smash and s.answering == 0 and s.to_move == A1
    else:
        winner = 1 if answer == "kill:B1" else 0
        assert s.points[winner] == points[winner] + 1


@pytest.mark.parametrize("control", MODES)
def test_scenario_11_ball_in_rb_either_partner_shoots(control: str) -> None:
    s = ball_in_b_rb(control)
    if control == "team":
        legal = texts(s.legal_actions())
        assert legal[:3] == ["pass", "shot:B1:RB-LB", "shot:B2:RB-RF"]
        s.apply("shot:B2:RB-RF")
    else:
        assert s.to_move == B1 and "shot:B1:RB-LB" in texts(s.legal_actions())
        s.apply("leave")
        assert s.to_move == B2
        assert texts(s.legal_actions())[:3] == ["pass", "shot:B2:RB-RF", "kill:B2"]
        s.apply("shot:B2:RB-RF")
    assert s.ball == 0 and s.answering == 0


@pytest.mark.parametrize("control", MODES)
def test_scenario_11_play_deck_reshuffled_after_every_second_game(control: str) -> None:
    s = doubles(control, seed=4)
    reshuffles: list[int] = []
    for game in range(1, 5):
        assert s.game_number == game
        set_hand(s, A1, ["RF-LB", "LB-RB"])
        s.seen[s.stock.pop()] += 1  # something in the discards, face up …
        s.hidden[s.stock.pop()] += 1  # … and face down
        hands = [list(h) for h in s.hands]
        start = len(s.events)
        win_game(s, 0)
        events = s.events[start:]
        kinds = [e.kind for e in events]
        if "play_shuffle" in kinds:
            shuffle = events[kinds.index("play_shuffle")]
            assert shuffle.data["why"] == "every second game"
            assert kinds.index("play_shuffle") < kinds.index("refill")
            assert sum(s.seen) + sum(s.hidden) == 0 and len(s.stock) == 72 - 28
            # Cards in hands are kept: only the missing ones are dealt.
            assert all(s.hands[p][t] >= hands[p][t] for p in range(4) for t in range(19))
            reshuffles.append(game)
        check_conservation(s)
    assert reshuffles == [2, 4]


@pytest.mark.parametrize("control", MODES)
def test_scenario_11_serving_order_a1_b1_a2_b2(control: str) -> None:
    first_servers = set()
    for seed in range(8):
        s = doubles(control, seed)
        for _ in range(5):
            win_game(s, 0)
        servers = [e.data["server"] for e in s.events if e.kind == "game_start"]
        order = ["A1", "B1", "A2", "B2"] * 2
        k = order.index(str(servers[0]))
        assert servers[0] in ("A1", "B1")  # the team winning the draw leads with its first player
        assert servers == order[k : k + 6]
        first_servers.add(servers[0])
    assert first_servers == {"A1", "B1"}


# --- the exchange ---------------------------------------------------------------------------------


@pytest.mark.parametrize("control", MODES)
def test_exchange_gives_then_returns_as_many(control: str) -> None:
    s = doubles(control, seed=2)
    assert s.phase == 1 and s.game_number == 1
    team = s.server % 2
    first, second = team, team + 2
    names = ("A1", "B1", "A2", "B2")
    set_hand(s, first, ["LF-LB", "LF-RB", "RF-LB", "RB-LB", "SMASH", "OUT", "OUT"])
    set_hand(s, second, ["RF-RB", "RF-LB", "LF-LB", "LB-LB", "KILL", "OUT", "RB-RB"])
    seat_first = team if control == "team" else first
    seat_second = team if control == "team" else second
    legal = texts(s.legal_actions())
    assert s.to_move == seat_first
    assert legal[0] == "done" and f"give:{names[first]}:LF-LB" in legal
    s.apply(f"give:{names[first]}:LF-LB")
    s.apply(f"give:{names[first]}:LF-RB")
    assert s.sizes[first] == 5 and s.sizes[second] == 9
    obs = s.observation(seat_first).to_dict()
    assert obs["exchange_given"] == 2 and obs["exchange_stage"] == 0
    s.apply("done")
    assert s.to_move == seat_second
    legal = texts(s.legal_actions())
    assert legal and "done" not in legal
    assert all(t.startswith(f"give:{names[second]}:") for t in legal)
    with pytest.raises(IllegalActionError):
        s.apply("done")
    s.apply(f"give:{names[second]}:RF-RB")
    assert s.phase == 1 and s.exch_side == team  # one more to give back
    s.apply(f"give:{names[second]}:RF-LB")
    assert s.sizes[first] == s.sizes[second] == 7
    assert s.hands[first][s.hands[first].index(0)] == 0  # still a count list
    assert s.exch_side == 1 - team  # now the other team
    exchange = next(e for e in reversed(s.events) if e.kind == "exchange")
    assert exchange.data == {"team": "AB"[team], "cards_each_way": 2} and exchange.to is None
    # The other team never saw which cards moved.
    other_seats = [1 - team] if control == "team" else [1 - team, 3 - team]
    for seat in other_seats:
        for e in s.visible_events(seat):
            assert e.kind != "give"
    finish_exchanges(s)
    assert (s.phase == 0 and s.to_move is not None) or s.is_over()
    check_conservation(s)


def test_exchange_first_giver_may_give_every_card_and_then_it_ends() -> None:
    s = doubles("team", seed=5)
    team = s.server % 2
    names = ("A1", "B1", "A2", "B2")
    for _ in range(7):
        legal = s.legal_actions()
        give = next(a for a in legal if a.kind == "give")
        assert give.arg.startswith(names[team])
        s.apply(give)
    assert s.sizes[team] == 0 and s.sizes[team + 2] == 14 and s.exch_stage == 1
    for _ in range(7):
        s.apply(s.legal_actions()[0])
    assert s.sizes[team] == s.sizes[team + 2] == 7 and s.exch_side == 1 - team


# --- seats, views, faults -------------------------------------------------------------------------


def test_seats_and_sides() -> None:
    team = GAME.configure(4)
    players = GAME.configure(4, {"control": "players"})
    assert GAME.num_seats(team) == 2 and GAME.seat_names(team) == ("A", "B")
    assert GAME.sides(team) is None
    assert GAME.num_seats(players) == 4 and GAME.seat_names(players) == ("A1", "B1", "A2", "B2")
    assert GAME.sides(players) == ((0, 2), (1, 3))


@pytest.mark.parametrize("control", MODES)
def test_views_show_the_team_hands_only(control: str) -> None:
    s = ball_in_b_lf(control)
    seats = [0, 1] if control == "team" else [0, 1, 2, 3]
    for seat in seats:
        obs = s.observation(seat).to_dict()
        for p in obs["players"]:
            assert p["visible"] == (p["side"] == seat % 2)
            assert (p["hand"] != []) == (p["visible"] and p["hand_size"] > 0)
        json.dumps(obs)
    obs = s.observation(1)
    assert obs.ball_area == "LF" and obs.ball_side == 1
    assert obs.acting == ("B" if control == "team" else "B2")
    assert obs.controls == ((1, 3) if control == "team" else (1,))
    assert "B2 (L)" in obs.render()


def test_smash_is_answered_first_by_the_right_player_in_players_mode() -> None:
    s = ball_in_b_lf("players")
    set_hand(s, A2, ["KILL"])
    s.apply("smash:B2")
    assert s.smash and s.to_move == A1
    assert "leave" in texts(s.legal_actions())
    s.apply("leave")
    assert s.to_move == A2 and texts(s.legal_actions()) == ["pass", "kill:A2", "pass:A2:KILL"]
    s.apply("kill:A2")
    assert s.points[0] == 1


def test_forfeit_in_players_mode_loses_for_the_side() -> None:
    s = doubles("players")
    result = s.forfeit(2, "timeout")
    assert result.ranks == (2, 1, 2, 1)


# --- properties -----------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(SEEDS, st.sampled_from(MODES))
def test_property_doubles_cards_conserved_and_rallies_end(seed: int, control: str) -> None:
    s = doubles(control, seed)
    exchanges: list[int] = []
    rng = random.Random(seed)
    count = 0
    while s.to_move is not None:
        if s.phase == 1:
            count += 1
        elif count:
            exchanges.append(count)
            count = 0
            assert s.sizes == [7, 7, 7, 7]  # no card is played before the first decision
        s.apply(rng.choice(s.legal_actions()))
    assert exchanges and max(exchanges) <= 2 * 15
    check_conservation(s)
    t = doubles(control, seed)
    playout(t, random.Random(seed + 1))


@settings(max_examples=8, deadline=None)
@given(SEEDS, st.sampled_from(MODES))
def test_property_doubles_deterministic(seed: int, control: str) -> None:
    a, b = doubles(control, seed), doubles(control, seed)
    moves = playout(a, random.Random(seed), check=False)
    for m in moves:
        b.apply(m)
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert a.result() == b.result()


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.sampled_from(MODES), st.integers(0, 300))
def test_property_doubles_discards_hidden_from_opponents(
    seed: int, control: str, steps: int
) -> None:
    s = doubles(control, seed)
    rng = random.Random(seed)
    discards: list[Action] = []
    for i in range(steps + 500):  # walk past ``steps`` to a position with two discards
        if s.to_move is None:
            return
        # Two discards from the same hand: which hand shrank is public, the card is not.
        discards = [a for a in s.legal_actions() if a.kind == "pass" and a.arg]
        discards = [a for a in discards if a.arg.split(":")[0] == discards[0].arg.split(":")[0]]
        if i >= steps and len(discards) >= 2:
            break
        s.apply(rng.choice(s.legal_actions()))
    side = s.answering
    opponents = [1 - side] if control == "team" else [1 - side, 3 - side]
    views = []
    for action in (discards[0], discards[-1]):
        c = s.clone()
        assert isinstance(c, TennisState)
        start = len(c.events)
        c.apply(action)
        if any(e.kind == "play_shuffle" for e in c.events[start:]):
            return
        card = action.arg.rpartition(":")[2]
        assert card in TYPE_TEXT
        views.append(
            [
                (c.observation(o).to_dict(), [e.to_dict() for e in c.visible_events(o)])
                for o in opponents
            ]
        )
    assert views[0] == views[1]


def test_every_private_event_reaches_exactly_the_seats_that_see_that_hand() -> None:
    # With four bots partners confer, so each sees the other's hand (rules: "four bots, each
    # seeing its partner's hand"); with one bot per team the team's seat sees both. Both modes in
    # one process, alternating: events are interned across matches (engine/games/tennis.py),
    # and a discard interned for one mode must never stand in for the other's.
    seen = {"team": 0, "players": 0}
    for seed in range(12):
        for control in MODES:
            s = doubles(control, seed)
            rng = random.Random(seed)
            while s.to_move is not None:
                s.apply(rng.choice(s.legal_actions()))
            for e in s.events:
                if e.kind not in ("deal", "discard"):
                    continue
                p = s.names.index(str(e.data["player"]))
                partner = p ^ 2
                expected = (p % 2,) if control == "team" else tuple(sorted((p, partner)))
                assert e.to is not None and tuple(sorted(e.to)) == expected, (control, e)
                seen[control] += 1
    assert seen["team"] > 50 and seen["players"] > 50
