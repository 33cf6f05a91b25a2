"""The engine's hot-path shortcuts (benchmarks/, docs/performance.md) equal the plain versions."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import IllegalActionError, MatchOverError, get_game
from engine.cards import FULL_DECK_MASK, HEARTS, SUITS, card, cards_in, mask_texts
from engine.core import Action, Event
from engine.games.spoil_rules import SpoilTableState
from engine.games.tricks import (
    PLAY_ACTIONS,
    PLAY_EVENTS,
    SUIT_PLAYS,
    deal_hands,
    follow_suit_mask,
    follow_suit_plays,
    mask_card_texts,
    play_actions,
    shuffled_pack,
    standard_trick_winner,
)
from engine.games.whist import HONOUR_RANKS, WhistState, honours_by_side

MASKS = st.integers(min_value=0, max_value=FULL_DECK_MASK)
SEEDS = st.integers(min_value=0, max_value=2**63 - 1)


def plain_play_actions(mask: int) -> tuple[Action, ...]:
    return tuple(PLAY_ACTIONS[c] for c in cards_in(mask))


@settings(max_examples=300, deadline=None)
@given(mask=MASKS)
def test_play_actions_table_equals_the_bit_loop(mask: int) -> None:
    got = play_actions(mask)
    assert got == plain_play_actions(mask)
    assert all(a is PLAY_ACTIONS[c] for a, c in zip(got, cards_in(mask), strict=True))  # interned


@settings(max_examples=300, deadline=None)
@given(hand=MASKS, led=st.sampled_from([None, *SUITS]))
def test_follow_suit_plays_equals_the_rule(hand: int, led: int | None) -> None:
    assert follow_suit_plays(hand, led) == play_actions(follow_suit_mask(hand, led))


def test_suit_tables_cover_every_suit_mask() -> None:
    for suit in SUITS:
        table = SUIT_PLAYS[suit]
        assert len(table) == 8192 and table[0] == ()
        assert table[0x1FFF] == tuple(PLAY_ACTIONS[suit * 13 : suit * 13 + 13])
    assert SUIT_PLAYS[HEARTS][0b101] == (
        PLAY_ACTIONS[card(0, HEARTS)],
        PLAY_ACTIONS[card(2, HEARTS)],
    )


@settings(max_examples=200, deadline=None)
@given(seed=SEEDS)
def test_shuffled_pack_is_random_shuffle(seed: int) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    deck = list(range(52))
    theirs.shuffle(deck)
    assert shuffled_pack(ours) == deck
    assert ours.getstate() == theirs.getstate()  # the generator moved on identically


@settings(max_examples=100, deadline=None)
@given(seed=SEEDS, first=st.integers(0, 3))
def test_deal_hands_deals_one_card_at_a_time(seed: int, first: int) -> None:
    deck = shuffled_pack(random.Random(seed))
    expected = [0, 0, 0, 0]
    for i, c in enumerate(deck):
        expected[(first + i) % 4] |= 1 << c
    assert deal_hands(deck, first, 4, 13) == expected
    five = [0] * 5
    for i, c in enumerate(deck[:25]):
        five[(first + i) % 5] |= 1 << c
    assert deal_hands(deck, first, 5, 5) == five


@settings(max_examples=100, deadline=None)
@given(mask=MASKS)
def test_mask_card_texts(mask: int) -> None:
    assert mask_card_texts(mask) == list(mask_texts(mask))


@settings(max_examples=100, deadline=None)
@given(seed=SEEDS, trump=st.sampled_from(SUITS))
def test_honours_by_side_counts_a_k_q_j_of_trumps(seed: int, trump: int) -> None:
    hands = deal_hands(shuffled_pack(random.Random(seed)), 0, 4, 13)
    held = [0, 0]
    for rank in HONOUR_RANKS:
        for seat in range(4):
            held[seat % 2] += hands[seat] >> card(rank, trump) & 1
    assert honours_by_side(hands, trump) == (held[0], held[1])


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS)
def test_whist_trick_winner_is_the_standard_rule(seed: int) -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(4, {"games_per_rubber": 1, "points_to_win": 3}), seed)
    assert isinstance(state, WhistState)
    rng = random.Random(seed)
    checked = 0
    while state.to_move is not None:
        cards, seats, trump = list(state.trick_cards), list(state.trick_seats), state.trump
        seat = state.to_move
        action = rng.choice(state.legal_actions())
        for event in state.apply(action):
            if event.kind == "trick":
                played = [*cards, card_of(action)]
                order = [*seats, seat]
                assert event.data["winner"] == order[standard_trick_winner(played, trump)]
                checked += 1
    assert checked >= 13


def card_of(action: Action) -> int:
    return PLAY_ACTIONS.index(action)


def test_apply_takes_an_equal_action_that_is_not_the_interned_one() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), 3)
    legal = state.legal_actions()
    twin = Action(legal[-1].kind, legal[-1].arg)
    assert twin is not legal[-1]
    (event,) = state.apply(twin)
    assert event.kind == "play" and event.data["card"] == legal[-1].arg
    assert state.decisions == 1


def test_apply_rejects_an_action_not_legal_and_any_after_the_end() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), 3)
    seat = state.to_move
    assert seat is not None
    held = {a.arg for a in state.legal_actions()}
    outside = next(a for a in PLAY_ACTIONS if a.arg not in held)
    with pytest.raises(IllegalActionError):
        state.apply(outside)
    assert state.decisions == 0 and state.to_move == seat
    state.forfeit(seat, "test")
    with pytest.raises(MatchOverError):
        state.apply(PLAY_ACTIONS[0])


def test_event_stays_a_frozen_dataclass() -> None:
    event = Event("play", {"seat": 1, "card": "AS"})
    assert event == Event(kind="play", data={"seat": 1, "card": "AS"}, to=None)
    assert event != Event("play", {"seat": 1, "card": "AS"}, to=(1,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.kind = "other"  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(Event)] == ["kind", "data", "to"]
    assert copy.deepcopy(event) == event == pickle.loads(pickle.dumps(event))
    assert repr(event) == "Event(kind='play', data={'seat': 1, 'card': 'AS'}, to=None)"


def test_whist_deals_are_unchanged_by_the_fast_shuffle() -> None:
    # The deal of seed 7 as random.shuffle made it before the fast path (one card per seat in
    # turn from the dealer's left), so recorded matches still replay.
    game = get_game("whist")
    state = game.new_match(game.configure(), 7)
    assert isinstance(state, WhistState)
    rng = random.Random(7)
    dealer = rng.randrange(4)
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [0, 0, 0, 0]
    for i, c in enumerate(deck):
        hands[(dealer + 1 + i) % 4] |= 1 << c
    assert state.dealer == dealer and state.hands == hands and state.turn_up == deck[51]


def test_whist_play_events_are_interned_and_equal_fresh_ones() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), 5)
    seat = state.to_move
    assert seat is not None
    action = state.legal_actions()[0]
    (event,) = state.apply(action)
    assert event == Event("play", {"seat": seat, "card": action.arg})
    assert event.to_dict() == {"kind": "play", "to": None, "seat": seat, "card": action.arg}
    assert event is PLAY_EVENTS[seat][PLAY_ACTIONS.index(action)]
    assert copy.deepcopy(state.events) == state.events


@pytest.mark.parametrize("game_id", ["spoil_five", "forty_five"])
def test_spoil_deals_are_the_packets_of_three_then_two_rng_shuffle_made(game_id: str) -> None:
    # The rules' deal (clockwise from the dealer's left, three each, then two each, the next
    # card turned up, the rest the stock) from the pack as random.shuffle left it: recorded
    # matches must replay after the fast shuffle and the packet table.
    game = get_game(game_id)
    for players in game.player_counts:
        for seed in range(6):
            state = game.new_match(game.configure(players), seed)
            assert isinstance(state, SpoilTableState)
            rng = random.Random(seed)
            dealer = rng.randrange(players)
            deck = list(range(52))
            rng.shuffle(deck)
            hands = [0] * players
            dealt = iter(deck)
            for packet in (3, 2):
                for k in range(1, players + 1):
                    for _ in range(packet):
                        hands[(dealer + k) % players] |= 1 << next(dealt)
            turn_up = next(dealt)
            stock = sum(1 << c for c in dealt)
            assert (state.dealer, state.hands, state.turn_up, state.stock) == (
                dealer,
                hands,
                turn_up,
                stock,
            ), (game_id, players, seed)
            assert state.card_count() == 52


def test_spoil_play_events_are_interned_unless_the_ace_is_demoted() -> None:
    game = get_game("spoil_five")
    seen = {"interned": 0, "demoted": 0}
    for seed in range(40):
        state = game.new_match(game.configure(5), seed)
        rng = random.Random(seed)
        while state.to_move is not None and state.deal_number == 1:  # type: ignore[attr-defined]
            seat = state.to_move
            action = rng.choice(state.legal_actions())
            for event in state.apply(action):
                if event.kind != "play":
                    continue
                c = PLAY_ACTIONS.index(action)
                if event.data.get("demoted"):
                    seen["demoted"] += 1
                    data = {"seat": seat, "card": action.arg, "demoted": True}
                    assert event == Event("play", data)
                else:
                    seen["interned"] += 1
                    assert event is PLAY_EVENTS[seat][c]
                    assert event == Event("play", {"seat": seat, "card": action.arg})
    assert seen["interned"] > 100 and seen["demoted"] > 0


def test_tennis_whist_play_events_are_interned_and_equal_fresh_ones() -> None:
    game = get_game("tennis_whist")
    plays = 0
    for seed in range(5):
        state = game.new_match(game.configure(4), seed)
        rng = random.Random(seed)
        for _ in range(200):
            seat = state.to_move
            if seat is None:
                break
            action = rng.choice(state.legal_actions())
            for event in state.apply(action):
                if event.kind == "play":
                    plays += 1
                    assert event is PLAY_EVENTS[seat][PLAY_ACTIONS.index(action)]
                    assert event == Event("play", {"seat": seat, "card": action.arg})
    assert plays > 500
