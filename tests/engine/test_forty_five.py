"""Forty-Five: scenario 11 of scenarios.md, the shared play under two-sided scoring, invariants."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ConfigError, OptionValue, get_game
from engine.games.forty_five import FortyFiveState, deal_points
from engine.games.spoil_rules import SpoilTableState
from tests.engine.test_spoil_five import (
    arranged,
    play,
    play_tricks,
    playout,
    scramble_hidden,
    texts,
    trick_won_by,
)

# N (seat 0) leads, W (seat 3) deals; trumps spades (turn-up 2S, AS in the stock).
_NS_FOUR_TRICKS = ["5S JS AH KS 2C", "KC 2D 3D 4D 5D", "6D 7D 8D 9D TD", "2H 3H 4H 5H 6H"]
_NS_FOUR_PLAYS = ["5S 2D 6D 2H", "JS 3D 7D 3H", "AH 4D 8D 4H", "KS 5D 9D 5H", "2C KC TD 6H"]


def _forty_five(hands: list[str], scoring: str = "standard") -> FortyFiveState:
    state = arranged(hands, "2S", game_id="forty_five", options={"scoring": scoring})
    assert isinstance(state, FortyFiveState)
    return state


@pytest.mark.parametrize(("scoring", "points"), [("standard", 5), ("difference", 15)])
def test_scenario_11_four_tricks_score(scoring: str, points: int) -> None:
    # N-S take 4 tricks -> +5 (default) or +15 (scoring=difference).
    state = _forty_five(_NS_FOUR_TRICKS, scoring)
    events = play_tricks(state, _NS_FOUR_PLAYS)
    assert [e.data["winner"] for e in events if e.kind == "trick"] == [0, 0, 0, 0, 1]
    score = next(e for e in events if e.kind == "deal_score")
    assert score.data == {"side": "N+S", "tricks": [4, 1], "points": points, "score": [points, 0]}
    assert state.score == [points, 0] and state.deal_number == 2 and not state.is_over()


def test_scenario_11_forty_plus_three_tricks_wins_the_game() -> None:
    # N-S at 40 take 3 tricks -> 45, game over.
    hands = ["5S JS AH 2C 3C", "KC AC 2D 3D 4D", "6D 7D 8D 9D TD", "2H 3H 4H 5H 6H"]
    state = _forty_five(hands)
    state.score = [40, 0]
    plays = ["5S 2D 6D 2H", "JS 3D 7D 3H", "AH 4D 8D 4H", "2C KC 9D 5H", "AC TD 6H 3C"]
    events = play_tricks(state, plays)
    assert [e.data["winner"] for e in events if e.kind == "trick"] == [0, 0, 0, 1, 1]
    assert [e.kind for e in events][-2:] == ["deal_score", "game_won"]
    assert state.score == [45, 0] and state.is_over()
    result = state.result()
    assert result is not None
    assert result.ranks == (1, 2, 1, 2) and result.scores == (45.0, 0.0, 45.0, 0.0)
    assert result.summary == "N+S win 45-0 after 1 deal"


def test_all_five_tricks_are_played_even_when_settled() -> None:
    state = _forty_five(_NS_FOUR_TRICKS)
    events = play_tricks(state, _NS_FOUR_PLAYS[:3])
    assert state.side_tricks() == (3, 0) and state.deal_number == 1
    assert events and not any(e.kind == "deal_score" for e in events)
    assert state.to_move == 0 and texts(state.legal_actions())[0] == "play:2C"


def test_deal_points_table() -> None:
    assert [deal_points(t, "standard") for t in (3, 4, 5)] == [5, 5, 10]
    assert [deal_points(t, "difference") for t in (3, 4, 5)] == [5, 15, 25]


def test_robbing_is_shared_with_spoil_five() -> None:
    # Scenario 8 under forty_five: the robbed turned-up ace joins after trick 1.
    hands = ["KH 2H 3H 4H 5H", "6H 7H 8H 9H TH", "2D 3D 4D 5D 6D", "9D QC 2S 3S 4S"]
    state = arranged(hands, "AC", game_id="forty_five")
    play(state, "rob:9D", "play:KH", "play:6H", "play:2D")
    assert "play:AC" not in texts(state.legal_actions())
    assert trick_won_by(play(state, "play:2S")) == 0
    hand = state.observation(3).to_dict()["hand"]
    assert isinstance(hand, list) and "AC" in hand


def test_sides_and_seats() -> None:
    game = get_game("forty_five")
    four, two = game.configure(4), game.configure(2)
    assert game.sides(four) == ((0, 2), (1, 3)) and game.sides(two) is None
    assert game.seat_names(four) == ("N", "E", "S", "W")
    assert game.seat_names(two) == ("P1", "P2")
    with pytest.raises(ConfigError, match="2 or 4 players; got 3"):
        game.configure(3)
    with pytest.raises(ConfigError, match="'scoring' must be one of standard, difference"):
        game.configure(4, {"scoring": "doubled"})


def test_forfeit_loses_for_the_side() -> None:
    game = get_game("forty_five")
    state = game.new_match(game.configure(4), seed=2)
    result = state.forfeit(1, "timeout")
    assert result.ranks == (1, 2, 1, 2)


def test_observation_render_and_side_fields() -> None:
    state = _forty_five(_NS_FOUR_TRICKS)
    obs = state.observation(2).to_dict()
    assert obs["side"] == 0 and obs["score"] == [0, 0] and obs["points_to_win"] == 45
    assert "You are S; dealer W" in state.observation(2).render()


# --- invariants over random playouts -----------------------------------------------------------

_OPTIONS = st.fixed_dictionaries(
    {
        "must_rob": st.booleans(),
        "dealer_ace_in_trick_1": st.booleans(),
        "scoring": st.sampled_from(["standard", "difference"]),
    }
)


@given(seed=st.integers(0, 2**31), players=st.sampled_from([2, 4]), options=_OPTIONS)
@settings(max_examples=100, deadline=None)
def test_cards_conserved_and_scores_consistent(
    seed: int, players: int, options: dict[str, OptionValue]
) -> None:
    def check(state: SpoilTableState) -> None:
        assert state.card_count() == 52

    state = playout("forty_five", players, seed, options, check)
    assert isinstance(state, FortyFiveState)
    allowed = {5, 10} if options["scoring"] == "standard" else {5, 15, 25}
    totals = [0, 0]
    deals = [e for e in state.events if e.kind == "deal_score"]
    for e in deals:
        assert e.data["points"] in allowed
        totals[0 if e.data["side"] in ("N+S", "P1") else 1] += int(str(e.data["points"]))
    assert totals == state.score
    assert max(state.score) >= 45 and len(deals) == state.deal_number
    tricks = [e for e in state.events if e.kind == "trick"]
    assert len(tricks) == 5 * state.deal_number  # every trick of every deal is played


@given(seed=st.integers(0, 2**31), players=st.sampled_from([2, 4]))
@settings(max_examples=30, deadline=None)
def test_deterministic(seed: int, players: int) -> None:
    a = playout("forty_five", players, seed)
    b = playout("forty_five", players, seed)
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]


@given(seed=st.integers(0, 2**31), players=st.sampled_from([2, 4]))
@settings(max_examples=40, deadline=None)
def test_no_leak_of_hidden_cards_or_rob_discards(seed: int, players: int) -> None:
    rng = random.Random(seed)

    def check(state: SpoilTableState) -> None:
        if rng.random() < 0.5:
            seat = rng.randrange(state.n)
            before = state.observation(seat)
            assert scramble_hidden(state, seat, rng).observation(seat) == before

    playout("forty_five", players, seed, None, check)


def test_heads_up_summary_is_a_sentence_naming_the_winner() -> None:
    # A player wins (singular); a side of two win. "P2 win 45-10" was the defect.
    game = get_game("forty_five")
    state = game.new_match(game.configure(2, {}), seed=2)
    assert isinstance(state, FortyFiveState)
    rng = random.Random(2)
    while not state.is_over():
        state.apply(rng.choice(state.legal_actions()))
    result = state.result()
    assert result is not None
    winner = result.ranks.index(1)
    high, low = int(max(result.scores)), int(min(result.scores))
    assert state.deal_number > 1
    assert result.summary == f"P{winner + 1} wins {high}-{low} after {state.deal_number} deals"
