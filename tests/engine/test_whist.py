"""Whist: the scenarios of rules/scenarios.md, one test each, and our rules decisions."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ConfigError, IllegalActionError, get_game
from engine.cards import CARD_TEXT, mask_of, parse_card
from engine.games.tricks import TrickView
from engine.games.whist import WhistState

N, E, S, W = 0, 1, 2, 3
GAME = get_game("whist")


def new_state(seed: int = 1, **options: int) -> WhistState:
    state = GAME.new_match(GAME.configure(4, dict(options)), seed)
    assert isinstance(state, WhistState)
    return state


def cards(text: str) -> int:
    return mask_of(parse_card(t) for t in text.split())


def set_trick(
    state: WhistState, hands: dict[int, str], *, trump: str, leader: int, dealer: int = W
) -> None:
    """Put ``state`` at the start of a trick: ``leader`` to lead from the given hands."""
    state.hands = [cards(hands.get(s, "")) for s in range(4)]
    state.trump = "CDHS".index(trump)
    state.dealer = dealer
    state.turn_up_in_hand = False
    state.trick_cards, state.trick_seats = [], []
    state.trick_leader = leader
    state.to_move = leader
    state._legal = None


def set_last_trick(
    state: WhistState,
    *,
    tricks_won: tuple[int, int],
    last: dict[int, str],
    leader: int,
    trump: str,
    dealt: dict[int, str] | None = None,
    turn_up: str | None = None,
    dealer: int = W,
) -> None:
    """Twelve tricks played (``tricks_won`` per side), the last one about to be led.

    ``dealt`` fixes the original deal, which is what honours are counted from.
    """
    set_trick(state, last, trump=trump, leader=leader, dealer=dealer)
    filler = TrickView(leader, ("2C", "3C", "4C", "5C"), (0, 1, 2, 3), 0)
    state.finished_tricks = [filler] * 12
    state.tricks_won = list(tricks_won)
    state.dealt = [cards((dealt or {}).get(s, "")) | state.hands[s] for s in range(4)]
    if turn_up is not None:
        state.turn_up = parse_card(turn_up)


def play(state: WhistState, *texts: str) -> None:
    for t in texts:
        state.apply(f"play:{t}")


def events_of(state: WhistState, kind: str, start: int = 0) -> list[dict[str, Any]]:
    return [e.to_dict() for e in state.events[start:] if e.kind == kind]


# --- the scenarios of rules/scenarios.md ---------------------------------------------------


def test_scenario_1_trump_beats_the_led_suit() -> None:
    state = new_state()
    set_trick(state, {N: "KS 3D", E: "2S 4D", S: "2H 5D", W: "AS 6D"}, trump="H", leader=N)
    start = len(state.events)
    play(state, "KS", "2S")
    assert [a.text for a in state.legal_actions()] == ["play:5D", "play:2H"]  # S void in spades
    play(state, "2H", "AS")
    (trick,) = events_of(state, "trick", start)
    assert trick["winner"] == S and trick["cards"] == ["KS", "2S", "2H", "AS"]
    assert state.tricks_won == [1, 0] and state.to_move == S


def test_scenario_2_must_follow_suit() -> None:
    state = new_state()
    set_trick(state, {N: "KS 3D", E: "5S 3H", S: "2H 5D", W: "AS 6D"}, trump="C", leader=N)
    state.apply("play:KS")
    before = (state.decisions, len(state.events), state.observation(E))
    with pytest.raises(IllegalActionError, match="must follow suit S") as info:
        state.apply("play:3H")
    assert info.value.seat == E
    assert (state.decisions, len(state.events), state.observation(E)) == before
    assert [a.text for a in state.legal_actions()] == ["play:5S"]


def test_scenario_3_eight_tricks_score_two() -> None:
    state = new_state()
    # Honours split 2-2 (N: AC KC, E: QC JC), so only tricks score.
    set_last_trick(
        state,
        tricks_won=(7, 5),
        last={N: "AH", E: "2H", S: "3H", W: "4H"},
        leader=N,
        trump="C",
        dealt={N: "AC KC", E: "QC JC"},
    )
    start = len(state.events)
    play(state, "AH", "2H", "3H", "4H")
    (score,) = events_of(state, "deal_score", start)
    assert score["tricks"] == [8, 5]
    assert score["trick_points"] == [2, 0]
    assert score["honour_points"] == [0, 0]
    assert state.score == [2, 0]


def test_scenario_4_tricks_to_one_side_honours_to_the_other() -> None:
    state = new_state()
    # Trumps clubs; N holds AC QC, S holds KC; dealer W's turn-up JC counts as W's.
    set_last_trick(
        state,
        tricks_won=(6, 6),
        last={N: "2H", E: "AH", S: "3H", W: "4H"},
        leader=N,
        trump="C",
        dealt={N: "AC QC", S: "KC", W: "JC"},
        turn_up="JC",
        dealer=W,
    )
    start = len(state.events)
    play(state, "2H", "AH", "3H", "4H")
    (score,) = events_of(state, "deal_score", start)
    assert score["tricks"] == [6, 7]
    assert score["trick_points"] == [0, 1]
    assert score["honours_held"] == [3, 1]
    assert score["honour_points"] == [2, 0]
    assert state.score == [2, 1]


def test_scenario_5_honours_split_two_two_score_nothing() -> None:
    state = new_state()
    set_last_trick(
        state,
        tricks_won=(3, 9),
        last={N: "2H", E: "AH", S: "3H", W: "4H"},
        leader=N,
        trump="S",
        dealt={N: "AS", S: "KS", E: "QS", W: "JS"},
    )
    start = len(state.events)
    play(state, "2H", "AH", "3H", "4H")
    (score,) = events_of(state, "deal_score", start)
    assert score["honours_held"] == [2, 2]
    assert score["honour_points"] == [0, 0]
    assert state.score == [0, 4]


@pytest.mark.parametrize("start_score", [(0, 0), (4, 3)])
def test_scenario_6_slam_wins_the_game_and_the_surplus_is_lost(
    start_score: tuple[int, int],
) -> None:
    state = new_state()
    state.score = list(start_score)
    # N-S were also dealt all four honours: the game ends on tricks, honours are not scored.
    set_last_trick(
        state,
        tricks_won=(12, 0),
        last={N: "AH", E: "2H", S: "3H", W: "4H"},
        leader=N,
        trump="D",
        dealt={N: "AD KD", S: "QD JD"},
    )
    start = len(state.events)
    play(state, "AH", "2H", "3H", "4H")
    (score,) = events_of(state, "deal_score", start)
    assert score["trick_points"] == [7, 0] and score["honour_points"] == [0, 0]
    (won,) = events_of(state, "game_won", start)
    assert won["side"] == "N+S" and won["final_score"] == [start_score[0] + 7, start_score[1]]
    assert state.games == [1, 0]
    assert state.score == [0, 0]  # the next game starts from 0-0
    assert state.observation(E).score == (0, 0)
    assert len(events_of(state, "turn_up", start)) == 1  # the next deal is under way


def test_scenario_7_two_games_to_nil_ends_the_rubber() -> None:
    state = new_state()
    state.games = [1, 0]
    state.score = [6, 2]
    set_last_trick(
        state,
        tricks_won=(6, 6),
        last={N: "AH", E: "2H", S: "3H", W: "4H"},
        leader=N,
        trump="D",
        dealt={N: "AD", E: "KD", S: "QD", W: "JD"},
    )
    start = len(state.events)
    play(state, "AH", "2H", "3H", "4H")
    assert [e.kind for e in state.events[start:]][-2:] == ["game_won", "rubber_won"]
    assert events_of(state, "deal", start) == []  # no third game, not even a deal
    assert state.is_over() and state.legal_actions() == ()
    result = state.result()
    assert result is not None
    assert result.ranks == (1, 2, 1, 2) and result.scores == (2.0, 0.0, 2.0, 0.0)
    assert result.summary == "N+S win the rubber 2-0"


def test_scenario_8_turn_up_visible_to_every_seat_until_the_dealer_plays() -> None:
    for seed in range(20):
        state = new_state(seed)
        dealer = state.dealer
        up = CARD_TEXT[state.turn_up]
        (event,) = events_of(state, "turn_up")
        assert event["to"] is None and event["card"] == up
        assert up in state.observation(dealer).hand
        rng = random.Random(seed)
        while state.to_move != dealer:
            for seat in range(4):
                obs = state.observation(seat)
                assert obs.turn_up == up and obs.turn_up_in_hand and obs.trump == up[1]
            state.apply(rng.choice(state.legal_actions()))
        assert all(state.observation(s).turn_up == up for s in range(4))
        legal = state.legal_actions()
        state.apply(next((a for a in legal if a.arg == up), legal[0]))
        still_held = up in state.observation(dealer).hand
        assert all(state.observation(s).turn_up_in_hand == still_held for s in range(4))


# --- our rules decisions (docs/rules/whist.md) ---------------------------------------------


def test_deal_order_and_lead() -> None:
    for seed in range(10):
        state = new_state(seed)
        assert [h.bit_count() for h in state.hands] == [13] * 4
        assert state.to_move == (state.dealer + 1) % 4
        assert state.hands[state.dealer] >> state.turn_up & 1


def test_deal_passes_clockwise() -> None:
    state = new_state(3)
    rng = random.Random(3)
    dealers = [state.dealer]
    while not state.is_over() and len(dealers) < 6:
        deal = state.deal_number
        state.apply(rng.choice(state.legal_actions()))
        if state.deal_number != deal:
            dealers.append(state.dealer)
    assert dealers == [(dealers[0] + i) % 4 for i in range(len(dealers))]


def test_illegal_card_not_held_names_the_reason() -> None:
    state = new_state()
    set_trick(state, {N: "KS 3D", E: "5S 3H", S: "2H 5D", W: "AS 6D"}, trump="C", leader=N)
    state.apply("play:KS")
    with pytest.raises(IllegalActionError, match="not in your hand"):
        state.apply("play:AC")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32))
def test_no_leak_other_seats_hidden_cards_never_change_an_observation(seed: int) -> None:
    state = new_state(seed)
    rng = random.Random(seed)
    swaps = 0
    while not state.is_over() and state.decisions < 300:
        if rng.random() < 0.3:
            seat = rng.randrange(4)
            o1, o2 = rng.sample([s for s in range(4) if s != seat], 2)
            # The turn-up is public while the dealer holds it: it is not hidden, never swapped.
            public = 1 << state.turn_up if state.turn_up_in_hand else 0
            h1, h2 = state.hands[o1] & ~public, state.hands[o2] & ~public
            k = min(h1.bit_count(), h2.bit_count())
            if k:
                before = state.observation(seat)
                saved = list(state.hands), list(state.dealt)
                k = rng.randint(1, k)
                g1 = mask_of(rng.sample([c for c in range(52) if h1 >> c & 1], k))
                g2 = mask_of(rng.sample([c for c in range(52) if h2 >> c & 1], k))
                for who, give, get in ((o1, g1, g2), (o2, g2, g1)):
                    state.hands[who] = state.hands[who] & ~give | get
                    state.dealt[who] = state.dealt[who] & ~give | get
                assert state.observation(seat) == before
                assert state.observation(seat).to_dict() == before.to_dict()
                state.hands, state.dealt = saved
                swaps += 1
        state.apply(rng.choice(state.legal_actions()))
    assert swaps > 0


def test_first_dealer_is_announced_publicly() -> None:
    state = new_state(4)
    (event,) = events_of(state, "dealer")
    assert event["to"] is None and event["seat"] == state.dealer


def test_short_whist_game_at_five_and_rubber_length_option() -> None:
    state = new_state(points_to_win=5)
    state.score = [3, 0]
    set_last_trick(
        state,
        tricks_won=(7, 5),
        last={N: "AH", E: "2H", S: "3H", W: "4H"},
        leader=N,
        trump="D",
        dealt={N: "AD", E: "KD", S: "QD", W: "JD"},
    )
    start = len(state.events)
    play(state, "AH", "2H", "3H", "4H")
    (won,) = events_of(state, "game_won", start)
    assert won["final_score"] == [5, 0] and state.games == [1, 0]
    with pytest.raises(ConfigError, match="must be odd"):
        GAME.configure(4, {"games_per_rubber": 2})
    one = new_state(games_per_rubber=1)
    rng = random.Random(0)
    while not one.is_over():
        one.apply(rng.choice(one.legal_actions()))
    result = one.result()
    assert result is not None and sorted(result.scores) == [0.0, 0.0, 1.0, 1.0]


def test_misspelt_held_card_is_rejected_with_its_canonical_form() -> None:
    state = new_state()
    set_trick(state, {N: "KS TD", E: "5S 3H", S: "2H 5D", W: "AS 6D"}, trump="C", leader=N)
    with pytest.raises(IllegalActionError, match="write the card as KS"):
        state.apply("play:ks")
    with pytest.raises(IllegalActionError, match="write the card as TD"):
        state.apply("play:10D")
    assert state.decisions == 0
